//! `merge-system-to-head` (priority 500, off by default): every system message is merged into
//! one system message at the head of the context, for APIs that take a single system text.

use crate::model::Role;
use crate::pipeline::{
    ConfigField, PipelineContext, PipelineMessage, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::texts;
use crate::EngineError;

pub struct MergeSystemToHead;

const ID: &str = "merge-system-to-head";

impl Processor for MergeSystemToHead {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Merge system messages to the head",
            description: "Joins every system message into the first message of the context.",
            priority: 500,
            is_core: false,
            default_enabled: false,
            config_fields: vec![ConfigField::text("separator", "Separator", "\n\n")
                .describe("Put between the merged texts.")],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let count = ctx
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .count();
        if count < 2 && ctx.messages.first().is_none_or(|m| m.role == Role::System) {
            return Ok(());
        }
        let separator = config.str("separator");
        // The system messages taken out in order, the rest staying where it is; joined in one go
        // and put first.
        let mut system: Vec<PipelineMessage> = ctx
            .messages
            .extract_if(.., |m| m.role == Role::System)
            .collect();
        if !system.is_empty() {
            let mut head = system.remove(0);
            head.absorb_all(system, separator, ID);
            ctx.messages.insert(0, head);
        }
        ctx.info(ID, texts::SYSTEM_MERGED.with("count", count));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::testing::{roles_and_contents, run_one};

    #[test]
    fn system_messages_are_joined_at_the_head() {
        let out = run_one(
            &MergeSystemToHead,
            &[],
            &[
                (Role::User, "u1"),
                (Role::System, "s1"),
                (Role::Assistant, "a1"),
                (Role::System, "s2"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "s1\n\ns2".to_string()),
                (Role::User, "u1".into()),
                (Role::Assistant, "a1".into())
            ]
        );
    }

    #[test]
    fn separator_is_configurable_and_nothing_changes_without_system() {
        let out = run_one(
            &MergeSystemToHead,
            &[("separator", serde_json::json!(" | "))],
            &[(Role::System, "a"), (Role::System, "b")],
        );
        assert_eq!(
            roles_and_contents(&out),
            [(Role::System, "a | b".to_string())]
        );
        let out = run_one(&MergeSystemToHead, &[], &[(Role::User, "u")]);
        assert_eq!(roles_and_contents(&out), [(Role::User, "u".to_string())]);
    }
}
