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
        // Most lists alternate already: looked at first by role alone, and left as they are.
        let mut previous: Option<Role> = None;
        let alternates = ctx.messages.iter().all(|m| {
            let Some(this) = side(m.role) else {
                return true;
            };
            let wanted = match previous {
                None => Role::User,
                Some(Role::User) => Role::Assistant,
                Some(_) => Role::User,
            };
            previous = Some(this);
            this == wanted
        });
        if alternates && previous.is_some() {
            return Ok(());
        }
        let messages = std::mem::take(&mut ctx.messages);
        let mut out = Vec::with_capacity(messages.len() + 2);
        let mut previous: Option<Role> = None; // the side of the last turn
        let mut added = 0;
        for m in messages {
            let Some(this) = side(m.role) else {
                out.push(m);
                continue;
            };
            let wanted = match previous {
                None => Role::User,
                Some(Role::User) => Role::Assistant,
                Some(_) => Role::User,
            };
            if this != wanted {
                out.push(filler(wanted));
                added += 1;
            }
            previous = Some(this);
            out.push(m);
        }
        if previous.is_none() {
            // No turn at all: the API still needs one user message.
            out.push(filler(Role::User));
            added += 1;
        }
        ctx.messages = out;
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
}
