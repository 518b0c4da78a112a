//! `ephemeral-injection` (priority 350): one-turn content (a note, a quote, anything) wrapped in
//! its kind's markers and put before the text of the last user message, for this build only
//! (RULES 5.5). It runs before the token limiter, so it counts against the budget; the
//! stored session is never touched (the engine only ever reads it).

use crate::model::Role;
use crate::pipeline::{
    ConfigField, EphemeralKind, PipelineContext, PipelineMessage, Placement, Processor,
    ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::texts;
use crate::EngineError;

pub struct EphemeralInjection;

const ID: &str = "ephemeral-injection";

/// The default markers (RULES 5.5): a note ("current note") and a favourite ("current favourites").
pub const DOCUMENT_START: &str = "—————当前笔记————";
pub const DOCUMENT_END: &str = "—————当前笔记如上————";
pub const QUOTE_START: &str = "—————当前收藏夹————";
pub const QUOTE_END: &str = "—————当前收藏夹如上————";

impl Processor for EphemeralInjection {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Ephemeral injection",
            description: "Puts one-turn content before the last user message, for this build \
                          only; it is never saved to the session.",
            priority: 350,
            is_core: false,
            default_enabled: true,
            config_fields: vec![
                ConfigField::text("documentStart", "Document start marker", DOCUMENT_START),
                ConfigField::text("documentEnd", "Document end marker", DOCUMENT_END),
                ConfigField::text("quoteStart", "Quote start marker", QUOTE_START),
                ConfigField::text("quoteEnd", "Quote end marker", QUOTE_END),
                ConfigField::text("customStart", "Custom start marker", "—————{{label}}————")
                    .describe("{{label}} is the label given with the content."),
                ConfigField::text("customEnd", "Custom end marker", "—————{{label}}如上————"),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(ephemeral) = ctx.options.ephemeral.as_ref() else {
            return Ok(());
        };
        if ephemeral.content.trim().is_empty() {
            ctx.info(ID, texts::EPHEMERAL_EMPTY);
            return Ok(());
        }
        let (start, end) = match ephemeral.kind {
            EphemeralKind::Document => ("documentStart", "documentEnd"),
            EphemeralKind::Quote => ("quoteStart", "quoteEnd"),
            EphemeralKind::Custom => ("customStart", "customEnd"),
        };
        let label = ephemeral.label.as_deref().unwrap_or("Context");
        let marker = |key: &str| config.str(key).replace("{{label}}", label);
        let block = format!(
            "{}\n{}\n{}",
            marker(start),
            ephemeral.content.trim_end(),
            marker(end)
        );
        let kind = ephemeral.kind;
        let target = ctx
            .messages
            .iter()
            .rposition(|m| m.role == Role::User && m.kind().is_history());
        match target {
            Some(i) => {
                let m = &mut ctx.messages[i];
                let text = format!("{block}\n\n{}", m.content());
                m.set_content(text);
                m.source_mut().ephemeral = Some(kind);
                ctx.info(
                    ID,
                    texts::EPHEMERAL_INJECTED
                        .part("kind", kind.said())
                        .with("chars", ephemeral.content.chars().count()),
                );
            }
            None => {
                let mut source = Source::new(SourceKind::Ephemeral, Placement::List);
                source.processor = Some(ID.into());
                source.ephemeral = Some(kind);
                ctx.messages
                    .push(PipelineMessage::new(Role::User, block, source));
                ctx.warn(ID, texts::EPHEMERAL_OWN_MESSAGE);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Ephemeral;
    use crate::processors::testing::{history_of, messages_of, options, run_with};

    fn run(kind: EphemeralKind, label: Option<&str>, history: bool) -> crate::BuildResult<'static> {
        let mut options = options();
        options.ephemeral = Some(Ephemeral {
            kind,
            label: label.map(Into::into),
            content: "the note\n".into(),
        });
        let mut messages = messages_of(&[(Role::System, "s")]);
        if history {
            messages.extend(history_of(&[
                (Role::User, "u1"),
                (Role::Assistant, "a1"),
                (Role::User, "u2"),
            ]));
        }
        run_with(&EphemeralInjection, &[], messages, &options)
    }

    #[test]
    fn document_content_goes_before_the_last_user_message_in_the_seed_markers() {
        let r = run(EphemeralKind::Document, None, true);
        let last = r.messages.last().expect("message");
        assert_eq!(
            last.content(),
            format!("{DOCUMENT_START}\nthe note\n{DOCUMENT_END}\n\nu2")
        );
        assert_eq!(last.source().ephemeral, Some(EphemeralKind::Document));
        assert_eq!(
            r.messages[1].content(),
            "u1",
            "older user messages untouched"
        );
        assert!(last.source().badge().contains("ephemeral document"));
    }

    #[test]
    fn quote_and_custom_use_their_own_markers() {
        let r = run(EphemeralKind::Quote, None, true);
        assert!(r.messages[3].content().starts_with(QUOTE_START));
        let r = run(EphemeralKind::Custom, Some("Search results"), true);
        assert!(r.messages[3]
            .content()
            .starts_with("—————Search results————\nthe note\n—————Search results如上————"));
    }

    #[test]
    fn without_a_user_message_it_becomes_its_own_message_with_a_warning() {
        let r = run(EphemeralKind::Document, None, false);
        let last = r.messages.last().expect("message");
        assert_eq!(last.source().kind, SourceKind::Ephemeral);
        assert!(!r.warnings.is_empty());
    }
}
