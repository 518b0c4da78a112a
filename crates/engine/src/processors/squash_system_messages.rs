//! `squash-system-messages` (priority 480, off by default; RULES 5.11.7): SillyTavern's
//! `squash_system_messages`. After the budget, every empty system message is left out, and each
//! unnamed system message is joined to the unnamed system message before it with a line break.
//! The openers (the new chat prompt and the example chat prompt) are never joined, either way:
//! what follows an opener starts a message of its own; nor are two system messages between which
//! a user or assistant step of the recipe sent nothing.

use crate::model::Role;
use crate::pipeline::{
    PipelineContext, PipelineMessage, Processor, ProcessorDescriptor, ResolvedConfig, SourceKind,
};
use crate::texts;
use crate::EngineError;

pub struct SquashSystemMessages;

const ID: &str = "squash-system-messages";
/// The assembler, whose own system message in the output is the new chat opener.
const ASSEMBLER: &str = "injection-assembler";
/// The template id of the example dialogue, whose unnamed message is the example opener.
const EXAMPLES: &str = "dialogueExamples";

impl Processor for SquashSystemMessages {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Squash system messages",
            description: "Consecutive unnamed system messages are joined with a line break, the \
                          chat and example openers apart; empty system messages are left out.",
            priority: 480,
            is_core: false,
            default_enabled: false,
            config_fields: Vec::new(),
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        _: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let before = ctx.messages.len();
        let turns = empty_turns(ctx);
        let mut out: Vec<PipelineMessage> = Vec::with_capacity(before);
        // Whether the last message kept may take the next one in.
        let mut open = false;
        // The recipe step the last message kept (or joined) came from.
        let mut last_step: Option<u32> = None;
        // The messages to join into the last one kept, joined once the run ends.
        let mut run: Vec<PipelineMessage> = Vec::new();
        let join = |out: &mut Vec<PipelineMessage>, run: &mut Vec<PipelineMessage>| {
            if let Some(last) = out.last_mut() {
                last.absorb_all(std::mem::take(run), "\n", ID);
            }
        };
        for m in std::mem::take(&mut ctx.messages) {
            if m.role == Role::System && m.content().is_empty() {
                continue;
            }
            let squashable = squashable(&m);
            let step = m.source().step_index;
            let apart = match (last_step, step) {
                (Some(a), Some(b)) => turns.iter().any(|t| a < *t && *t < b),
                _ => false,
            };
            if !out.is_empty() && squashable && open && !apart {
                run.push(m);
            } else {
                join(&mut out, &mut run);
                out.push(m);
                open = squashable;
            }
            last_step = step.or(last_step);
        }
        join(&mut out, &mut run);
        let joined = before - out.len();
        ctx.messages = out;
        if joined > 0 {
            ctx.info(ID, texts::SYSTEM_SQUASHED.with("count", joined));
        }
        Ok(())
    }
}

/// The steps of the build's recipe that sent nothing although they are user or assistant
/// messages in list order: SillyTavern keeps such an empty message until it writes the request,
/// so it ends a run of system messages (RULES 5.11.7).
fn empty_turns(ctx: &PipelineContext<'_, '_>) -> Vec<u32> {
    let Some(recipe) = ctx.chosen_recipe() else {
        return Vec::new();
    };
    let sent: std::collections::HashSet<u32> = ctx
        .messages
        .iter()
        .flat_map(|m| {
            let mut steps: Vec<u32> = m.merged().iter().filter_map(|s| s.step_index).collect();
            steps.extend(m.source().step_index);
            steps
        })
        .collect();
    recipe
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, step)| {
            let i = u32::try_from(i).ok()?;
            let template = ctx.preset.template(&step.message_id)?;
            let role = step
                .overrides
                .as_ref()
                .and_then(|o| o.role)
                .unwrap_or(template.role);
            let strategy = step
                .injection_strategy
                .as_ref()
                .or(template.default_injection_strategy.as_ref());
            let in_list = strategy.is_none_or(|s| s.depth.is_none() && s.anchor_target.is_none());
            (step.enabled
                && !template.kind.is_slot()
                && role != Role::System
                && in_list
                && !sent.contains(&i))
            .then_some(i)
        })
        .collect()
}

/// An unnamed system message that is not one of the openers.
fn squashable(m: &PipelineMessage<'_>) -> bool {
    if m.role != Role::System || m.name().is_some() {
        return false;
    }
    let source = m.source();
    let opener = match source.kind {
        SourceKind::Processor => source.processor.as_deref() == Some(ASSEMBLER),
        SourceKind::Template => source.template_id.as_deref() == Some(EXAMPLES),
        _ => false,
    };
    !opener
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Placement, Source};
    use crate::processors::testing::{options, roles_and_contents, run_one, run_with};

    #[test]
    fn unnamed_system_runs_join_and_empty_ones_go() {
        let out = run_one(
            &SquashSystemMessages,
            &[],
            &[
                (Role::System, "main"),
                (Role::System, ""),
                (Role::System, "persona"),
                (Role::User, "hi"),
                (Role::System, "note"),
                (Role::System, "after"),
            ],
        );
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "main\npersona".to_string()),
                (Role::User, "hi".into()),
                (Role::System, "note\nafter".into()),
            ]
        );
        assert_eq!(out.messages[0].merged().len(), 1);
    }

    #[test]
    fn openers_and_named_messages_stand_alone() {
        let opener = Source::processor(ASSEMBLER);
        let mut example = PipelineMessage::new(Role::System, "Hi", example_source());
        example.set_name(Some("example_user".into()));
        let messages = vec![
            PipelineMessage::new(
                Role::System,
                "main",
                Source::new(SourceKind::Template, Placement::List),
            ),
            PipelineMessage::new(Role::System, "[Example Chat]", example_source()),
            example,
            PipelineMessage::new(Role::System, "[Start a new Chat]", opener),
            PipelineMessage::new(
                Role::System,
                "lore",
                Source::new(SourceKind::Lorebook, Placement::List),
            ),
            PipelineMessage::new(
                Role::System,
                "more lore",
                Source::new(SourceKind::Lorebook, Placement::List),
            ),
        ];
        let out = run_with(&SquashSystemMessages, &[], messages, &options());
        assert_eq!(
            roles_and_contents(&out),
            [
                (Role::System, "main".to_string()),
                (Role::System, "[Example Chat]".into()),
                (Role::System, "Hi".into()),
                (Role::System, "[Start a new Chat]".into()),
                (Role::System, "lore\nmore lore".into()),
            ]
        );
    }

    fn example_source() -> Source {
        Source {
            template_id: Some(EXAMPLES.into()),
            ..Source::new(SourceKind::Template, Placement::List)
        }
    }
}
