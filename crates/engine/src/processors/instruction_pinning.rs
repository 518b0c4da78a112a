//! `instruction-pinning` (priority 450, off by default; RULES 5.4): a closing message restating
//! the newest user request, so that a long context does not bury what was asked.

use crate::model::Role;
use crate::pipeline::{
    ConfigField, PipelineContext, PipelineMessage, Processor, ProcessorDescriptor, ResolvedConfig,
    Source,
};
use crate::texts;
use crate::EngineError;

pub struct InstructionPinning;

const ID: &str = "instruction-pinning";

impl Processor for InstructionPinning {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Instruction pinning",
            description: "Ends the context with a message restating the newest user request.",
            priority: 450,
            is_core: false,
            default_enabled: false,
            config_fields: vec![
                ConfigField::text(
                    "template",
                    "Template",
                    "Answer the user's latest request:\n{{request}}",
                )
                .describe("{{request}} is the text of the newest user message."),
                ConfigField::select("role", "Role", &["system", "user"], "system"),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(request) = ctx
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User && m.kind().is_history())
        else {
            ctx.info(ID, texts::NO_REQUEST);
            return Ok(());
        };
        let text = config
            .str("template")
            .replace("{{request}}", request.content());
        let role = if config.str("role") == "user" {
            Role::User
        } else {
            Role::System
        };
        ctx.messages
            .push(PipelineMessage::new(role, text, Source::processor(ID)));
        ctx.info(ID, texts::PINNED);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Placement, SourceKind};
    use crate::processors::testing::{history_of, messages_of, options, run_with};

    #[test]
    fn the_newest_user_request_is_restated_last() {
        let mut messages = messages_of(&[(Role::System, "s")]);
        messages.extend(history_of(&[
            (Role::User, "first"),
            (Role::User, "summarise it"),
        ]));
        messages.push(PipelineMessage::new(
            Role::System,
            "depth 0 note",
            Source::new(SourceKind::Template, Placement::Depth { depth: 0 }),
        ));
        let settings = [("template", serde_json::json!("Remember: {{request}}"))];
        let r = run_with(&InstructionPinning, &settings, messages, &options());
        let last = r.messages.last().expect("pinned");
        assert_eq!(last.content(), "Remember: summarise it");
        assert_eq!(last.role, Role::System);
        assert_eq!(last.source().kind, SourceKind::Processor);
    }
}
