//! `lorebook` (priority 280): keyword activation of lorebook entries (SPEC 6). This issue keeps
//! its place in the pipeline; activation lands with the lorebook issue. Until then it reports
//! that a preset's lorebook is not applied, so nobody mistakes silence for "nothing matched".

use crate::pipeline::{PipelineContext, Processor, ProcessorDescriptor, ResolvedConfig};
use crate::EngineError;

pub struct Lorebook;

const ID: &str = "lorebook";

impl Processor for Lorebook {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Lorebook",
            description: "Activates lorebook entries by keyword and places them like recipe steps.",
            priority: 280,
            is_core: false,
            default_enabled: true,
            config_fields: Vec::new(),
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_>,
        _: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        if let Some(book) = &ctx.preset.lorebook {
            if !book.entries.is_empty() {
                ctx.warn(
                    ID,
                    format!(
                        "the preset's lorebook ({} entries) is not applied yet: keyword activation is not built",
                        book.entries.len()
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Lorebook as Book, LorebookEntry};
    use crate::processors::testing::{empty_session, options, with_context};

    #[test]
    fn a_preset_lorebook_is_reported_as_not_applied_and_nothing_is_placed() {
        with_context(
            &Lorebook,
            &[],
            &empty_session(),
            &options(),
            |mut ctx, config| {
                let mut preset = ctx.preset.clone();
                let entry: LorebookEntry = serde_json::from_value(
                    serde_json::json!({ "id": "e", "keys": ["k"], "content": "c" }),
                )
                .expect("entry");
                preset.lorebook = Some(Book {
                    entries: vec![entry],
                    ..Book::default()
                });
                let preset = Box::leak(Box::new(preset));
                ctx.preset = preset;
                Lorebook.execute(&mut ctx, config).expect("runs");
                assert!(ctx.blackboard.injections.is_empty());
                assert!(ctx
                    .logs
                    .iter()
                    .any(|l| l.message.contains("not applied yet")));
            },
        );
    }
}
