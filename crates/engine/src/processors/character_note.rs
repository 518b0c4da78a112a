//! `character-note` (priority 295): the character's note (RULES 5.11.4), a text the character
//! places in the chat history at a depth with a role, handed to the injection assembler as a
//! candidate. Off by default; SillyTavern compatibility switches it on, as SillyTavern sends a
//! card's depth prompt.

use crate::model::InjectionStrategy;
use crate::pipeline::{
    CompatDefaults, InjectionCandidate, PipelineContext, Processor, ProcessorDescriptor,
    ResolvedConfig, Source,
};
use crate::texts;
use crate::EngineError;

pub struct CharacterNote;

const ID: &str = "character-note";

impl Processor for CharacterNote {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Character note",
            description: "Places the character's note in the chat history at its depth, with its \
                          role.",
            priority: 295,
            is_core: false,
            default_enabled: false,
            config_fields: Vec::new(),
        }
    }

    fn sillytavern(&self) -> Option<CompatDefaults> {
        Some(CompatDefaults::new(texts::CHARACTER_NOTE_SILLYTAVERN).enabled(true))
    }

    /// The note, trimmed and without carriage returns (RULES 5.11.4), as a candidate at its depth
    /// with its role; a blank one is not sent.
    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        _config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(note) = ctx
            .preset
            .character
            .as_ref()
            .and_then(|c| c.depth_prompt.as_ref())
        else {
            return Ok(());
        };
        let text = note.prompt.trim();
        if text.is_empty() {
            return Ok(());
        }
        ctx.blackboard.injections.push(InjectionCandidate {
            role: note.role,
            content: text.replace('\r', ""),
            strategy: InjectionStrategy {
                depth: Some(note.depth),
                ..InjectionStrategy::default()
            },
            source: Source::processor(ID),
        });
        ctx.info(
            ID,
            texts::CHARACTER_NOTE_PLACED
                .with("depth", note.depth)
                .with("role", note.role.as_str()),
        );
        Ok(())
    }
}
