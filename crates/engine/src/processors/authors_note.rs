//! `authors-note` (priority 290, off by default; on under SillyTavern compatibility): places the
//! session's author's note as an injection candidate for the assembler, on the turns its interval
//! says, with the lorebook's candidates aimed before and after the `authorsNote` anchor folded
//! into its text (RULES 5.11.2).

use crate::model::{AnchorPosition, AuthorsNote as Note, InjectionStrategy, NotePosition, Role};
use crate::pipeline::{
    CompatDefaults, ConfigField, DropAction, DroppedItem, InjectionCandidate, PipelineContext,
    Placement, Processor, ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::texts;
use crate::EngineError;

use super::input_to_append;

pub struct AuthorsNote;

const ID: &str = "authors-note";
/// The anchor the lorebook's "before / after the author's note" entries aim at.
pub const NOTE_ANCHOR: &str = "authorsNote";

impl Processor for AuthorsNote {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Author's note",
            description: "Places the session's author's note every so many user messages: \
                          before or after the main prompt, or in the chat at a depth; lorebook \
                          entries aimed at the note are joined into it.",
            priority: 290,
            is_core: false,
            default_enabled: false,
            config_fields: vec![
                ConfigField::text("promptAnchor", "Main prompt", "main").describe(
                    "The template the note stands directly before (\"before the prompt\") or \
                     after (\"in the prompt\"); the assembler's templateAnchors must be on \
                     for a message template.",
                ),
            ],
        }
    }

    fn sillytavern(&self) -> Option<CompatDefaults> {
        Some(CompatDefaults::new(texts::COMPAT_AUTHORS_NOTE).enabled(true))
    }

    /// RULES 5.11.2: the note is shown when the interval is 1, or when the number of user
    /// messages (the input counting) is a positive multiple of it; the entries aimed at it are
    /// joined before and after its text, and left out with it.
    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let fallback;
        let note = match &ctx.session.authors_note {
            Some(note) => note,
            None => {
                fallback = Note::default();
                &fallback
            }
        };
        let aimed = take_aimed(&mut ctx.blackboard.injections);
        let input = input_to_append(ctx.session, ctx.options.input.as_deref()).is_some();
        let users = ctx
            .session
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count()
            + usize::from(input);
        let interval = note.interval as usize;
        let shown = interval == 1 || (interval > 1 && users > 0 && users % interval == 0);
        if !shown {
            ctx.info(
                ID,
                if interval == 0 {
                    texts::NOTE_NEVER.into()
                } else {
                    texts::NOTE_NOT_THIS_TURN
                        .with("interval", interval)
                        .with("count", users)
                },
            );
            for candidate in aimed {
                ctx.dropped.push(DroppedItem::one(
                    ID,
                    DropAction::Dropped,
                    candidate.source,
                    None,
                    texts::NOTE_ENTRY_LEFT_OUT,
                ));
            }
            return Ok(());
        }
        let entries = aimed.len();
        let text = joined(note, &aimed);
        if text.trim().is_empty() {
            ctx.info(ID, texts::NOTE_EMPTY);
            return Ok(());
        }
        let anchor = config.str("promptAnchor");
        let (strategy, text, place) = match note.position {
            NotePosition::InChat => (
                InjectionStrategy {
                    depth: Some(note.depth),
                    ..InjectionStrategy::default()
                },
                // SillyTavern trims what it injects into the chat.
                text.trim().to_string(),
                texts::NOTE_AT_DEPTH.with("depth", note.depth),
            ),
            NotePosition::BeforePrompt | NotePosition::InPrompt => {
                let (side, said) = if note.position == NotePosition::BeforePrompt {
                    (AnchorPosition::Before, texts::NOTE_BEFORE)
                } else {
                    (AnchorPosition::After, texts::NOTE_AFTER)
                };
                (
                    InjectionStrategy {
                        anchor_target: Some(anchor.to_string()),
                        anchor_position: Some(side),
                        ..InjectionStrategy::default()
                    },
                    text,
                    said.with("anchor", anchor),
                )
            }
        };
        ctx.info(
            ID,
            texts::NOTE_PLACED
                .part("where", place)
                .with("entries", entries),
        );
        let mut source = Source::new(SourceKind::Processor, Placement::List);
        source.template_id = Some(NOTE_ANCHOR.to_string());
        source.processor = Some(ID.to_string());
        // First among the candidates, so that at one depth and order it comes before the
        // lorebook's entries, as SillyTavern puts its note before its depth entries.
        ctx.blackboard.injections.insert(
            0,
            InjectionCandidate {
                role: note.role,
                content: text,
                strategy,
                source,
            },
        );
        Ok(())
    }
}

/// The candidates aimed before or after the note's anchor, taken out of `injections` in their
/// order: `order` highest first, then as they came (the order the assembler gives an anchor).
fn take_aimed(injections: &mut Vec<InjectionCandidate>) -> Vec<InjectionCandidate> {
    let is_aimed = |c: &InjectionCandidate| {
        c.strategy.depth.is_none() && c.strategy.anchor_target.as_deref() == Some(NOTE_ANCHOR)
    };
    if !injections.iter().any(is_aimed) {
        return Vec::new();
    }
    let (mut aimed, rest): (Vec<_>, Vec<_>) = std::mem::take(injections)
        .into_iter()
        .partition(|c| is_aimed(c));
    *injections = rest;
    aimed.sort_by_key(|c| std::cmp::Reverse(c.strategy.order()));
    aimed
}

/// The note's text with the entries aimed before it on the lines above and those aimed after it
/// on the lines below; one line break at the very start and at the very end is dropped
/// (RULES 5.11.2).
fn joined(note: &Note, aimed: &[InjectionCandidate]) -> String {
    if aimed.is_empty() {
        return note.content.clone();
    }
    let side = |p: AnchorPosition| {
        aimed
            .iter()
            .filter(|c| c.strategy.position() == p)
            .map(|c| c.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = format!(
        "{}\n{}\n{}",
        side(AnchorPosition::Before),
        note.content,
        side(AnchorPosition::After)
    );
    let text = text.strip_prefix('\n').unwrap_or(&text);
    text.strip_suffix('\n').unwrap_or(text).to_string()
}

#[cfg(test)]
mod tests;
