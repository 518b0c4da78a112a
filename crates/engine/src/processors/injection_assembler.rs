//! `injection-assembler` (priority 300): recipe choice, instantiation, macros, and placement by
//! the exact rules of RULES 3.
//!
//! It runs in named phases, each a function below: the macro environment ([`macro_env`]), the
//! steps ([`instantiate_steps`]), the earlier processors' candidates ([`place_candidates`]), the
//! places ([`sort_into_places`]) and the output ([`emit`]). The output is built in one pass: the
//! skeleton in step order, each slot expanded in place with its "before" and "after" anchor
//! injections around it, the `chat_history` block carrying its depth injections. Nothing is
//! inserted into a long vector after the fact.

use std::collections::{BTreeMap, HashMap};

use super::regex_processor::too_long_warning;
use crate::limits::REGEX_BUILD_GROWTH;
use crate::macros::{expand, has_macros, MacroEnv, MacroState};
use crate::model::{
    AgentPreset, AnchorPosition, Character, ContextRecipe, InjectionStrategy, MessageTemplate,
    Role, Session, TemplateType,
};
use crate::pipeline::{
    BuildOptions, ConfigField, DropAction, DroppedItem, InjectionCandidate, PipelineContext,
    PipelineMessage, Placement, Processor, ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::recipe::choose_recipe;
use crate::regex_rule::{rewrite, CompiledRule};
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

    /// The phases in order: recipe choice (RULES 3.1), the macro environment (RULES 4), the
    /// recipe's steps (RULES 3.2, 3.3), the earlier processors' candidates (RULES 6.4), their
    /// places (RULES 3.4, 3.5), and the output (RULES 3.5, 3.6). What the phases log is written
    /// once they are done, in the order they logged it.
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
        let mut log = Vec::new();

        let last = LastMessages::of(&history);
        let env = macro_env(ctx.preset, ctx.session, ctx.model, ctx.options, &last);
        let mut macros = Macros::new(env, std::mem::take(&mut ctx.variables));
        if config.bool("macrosInHistory") {
            expand_history(&mut history, &mut macros, &mut log);
        }

        let mut rules = TemplateRules::new(std::mem::take(&mut ctx.blackboard.template_rules));
        let mut layout = instantiate_steps(
            ctx.preset,
            recipe,
            &mut macros,
            &mut rules,
            &mut ctx.blackboard.regex_growth,
            &mut log,
        )?;
        place_candidates(
            std::mem::take(&mut ctx.blackboard.injections),
            recipe.steps.len(),
            &mut layout,
            &mut macros,
            &mut log,
        );
        let n = history.len();
        let has_history_slot = layout.has_history_slot;
        let skeleton_len = layout.skeleton.len();
        let mut places =
            sort_into_places(std::mem::take(&mut layout.injections), &layout, n, &mut log);
        let profile = ctx.session.user_profile.as_ref();
        let profile_content = profile.and_then(|p| p.content.as_deref()).unwrap_or("");
        let out = emit(
            layout.skeleton,
            &mut places,
            history,
            profile_content,
            &mut macros,
            &mut log,
        );

        let listed = out.len();
        ctx.variables = macros.state.variables().clone();
        rules.report(&mut log);
        for line in log {
            match line {
                LogLine::Info(text) => ctx.info(ID, text),
                LogLine::Warning(text) => ctx.warn(ID, text),
            }
        }
        for (mut message, reason) in places.dropped {
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
                "{listed} messages: {skeleton_len} skeleton parts, {} depth and {} anchor injections, {} history",
                places.depth_count,
                places.anchor_count,
                if has_history_slot { n } else { 0 }
            ),
        );
        ctx.messages = out;
        Ok(())
    }
}

/// One line the assembler logs. The phases collect them in order; `execute` writes them out
/// once assembly is done.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LogLine {
    Info(String),
    Warning(String),
}

/// The newest history messages of any role, of the user and of the assistant, as the earlier
/// processors left the history: what `{{lastMessage}}`, `{{lastUserMessage}}` and
/// `{{lastCharMessage}}` read (RULES 4.2).
struct LastMessages {
    any: String,
    user: String,
    assistant: String,
}

