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
        // The system messages at the head stay where they are; those after them are taken out
        // in order, the rest staying where it is (over a long history the list is read once and
        // moved only from the first of them, near its end).
        let lead = ctx
            .messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let empty = ctx.messages.is_empty();
        let mut later: Vec<PipelineMessage> = ctx
            .messages
            .extract_if(lead.., |m| m.role == Role::System)
            .collect();
        let count = lead + later.len();
        if count < 2 && (empty || lead > 0) {
            return Ok(());
        }
        let separator = config.str("separator");
        // Joined in one go into the first, which goes (or stays) first.
        if lead > 0 {
            let mut system: Vec<PipelineMessage> = ctx.messages.drain(1..lead).collect();
            system.append(&mut later);
            ctx.messages[0].absorb_all(system, separator, ID);
        } else if !later.is_empty() {
            let mut head = later.remove(0);
            head.absorb_all(later, separator, ID);
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

    /// The system messages at the head and those after them, in order, the rest in place; a
    /// single system message after the head still goes first.
    #[test]
    fn a_head_of_system_messages_takes_the_later_ones_in_order() {
        let out = run_one(
            &MergeSystemToHead,
            &[],
            &[
                (Role::System, "s1"),
                (Role::System, "s2"),
                (Role::User, "u1"),
                (Role::System, "s3"),
                (Role::Assistant, "a1"),
                (Role::System, "s4"),
                (Role::User, "u2"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "s1\n\ns2\n\ns3\n\ns4".to_string()),
                (Role::User, "u1".into()),
                (Role::Assistant, "a1".into()),
                (Role::User, "u2".into())
            ]
        );
        let out = run_one(
            &MergeSystemToHead,
            &[],
            &[(Role::User, "u1"), (Role::System, "s1")],
        );
        assert_eq!(
            roles_and_contents(&out),
            [(Role::System, "s1".to_string()), (Role::User, "u1".into())]
        );
        let out = run_one(
            &MergeSystemToHead,
            &[],
            &[(Role::System, "s1"), (Role::User, "u1")],
        );
        assert_eq!(
            roles_and_contents(&out),
            [(Role::System, "s1".to_string()), (Role::User, "u1".into())]
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
