//! `ensure-alternation` (priority 800, off by default): after the leading system messages the
//! first message is a user turn and user and assistant turns alternate, as the Anthropic API
//! requires. Missing turns are filled with configurable placeholder text.

use crate::model::Role;
use crate::pipeline::{
    ConfigField, PipelineContext, PipelineMessage, Processor, ProcessorDescriptor, ResolvedConfig,
    Source,
};
use crate::texts;
use crate::EngineError;

pub struct EnsureAlternation;

const ID: &str = "ensure-alternation";
/// Turns put in one by one at most; more, and the list is made again with them.
const FEW: usize = 8;

impl Processor for EnsureAlternation {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Ensure alternation",
            description: "Starts the conversation with a user turn and alternates user and \
                          assistant turns, filling gaps with placeholder text.",
            priority: 800,
            is_core: false,
            default_enabled: false,
            config_fields: vec![
                ConfigField::text("userPlaceholder", "User placeholder", "[Start a new chat]")
                    .describe("Text of a user turn put in where one is missing."),
                ConfigField::text("assistantPlaceholder", "Assistant placeholder", "…")
                    .describe("Text of an assistant turn put in where one is missing."),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let side = |role: Role| match role {
            Role::Assistant => Some(Role::Assistant),
            Role::User | Role::Tool => Some(Role::User),
            Role::System => None,
        };
        let filler = |role: Role| {
            let text = match role {
                Role::User => config.str("userPlaceholder"),
                _ => config.str("assistantPlaceholder"),
            };
            PipelineMessage::new(role, text, Source::processor(ID))
        };
        // Where a turn is missing, by role alone: most lists need none or one or two, put in
        // place (the list is not made again).
        let mut missing: Vec<(usize, Role)> = Vec::new();
        let mut previous: Option<Role> = None; // the side of the last turn
        for (i, m) in ctx.messages.iter().enumerate() {
            let Some(this) = side(m.role) else {
                continue;
            };
            let wanted = match previous {
                None => Role::User,
                Some(Role::User) => Role::Assistant,
                Some(_) => Role::User,
            };
            if this != wanted {
                missing.push((i, wanted));
            }
            previous = Some(this);
        }
        if previous.is_none() {
            // No turn at all: the API still needs one user message.
            missing.push((ctx.messages.len(), Role::User));
        }
        let added = missing.len();
        if added > FEW {
            let mut missing = missing.into_iter().peekable();
            let messages = std::mem::take(&mut ctx.messages);
            let mut out = Vec::with_capacity(messages.len() + added);
            for (i, m) in messages.into_iter().enumerate() {
                while let Some((_, role)) = missing.next_if(|(at, _)| *at == i) {
                    out.push(filler(role));
                }
                out.push(m);
            }
            out.extend(missing.map(|(_, role)| filler(role)));
            ctx.messages = out;
        } else {
            // From the end, so that each position still holds.
            for &(at, role) in missing.iter().rev() {
                ctx.messages.insert(at, filler(role));
            }
        }
        if added > 0 {
            ctx.info(ID, texts::TURNS_ADDED.with("count", added));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::testing::{roles_and_contents, run_one};

    #[test]
    fn a_leading_assistant_turn_gets_a_user_turn_before_it() {
        let out = run_one(
            &EnsureAlternation,
            &[],
            &[
                (Role::System, "s"),
                (Role::Assistant, "hello"),
                (Role::User, "u"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "s".to_string()),
                (Role::User, "[Start a new chat]".into()),
                (Role::Assistant, "hello".into()),
                (Role::User, "u".into())
            ]
        );
    }

    #[test]
    fn same_side_turns_get_a_filler_between_them() {
        let out = run_one(
            &EnsureAlternation,
            &[("assistantPlaceholder", serde_json::json!("(ok)"))],
            &[
                (Role::User, "u1"),
                (Role::User, "u2"),
                (Role::Assistant, "a"),
                (Role::Assistant, "b"),
            ],
        );
        let roles: Vec<Role> = out.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::User,
                Role::Assistant,
                Role::User,
                Role::Assistant
            ]
        );
        assert_eq!(out.messages[1].content(), "(ok)");
        assert_eq!(out.messages[4].content(), "[Start a new chat]");
    }

    #[test]
    fn an_empty_conversation_gets_one_user_turn() {
        let out = run_one(&EnsureAlternation, &[], &[(Role::System, "s")]);
        assert_eq!(out.messages.len(), 2);
        assert_eq!(out.messages[1].role, Role::User);
    }

    /// A few missing turns go in place, many make the list again: both give the same list.
    #[test]
    fn few_and_many_missing_turns_give_the_same_alternation() {
        for n in [3, FEW + 4] {
            let input: Vec<(Role, &str)> = std::iter::once((Role::System, "s"))
                .chain((0..n).map(|_| (Role::Assistant, "a")))
                .collect();
            let out = run_one(&EnsureAlternation, &[], &input);
            let mut expected = vec![(Role::System, "s".to_string())];
            for _ in 0..n {
                expected.push((Role::User, "[Start a new chat]".into()));
                expected.push((Role::Assistant, "a".into()));
            }
            assert_eq!(roles_and_contents(&out), expected, "{n} assistant turns");
        }
        let out = run_one(&EnsureAlternation, &[], &[(Role::System, "s")]);
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "s".to_string()),
                (Role::User, "[Start a new chat]".into())
            ]
        );
    }
}
