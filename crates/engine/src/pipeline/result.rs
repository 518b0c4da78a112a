//! What a build returns: the final messages with tokens and provenance, the budget, what was
//! dropped or cut and why, warnings and logs.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::message::Body;
use super::{BuiltMessage, LogEntry, LogLevel, PipelineContext, Source, SourceKind};
use crate::model::Role;
use crate::profiles::{ModelProfile, ProviderFormat};
use crate::said::Said;
use crate::texts;
use crate::tokens::TokenizerChoice;
use crate::EngineError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TokenSummary {
    /// Every message plus the reply priming of the format.
    pub total: u32,
    pub budget: u32,
    /// Whether `total` is exact: every message counted exactly (RULES 5.8), else an estimate.
    pub exact: bool,
    pub tokenizer: String,
    pub context_window: u32,
    pub reserved_reply: u32,
    /// How far the fixed part alone exceeds the budget, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<u32>,
    /// Totals by source kind (`template`, `history`, ...), for the preview's token bar.
    pub by_source: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum DropAction {
    Dropped,
    Truncated,
}

/// A message (or a run of consecutive history messages) that a processor removed or cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DroppedItem {
    pub processor: String,
    pub action: DropAction,
    /// The (first) message's source.
    pub source: Source,
    /// How many messages this item covers: a run of history dropped for one reason is one item.
    pub count: u32,
    /// For a run of history: the stored index of its last message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_history_index: Option<u32>,
    /// Tokens removed, where every covered message was counted (the limiter stops counting
    /// history at the first message that no longer fits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Why, in English, as the command line prints it.
    pub reason: String,
    /// The reason as a code with parameters, for the app to say in its language.
    pub said: Said,
}

impl DroppedItem {
    /// An item for one message (`count` 1, no run) with its reason.
    pub fn one(
        processor: &str,
        action: DropAction,
        source: Source,
        tokens: Option<u32>,
        reason: impl Into<Said>,
    ) -> Self {
        let said = reason.into();
        DroppedItem {
            processor: processor.to_string(),
            action,
            source,
            count: 1,
            last_history_index: None,
            tokens,
            reason: said.to_string(),
            said,
        }
    }

    /// Notes history message `m` dropped by `processor` in `runs`: the last run grows when `m`
    /// is the message right after it, else `m` starts a run of its own.
    pub(crate) fn push_history_run(
        runs: &mut Vec<DroppedItem>,
        processor: &str,
        m: &super::PipelineMessage<'_>,
        reason: &Said,
    ) {
        let index = m.history_index();
        match runs.last_mut() {
            Some(run) if matches!((run.last_history_index, index), (Some(p), Some(h)) if h == p + 1) =>
            {
                run.count += 1;
                run.last_history_index = index;
            }
            _ => runs.push(DroppedItem {
                last_history_index: index,
                ..DroppedItem::one(
                    processor,
                    DropAction::Dropped,
                    m.source().into_owned(),
                    None,
                    reason.clone(),
                )
            }),
        }
    }
}

/// A prompt-cache breakpoint of an Anthropic Messages body (RULES 5.13): the request is cached up
/// to and including the message `message_index` (an index into the build's messages).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CacheBreakpoint {
    pub message_index: u32,
    /// The depth it was asked at (0: the newest message); absent for the one after the system
    /// part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
}

