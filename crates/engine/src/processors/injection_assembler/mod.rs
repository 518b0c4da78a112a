//! `injection-assembler` (priority 300): recipe choice, instantiation, macros, and placement by
//! the exact rules of RULES 3.
//!
//! It runs in named phases, each a function below: the macro environment ([`macro_env`]), the
//! steps ([`instantiate_steps`]), the earlier processors' candidates ([`place_candidates`]), the
//! places ([`sort_into_places`]) and the output ([`emit`]). The output is built in one pass: the
//! skeleton in step order, each slot expanded in place with its "before" and "after" anchor
//! injections around it, the `chat_history` block carrying its depth injections. Nothing is
//! inserted into a long vector after the fact.
//!
//! SillyTavern's prompt manager (RULES 5.11.3) is a set of settings that are off by default
//! ([`sillytavern`]): joining one depth's injections by role, the character's overrides of
//! templates, field formats, the openers and the example dialogue as messages, fitted to the
//! budget after the rest of the output.

use std::collections::{BTreeMap, HashMap};

use super::regex_processor::too_long_warning;
use crate::limits::REGEX_BUILD_GROWTH;
use crate::macros::MacroEnv;
use crate::model::{
    AgentPreset, AnchorPosition, Character, ContextRecipe, InjectionStrategy, MessageTemplate,
    Role, TemplateType,
};
use crate::pipeline::{
    CompatDefaults, ConfigField, DropAction, DroppedItem, InjectionCandidate, PipelineContext,
    PipelineMessage, Placement, Processor, ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::recipe::choose_recipe;
use crate::regex_rule::{rewrite, CompiledRule};
use crate::said::Said;
use crate::texts;
use crate::EngineError;

mod generation;
mod macro_env;
mod placement;
mod sillytavern;

use generation::*;
pub use macro_env::expand_for_session;
use macro_env::{expand_history, macro_env, LastMessages, Macros, Trace};
use placement::*;
use sillytavern::*;

pub struct InjectionAssembler;

const ID: &str = "injection-assembler";
/// The anchor of the history block (RULES 3.5).
const CHAT_HISTORY: &str = "chat_history";
/// Where an injection candidate without a strategy goes (a lorebook entry in list order), as
/// SillyTavern places world info by default.
const WORLD_INFO: &str = "worldInfoBefore";
/// The place of the lorebook's entries after the character.
const WORLD_INFO_AFTER: &str = "worldInfoAfter";

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
            config_fields: vec![
                ConfigField::boolean("macrosInHistory", "Apply macros to history messages", false)
                    .describe("By default macros expand in templates and lorebook entries only."),
                ConfigField::boolean(
                    "legacyNames",
                    "Replace <USER>, <BOT> and <CHAR>",
                    false,
                )
                .describe(
                    "Where macros expand, <USER> becomes the user's name and <BOT>, <CHAR>, \
                     <GROUP> and <CHARIFNOTGROUP> the character's (any case). Off, they stay as \
                     written.",
                ),
                ConfigField::boolean(
                    "templateAnchors",
                    "Message templates are anchors",
                    false,
                )
                .describe(
                    "Each message template sent in list order is also an anchor named by its \
                     id: injections aimed at it stand directly before or after its message.",
                ),
                ConfigField::select(
                    DEPTH_GROUPING,
                    "Messages at one depth",
                    &[GROUPING_ORDER, GROUPING_ROLE],
                    GROUPING_ORDER,
                )
                .describe(
                    "order: each injection is its own message, by order. role: one message per \
                     role (assistant, user, system), its texts joined by a newline.",
                ),
                ConfigField::text(SYSTEM_PROMPT_TEMPLATE, "Template the character's system prompt replaces", "")
                    .describe(
                        "The id of the template the character's system prompt replaces when it has \
                         one; {{original}} in it stands for the template's own text. Empty: none.",
                    ),
                ConfigField::text(
                    POST_HISTORY_TEMPLATE,
                    "Template the character's post-history instructions replace",
                    "",
                )
                .describe(
                    "The id of the template the character's post-history instructions replace \
                     when it has them; {{original}} stands for the template's own text. Empty: none.",
                ),
                ConfigField::text(PERSONALITY_FORMAT, "Personality format", "").describe(
                    "Sent in place of the charPersonality template, and nothing when the character \
                     has no personality. Empty: the template as it is.",
                ),
                ConfigField::text(SCENARIO_FORMAT, "Scenario format", "").describe(
                    "Sent in place of the scenario template, and nothing when the character has no \
                     scenario. Empty: the template as it is.",
                ),
                ConfigField::boolean(CLEAN_CARD_FIELDS, "Card fields trimmed", false).describe(
                    "The character's description, personality, scenario and example dialogue and \
                     the persona, as the macros read them: trimmed, carriage returns taken out.",
                ),
                ConfigField::text(NEW_CHAT_PROMPT, "New chat opener", "").describe(
                    "A system message sent first in the chat history block. Empty: none.",
                ),
                ConfigField::boolean(EXAMPLE_MESSAGES, "Send the example dialogue as messages", false)
                    .describe(
                        "At the dialogueExamples anchor, the character's example dialogue split at \
                         <START> into blocks, each sent as system messages named example_user and \
                         example_assistant after the example opener.",
                    ),
                ConfigField::text(NEW_EXAMPLE_CHAT_PROMPT, "Example opener", "")
                    .describe("A system message sent before each example block. Empty: none."),
            ]
            .into_iter()
            .chain(generation::config_fields())
            .collect(),
        }
    }

    /// SillyTavern's prompt manager (RULES 5.11.3): in-chat messages joined by role, the card's
    /// overrides of `main` and `jailbreak`, its field formats, the openers, the example dialogue
    /// as messages; the legacy names replaced, and message templates as anchors so that the
    /// author's note can stand before or after the main prompt (RULES 5.11.2).
    fn sillytavern(&self) -> Option<CompatDefaults> {
        Some(
            CompatDefaults::new(texts::ASSEMBLER_SILLYTAVERN)
                .set("legacyNames", true)
                .set("templateAnchors", true)
                .set(DEPTH_GROUPING, GROUPING_ROLE)
                .set(SYSTEM_PROMPT_TEMPLATE, "main")
                .set(POST_HISTORY_TEMPLATE, "jailbreak")
                .set(PERSONALITY_FORMAT, ST_PERSONALITY_FORMAT)
                .set(SCENARIO_FORMAT, ST_SCENARIO_FORMAT)
                .set(CLEAN_CARD_FIELDS, true)
                .set(NEW_CHAT_PROMPT, ST_NEW_CHAT_PROMPT)
                .set(EXAMPLE_MESSAGES, true)
                .set(NEW_EXAMPLE_CHAT_PROMPT, ST_NEW_EXAMPLE_CHAT_PROMPT)
                .set(CONTINUE_NUDGE_PROMPT, ST_CONTINUE_NUDGE_PROMPT)
                .set(CONTINUE_PREFILL, false)
                .set(CONTINUE_POSTFIX, "space")
                .set(IMPERSONATION_PROMPT, ST_IMPERSONATION_PROMPT)
                .set(PREFILL_IN, PREFILL_ANTHROPIC),
        )
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
            texts::RECIPE_APPLIES
                .with("recipe", &recipe.id)
                .with("filters", recipe.model_filter.join(", "))
                .with("model", ctx.model),
        );
        let mut history = std::mem::take(&mut ctx.history).into_vec();
        let mut log = Vec::new();
        let st = StSettings::of(config);
        let generation = Generation::of(ctx, &history, config, &mut log);

        let last = LastMessages::of(&history, ctx.session);
        let lore = take_lore_texts(ctx.preset, recipe, &mut ctx.blackboard.injections, &mut log);
        let env = macro_env(
            ctx.preset,
            ctx.session,
            ctx.model,
            ctx.options,
            &last,
            config.bool("legacyNames"),
        );
        let cleaned = config.bool(CLEAN_CARD_FIELDS).then(|| CardFields::of(&env));
        let env = MacroEnv {
            wi_before: &lore.before,
            wi_after: &lore.after,
            ..match &cleaned {
                Some(fields) => fields.apply(env),
                None => env,
            }
        };
        let mut macros = Macros::new(
            env,
            std::mem::take(&mut ctx.variables),
            Trace::of(ctx.options),
            ctx.cache.macros(),
        );
        if config.bool("macrosInHistory") {
            expand_history(&mut history, &mut macros, &mut log);
        }

        let mut rules = TemplateRules::new(std::mem::take(&mut ctx.blackboard.template_rules));
        let mut layout = instantiate_steps(
            ctx.preset,
            recipe,
            &st,
            &mut macros,
            &mut rules,
            &mut ctx.blackboard.regex_growth,
            &mut log,
        )?;
        let folded = place_candidates(
            std::mem::take(&mut ctx.blackboard.injections),
            recipe.steps.len(),
            &mut layout,
            st.example_messages,
            &mut macros,
            &mut log,
        );
        if st.example_messages {
            add_examples(&mut layout, &st, ctx.preset, folded, &mut macros, &mut log);
        }
        let n = history.len();
        let has_history_slot = layout.has_history_slot;
        let skeleton_len = layout.skeleton.len();
        let mut places = sort_into_places(
            std::mem::take(&mut layout.injections),
            &layout,
            n,
            st.join_by_role,
            &mut log,
        );
        let profile = ctx.session.user_profile.as_ref();
        let profile_content = profile.and_then(|p| p.content.as_deref()).unwrap_or("");
        let history_closing = generation.history_closing(config, &history, &mut macros, &mut log);
        let (mut out, examples) = emit(
            layout.skeleton,
            &mut places,
            history,
            profile_content,
            HistoryEnds {
                opener: st.new_chat_prompt,
                closing: history_closing,
            },
            &mut macros,
            &mut log,
        );
        if !generation.kind.is_normal() {
            let input = ctx.options.input.as_deref();
            out.extend(generation.closing(config, input, &mut macros, &mut log));
        }
        if let Some(examples) = examples {
            fit_examples(ctx, &mut out, examples, &mut log);
        }
        generation.move_continued_last(&mut out, &mut log);
        ctx.reply_start = generation.reply_start(ctx, config, &mut macros, &mut log);

        let listed = out.len();
        ctx.variables = macros.state.variables().clone();
        ctx.blackboard.macro_traces = macros.traces.take().unwrap_or_default();
        ctx.blackboard.macro_trace = macros.state.take_detail();
        rules.report(&mut log);
        for line in log {
            match line {
                LogLine::Info(said) => ctx.info(ID, said),
                LogLine::Warning(said) => ctx.warn(ID, said),
            }
        }
        for (mut message, reason) in places.dropped {
            let tokens = ctx.count_message(&mut message);
            ctx.dropped.push(DroppedItem::one(
                ID,
                DropAction::Dropped,
                message.source().into_owned(),
                Some(tokens),
                reason,
            ));
        }
        ctx.info(
            ID,
            texts::ASSEMBLED
                .with("listed", listed)
                .with("skeleton", skeleton_len)
                .with("depth", places.depth_count)
                .with("anchor", places.anchor_count)
                .with("history", if has_history_slot { n } else { 0 }),
        );
        ctx.messages = out;
        Ok(())
    }
}

