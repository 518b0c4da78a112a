//! The kinds of generation (RULES 5.14): what a continuation, the user's next message and a
//! quiet request add to the assembly, and how the reply begins. An ordinary build reads none of
//! this but the type; every setting here is read only by the type that uses it.

use super::*;
use crate::pipeline::{GenerationType, ReplyStart, GENERATION_LOG};
use crate::profiles::ProviderFormat;

/// Setting keys.
pub(super) const CONTINUE_PREFILL: &str = "continuePrefill";
pub(super) const CONTINUE_POSTFIX: &str = "continuePostfix";
pub(super) const IMPERSONATION_PROMPT: &str = "impersonationPrompt";
pub(super) const QUIET_PROMPT: &str = "quietPrompt";
pub(super) const ASSISTANT_PREFILL: &str = "assistantPrefill";
pub(super) const ASSISTANT_IMPERSONATION: &str = "assistantImpersonation";
pub(super) const PREFILL_IN: &str = "prefillIn";

/// The values of `continuePostfix`, with the text each puts between a reply and its
/// continuation.
pub(super) const POSTFIXES: &[(&str, &str)] = &[
    ("none", ""),
    ("space", " "),
    ("newline", "\n"),
    ("doubleNewline", "\n\n"),
];
pub(super) const POSTFIX_NAMES: &[&str] = &["none", "space", "newline", "doubleNewline"];

/// The values of `prefillIn`: every chat format, or Anthropic's only (as SillyTavern sends its
/// prefill to Claude alone). Text completion always writes it.
pub(super) const PREFILL_EVERY: &str = "every";
pub(super) const PREFILL_ANTHROPIC: &str = "anthropic";

/// What a build asks the model to write as the user, natively.
pub(super) const NATIVE_IMPERSONATION_PROMPT: &str = "[Write the next message of {{user}} in this chat, as {{user}} would write it and in the style of {{user}}'s earlier messages. Write only what {{user}} says and does, nothing for {{char}}.]";
/// SillyTavern 1.12's default impersonation prompt.
pub(super) const ST_IMPERSONATION_PROMPT: &str = "[Write your next reply from the point of view of {{user}}, using the chat history so far as a guideline for the writing style of {{user}}. Don't write as {{char}} or system. Don't describe actions of {{char}}.]";

/// The settings of the generation types, for the assembler's descriptor.
pub(super) fn config_fields() -> Vec<ConfigField> {
    vec![
        ConfigField::text(CONTINUE_NUDGE_PROMPT, "Continue nudge", "").describe(
            "Continue: a system message at the end of the chat history, unless the reply is sent \
             last. {{lastChatMessage}} is the reply being continued. Empty: none.",
        ),
        ConfigField::boolean(CONTINUE_PREFILL, "Continue: send the reply last", true).describe(
            "Continue: the reply being continued ends the request, after everything else, so the \
             model writes on from its last word. Off: it stays in the history and the continue \
             nudge follows the history.",
        ),
        ConfigField::select(
            CONTINUE_POSTFIX,
            "Continue: joined with",
            POSTFIX_NAMES,
            "none",
        )
        .describe(
            "What goes between the stored reply and its continuation when the reply does not \
                 end with a space (chat formats only).",
        ),
        ConfigField::text(
            IMPERSONATION_PROMPT,
            "Impersonation prompt",
            NATIVE_IMPERSONATION_PROMPT,
        )
        .describe("Impersonate: a system message sent last, asking for the user's next message."),
        ConfigField::text(QUIET_PROMPT, "Quiet prompt", "").describe(
            "Quiet: a system message sent last; the build's input replaces it. Empty: only the \
             input.",
        ),
        ConfigField::text(ASSISTANT_PREFILL, "Reply prefill", "").describe(
            "The text an ordinary reply begins with, sent as the request's last message; \
             \"Start reply with\" replaces it. Empty: none.",
        ),
        ConfigField::text(ASSISTANT_IMPERSONATION, "Impersonation prefill", "").describe(
            "The text the user's written message begins with; \"Start reply with\" replaces it. \
             Empty: none.",
        ),
        ConfigField::select(
            PREFILL_IN,
            "Prefill sent to",
            &[PREFILL_EVERY, PREFILL_ANTHROPIC],
            PREFILL_EVERY,
        )
        .describe(
            "every: each chat format gets the prefill as its last assistant message. anthropic: \
             Anthropic's format only. Text completion always writes it after the reply prefix.",
        ),
    ]
}