/// Where `asked` puts breakpoints over `messages` as an Anthropic body sends them: the leading
/// system messages are its `system` text, each later message one turn. A depth past the first
/// turn, or a system breakpoint without a system part, marks nothing. In message order.
pub fn place_breakpoints(
    asked: &crate::model::CacheBreakpoints,
    messages: &[BuiltMessage<'_>],
) -> Vec<CacheBreakpoint> {
    let leading = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let turns = messages.len() - leading;
    let mut marks = Vec::new();
    if asked.system && leading > 0 {
        marks.push(CacheBreakpoint {
            message_index: (leading - 1) as u32,
            depth: None,
        });
    }
    for &depth in &asked.depths {
        if (depth as usize) < turns {
            marks.push(CacheBreakpoint {
                message_index: (messages.len() - 1 - depth as usize) as u32,
                depth: Some(depth),
            });
        }
    }
    marks.sort_by_key(|m| m.message_index);
    marks
}

/// What a build returns: the final messages, the budget, what was dropped or cut, the logs.
// History that went in exactly as stored refers to the session the build read (`'s`);
// `into_owned` gives a result that stands alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BuildResult<'s> {
    /// The recipe that applied.
    pub recipe: Option<String>,
    pub model: String,
    /// The model profile that applied.
    pub profile: String,
    pub messages: Vec<BuiltMessage<'s>>,
    pub tokens: TokenSummary,
    pub dropped: Vec<DroppedItem>,
    /// Warnings and errors among the logs.
    pub warnings: Vec<LogEntry>,
    pub logs: Vec<LogEntry>,
    /// Macro variables after the build.
    pub variables: BTreeMap<String, String>,
    /// What the lorebook activated (and why) and what its budget cut; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lorebook: Option<super::LorebookReport>,
    /// The generation settings the request carries, each with its origin (RULES 5.9, 5.10);
    /// absent when none is set.
    #[serde(default, skip_serializing_if = "super::ResolvedGeneration::is_empty")]
    pub generation: super::ResolvedGeneration,
    /// The model profile that applied (its id is `profile`), with the build's overrides of
    /// context window and reply reserve (RULES 5.9): its name, provider format and
    /// capabilities, so that no caller looks the profile up again.
    #[serde(skip)]
    pub model_profile: ModelProfile,
    /// The tokenizer that counted, and whether it is the model's own (RULES 5.8); `tokens`
    /// carries its label.
    #[serde(skip)]
    pub tokenizer: TokenizerChoice,
    /// In text completion (RULES 5.12), the prompt string the messages make, with its spans and
    /// stop sequences; `tokens.total` counts this string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<crate::instruct::RenderedPrompt>,
    /// The instruct template that wrote `prompt`, for its callers and not on the wire (the
    /// check against a model's own chat template renders the same messages through it).
    #[serde(skip)]
    pub instruct: Option<crate::instruct::InstructTemplate>,
    /// Where an Anthropic Messages body marks `cache_control` breakpoints (RULES 5.13), by the
    /// settings' `cacheBreakpoints`; empty for other formats and text completion.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_breakpoints: Vec<CacheBreakpoint>,
    /// What each text the assembler expanded was made of (its position, a hash of it as written
    /// and the macros it evaluated), for the turn-to-turn diff to name a change's cause.
    #[serde(skip)]
    pub macro_traces: Vec<crate::macros::ExpansionTrace>,
    /// The macro tracer's record (RULES 4.6), with the build option `traceMacrosInDetail`;
    /// each expansion names the message its text became.
    #[serde(skip)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub macro_trace: Option<crate::macros::MacroTrace>,
    /// Every lorebook entry with whether it fired and why (RULES 6.6), with the build option
    /// `explainLorebook`.
    #[serde(skip)]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub lorebook_test: Option<Vec<crate::lorebook::tester::EntryVerdict>>,
    /// The time the build was made for (its options' `timestamp`): the day a dated template
    /// was written on, which the check against a model's own chat template renders it on too.
    #[serde(skip)]
    pub timestamp: chrono::DateTime<chrono::FixedOffset>,
    /// The kind of generation and how its reply begins (RULES 5.14): what goes before the text
    /// that comes back when the reply is stored or shown. Absent for an ordinary reply without
    /// a prefill.
    #[serde(default, skip_serializing_if = "super::ReplyStart::is_plain")]
    pub reply_start: super::ReplyStart,
}

