//! `injection-assembler` (priority 300): recipe choice, instantiation, macros, and placement by
//! the exact rules of RULES 3.
//!
//! The output is built in one pass: the skeleton in step order, each slot expanded in place with
//! its "before" and "after" anchor injections around it, the `chat_history` block carrying its
//! depth injections. Nothing is inserted into a long vector after the fact.

use std::collections::{BTreeMap, HashMap};

use crate::limits::REGEX_BUILD_GROWTH;
use crate::macros::{expand, has_macros, MacroEnv, MacroState};
use crate::model::{AnchorPosition, InjectionStrategy, Role, TemplateType};
use crate::pipeline::{
    ConfigField, DropAction, DroppedItem, PipelineContext, PipelineMessage, Placement, Processor,
    ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::recipe::choose_recipe;
use crate::regex_rule::rewrite;
use crate::EngineError;

pub struct InjectionAssembler;

const ID: &str = "injection-assembler";
/// The anchor of the history block (RULES 3.5).
const CHAT_HISTORY: &str = "chat_history";
/// Where an injection candidate without a strategy goes (a lorebook entry in list order), as
/// SillyTavern places world info by default.
const WORLD_INFO: &str = "worldInfoBefore";

impl Processor for InjectionAssembler {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Injection assembler",
            description: "Chooses the recipe for the model, instantiates its steps, applies macros \
                          and places every message: list order, depth in the history, or at an anchor.",
            priority: 300,
            is_core: true,
            default_enabled: true,
            config_fields: vec![ConfigField::boolean(
                "macrosInHistory",
                "Apply macros to history messages",
                false,
            )
            .describe("By default macros expand in templates and lorebook entries only.")],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let recipe = choose_recipe(ctx.preset, ctx.model)?;
        ctx.recipe = Some(recipe.id.clone());
        ctx.info(
            ID,
            format!(
                "recipe \"{}\" [{}] applies to model \"{}\"",
                recipe.id,
                recipe.model_filter.join(", "),
                ctx.model
            ),
        );
        let mut history = std::mem::take(&mut ctx.history).into_vec();

        // Macro inputs come from the history as the earlier processors left it.
        let preset = ctx.preset;
        let session = ctx.session;
        let character = preset.character.as_ref();
        let field = |f: fn(&crate::model::Character) -> &Option<String>| {
            character.and_then(|c| f(c).as_deref()).unwrap_or("")
        };
        let last_of = |role: Option<Role>| {
            history
                .iter()
                .rev()
                .find(|m| role.is_none_or(|r| m.role == r))
                .map(|m| m.content().to_string())
                .unwrap_or_default()
        };
        let (last_message, last_user, last_char) = (
            last_of(None),
            last_of(Some(Role::User)),
            last_of(Some(Role::Assistant)),
        );
        let profile = session.user_profile.as_ref();
        let env = MacroEnv {
            user: profile.map(|p| p.name.as_str()).unwrap_or("User"),
            char_name: character.map(|c| c.name.as_str()).unwrap_or(&preset.name),
            description: field(|c| &c.description),
            personality: field(|c| &c.personality),
            scenario: field(|c| &c.scenario),
            persona: profile.and_then(|p| p.content.as_deref()).unwrap_or(""),
            mes_examples: field(|c| &c.example_dialogue),
            summary: session.summary.as_deref().unwrap_or(""),
            model: ctx.model,
            last_message: &last_message,
            last_user_message: &last_user,
            last_char_message: &last_char,
            timestamp: ctx.options.timestamp,
            session_id: &session.id,
            message_count: session.messages.len(),
        };
        let mut state = MacroState::new(&env, std::mem::take(&mut ctx.variables));
        let mut logs: Vec<(bool, String)> = Vec::new(); // (is_warning, text)
        let mut expand_logged = |text: &str, position: &str, logs: &mut Vec<(bool, String)>| {
            if !has_macros(text) {
                return text.to_string();
            }
            let out = expand(text, &env, &mut state, position);
            logs.extend(
                out.warnings
                    .into_iter()
                    .map(|w| (true, format!("{position}: {w}"))),
            );
            out.text
        };

        if config.bool("macrosInHistory") {
            for (i, m) in history.iter_mut().enumerate() {
                if has_macros(m.content()) {
                    let text = expand_logged(m.content(), &format!("history:{i}"), &mut logs);
                    m.set_content(text);
                }
            }
        }

        let template_rules = std::mem::take(&mut ctx.blackboard.template_rules);
        let mut template_too_long = vec![0u32; template_rules.len()];
        let mut templates_over_cap = 0u32;

        // Rule 2 and 3: instantiate the enabled steps and classify them.
        let mut skeleton: Vec<Part> = Vec::new();
        let mut injections: Vec<Injection> = Vec::new();
        let mut slot_names: HashMap<String, usize> = HashMap::new(); // anchor name -> skeleton index
        let mut has_history_slot = false;
        let mut has_profile_slot = false;
        for (step_index, step) in recipe.steps.iter().enumerate() {
            if !step.enabled {
                continue;
            }
            let template =
                preset
                    .template(&step.message_id)
                    .ok_or_else(|| EngineError::UnknownTemplate {
                        recipe: recipe.id.clone(),
                        step: step_index,
                        template: step.message_id.clone(),
                    })?;
            let overrides = step.overrides.as_ref();
            let role = overrides.and_then(|o| o.role).unwrap_or(template.role);
            // The step's strategy replaces the template's whole; `{}` means list order.
            let strategy = step
                .injection_strategy
                .clone()
                .or_else(|| template.default_injection_strategy.clone())
                .unwrap_or_default();
            let label = format!("step {step_index} (\"{}\")", template.id);

            if template.kind.is_slot() {
                if strategy != InjectionStrategy::default() {
                    logs.push((true, format!("{label}: a slot is always placed in list order; its strategy is ignored")));
                }
                let duplicate = match template.kind {
                    TemplateType::ChatHistory => std::mem::replace(&mut has_history_slot, true),
                    TemplateType::UserProfile => std::mem::replace(&mut has_profile_slot, true),
                    _ => slot_names.contains_key(&template.id),
                };
                if duplicate {
                    logs.push((
                        true,
                        format!(
                            "{label}: a second {} slot is ignored",
                            template.kind.as_str()
                        ),
                    ));
                    continue;
                }
                let index = skeleton.len();
                slot_names.entry(template.id.clone()).or_insert(index);
                match template.kind {
                    TemplateType::ChatHistory => {
                        slot_names.insert(CHAT_HISTORY.into(), index);
                    }
                    TemplateType::UserProfile => {
                        slot_names.insert("user_profile".into(), index);
                    }
                    _ => {}
                }
                skeleton.push(Part::Slot {
                    kind: template.kind,
                    template_id: template.id.clone(),
                    step_index,
                    role,
                });
                continue;
            }

            let raw = overrides
                .and_then(|o| o.content.as_deref())
                .or(template.content.as_deref())
                .unwrap_or("");
            let mut content = expand_logged(
                raw,
                &format!("template:{}#{step_index}", template.id),
                &mut logs,
            );
            // Regex rules of scope `templates`/`both`, compiled by the regex processor, within
            // the growth the build has left.
            let applying = template_rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.applies(role, None));
            let done = rewrite(applying, &content);
            for &k in &done.too_long {
                template_too_long[k] += 1;
            }
            if let Some(next) = done.text {
                let grown = next.len().saturating_sub(content.len());
                if ctx.blackboard.regex_growth + grown <= REGEX_BUILD_GROWTH {
                    ctx.blackboard.regex_growth += grown;
                    content = next;
                } else {
                    ctx.blackboard.regex_growth = REGEX_BUILD_GROWTH;
                    templates_over_cap += 1;
                }
            }
            if content.trim().is_empty() {
                logs.push((
                    false,
                    format!("{label}: empty after macros and rules; not sent"),
                ));
                continue;
            }
            let mut source = Source::new(SourceKind::Template, Placement::List);
            source.template_id = Some(template.id.clone());
            source.step_index = Some(step_index as u32);
            let message = PipelineMessage::new(role, content, source);
            match classify(&strategy) {
                Class::List => skeleton.push(Part::Message(Box::new(message))),
                class => {
                    if strategy.depth.is_some() && strategy.anchor_target.is_some() {
                        logs.push((
                            true,
                            format!("{label}: has both depth and anchor; depth wins"),
                        ));
                    }
                    injections.push(Injection {
                        class,
                        order: strategy.order(),
                        tie: step_index,
                        message,
                    });
                }
            }
        }

        // Injection candidates of earlier processors (the lorebook) are placed by the same rules,
        // after every step in tie order.
        let tie_base = recipe.steps.len();
        for (i, candidate) in std::mem::take(&mut ctx.blackboard.injections)
            .into_iter()
            .enumerate()
        {
            let position = candidate
                .source
                .entry_id
                .as_deref()
                .or(candidate.source.template_id.as_deref())
                .unwrap_or("injection")
                .to_string();
            let content = expand_logged(
                &candidate.content,
                &format!("{}:{position}", candidate.source.kind.as_str()),
                &mut logs,
            );
            if content.trim().is_empty() {
                logs.push((
                    false,
                    format!(
                        "{} \"{position}\": empty after macros; not sent",
                        candidate.source.kind.as_str()
                    ),
                ));
                continue;
            }
            let message = PipelineMessage::new(candidate.role, content, candidate.source);
            let class = classify(&candidate.strategy);
            let class = if class == Class::List {
                // A candidate without a place goes where world info goes by default, and in a
                // recipe without that anchor, directly before the chat history.
                if slot_names.contains_key(WORLD_INFO) || !slot_names.contains_key(CHAT_HISTORY) {
                    Class::Anchor(WORLD_INFO.into(), AnchorPosition::After)
                } else {
                    Class::Anchor(CHAT_HISTORY.into(), AnchorPosition::Before)
                }
            } else {
                class
            };
            injections.push(Injection {
                class,
                order: candidate.strategy.order(),
                tie: tie_base + i,
                message,
            });
        }

        // Rules 4 and 5: sort injections into their places.
        let n = history.len();
        let mut at_depth: BTreeMap<usize, Vec<Injection>> = BTreeMap::new();
        let mut at_anchor: HashMap<(usize, AnchorPosition), Vec<Injection>> = HashMap::new();
        let mut dropped: Vec<(PipelineMessage<'static>, String)> = Vec::new();
        let (mut depth_count, mut anchor_count) = (0, 0);
        for mut injection in injections {
            match injection.class.clone() {
                Class::Depth(d) => {
                    if !has_history_slot {
                        let reason = format!(
                            "depth {d} injection dropped: the recipe has no enabled chat_history slot"
                        );
                        logs.push((true, format!("{}: {reason}", describe(&injection.message))));
                        dropped.push((injection.message, reason));
                        continue;
                    }
                    injection.message.source_mut().placement = Placement::Depth { depth: d };
                    at_depth
                        .entry(n.saturating_sub(d as usize))
                        .or_default()
                        .push(injection);
                    depth_count += 1;
                }
                Class::Anchor(target, position) => {
                    let Some(&slot) = slot_names.get(&target) else {
                        let reason = format!("anchor \"{target}\" is not in the recipe");
                        logs.push((
                            true,
                            format!("{}: {reason}; dropped", describe(&injection.message)),
                        ));
                        dropped.push((injection.message, reason));
                        continue;
                    };
                    injection.message.source_mut().placement =
                        Placement::Anchor { target, position };
                    at_anchor
                        .entry((slot, position))
                        .or_default()
                        .push(injection);
                    anchor_count += 1;
                }
                Class::List => unreachable!("list-order messages are skeleton"),
            }
        }
        // Order descending; ties by step order (stable sort over step order).
        let sort = |v: &mut Vec<Injection>| {
            v.sort_by(|a, b| b.order.cmp(&a.order).then(a.tie.cmp(&b.tie)))
        };
        at_depth.values_mut().for_each(sort);
        at_anchor.values_mut().for_each(sort);

        // Rule 4: without an enabled chat_history slot the history is not sent.
        if !has_history_slot && !history.is_empty() {
            logs.push((
                true,
                format!(
                    "the recipe has no enabled chat_history slot: {n} history messages not sent"
                ),
            ));
        }

        // Emit.
        let mut out: Vec<PipelineMessage> =
            Vec::with_capacity(skeleton.len() + n + at_depth.len() + at_anchor.len());
        let skeleton_len = skeleton.len();
        let mut history = Some(history);
        for (index, part) in skeleton.into_iter().enumerate() {
            let mut before = at_anchor
                .remove(&(index, AnchorPosition::Before))
                .unwrap_or_default();
            out.extend(before.drain(..).map(|i| i.message));
            match part {
                Part::Message(m) => out.push(*m),
                Part::Slot {
                    kind: TemplateType::ChatHistory,
                    ..
                } => {
                    let history = history.take().unwrap_or_default();
                    let mut history = history.into_iter();
                    let mut next = 0;
                    for (at, group) in std::mem::take(&mut at_depth) {
                        out.extend(history.by_ref().take(at - next));
                        next = at;
                        out.extend(group.into_iter().map(|i| i.message));
                    }
                    out.extend(history);
                }
                Part::Slot {
                    kind: TemplateType::UserProfile,
                    template_id,
                    step_index,
                    role,
                } => {
                    let content = profile.and_then(|p| p.content.as_deref()).unwrap_or("");
                    let content = expand_logged(content, "profile", &mut logs);
                    if content.trim().is_empty() {
                        logs.push((
                            false,
                            "no user profile content; the user_profile slot is empty".into(),
                        ));
                    } else {
                        let mut source = Source::new(SourceKind::Profile, Placement::List);
                        source.template_id = Some(template_id);
                        source.step_index = Some(step_index as u32);
                        out.push(PipelineMessage::new(role, content, source));
                    }
                }
                Part::Slot { .. } => {} // a placeholder is only an anchor
            }
            let mut after = at_anchor
                .remove(&(index, AnchorPosition::After))
                .unwrap_or_default();
            out.extend(after.drain(..).map(|i| i.message));
        }

        let listed = out.len();
        ctx.variables = state.variables().clone();
        for (rule, count) in template_rules.iter().zip(template_too_long) {
            if count > 0 {
                logs.push((
                    true,
                    super::regex_processor::too_long_warning(&rule.id, count, "templates"),
                ));
            }
        }
        if templates_over_cap > 0 {
            logs.push((
                true,
                format!(
                    "the regex rules of this build already added {} MiB; {templates_over_cap} templates were left as they were",
                    REGEX_BUILD_GROWTH >> 20
                ),
            ));
        }
        for (warning, text) in logs {
            if warning {
                ctx.warn(ID, text);
            } else {
                ctx.info(ID, text);
            }
        }
        for (mut message, reason) in dropped {
            let tokens = ctx.count_message(&mut message);
            ctx.dropped.push(DroppedItem {
                processor: ID.into(),
                action: DropAction::Dropped,
                source: message.source().into_owned(),
                count: 1,
                last_history_index: None,
                tokens: Some(tokens),
                reason,
            });
        }
        ctx.info(
            ID,
            format!(
                "{listed} messages: {skeleton_len} skeleton parts, {depth_count} depth and {anchor_count} anchor injections, {} history",
                if has_history_slot { n } else { 0 }
            ),
        );
        ctx.messages = out;
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Class {
    List,
    Depth(u32),
    Anchor(String, AnchorPosition),
}

/// Rule 3: depth wins over anchor; neither means list order.
fn classify(strategy: &InjectionStrategy) -> Class {
    if let Some(d) = strategy.depth {
        Class::Depth(d)
    } else if let Some(target) = &strategy.anchor_target {
        Class::Anchor(target.clone(), strategy.position())
    } else {
        Class::List
    }
}

enum Part {
    Message(Box<PipelineMessage<'static>>),
    Slot {
        kind: TemplateType,
        template_id: String,
        step_index: usize,
        role: Role,
    },
}

struct Injection {
    class: Class,
    order: i32,
    /// Step order, for ties.
    tie: usize,
    message: PipelineMessage<'static>,
}

fn describe(m: &PipelineMessage<'_>) -> String {
    let source = m.source();
    match (&source.template_id, source.step_index, &source.entry_id) {
        (Some(id), Some(step), _) => format!("step {step} (\"{id}\")"),
        (_, _, Some(entry)) => format!("lorebook entry \"{entry}\""),
        _ => source.kind.as_str().to_string(),
    }
}
