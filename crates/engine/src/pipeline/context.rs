//! The pipeline context: read-only inputs, the history and message list in intermediate form, a
//! shared blackboard, and the logs every processor writes.

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

use super::{
    BuildRequest, DroppedItem, GenerationType, History, PipelineMessage, ReplyStart, Source,
    SourceKind,
};
use crate::cache::{BuildCache, HistoryCounts};
use crate::model::{AgentPreset, InjectionStrategy, Role, Session};
use crate::profiles::ModelProfile;
use crate::said::Said;
use crate::tokens::{TokenizerChoice, TokenizerKind};

/// Options of one build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildOptions {
    /// The text the user is about to send: appended as the newest user message for this build,
    /// unless the session already ends with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<Ephemeral>,
    /// Overrides the model profile's context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// Overrides the model profile's reserved reply tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<u32>,
    /// What the time macros read; fixed per build so a preview does not flicker.
    pub timestamp: DateTime<FixedOffset>,
    /// Text completion with this instruct template (RULES 5.12), over the model profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruct: Option<crate::instruct::InstructTemplate>,
    /// Keep what each expanded text was made of (`BuildResult::macro_traces`) for the
    /// turn-to-turn diff to name a change's cause (RULES 9.8); off, a build keeps none, and the
    /// live preview pays nothing for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_macros: bool,
    /// The macro tracer (RULES 4.6): every macro evaluated, with its place, arguments, output
    /// and the variable it changed, and the variables before and after
    /// (`BuildResult::macro_trace`). Off, the build keeps no recorder and pays nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_macros_in_detail: bool,
    /// The lorebook tester (RULES 6.6): every entry of the book with whether it fired and why,
    /// or why not (`BuildResult::lorebook_test`). Off, the lorebook explains nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explain_lorebook: bool,
    /// What kind of generation the build is for (RULES 5.14): an ordinary reply, a continuation
    /// of the last one, the user's next message, or a one-off quiet request.
    #[serde(default, skip_serializing_if = "GenerationType::is_normal")]
    pub generation_type: GenerationType,
    /// "Start reply with": the text the reply must begin with, over the preset's own prefill
    /// for the type (RULES 5.14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    /// Long-term memory (RULES 5.15): the stored messages the library found closest to the
    /// input, best first, for the `memory` processor to place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemoryHit>,
    /// Why this build has no memory although memory is on (the search ran out of time, the
    /// embeddings endpoint failed): said as a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_skipped: Option<Said>,
    /// The stored position of the last message the session's summary covers (RULES 5.15): with
    /// the `memory` processor's `omitSummarized`, the history leaves it and every older one out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarized_through: Option<u32>,
}

/// A stored message recalled from long-term memory for one build (RULES 5.15).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    pub role: Role,
    /// Its text, as stored.
    pub text: String,
    /// Cosine similarity to the input, from -1 to 1.
    pub score: f32,
    /// Its position in the stored session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

impl BuildOptions {
    pub fn at(timestamp: DateTime<FixedOffset>) -> Self {
        BuildOptions {
            input: None,
            ephemeral: None,
            context_window: None,
            reserve: None,
            timestamp,
            instruct: None,
            trace_macros: false,
            trace_macros_in_detail: false,
            explain_lorebook: false,
            generation_type: GenerationType::Normal,
            prefill: None,
            memory: Vec::new(),
            memory_skipped: None,
            summarized_through: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum EphemeralKind {
    Document,
    Quote,
    Custom,
}

impl EphemeralKind {
    /// The kind's name, as said inside a text (its English is [`EphemeralKind::as_str`]).
    pub fn said(self) -> crate::said::Said {
        match self {
            EphemeralKind::Document => crate::texts::EPHEMERAL_DOCUMENT,
            EphemeralKind::Quote => crate::texts::EPHEMERAL_QUOTE,
            EphemeralKind::Custom => crate::texts::EPHEMERAL_CUSTOM,
        }
        .into()
    }
}

impl EphemeralKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EphemeralKind::Document => "document",
            EphemeralKind::Quote => "quote",
            EphemeralKind::Custom => "custom",
        }
    }
}

/// One-turn content for this build only (RULES 5.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Ephemeral {
    pub kind: EphemeralKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Info,
    Warning,
    Error,
}

/// One line a processor wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub processor: String,
    pub level: LogLevel,
    /// In English, as the command line prints it.
    pub message: String,
    /// The same as a code with parameters, for the app to say in its language.
    pub said: Said,
}