/// The generation type's part of one assembly.
pub(super) struct Generation {
    pub(super) kind: GenerationType,
    /// Continue: the stored position of the reply being continued.
    continued: Option<u32>,
    /// Continue: the reply goes last instead of a nudge.
    continue_last: bool,
    text_completion: bool,
}

impl Generation {
    /// The plan for this build: for a continuation, the reply it continues (the newest history
    /// message, when it is the model's), warned about when there is none.
    pub(super) fn of(
        ctx: &PipelineContext<'_, '_>,
        history: &[PipelineMessage<'_>],
        config: &ResolvedConfig,
        log: &mut Vec<LogLine>,
    ) -> Self {
        let kind = ctx.options.generation_type;
        let text_completion = ctx.instruct.is_some();
        let continued = match kind {
            GenerationType::Continue => {
                let last = history
                    .last()
                    .filter(|m| m.role == Role::Assistant && m.kind() == SourceKind::History)
                    .and_then(|m| m.source().history_index);
                if last.is_none() {
                    log.push(LogLine::Warning(texts::NOTHING_TO_CONTINUE.into()));
                }
                last
            }
            _ => None,
        };
        Generation {
            kind,
            continued,
            continue_last: continued.is_some()
                && (text_completion || config.bool(CONTINUE_PREFILL)),
            text_completion,
        }
    }

    /// Continue with a nudge: the system message that closes the chat history block, its
    /// `{{lastChatMessage}}` the reply being continued, trimmed.
    pub(super) fn history_closing<'s>(
        &self,
        config: &ResolvedConfig,
        history: &[PipelineMessage<'s>],
        macros: &mut Macros<'_>,
        log: &mut Vec<LogLine>,
    ) -> Option<PipelineMessage<'s>> {
        if self.continued.is_none() || self.continue_last {
            return None;
        }
        let nudge = config.str(CONTINUE_NUDGE_PROMPT);
        let last = history.last().map_or("", |m| m.content().trim());
        let text = macros.expand(
            &replace_ignoring_case(nudge, "{{lastchatmessage}}", last),
            "generation:continueNudge",
            log,
        );
        if text.trim().is_empty() {
            log.push(LogLine::Info(
                texts::GENERATION_PROMPT_EMPTY.with("type", self.kind.as_str()),
            ));
            return None;
        }
        log.push(LogLine::Info(texts::CONTINUE_NUDGE.into()));
        Some(PipelineMessage::new(
            Role::System,
            text,
            Source::processor(GENERATION_LOG),
        ))
    }

