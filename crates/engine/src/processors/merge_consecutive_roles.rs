//! `merge-consecutive-roles` (priority 700, off by default): adjacent messages of one role are
//! joined, for APIs that refuse two turns of the same role in a row.

use crate::pipeline::{
    ConfigField, PipelineContext, PipelineMessage, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::texts;
use crate::EngineError;

pub struct MergeConsecutiveRoles;

const ID: &str = "merge-consecutive-roles";

impl Processor for MergeConsecutiveRoles {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Merge consecutive roles",
            description: "Adjacent messages of the same role are joined into one.",
            priority: 700,
            is_core: false,
            default_enabled: false,
            config_fields: vec![ConfigField::text("separator", "Separator", "\n\n")
                .describe("Put between the joined texts.")],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let separator = config.str("separator");
        let joins =
            |a: &PipelineMessage, b: &PipelineMessage| a.role == b.role && a.name() == b.name();
        // Joined in place: a list with no run to join is only read.
        let before = ctx.messages.len();
        ctx.messages.dedup_by(|later, kept| {
            let join = joins(kept, later);
            if join {
                // A copy of a message is a reference or a shared part: nothing is copied.
                kept.absorb(later.clone(), separator, ID);
            }
            join
        });
        let merged = before - ctx.messages.len();
        if merged > 0 {
            ctx.info(ID, texts::ROLES_MERGED.with("count", merged));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::processors::testing::{roles_and_contents, run_one};

    #[test]
    fn runs_of_one_role_become_one_message() {
        let out = run_one(
            &MergeConsecutiveRoles,
            &[],
            &[
                (Role::System, "s"),
                (Role::User, "u1"),
                (Role::User, "note"),
                (Role::User, "u2"),
                (Role::Assistant, "a1"),
                (Role::User, "u3"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "s".to_string()),
                (Role::User, "u1\n\nnote\n\nu2".into()),
                (Role::Assistant, "a1".into()),
                (Role::User, "u3".into())
            ]
        );
        // The joined message keeps where each part came from.
        assert_eq!(out.messages[1].merged().len(), 2);
        assert_eq!(out.messages[1].source().processor.as_deref(), Some(ID));
    }
}