/// A message that a processor wants placed like a recipe step (the lorebook's activated
/// entries): the assembler places candidates by their strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectionCandidate {
    pub role: Role,
    pub content: String,
    pub strategy: InjectionStrategy,
    pub source: Source,
}

/// Shared state between processors of one build.
#[derive(Debug, Clone, Default)]
pub struct Blackboard {
    /// Messages to place by strategy, read by the injection assembler.
    pub injections: Vec<InjectionCandidate>,
    /// Regex rules of scope `templates` or `both`, compiled by the regex processor, applied by the
    /// injection assembler to each template message after macros.
    pub template_rules: Vec<crate::regex_rule::CompiledRule>,
    /// What the lorebook activated and cut, for the build result.
    pub lorebook: Option<super::LorebookReport>,
    /// Whether any stored message the session loader read carries attachments; `None` before it
    /// ran. Only stored messages carry attachments (a message's refer to its stored ones), so
    /// with `Some(false)` the passes over attachments (transcription, asset resolver) have
    /// nothing to look at in a long history.
    pub history_attachments: Option<bool>,
    /// The generation of the session's stored texts the session loader found
    /// ([`crate::cache::ByStoredText::sync`]); `None` before it ran.
    pub stored_texts: Option<u64>,
    /// Bytes the regex rules have added to this build's texts so far (history, then templates),
    /// against `limits::REGEX_BUILD_GROWTH`.
    pub regex_growth: usize,
    /// Free-form values processors leave for later ones (and for the preview).
    pub values: BTreeMap<String, serde_json::Value>,
    /// What each text the assembler expanded was made of, for the turn-to-turn diff.
    pub macro_traces: Vec<crate::macros::ExpansionTrace>,
    /// The macro tracer's record, with `trace_macros_in_detail`.
    pub macro_trace: Option<crate::macros::MacroTrace>,
    /// Every lorebook entry explained, with `explain_lorebook`.
    pub lorebook_test: Option<Vec<crate::lorebook::tester::EntryVerdict>>,
}

/// What the pipeline works on during one build.
pub struct PipelineContext<'a, 's> {
    pub preset: &'a AgentPreset,
    pub session: &'s Session,
    /// Where the history regex rules' rewrites are kept, when the caller keeps them.
    pub kept_rewrites: Option<&'s super::KeptRewrites>,
    pub model: &'a str,
    pub options: &'a BuildOptions,
    pub profile: ModelProfile,
    pub tokenizer: TokenizerChoice,
    pub cache: &'a BuildCache,
    pub assets: &'a dyn crate::assets::AssetSource,
    /// Counts of this session's history from its previous build, handed back when it finishes.
    history_counts: HistoryCounts,
    /// Stored messages counted from `history_counts`, told to the cache once at the end.
    history_hits: u64,
    /// The session history in intermediate form, filled by `session-loader`, consumed by the
    /// injection assembler.
    pub history: History<'s>,
    /// The assembled message list, from the injection assembler on.
    pub messages: Vec<PipelineMessage<'s>>,
    pub blackboard: Blackboard,
    /// The recipe the assembler chose.
    pub recipe: Option<String>,
    /// Macro variables after the build ({{setvar}}), seeded from the preset and then the
    /// session's own (RULES 4.3).
    pub variables: BTreeMap<String, String>,
    pub logs: Vec<LogEntry>,
    pub dropped: Vec<DroppedItem>,
    /// Set by the token limiter when the fixed part alone does not fit.
    pub over_budget: Option<u32>,
    /// The compiled patterns (regex rules, lorebook keys) this build keeps, within its budget.
    pub patterns: crate::regex_rule::PatternBudget,
    /// The generation settings the request will carry: the profile's, then the preset's
    /// (RULES 5.9).
    pub generation: super::ResolvedGeneration,
    /// The instruct template of a text-completion build (RULES 5.12): the options', else the
    /// preset's, else the model profile's.
    pub instruct: Option<crate::instruct::InstructTemplate>,
    /// In chat with a shipped family's model, the built-in template its server writes the
    /// messages in (RULES 5.8): what each message costs, and the string the total counts.
    pub(crate) family_template:
        Option<std::borrow::Cow<'static, crate::instruct::InstructTemplate>>,
    /// What a stored message's count depends on besides its text, its role and the vocabulary
    /// (the writer's affixes and trimming, the format's overheads), hashed: the key its counts
    /// by position are kept under.
    wrapping: u64,
    /// For each role, by [`Role::ALL`]'s order: whether the writer's prefix, and its suffix,
    /// join apart from any content (empty, or a special token at the joint).
    joints: [Joints; 4],
    /// What a message of each role costs beyond its content, by [`Role::ALL`]'s order: counted
    /// once per build (the template's affixes go through the tokenizer only here).
    overheads: [crate::tokens::MessageOverhead; 4],
    /// Whether a message's text and what it costs beyond its text are both counted exactly
    /// (RULES 5.8): the model's own tokenizer, and the format's or template's known affixes.
    pub counts_exact: bool,
    /// How the reply of this build begins (RULES 5.14): settled by the assembler, its prefill
    /// sent last when the build finishes.
    pub reply_start: ReplyStart,
}