impl BuildResult<'_> {
    /// The provider format of the model profile that applied (RULES 5.7): the request body a
    /// provider takes for this build.
    pub fn provider_format(&self) -> ProviderFormat {
        self.model_profile.provider_format
    }

    /// The same result with every message's parts its own, so that it no longer borrows the
    /// session it was built from.
    pub fn into_owned(self) -> BuildResult<'static> {
        BuildResult {
            messages: self
                .messages
                .into_iter()
                .map(BuiltMessage::into_owned)
                .collect(),
            recipe: self.recipe,
            model: self.model,
            profile: self.profile,
            tokens: self.tokens,
            dropped: self.dropped,
            warnings: self.warnings,
            logs: self.logs,
            variables: self.variables,
            lorebook: self.lorebook,
            generation: self.generation,
            model_profile: self.model_profile,
            tokenizer: self.tokenizer,
            prompt: self.prompt,
            instruct: self.instruct,
            cache_breakpoints: self.cache_breakpoints,
            macro_traces: self.macro_traces,
            macro_trace: self.macro_trace,
            lorebook_test: self.lorebook_test,
            timestamp: self.timestamp,
            reply_start: self.reply_start,
        }
    }

    /// The messages as an instruct template reads them (RULES 5.12), each written through the
    /// template (the check against a model's own chat template compares the two formats on
    /// every message, so a template written as it is is not told apart here).
    pub fn turns(&self) -> Vec<crate::instruct::Turn<'_>> {
        turns_of(&self.messages, |_| false)
    }

    /// In text completion, the check of the build's instruct template against a model's own
    /// Jinja `chat_template` (named `name` in errors) over the build's messages (RULES 5.12), on
    /// the build's day where `tokens` names none.
    /// A chat-completion build has no template to check: that is an error too.
    pub fn check_chat_template(
        &self,
        name: &str,
        chat_template: &str,
        tokens: &crate::instruct::jinja::SpecialTokens,
    ) -> Result<crate::instruct::jinja::JinjaCheck, EngineError> {
        let template = self.instruct.as_ref().ok_or_else(|| {
            EngineError::invalid(
                format!("chat template \"{name}\""),
                "nothing to check it against: the build is chat completion, with no instruct \
                 template",
            )
        })?;
        // On the build's own day unless the caller names another.
        let tokens = crate::instruct::jinja::SpecialTokens {
            now: tokens.now.or(Some(self.timestamp)),
            ..tokens.clone()
        };
        crate::instruct::jinja::check(template, name, chat_template, &self.turns(), &tokens)
    }
}

impl PipelineContext<'_, '_> {
    /// Tokens of a prompt string written by `t`, counted by its independent pieces (each line,
    /// mostly) so a warm rebuild counts what changed, and the BOS token the server adds.
    fn count_prompt(&self, t: &crate::instruct::InstructTemplate, prompt: &str) -> u32 {
        let kind = self.tokenizer.vocabulary;
        let string = match kind {
            // A user's own tokenizer may join across lines: its string is counted whole.
            crate::tokens::Vocabulary::Own(_) => self.cache.count(kind, prompt),
            _ => crate::tokens::independent_pieces(prompt)
                .map(|piece| self.cache.count(kind, piece))
                .sum(),
        };
        let bos = if t.server_adds_bos {
            self.cache.count(kind, &t.bos)
        } else {
            0
        };
        string + bos
    }

    /// What `t`'s rendered string costs beyond the messages' own counts and the reply
    /// overhead: its dated first system prefix, its own system turn. `None` where a token may
    /// cross a joint between turns, or the template writes turns otherwise than one per
    /// message, and the string must be counted whole.
    fn template_extra(
        &self,
        t: &crate::instruct::InstructTemplate,
        built: &[BuiltMessage<'_>],
    ) -> Option<u32> {
        use crate::instruct::{joins_apart, SystemMode};
        use crate::model::Role;
        let plain =
            |a: &crate::instruct::Affixes| a.first_prefix.is_none() && a.last_prefix.is_none();
        if t.system_mode != SystemMode::Own
            || !plain(&t.user)
            || !plain(&t.assistant)
            || t.system.last_prefix.is_some()
        {
            return None;
        }
        let roles = [&t.system, &t.user, &t.assistant];
        let first_prefixes = || {
            roles
                .iter()
                .map(|a| a.first_prefix.as_ref().unwrap_or(&a.prefix))
        };
        let joints_apart = roles.iter().all(|a| {
            joins_apart(t, &a.suffix, &t.reply_prefix)
                && roles.iter().all(|b| joins_apart(t, &a.suffix, &b.prefix))
        }) && first_prefixes()
            .all(|p| joins_apart(t, &t.bos, p) || t.server_adds_bos);
        if !joints_apart {
            return None;
        }
        let kind = self.tokenizer.vocabulary;
        let count = |text: &str| self.cache.count(kind, text);
        let mut extra = 0;
        if let Some(text) = crate::instruct::default_system_before(t, built.first().map(|m| m.role))
        {
            let first = t.system.first_prefix.as_ref().unwrap_or(&t.system.prefix);
            extra += count(&format!("{first}{text}{}", t.system.suffix));
        } else if let (Some(first), Some(m)) = (
            &t.system.first_prefix,
            built.first().filter(|m| m.role == Role::System),
        ) {
            // The first message is a system message: it is written with the first prefix.
            let content = match t.trims(Role::System) {
                true => m.content().trim(),
                false => m.content(),
            };
            let written = if joins_apart(t, first, content) && !content.is_empty() {
                (count(first) + m.tokens).saturating_sub(count(&t.system.prefix))
            } else {
                count(&format!("{first}{content}{}", t.system.suffix))
            };
            extra += written.saturating_sub(m.tokens);
        }
        Some(extra)
    }
}

fn turns_of<'m>(
    messages: &'m [BuiltMessage<'_>],
    unwrapped: impl Fn(&BuiltMessage<'_>) -> bool,
) -> Vec<crate::instruct::Turn<'m>> {
    messages
        .iter()
        .map(|m| crate::instruct::Turn {
            role: m.role,
            name: m.name(),
            content: m.content(),
            unwrapped: unwrapped(m),
        })
        .collect()
}