/// The lorebook's texts that templates write themselves with `{{wiBefore}}` and `{{wiAfter}}`
/// (RULES 5.11.5).
#[derive(Default)]
struct LoreTexts {
    before: String,
    after: String,
}

/// When an enabled step of `recipe` writes `{{wiBefore}}` (or `{{loreBefore}}`), the candidates
/// aimed before or after the `worldInfoBefore` anchor, and those in list order, which go there,
/// are taken out of `candidates` and become its text, joined by line breaks; the same for
/// `{{wiAfter}}` and the `worldInfoAfter` anchor. Candidates placed at a depth stay.
fn take_lore_texts(
    preset: &AgentPreset,
    recipe: &ContextRecipe,
    candidates: &mut Vec<InjectionCandidate>,
    log: &mut Vec<LogLine>,
) -> LoreTexts {
    let mut texts_of = LoreTexts::default();
    if candidates.is_empty() {
        return texts_of;
    }
    let writes = |names: &[&str]| {
        recipe.steps.iter().filter(|s| s.enabled).any(|step| {
            let content = step
                .overrides
                .as_ref()
                .and_then(|o| o.content.as_deref())
                .or_else(|| preset.template(&step.message_id)?.content.as_deref())
                .unwrap_or("");
            content.contains("{{") && {
                let lower = content.to_ascii_lowercase();
                names.iter().any(|n| lower.contains(n))
            }
        })
    };
    let before = writes(&["{{wibefore}}", "{{lorebefore}}"]);
    let after = writes(&["{{wiafter}}", "{{loreafter}}"]);
    if !before && !after {
        return texts_of;
    }
    let mut taken = [0usize; 2];
    candidates.retain(|c| {
        let place = match (c.strategy.depth, c.strategy.anchor_target.as_deref()) {
            (None, None) | (None, Some(WORLD_INFO)) if before => 0,
            (None, Some(WORLD_INFO_AFTER)) if after => 1,
            _ => return true,
        };
        if !c.content.trim().is_empty() {
            let text = if place == 0 {
                &mut texts_of.before
            } else {
                &mut texts_of.after
            };
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&c.content);
            taken[place] += 1;
        }
        false
    });
    for (count, name) in taken.into_iter().zip(["{{wiBefore}}", "{{wiAfter}}"]) {
        if count > 0 {
            log.push(LogLine::Info(
                texts::LORE_WRITTEN.with("count", count).with("macro", name),
            ));
        }
    }
    texts_of
}