/// The variables a build starts from (RULES 4.3): the preset's, then the session's own over them
/// (a chat's local variables win over the preset's of the same name).
fn starting_variables(preset: &AgentPreset, session: &Session) -> BTreeMap<String, String> {
    let mut variables = preset.variables.clone().unwrap_or_default();
    if let Some(own) = &session.variables {
        variables.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    variables
}

impl<'a, 's> PipelineContext<'a, 's> {
    /// The recipe the assembler chose, once it has.
    pub fn chosen_recipe(&self) -> Option<&'a crate::model::ContextRecipe> {
        let id = self.recipe.as_deref()?;
        self.preset.context_recipes.iter().find(|r| r.id == id)
    }

    /// A context for `request`, run with `profile` (the request's, with its overrides).
    pub(crate) fn new(request: &BuildRequest<'a, 's>, profile: ModelProfile) -> Self {
        let (tokenizer, unreadable) = profile.resolve_tokenizer(request.model);
        let generation = super::ResolvedGeneration::resolve(&profile, request.preset);
        // The options' template, else the preset's own, else the one the model profile names.
        let now = &request.options.timestamp;
        // Written on the build's day where the template dates itself (Llama 3.1's).
        let instruct = request
            .options
            .instruct
            .clone()
            .or_else(|| request.preset.instruct.clone())
            .or_else(|| {
                profile
                    .instruct
                    .as_deref()
                    .and_then(crate::instruct::built_in)
            })
            .map(|t| match t.dated(now) {
                std::borrow::Cow::Owned(dated) => dated,
                std::borrow::Cow::Borrowed(_) => t,
            });
        // In chat, a family's server writes each message through the chat template of the
        // model's version, so that is what a message costs; OpenAI publishes its own figures.
        let chat_template = match (&instruct, profile.provider_format) {
            (None, crate::profiles::ProviderFormat::OpenaiChat) => tokenizer
                .vocabulary
                .kind()
                .and_then(|k| crate::tokens::chat_template_for_model(request.model, k)),
            _ => None,
        };
        let family_template = chat_template
            .and_then(|c| crate::instruct::built_in_ref(c.id))
            .map(|t| t.dated(now));
        // The family's nearest template where the model's own was not checked: an estimate.
        let unchecked = chat_template.filter(|c| !c.checked && tokenizer.exact);
        let openai_published = matches!(
            (tokenizer.vocabulary.kind(), profile.provider_format),
            (
                Some(TokenizerKind::O200kBase | TokenizerKind::Cl100kBase),
                crate::profiles::ProviderFormat::OpenaiChat
            )
        );
        let counts_exact = tokenizer.exact
            && unchecked.is_none()
            && (instruct.is_some() || family_template.is_some() || openai_published);
        let overheads = crate::model::Role::ALL.map(|role| {
            overhead_for(
                &profile,
                instruct.as_ref().or(family_template.as_deref()),
                role,
                &|text| request.cache.count(tokenizer.vocabulary, text),
            )
        });
        let writer = instruct.as_ref().or(family_template.as_deref());
        let joints = crate::model::Role::ALL.map(|role| match writer {
            Some(t) => {
                let a = t.affixes(crate::instruct::written_role(t, role));
                let specials = || t.special_tokens.iter().filter(|s| !s.is_empty());
                Joints {
                    prefix: a.prefix.is_empty()
                        || specials().any(|s| a.prefix.ends_with(s.as_str())),
                    prefix_line: a.prefix.ends_with(['\n', '\r']),
                    suffix: a.suffix.is_empty()
                        || specials().any(|s| a.suffix.starts_with(s.as_str())),
                }
            }
            None => Joints {
                prefix: true,
                prefix_line: false,
                suffix: true,
            },
        });
        let wrapping = wrapping_key(writer, &overheads);
        let mut context = PipelineContext {
            wrapping,
            instruct,
            family_template,
            joints,
            overheads,
            counts_exact,
            reply_start: ReplyStart {
                generation_type: request.options.generation_type,
                ..ReplyStart::default()
            },
            generation,
            history_counts: request.cache.take_history_counts(
                tokenizer.vocabulary,
                wrapping,
                &request.session.id,
            ),
            history_hits: 0,
            preset: request.preset,
            session: request.session,
            kept_rewrites: request.kept_rewrites,
            model: request.model,
            options: request.options,
            tokenizer,
            profile,
            cache: request.cache,
            assets: request.assets,
            history: History::new(),
            messages: Vec::new(),
            blackboard: Blackboard::default(),
            recipe: None,
            variables: starting_variables(request.preset, request.session),
            logs: unreadable
                .map(|e| {
                    let said = crate::texts::TOKENIZER_UNREADABLE
                        .with("problem", e)
                        .with("estimate", tokenizer.label());
                    LogEntry {
                        processor: "tokens".to_string(),
                        level: LogLevel::Warning,
                        message: said.to_string(),
                        said,
                    }
                })
                .into_iter()
                .collect(),
            dropped: Vec::new(),
            over_budget: None,
            patterns: Default::default(),
        };
        if let Some(c) = unchecked {
            let said = crate::texts::CHAT_TEMPLATE_UNCHECKED
                .with("model", request.model)
                .with("template", c.id);
            context.info("tokens", said);
        }
        context
    }

    /// Logs one of the texts of `crate::texts` (or [`Said::plain`], a plugin's own words).
    pub fn log(&mut self, processor: &str, level: LogLevel, said: impl Into<Said>) {
        let said = said.into();
        self.logs.push(LogEntry {
            processor: processor.to_string(),
            level,
            message: said.to_string(),
            said,
        });
    }

    pub fn info(&mut self, processor: &str, said: impl Into<Said>) {
        self.log(processor, LogLevel::Info, said);
    }

    pub fn warn(&mut self, processor: &str, said: impl Into<Said>) {
        self.log(processor, LogLevel::Warning, said);
    }

    /// Budget = context window − reserved reply tokens (RULES 5.6).
    pub fn budget(&self) -> u32 {
        self.profile
            .context_window
            .saturating_sub(self.profile.reserved_reply)
    }

    /// Tokens of one message: content plus the format's per-message and per-name overhead,
    /// counted through the shared cache and remembered on the message.
    pub fn count_message(&mut self, message: &mut PipelineMessage<'_>) -> u32 {
        if let Some(n) = message.tokens() {
            return n;
        }
        let overhead = self.overhead_of(message.role);
        // Stored history is counted once per text, role and wrapping, and found again by
        // position on the next build (no hashing, trimming or joints on a warm rebuild).
        let stored = match (message.kind(), message.history_index()) {
            (SourceKind::History, Some(i)) => Some(i as usize),
            _ => None,
        };
        // A stored text as stored is read only when the session changed (RULES 5.3).
        let stored_text = message.stored_text();
        let kept = stored.and_then(|i| {
            match stored_text {
                Some((_, m)) => self.history_counts.get_stored(i, || &m.content),
                None => self.history_counts.get(i, message.content_arc()),
            }
            .filter(|(_, role)| *role == message.role)
            .map(|(n, _)| *n)
        });
        let wrapped = match kept {
            Some(n) => {
                self.history_hits += 1;
                n
            }
            None => {
                let n = self.count_wrapped(message);
                match (stored, stored_text) {
                    (Some(i), Some((_, m))) => {
                        self.history_counts
                            .set_stored(i, &m.content, (n, message.role))
                    }
                    (Some(i), None) => {
                        self.history_counts
                            .set(i, message.content_arc(), (n, message.role))
                    }
                    _ => {}
                }
                n
            }
        };
        let mut n = wrapped;
        // A family's chat template writes no names; an instruct template writes `Name: `.
        if let (Some(name), None) = (message.name(), &self.family_template) {
            n += overhead.per_name + self.cache.count(self.tokenizer.vocabulary, name);
        }
        message.set_tokens(n);
        n
    }

    /// Tokens of one message as the format or template writes it, its name aside.
    fn count_wrapped(&self, message: &PipelineMessage<'_>) -> u32 {
        let overhead = self.overhead_of(message.role);
        let kind = self.tokenizer.vocabulary;
        // With a template that writes the message (RULES 5.8, 5.12): its content as written
        // (trimmed where the template trims), counted apart from the affixes where no token
        // can cross the joint, else counted with them as one text.
        let wrap = self.writer().map(|t| {
            let content = message.content();
            let body = if t.trims(message.role) {
                content.trim()
            } else {
                content
            };
            let joints = self.joints[message.role.index()];
            let a = t.affixes(crate::instruct::written_role(t, message.role));
            // The common joints are known from the template alone, or from the body's first
            // character; only the rest are looked at whole.
            let apart = (joints.prefix
                || (joints.prefix_line && crate::tokens::starts_a_piece(body))
                || crate::instruct::joins_apart(t, &a.prefix, body))
                && (joints.suffix || crate::instruct::joins_apart(t, body, &a.suffix));
            // An empty content leaves the prefix against the suffix: counted together.
            if apart && !body.is_empty() {
                let start = body.as_ptr() as usize - content.as_ptr() as usize;
                Ok(start..start + body.len())
            } else {
                Err(self.cache.count_joined(kind, &a.prefix, body, &a.suffix))
            }
        });
        match wrap {
            Some(Err(whole)) => whole,
            Some(Ok(body)) => {
                self.cache.count(kind, &message.content()[body]) + overhead.per_message
            }
            None => self.cache.count(kind, message.content()) + overhead.per_message,
        }
    }

    /// The template that writes each message: the text-completion build's instruct template,
    /// or in chat the family's (RULES 5.8).
    pub(crate) fn writer(&self) -> Option<&crate::instruct::InstructTemplate> {
        self.instruct.as_ref().or(self.family_template.as_deref())
    }

    /// The tokens a message of `role` costs beyond its content (see [`overhead_for`]).
    pub fn overhead_of(&self, role: crate::model::Role) -> crate::tokens::MessageOverhead {
        self.overheads[role.index()]
    }

    /// Notes that the session loader found the session's stored texts of `generation`
    /// ([`crate::cache::ByStoredText::sync`]).
    pub(crate) fn found_stored_texts(&mut self, generation: u64) {
        self.blackboard.stored_texts = Some(generation);
        self.history_counts.sync(self.session, Some(generation));
    }

    /// Hands this session's history counts back to the cache for the next build.
    pub(super) fn keep_history_counts(&mut self) {
        let mut counts = std::mem::take(&mut self.history_counts);
        counts.truncate(self.session.messages.len());
        self.cache
            .record_hits(std::mem::take(&mut self.history_hits));
        self.cache.keep_history_counts(
            self.tokenizer.vocabulary,
            self.wrapping,
            &self.session.id,
            counts,
        );
    }
}

