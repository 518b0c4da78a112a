//! `convert-system-to-user` (priority 600, off by default): system messages after the first
//! non-system message become user messages, for APIs whose system text can only lead (Anthropic,
//! Gemini). Depth-injected notes keep their place and their text.

use crate::model::Role;
use crate::pipeline::{
    ConfigField, PipelineContext, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::texts;
use crate::EngineError;

pub struct ConvertSystemToUser;

const ID: &str = "convert-system-to-user";

impl Processor for ConvertSystemToUser {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Convert system messages to user",
            description: "System messages after the first non-system message become user messages.",
            priority: 600,
            is_core: false,
            default_enabled: false,
            config_fields: vec![ConfigField::text("prefix", "Prefix", "").describe(
                "Put before the text of each converted message, e.g. \"[System note] \".",
            )],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(first) = ctx.messages.iter().position(|m| m.role != Role::System) else {
            return Ok(());
        };
        let prefix = config.str("prefix");
        let mut converted = 0;
        for m in ctx.messages[first..]
            .iter_mut()
            .filter(|m| m.role == Role::System)
        {
            m.role = Role::User;
            if !prefix.is_empty() {
                let text = format!("{prefix}{}", m.content());
                m.set_content(text);
            }
            m.source_mut().processor = Some(ID.into());
            converted += 1;
        }
        if converted > 0 {
            ctx.info(ID, texts::SYSTEM_CONVERTED.with("count", converted));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::testing::{roles_and_contents, run_one};

    #[test]
    fn only_system_messages_after_the_first_non_system_one_convert() {
        let out = run_one(
            &ConvertSystemToUser,
            &[("prefix", serde_json::json!("[note] "))],
            &[
                (Role::System, "main"),
                (Role::User, "u1"),
                (Role::System, "depth note"),
                (Role::Assistant, "a1"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "main".to_string()),
                (Role::User, "u1".into()),
                (Role::User, "[note] depth note".into()),
                (Role::Assistant, "a1".into())
            ]
        );
        assert_eq!(out.messages[2].source().processor.as_deref(), Some(ID));
    }
}