impl LastMessages {
    fn of(history: &[PipelineMessage<'_>]) -> Self {
        let last_of = |role: Option<Role>| {
            history
                .iter()
                .rev()
                .find(|m| role.is_none_or(|r| m.role == r))
                .map(|m| m.content().to_string())
                .unwrap_or_default()
        };
        LastMessages {
            any: last_of(None),
            user: last_of(Some(Role::User)),
            assistant: last_of(Some(Role::Assistant)),
        }
    }
}

/// The macro environment (RULES 4.2): the user profile, the preset's character (its name
/// falling back to the preset's), the session's summary, the model id, the newest history texts
/// and the build's timestamp; the session seeds the random macros (RULES 4.3).
fn macro_env<'x>(
    preset: &'x AgentPreset,
    session: &'x Session,
    model: &'x str,
    options: &BuildOptions,
    last: &'x LastMessages,
) -> MacroEnv<'x> {
    let character = preset.character.as_ref();
    let field = |f: fn(&Character) -> &Option<String>| {
        character.and_then(|c| f(c).as_deref()).unwrap_or("")
    };
    let profile = session.user_profile.as_ref();
    MacroEnv {
        user: profile.map(|p| p.name.as_str()).unwrap_or("User"),
        char_name: character.map(|c| c.name.as_str()).unwrap_or(&preset.name),
        description: field(|c| &c.description),
        personality: field(|c| &c.personality),
        scenario: field(|c| &c.scenario),
        persona: profile.and_then(|p| p.content.as_deref()).unwrap_or(""),
        mes_examples: field(|c| &c.example_dialogue),
        summary: session.summary.as_deref().unwrap_or(""),
        model,
        last_message: &last.any,
        last_user_message: &last.user,
        last_char_message: &last.assistant,
        timestamp: options.timestamp,
        session_id: &session.id,
        message_count: session.messages.len(),
    }
}

/// The macros of one assembly: the environment, and the variables and random stream that carry
/// from one text to the next (RULES 4.3).
struct Macros<'x> {
    env: MacroEnv<'x>,
    state: MacroState,
}

impl<'x> Macros<'x> {
    fn new(env: MacroEnv<'x>, variables: BTreeMap<String, String>) -> Self {
        let state = MacroState::new(&env, variables);
        Macros { env, state }
    }

    /// `text` with its macros expanded (RULES 4); each warning is logged under `position`.
    fn expand(&mut self, text: &str, position: &str, log: &mut Vec<LogLine>) -> String {
        if !has_macros(text) {
            return text.to_string();
        }
        let out = expand(text, &self.env, &mut self.state, position);
        log.extend(
            out.warnings
                .into_iter()
                .map(|w| LogLine::Warning(format!("{position}: {w}"))),
        );
        out.text
    }
}