/// The key a build's counts by stored position are kept under: what a stored message's count
/// depends on besides its text, role and vocabulary.
fn wrapping_key(
    writer: Option<&crate::instruct::InstructTemplate>,
    overheads: &[crate::tokens::MessageOverhead; 4],
) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for o in overheads {
        h.update(&o.per_message.to_le_bytes());
    }
    if let Some(t) = writer {
        for role in crate::model::Role::ALL {
            let a = t.affixes(crate::instruct::written_role(t, role));
            for text in [&a.prefix, &a.suffix] {
                h.update(text.as_bytes());
                h.update(&[0xff]);
            }
            h.update(&[u8::from(t.trims(role))]);
        }
        for s in &t.special_tokens {
            h.update(s.as_bytes());
            h.update(&[0xff]);
        }
    }
    h.digest()
}

/// How a role's affixes meet a message's content (see `instruct::joins_apart`).
#[derive(Debug, Clone, Copy)]
struct Joints {
    /// The prefix joins apart from any content.
    prefix: bool,
    /// The prefix ends a line: it joins apart from a content that starts with a character that
    /// is neither white space nor `/`.
    prefix_line: bool,
    /// The suffix joins apart from any content.
    suffix: bool,
}

/// The tokens a message of `role` costs beyond its content: the provider format's, or in text
/// completion (RULES 5.12) the instruct template's prefix and suffix for that role (a name costs
/// its `: ` too). `reply` is what the request adds once: the format's priming, or the template's
/// start and reply prefix.
fn overhead_for(
    profile: &ModelProfile,
    instruct: Option<&crate::instruct::InstructTemplate>,
    role: crate::model::Role,
    count: &dyn Fn(&str) -> u32,
) -> crate::tokens::MessageOverhead {
    let Some(t) = instruct else {
        return profile.overhead();
    };
    let affixes = t.affixes(crate::instruct::written_role(t, role));
    crate::tokens::MessageOverhead {
        per_message: count(&affixes.prefix) + count(&affixes.suffix),
        per_name: 1,
        reply: count(&t.bos) + count(&t.reply_prefix),
    }
}