impl<'s> PipelineContext<'_, 's> {
    /// A continuation's reply, after every processor (RULES 5.14): still in the list as the
    /// stored reply (not dropped by the budget, not joined into another message) and, when the
    /// request ends with it, last, whatever a later processor added after it. Otherwise nothing
    /// is continued, with a warning, and a front door refuses to send.
    fn keep_continued_last(&mut self, messages: &mut Vec<super::PipelineMessage<'_>>) {
        let Some(index) = self.reply_start.continued else {
            return;
        };
        let at = messages.iter().rposition(|m| {
            m.kind() == SourceKind::History
                && m.history_index() == Some(index)
                && m.merged().is_empty()
        });
        match at {
            Some(at) if self.reply_start.continues_last && at + 1 < messages.len() => {
                let message = messages.remove(at);
                messages.push(message);
            }
            Some(_) => {}
            None => {
                self.reply_start.continued = None;
                self.reply_start.continues_last = false;
                self.reply_start.joiner.clear();
                self.warn(
                    super::GENERATION_LOG,
                    texts::CONTINUED_REPLY_GONE.with("index", index),
                );
            }
        }
    }

    /// Counts what is not counted yet, resolves stored message ids and packs the result.
    pub(crate) fn finish(mut self) -> BuildResult<'s> {
        let mut messages = std::mem::take(&mut self.messages);
        self.keep_continued_last(&mut messages);
        // The reply's start goes last, after every processor (RULES 5.14).
        if let Some(prefill) = &self.reply_start.prefill {
            messages.push(super::PipelineMessage::new(
                Role::Assistant,
                prefill.clone(),
                super::Source::processor(super::GENERATION_LOG),
            ));
        }
        // Totals per source kind, summed in a table and named once: no string per message.
        let mut by_kind = [None::<u32>; SourceKind::ALL.len()];
        let mut total = self.overhead_of(crate::model::Role::User).reply;
        let session = self.session;
        // One pass that reuses the list's memory: a message and its built form are the same
        // size, and a stored message stays a reference to the session.
        let mut all_exact = self.counts_exact;
        let built: Vec<BuiltMessage<'s>> = messages
            .into_iter()
            .map(|mut m| {
                let tokens = self.count_message(&mut m);
                total += tokens;
                let sum = &mut by_kind[m.kind() as usize];
                *sum = Some(sum.unwrap_or(0) + tokens);
                let (role, mut body) = m.into_body();
                if let Body::Own(parts) = &mut body {
                    // Each stored message's id where it is missing: parts made from a stored
                    // message carry it already, and shared parts are copied only when one is
                    // missing.
                    let id_of = |s: &Source| {
                        s.history_index
                            .and_then(|i| session.messages.get(i as usize)?.id.as_ref())
                    };
                    let missing = |s: &Source| s.message_id.is_none() && id_of(s).is_some();
                    if std::iter::once(&parts.source)
                        .chain(&parts.merged)
                        .any(missing)
                    {
                        let parts = Arc::make_mut(parts);
                        for s in std::iter::once(&mut parts.source).chain(parts.merged.iter_mut()) {
                            if s.message_id.is_none() {
                                s.message_id = id_of(s).cloned();
                            }
                        }
                    }
                }
                // Only stored messages carry attachments: where none has one, no message asks.
                let exact = self.counts_exact
                    && (self.blackboard.history_attachments == Some(false)
                        || body.attachments().is_empty());
                all_exact &= exact;
                BuiltMessage {
                    role,
                    tokens,
                    exact,
                    body,
                }
            })
            .collect();
        let by_source: BTreeMap<String, u32> = SourceKind::ALL
            .iter()
            .zip(by_kind)
            .filter_map(|(kind, sum)| Some((kind.as_str().to_string(), sum?)))
            .collect();
        self.keep_history_counts();
        let prompt = self.instruct.as_ref().map(|t| {
            // Templates written as they are (RULES 5.12): a message of one of them, not joined
            // with another by a formatter.
            let unwrapped: Vec<&str> = self
                .preset
                .message_templates
                .iter()
                .filter(|t| t.unwrapped)
                .map(|t| t.id.as_str())
                .collect();
            let is_unwrapped = |m: &BuiltMessage<'_>| {
                !unwrapped.is_empty()
                    && m.kind() == SourceKind::Template
                    && m.merged().is_empty()
                    && m.source()
                        .template_id
                        .as_deref()
                        .is_some_and(|id| unwrapped.contains(&id))
            };
            let start = self.reply_start.prefill.is_some() || self.reply_start.continues_last;
            let ending = match (self.reply_start.generation_type, start) {
                (super::GenerationType::Impersonate, false) => crate::instruct::Ending::User,
                (super::GenerationType::Impersonate, true) => crate::instruct::Ending::UserWithLast,
                (_, true) => crate::instruct::Ending::ReplyWithLast,
                (_, false) => crate::instruct::Ending::Reply,
            };
            crate::instruct::render_ending(t, &turns_of(&built, is_unwrapped), ending)
        });
        if let (Some(p), Some(t)) = (&prompt, &self.instruct) {
            // The string itself is what the model reads: its count is the total.
            total = self.count_prompt(t, &p.prompt);
        } else if let Some(t) = self.family_template.as_deref() {
            // In chat, what the family's server renders (RULES 5.8): the messages' own counts
            // and what the template adds, where no token can cross a turn's joints; else the
            // rendered string, counted.
            total = match self.template_extra(t, &built) {
                Some(extra) => total + extra,
                None => {
                    let turns: Vec<crate::instruct::Turn<'_>> = built
                        .iter()
                        .map(|m| crate::instruct::Turn {
                            role: m.role,
                            name: None,
                            content: m.content(),
                            unwrapped: false,
                        })
                        .collect();
                    self.count_prompt(t, &crate::instruct::render(t, &turns).prompt)
                }
            };
        }
        let budget = self.budget();
        if self.over_budget.is_none() && total > budget {
            // The limiter did not run (or could not cut enough): still say so.
            self.over_budget = Some(total - budget);
        }
        if let Some(over) = self.over_budget {
            self.log(
                "token-limiter",
                LogLevel::Error,
                texts::OVER_BUDGET
                    .with("over", over)
                    .with("total", total)
                    .with("budget", budget),
            );
        }
        let warnings = self
            .logs
            .iter()
            .filter(|l| l.level >= LogLevel::Warning)
            .cloned()
            .collect();
        let cache_breakpoints = match self.generation.settings.cache_breakpoints.as_ref() {
            Some(asked)
                if prompt.is_none()
                    && self.profile.provider_format == ProviderFormat::AnthropicMessages =>
            {
                place_breakpoints(asked, &built)
            }
            _ => Vec::new(),
        };
        let macro_trace = self.blackboard.macro_trace.take().map(|mut trace| {
            // Each expansion names the message its text became, by the text's position.
            let positions: Vec<String> = built
                .iter()
                .map(|m| m.source().expansion_position())
                .collect();
            for e in &mut trace.expansions {
                e.message = positions
                    .iter()
                    .position(|p| *p == e.position)
                    .and_then(|i| u32::try_from(i).ok());
            }
            trace
        });
        BuildResult {
            recipe: self.recipe,
            model: self.model.to_string(),
            profile: self.profile.id.clone(),
            messages: built,
            tokens: TokenSummary {
                total,
                budget,
                exact: all_exact,
                tokenizer: self.tokenizer.label(),
                context_window: self.profile.context_window,
                reserved_reply: self.profile.reserved_reply,
                over_budget: self.over_budget,
                by_source,
            },
            dropped: self.dropped,
            warnings,
            logs: self.logs,
            variables: self.variables,
            lorebook: self.blackboard.lorebook.take(),
            generation: self.generation,
            model_profile: self.profile,
            tokenizer: self.tokenizer,
            cache_breakpoints,
            prompt,
            instruct: self.instruct,
            macro_traces: std::mem::take(&mut self.blackboard.macro_traces),
            macro_trace,
            lorebook_test: self.blackboard.lorebook_test.take(),
            timestamp: self.options.timestamp,
            reply_start: self.reply_start,
        }
    }
}