/// With the `macrosInHistory` setting, the history's macros are expanded first, oldest first
/// (RULES 4.1, 4.3).
fn expand_history(
    history: &mut [PipelineMessage<'_>],
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) {
    for (i, m) in history.iter_mut().enumerate() {
        if has_macros(m.content()) {
            let text = macros.expand(m.content(), &format!("history:{i}"), log);
            m.set_content(text);
        }
    }
}

/// The regex rules of scope `templates` or `both`, compiled by the regex processor, as the
/// assembler applies them to each step's text after its macros (RULES 3.2 item 6, 5.2), within
/// the growth the build has left; with what they could not do, for the warnings.
struct TemplateRules {
    rules: Vec<CompiledRule>,
    /// For each rule, how many texts it left alone because it would have grown them too much.
    too_long: Vec<u32>,
    /// Texts left as they were because the build's regex growth was spent.
    over_cap: u32,
}

impl TemplateRules {
    fn new(rules: Vec<CompiledRule>) -> Self {
        TemplateRules {
            too_long: vec![0; rules.len()],
            rules,
            over_cap: 0,
        }
    }

    /// `content` after the rules that apply to `role`; `growth` is what the build's regex rules
    /// have added so far (RULES 5.2, last item).
    fn apply(&mut self, role: Role, content: String, growth: &mut usize) -> String {
        let applying = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.applies(role, None));
        let done = rewrite(applying, &content);
        for &k in &done.too_long {
            self.too_long[k] += 1;
        }
        let Some(next) = done.text else {
            return content;
        };
        let grown = next.len().saturating_sub(content.len());
        if *growth + grown <= REGEX_BUILD_GROWTH {
            *growth += grown;
            next
        } else {
            *growth = REGEX_BUILD_GROWTH;
            self.over_cap += 1;
            content
        }
    }

    /// One warning per rule that was left out somewhere, and one when the build's growth ran out.
    fn report(&self, log: &mut Vec<LogLine>) {
        for (rule, &count) in self.rules.iter().zip(&self.too_long) {
            if count > 0 {
                log.push(LogLine::Warning(too_long_warning(
                    &rule.id,
                    count,
                    "templates",
                )));
            }
        }
        if self.over_cap > 0 {
            log.push(LogLine::Warning(format!(
                "the regex rules of this build already added {} MiB; {} templates were left as they were",
                REGEX_BUILD_GROWTH >> 20,
                self.over_cap
            )));
        }
    }
}

/// What the steps make: the skeleton in step order, the injections still to place, and the
/// anchors the recipe offers.
struct Layout {
    skeleton: Vec<Part>,
    injections: Vec<Injection>,
    /// Each anchor name (RULES 3.5 item 1) with the skeleton index of its slot.
    anchors: HashMap<String, usize>,
    has_history_slot: bool,
    has_profile_slot: bool,
}

impl Layout {
    /// A slot step joins the skeleton and names its anchors, unless it repeats a slot already
    /// there (RULES 3.3 item 4, 3.5 items 1 and 5).
    fn add_slot(
        &mut self,
        template: &MessageTemplate,
        step_index: usize,
        role: Role,
        strategy: &InjectionStrategy,
        label: &str,
        log: &mut Vec<LogLine>,
    ) {
        if *strategy != InjectionStrategy::default() {
            log.push(LogLine::Warning(format!(
                "{label}: a slot is always placed in list order; its strategy is ignored"
            )));
        }
        let duplicate = match template.kind {
            TemplateType::ChatHistory => std::mem::replace(&mut self.has_history_slot, true),
            TemplateType::UserProfile => std::mem::replace(&mut self.has_profile_slot, true),
            _ => self.anchors.contains_key(&template.id),
        };
        if duplicate {
            log.push(LogLine::Warning(format!(
                "{label}: a second {} slot is ignored",
                template.kind.as_str()
            )));
            return;
        }
        let index = self.skeleton.len();
        self.anchors.entry(template.id.clone()).or_insert(index);
        match template.kind {
            TemplateType::ChatHistory => {
                self.anchors.insert(CHAT_HISTORY.into(), index);
            }
            TemplateType::UserProfile => {
                self.anchors.insert("user_profile".into(), index);
            }
            _ => {}
        }
        self.skeleton.push(Part::Slot {
            kind: template.kind,
            template_id: template.id.clone(),
            step_index,
            role,
        });
    }
}