/// One line the assembler logs. The phases collect them in order; `execute` writes them out
/// once assembly is done.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LogLine {
    Info(Said),
    Warning(Said),
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
                    texts::RULE_TOO_LONG_TEMPLATES,
                    &rule.id,
                    count,
                )));
            }
        }
        if self.over_cap > 0 {
            log.push(LogLine::Warning(
                texts::GROWTH_SPENT_TEMPLATES
                    .with("mib", REGEX_BUILD_GROWTH >> 20)
                    .with("count", self.over_cap),
            ));
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
        label: &Said,
        log: &mut Vec<LogLine>,
    ) {
        if *strategy != InjectionStrategy::default() {
            log.push(LogLine::Warning(
                texts::SLOT_STRATEGY_IGNORED.part("step", label.clone()),
            ));
        }
        let duplicate = match template.kind {
            TemplateType::ChatHistory => std::mem::replace(&mut self.has_history_slot, true),
            TemplateType::UserProfile => std::mem::replace(&mut self.has_profile_slot, true),
            _ => self.anchors.contains_key(&template.id),
        };
        if duplicate {
            log.push(LogLine::Warning(
                texts::SECOND_SLOT
                    .part("step", label.clone())
                    .part("kind", template.kind.said()),
            ));
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
/// text, the text with its macros expanded and the template rules applied, a blank one (under
/// SillyTavern compatibility an empty one) not sent; then classifies each message (RULES 3.3): a slot or a message in list order joins the
/// skeleton, the others are injections to place.
fn instantiate_steps(
    preset: &AgentPreset,
    recipe: &ContextRecipe,
    st: &StSettings<'_>,
    macros: &mut Macros<'_>,
    rules: &mut TemplateRules,
    regex_growth: &mut usize,
    log: &mut Vec<LogLine>,
) -> Result<Layout, EngineError> {
    let template_anchors = st.template_anchors;
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
        // Said only when something is logged about the step.
        let label = || {
            texts::STEP
                .with("step", step_index)
                .with("template", &template.id)
        };

        if template.kind.is_slot() {
            layout.add_slot(template, step_index, role, &strategy, &label(), log);
            continue;
        }

        let raw = overrides
            .and_then(|o| o.content.as_deref())
            .or(template.content.as_deref())
            .unwrap_or("");
        let raw = st.step_text(&template.id, preset.character.as_ref(), raw);
        let mut source = Source::new(SourceKind::Template, Placement::List);
        source.template_id = Some(template.id.clone());
        source.step_index = Some(step_index as u32);
        let content = macros.expand_at(&raw, || source.expansion_position(), log);
        let content = rules.apply(role, content, regex_growth);
        // SillyTavern sends a prompt in list order that is only white space (RULES 3.2).
        let in_list = matches!(classify(&strategy), Class::List);
        let blank = match preset.compatibility.is_native() || !in_list {
            true => content.trim().is_empty(),
            false => content.is_empty(),
        };
        if blank {
            log.push(LogLine::Info(texts::STEP_EMPTY.part("step", label())));
            continue;
        }
        let message = PipelineMessage::new(role, content, source);
        match classify(&strategy) {
            Class::List => {
                if template_anchors {
                    let index = layout.skeleton.len();
                    layout.anchors.entry(template.id.clone()).or_insert(index);
                }
                layout.skeleton.push(Part::Message(Box::new(message)))
            }
            class => {
                if strategy.depth.is_some() && strategy.anchor_target.is_some() {
                    log.push(LogLine::Warning(
                        texts::DEPTH_AND_ANCHOR.part("step", label()),
                    ));
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

#[cfg(test)]
mod tests;