    /// Impersonate and quiet: the system message sent after everything else. A quiet request's
    /// prompt is the build's input, else the setting.
    pub(super) fn closing<'s>(
        &self,
        config: &ResolvedConfig,
        input: Option<&str>,
        macros: &mut Macros<'_>,
        log: &mut Vec<LogLine>,
    ) -> Option<PipelineMessage<'s>> {
        let raw = match self.kind {
            GenerationType::Impersonate => config.str(IMPERSONATION_PROMPT),
            GenerationType::Quiet => input
                .filter(|i| !i.trim().is_empty())
                .unwrap_or_else(|| config.str(QUIET_PROMPT)),
            _ => return None,
        };
        let position = format!("generation:{}", self.kind.as_str());
        let text = macros.expand(raw, &position, log);
        if text.trim().is_empty() {
            log.push(LogLine::Info(
                texts::GENERATION_PROMPT_EMPTY.with("type", self.kind.as_str()),
            ));
            return None;
        }
        log.push(LogLine::Info(
            texts::GENERATION_PROMPT_LAST.with("type", self.kind.as_str()),
        ));
        Some(PipelineMessage::new(
            Role::System,
            text,
            Source::processor(GENERATION_LOG),
        ))
    }

    /// Continue with the reply sent last: the reply being continued moves to the end of the
    /// output, after everything else.
    pub(super) fn move_continued_last(
        &self,
        out: &mut Vec<PipelineMessage<'_>>,
        log: &mut Vec<LogLine>,
    ) {
        let Some(index) = self.continued.filter(|_| self.continue_last) else {
            return;
        };
        let at = out.iter().rposition(|m| {
            m.kind() == SourceKind::History && m.source().history_index == Some(index)
        });
        if let Some(at) = at {
            let message = out.remove(at);
            out.push(message);
            log.push(LogLine::Info(texts::CONTINUE_LAST.with("index", index)));
        }
    }

    /// How the reply begins: the prefill (the build's "start reply with", else the preset's for
    /// the type; none for a continuation or a quiet request), where the format takes it; a
    /// continuation's joiner.
    pub(super) fn reply_start(
        &self,
        ctx: &PipelineContext<'_, '_>,
        config: &ResolvedConfig,
        macros: &mut Macros<'_>,
        log: &mut Vec<LogLine>,
    ) -> ReplyStart {
        let mut start = ReplyStart {
            generation_type: self.kind,
            continues_last: self.continue_last,
            continued: self.continued,
            ..ReplyStart::default()
        };
        let own = ctx
            .options
            .prefill
            .as_deref()
            .filter(|p| !p.trim().is_empty());
        let raw = match self.kind {
            GenerationType::Normal => own.unwrap_or_else(|| config.str(ASSISTANT_PREFILL)),
            GenerationType::Impersonate => {
                own.unwrap_or_else(|| config.str(ASSISTANT_IMPERSONATION))
            }
            GenerationType::Continue => {
                if let (Some(index), false) = (self.continued, self.text_completion) {
                    let stored = ctx.session.messages.get(index as usize);
                    if stored.is_some_and(|m| !m.content.ends_with(' ')) {
                        let name = config.str(CONTINUE_POSTFIX);
                        start.joiner = POSTFIXES
                            .iter()
                            .find(|(n, _)| *n == name)
                            .map_or("", |(_, text)| text)
                            .to_string();
                    }
                }
                ""
            }
            GenerationType::Quiet => "",
        };
        if raw.is_empty() {
            return start;
        }
        let anthropic = ctx.profile.provider_format == ProviderFormat::AnthropicMessages;
        if !self.text_completion && !anthropic && config.str(PREFILL_IN) == PREFILL_ANTHROPIC {
            log.push(LogLine::Info(texts::PREFILL_NOT_FOR_FORMAT.into()));
            return start;
        }
        let text = macros.expand(raw, "generation:prefill", log);
        // Anthropic refuses a last assistant message that ends in white space.
        let text = match anthropic && !self.text_completion {
            true => text.trim_end().to_string(),
            false => text,
        };
        if !text.trim().is_empty() {
            log.push(LogLine::Info(texts::PREFILL_SENT.into()));
            start.prefill = Some(text);
        }
        start
    }
}

/// `text` with every `pattern` (lower case, ASCII) replaced by `with`, in any letter case.
fn replace_ignoring_case(text: &str, pattern: &str, with: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    while let Some(at) = lower[from..].find(pattern) {
        out.push_str(&text[from..from + at]);
        out.push_str(with);
        from += at + pattern.len();
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::replace_ignoring_case;

    #[test]
    fn the_last_chat_message_macro_is_replaced_in_any_case() {
        assert_eq!(
            replace_ignoring_case(
                "[Go on: {{lastChatMessage}} / {{LASTCHATMESSAGE}}]",
                "{{lastchatmessage}}",
                "x"
            ),
            "[Go on: x / x]"
        );
        assert_eq!(
            replace_ignoring_case("none", "{{lastchatmessage}}", "x"),
            "none"
        );
    }
}