/// Instantiates the recipe's enabled steps (RULES 3.2): each step's template, role, strategy and
/// text, the text with its macros expanded and the template rules applied, a blank one not
/// sent; then classifies each message (RULES 3.3): a slot or a message in list order joins the
/// skeleton, the others are injections to place.
fn instantiate_steps(
    preset: &AgentPreset,
    recipe: &ContextRecipe,
    macros: &mut Macros<'_>,
    rules: &mut TemplateRules,
    regex_growth: &mut usize,
    log: &mut Vec<LogLine>,
) -> Result<Layout, EngineError> {
    let mut layout = Layout {
        skeleton: Vec::new(),
        injections: Vec::new(),
        anchors: HashMap::new(),
        has_history_slot: false,
        has_profile_slot: false,
    };
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
            layout.add_slot(template, step_index, role, &strategy, &label, log);
            continue;
        }

        let raw = overrides
            .and_then(|o| o.content.as_deref())
            .or(template.content.as_deref())
            .unwrap_or("");
        let content = macros.expand(raw, &format!("template:{}#{step_index}", template.id), log);
        let content = rules.apply(role, content, regex_growth);
        if content.trim().is_empty() {
            log.push(LogLine::Info(format!(
                "{label}: empty after macros and rules; not sent"
            )));
            continue;
        }
        let mut source = Source::new(SourceKind::Template, Placement::List);
        source.template_id = Some(template.id.clone());
        source.step_index = Some(step_index as u32);
        let message = PipelineMessage::new(role, content, source);
        match classify(&strategy) {
            Class::List => layout.skeleton.push(Part::Message(Box::new(message))),
            class => {
                if strategy.depth.is_some() && strategy.anchor_target.is_some() {
                    log.push(LogLine::Warning(format!(
                        "{label}: has both depth and anchor; depth wins"
                    )));
                }
                layout.injections.push(Injection {
                    class,
                    order: strategy.order(),
                    tie: step_index,
                    message,
                });
            }
        }
    }
    Ok(layout)
}

/// The injection candidates of earlier processors (the lorebook's entries) join the injections,
/// placed by the same rules after every step in tie order (`tie_base` is the number of steps);
/// their macros are expanded, a blank one is not sent, and one without a place goes after the
/// `worldInfoBefore` anchor, or, in a recipe without it, directly before the chat history
/// (RULES 6.4).
fn place_candidates(
    candidates: Vec<InjectionCandidate>,
    tie_base: usize,
    layout: &mut Layout,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) {
    for (i, candidate) in candidates.into_iter().enumerate() {
        let position = candidate
            .source
            .entry_id
            .as_deref()
            .or(candidate.source.template_id.as_deref())
            .unwrap_or("injection")
            .to_string();
        let content = macros.expand(
            &candidate.content,
            &format!("{}:{position}", candidate.source.kind.as_str()),
            log,
        );
        if content.trim().is_empty() {
            log.push(LogLine::Info(format!(
                "{} \"{position}\": empty after macros; not sent",
                candidate.source.kind.as_str()
            )));
            continue;
        }
        let message = PipelineMessage::new(candidate.role, content, candidate.source);
        let class = match classify(&candidate.strategy) {
            Class::List => {
                let anchors = &layout.anchors;
                if anchors.contains_key(WORLD_INFO) || !anchors.contains_key(CHAT_HISTORY) {
                    Class::Anchor(WORLD_INFO.into(), AnchorPosition::After)
                } else {
                    Class::Anchor(CHAT_HISTORY.into(), AnchorPosition::Before)
                }
            }
            class => class,
        };
        layout.injections.push(Injection {
            class,
            order: candidate.strategy.order(),
            tie: tie_base + i,
            message,
        });
    }
}

/// Where the injections go: depth injections by the history index they stand before, anchor
/// injections by their slot and side, each place ordered by `order`, highest first, then by
/// step order; and what could not be placed.
struct Places {
    at_depth: BTreeMap<usize, Vec<Injection>>,
    at_anchor: HashMap<(usize, AnchorPosition), Vec<Injection>>,
    /// Injections with no place, each with the reason.
    dropped: Vec<(PipelineMessage<'static>, String)>,
    depth_count: usize,
    anchor_count: usize,
}

/// Sorts the injections into their places over a history of `n` messages. A depth-d injection
/// goes before history index max(0, n − d), and is dropped without an enabled `chat_history`
/// slot (RULES 3.4); an anchor injection goes before or after its anchor's block, and is dropped
/// when the recipe has no such anchor (RULES 3.5). Without a `chat_history` slot the history is
/// not sent, which one warning says (RULES 3.4 item 5).
fn sort_into_places(
    injections: Vec<Injection>,
    layout: &Layout,
    n: usize,
    log: &mut Vec<LogLine>,
) -> Places {
    let mut places = Places {
        at_depth: BTreeMap::new(),
        at_anchor: HashMap::new(),
        dropped: Vec::new(),
        depth_count: 0,
        anchor_count: 0,
    };
    for mut injection in injections {
        match injection.class.clone() {
            Class::Depth(d) => {
                if !layout.has_history_slot {
                    let reason = format!(
                        "depth {d} injection dropped: the recipe has no enabled chat_history slot"
                    );
                    log.push(LogLine::Warning(format!(
                        "{}: {reason}",
                        describe(&injection.message)
                    )));
                    places.dropped.push((injection.message, reason));
                    continue;
                }
                injection.message.source_mut().placement = Placement::Depth { depth: d };
                places
                    .at_depth
                    .entry(n.saturating_sub(d as usize))
                    .or_default()
                    .push(injection);
                places.depth_count += 1;
            }
            Class::Anchor(target, position) => {
                let Some(&slot) = layout.anchors.get(&target) else {
                    let reason = format!("anchor \"{target}\" is not in the recipe");
                    log.push(LogLine::Warning(format!(
                        "{}: {reason}; dropped",
                        describe(&injection.message)
                    )));
                    places.dropped.push((injection.message, reason));
                    continue;
                };
                injection.message.source_mut().placement = Placement::Anchor { target, position };
                places
                    .at_anchor
                    .entry((slot, position))
                    .or_default()
                    .push(injection);
                places.anchor_count += 1;
            }
            Class::List => unreachable!("list-order messages are skeleton"),
        }
    }
    // Order descending; ties by step order (stable sort over step order).
    let sort =
        |v: &mut Vec<Injection>| v.sort_by(|a, b| b.order.cmp(&a.order).then(a.tie.cmp(&b.tie)));
    places.at_depth.values_mut().for_each(sort);
    places.at_anchor.values_mut().for_each(sort);

    if !layout.has_history_slot && n > 0 {
        log.push(LogLine::Warning(format!(
            "the recipe has no enabled chat_history slot: {n} history messages not sent"
        )));
    }
    places
}

/// The output in one pass over the skeleton (RULES 3.5, 3.6): each part with its "before" and
/// "after" anchor injections around it; the `chat_history` slot as the history, oldest first,
/// with the depth injections among it; the `user_profile` slot as the profile's content with
/// macros expanded, when there is any; a placeholder as nothing.
fn emit<'s>(
    skeleton: Vec<Part>,
    places: &mut Places,
    history: Vec<PipelineMessage<'s>>,
    profile_content: &str,
    macros: &mut Macros<'_>,
    log: &mut Vec<LogLine>,
) -> Vec<PipelineMessage<'s>> {
    let mut out: Vec<PipelineMessage<'s>> = Vec::with_capacity(
        skeleton.len() + history.len() + places.at_depth.len() + places.at_anchor.len(),
    );
    let mut history = Some(history);
    for (index, part) in skeleton.into_iter().enumerate() {
        let mut before = places
            .at_anchor
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
                for (at, group) in std::mem::take(&mut places.at_depth) {
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
                let content = macros.expand(profile_content, "profile", log);
                if content.trim().is_empty() {
                    log.push(LogLine::Info(
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
        let mut after = places
            .at_anchor
            .remove(&(index, AnchorPosition::After))
            .unwrap_or_default();
        out.extend(after.drain(..).map(|i| i.message));
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Class {
    List,
    Depth(u32),
    Anchor(String, AnchorPosition),
}

/// RULES 3.3: depth wins over anchor; neither means list order.
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

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use crate::cache::BuildCache;
    use crate::model::{parse_preset, parse_session};
    use crate::pipeline::{BuildOptions, BuildRequest, LogLevel};

    /// The assembler's log lines of one build of `preset` over `session`, in order.
    fn assembler_logs(preset: &str, session: &str) -> Vec<(LogLevel, String)> {
        let preset = parse_preset(preset).expect("preset");
        let session = parse_session(session).expect("session");
        let options =
            BuildOptions::at(DateTime::parse_from_rfc3339("2026-11-22T10:30:00+00:00").unwrap());
        let cache = BuildCache::new();
        let result = crate::build(&BuildRequest {
            preset: &preset,
            session: &session,
            model: "gpt-4o",
            options: &options,
            cache: &cache,
            profiles: &[],
            assets: &crate::assets::InlineAssets,
        })
        .expect("builds");
        result
            .logs
            .into_iter()
            .filter(|l| l.processor == super::ID)
            .map(|l| (l.level, l.message))
            .collect()
    }

    const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "Hello {{nope}}"},
        {"role": "assistant", "content": "Hi."}]}"#;

    #[test]
    fn every_phase_logs_in_order_and_the_lines_are_written_after_assembly() {
        let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                {"id": "sys", "role": "system", "content": "You are {{char}}. {{bogus}}"},
                {"id": "hist", "role": "system", "type": "chat_history"},
                {"id": "blank", "role": "system", "content": "  {{trim}}  "},
                {"id": "both", "role": "system", "content": "Both."},
                {"id": "lost", "role": "system", "content": "Lost."},
                {"id": "prof", "role": "system", "type": "user_profile"}],
            "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
                {"messageId": "sys", "enabled": true},
                {"messageId": "hist", "enabled": true, "injectionStrategy": {"depth": 1}},
                {"messageId": "hist", "enabled": true},
                {"messageId": "blank", "enabled": true},
                {"messageId": "both", "enabled": true,
                    "injectionStrategy": {"depth": 1, "anchorTarget": "chat_history"}},
                {"messageId": "lost", "enabled": true,
                    "injectionStrategy": {"anchorTarget": "nowhere"}},
                {"messageId": "prof", "enabled": true}]}],
            "lorebook": {"entries": [
                {"id": "quiet", "keys": [], "constant": true, "content": "{{setvar::x::1}}"},
                {"id": "lore", "keys": [], "constant": true, "content": "Lore {{getvar::x}}"}]},
            "processors": [{"id": "injection-assembler",
                "settings": {"macrosInHistory": true}}]}"#;
        let warn = |s: &str| (LogLevel::Warning, s.to_string());
        let info = |s: &str| (LogLevel::Info, s.to_string());
        assert_eq!(
            assembler_logs(preset, SESSION),
            [
                info("recipe \"r\" [*] applies to model \"gpt-4o\""),
                warn("history:0: unknown macro {{nope}}"),
                warn("template:sys#0: unknown macro {{bogus}}"),
                warn("step 1 (\"hist\"): a slot is always placed in list order; its strategy is ignored"),
                warn("step 2 (\"hist\"): a second chat_history slot is ignored"),
                info("step 3 (\"blank\"): empty after macros and rules; not sent"),
                warn("step 4 (\"both\"): has both depth and anchor; depth wins"),
                info("lorebook \"quiet\": empty after macros; not sent"),
                warn("step 5 (\"lost\"): anchor \"nowhere\" is not in the recipe; dropped"),
                info("no user profile content; the user_profile slot is empty"),
                info("5 messages: 3 skeleton parts, 1 depth and 1 anchor injections, 2 history"),
            ]
        );
    }

    #[test]
    fn without_a_history_slot_depth_injections_and_the_history_are_dropped_with_warnings() {
        let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                {"id": "sys", "role": "system", "content": "System."},
                {"id": "deep", "role": "system", "content": "Deep."}],
            "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
                {"messageId": "sys", "enabled": true},
                {"messageId": "deep", "enabled": true, "injectionStrategy": {"depth": 0}}]}]}"#;
        let warn = |s: &str| (LogLevel::Warning, s.to_string());
        let info = |s: &str| (LogLevel::Info, s.to_string());
        assert_eq!(
            assembler_logs(preset, SESSION),
            [
                info("recipe \"r\" [*] applies to model \"gpt-4o\""),
                warn("step 1 (\"deep\"): depth 0 injection dropped: the recipe has no enabled chat_history slot"),
                warn("the recipe has no enabled chat_history slot: 2 history messages not sent"),
                info("1 messages: 1 skeleton parts, 0 depth and 0 anchor injections, 0 history"),
            ]
        );
    }
}
