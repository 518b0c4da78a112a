//! The preset being edited, kept between the live preview's builds so that a keystroke sends what
//! it changed, not the whole preset: a 262-prompt preset is 150 KB of JSON, written, carried and
//! read on every keystroke otherwise (docs/PERFORMANCE.md, "A 262-prompt community preset").
//!
//! Each edit is numbered by the front door that sends it. An edit of changes names the draft it
//! changes (`base`); when that is not the draft kept (the app started again, an earlier build
//! failed), nothing changes and the error is [`LibraryError::StaleDraft`]: the front door sends
//! the whole preset instead.

use std::sync::{Arc, Mutex};

use promptloom_engine::model::{AgentPreset, ContextRecipe, LorebookEntry, MessageTemplate};
use serde::Deserialize;

use crate::LibraryError;

/// The preset of the next build, as a whole or as changes to the draft kept.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PresetEdit {
    /// The whole preset: a preset just opened, or an edit of more than a few items.
    #[serde(rename_all = "camelCase")]
    Whole {
        revision: u32,
        preset: Box<AgentPreset>,
    },
    /// Items replaced in the draft numbered `base`; the draft is numbered `revision` after.
    #[serde(rename_all = "camelCase")]
    Changes {
        base: u32,
        revision: u32,
        changes: Vec<PresetChange>,
    },
}

/// One item of the preset replaced, by its position; the lists keep their lengths.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PresetChange {
    Template {
        index: u32,
        template: MessageTemplate,
    },
    Recipe {
        index: u32,
        recipe: ContextRecipe,
    },
    LorebookEntry {
        index: u32,
        entry: LorebookEntry,
    },
}

/// The draft kept: the preset as of the newest edit, and that edit's number.
#[derive(Default)]
pub struct Drafts(Mutex<Option<(u32, Arc<AgentPreset>)>>);

impl Drafts {
    pub fn new() -> Self {
        Self::default()
    }

    /// The preset after `edit`, which is kept as the draft. A refused edit leaves no draft: the
    /// next one must be whole.
    pub fn apply(&self, edit: PresetEdit) -> Result<Arc<AgentPreset>, LibraryError> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (revision, preset) = match edit {
            PresetEdit::Whole { revision, preset } => (revision, Arc::from(preset)),
            PresetEdit::Changes {
                base,
                revision,
                changes,
            } => {
                let mut preset = match kept.take() {
                    Some((number, preset)) if number == base => preset,
                    Some((number, _)) => {
                        return Err(stale(format!(
                            "an edit of draft {base}, and the draft kept is {number}"
                        )))
                    }
                    None => {
                        return Err(stale(format!("an edit of draft {base}, and none is kept")))
                    }
                };
                // The previous build is over: the draft is not shared, and changes in place.
                let draft = Arc::make_mut(&mut preset);
                for change in changes {
                    change_item(draft, change).map_err(stale)?;
                }
                (revision, preset)
            }
        };
        *kept = Some((revision, preset.clone()));
        Ok(preset)
    }

    /// The number of the draft kept, if any.
    pub fn revision(&self) -> Option<u32> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|(n, _)| *n)
    }
}

fn stale(reason: String) -> LibraryError {
    LibraryError::StaleDraft { reason }
}

/// Replaces the item `change` names; why not, when the draft has no such item.
fn change_item(preset: &mut AgentPreset, change: PresetChange) -> Result<(), String> {
    fn put<T>(list: &mut [T], index: u32, item: T, what: &str) -> Result<(), String> {
        let len = list.len();
        let slot = list
            .get_mut(index as usize)
            .ok_or_else(|| format!("no {what} {index} in the draft, which has {len}"))?;
        *slot = item;
        Ok(())
    }
    match change {
        PresetChange::Template { index, template } => {
            put(&mut preset.message_templates, index, template, "template")
        }
        PresetChange::Recipe { index, recipe } => {
            put(&mut preset.context_recipes, index, recipe, "recipe")
        }
        PresetChange::LorebookEntry { index, entry } => match preset.lorebook.as_mut() {
            Some(book) => put(&mut book.entries, index, entry, "lorebook entry"),
            None => Err(format!(
                "no lorebook entry {index}: the draft has no lorebook"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset() -> AgentPreset {
        serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "a", "role": "system", "content": "A" },
                { "id": "b", "role": "system", "content": "B" }
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "a", "enabled": true },
                { "messageId": "b", "enabled": false }
            ]}],
            "lorebook": { "entries": [{ "id": "e", "keys": ["k"], "content": "E" }] }
        }))
        .expect("preset")
    }

    fn changes(base: u32, revision: u32, changes: serde_json::Value) -> PresetEdit {
        serde_json::from_value(serde_json::json!({
            "kind": "changes", "base": base, "revision": revision, "changes": changes
        }))
        .expect("an edit")
    }

    fn whole(revision: u32) -> PresetEdit {
        PresetEdit::Whole {
            revision,
            preset: Box::new(preset()),
        }
    }

    #[test]
    fn changes_replace_their_items_in_the_draft_and_leave_the_rest() {
        let drafts = Drafts::new();
        drafts.apply(whole(1)).expect("whole");
        let after = drafts
            .apply(changes(
                1,
                2,
                serde_json::json!([
                    { "kind": "template", "index": 1, "template": { "id": "b", "role": "user", "content": "B!" } },
                    { "kind": "recipe", "index": 0, "recipe": { "id": "r", "modelFilter": ["*"], "steps": [
                        { "messageId": "a", "enabled": true }, { "messageId": "b", "enabled": true }] } },
                    { "kind": "lorebookEntry", "index": 0, "entry": { "id": "e", "keys": ["k2"], "content": "E" } }
                ]),
            ))
            .expect("changes");
        let mut expected = preset();
        expected.message_templates[1].content = Some("B!".into());
        expected.message_templates[1].role = promptloom_engine::model::Role::User;
        expected.context_recipes[0].steps[1].enabled = true;
        expected.lorebook.as_mut().unwrap().entries[0].keys = vec!["k2".into()];
        assert_eq!(*after, expected);
        assert_eq!(drafts.revision(), Some(2));
        // The next edit changes this draft, not the first.
        let again = drafts
            .apply(changes(
                2,
                3,
                serde_json::json!([{ "kind": "template", "index": 0,
                    "template": { "id": "a", "role": "system", "content": "A!" } }]),
            ))
            .expect("changes");
        assert_eq!(again.message_templates[0].content.as_deref(), Some("A!"));
        assert_eq!(again.message_templates[1].content.as_deref(), Some("B!"));
    }

    #[test]
    fn an_edit_of_another_draft_is_refused_and_the_next_must_be_whole() {
        let drafts = Drafts::new();
        let none_kept = drafts
            .apply(changes(1, 2, serde_json::json!([])))
            .unwrap_err();
        assert_eq!(none_kept.code(), "stale_draft");
        assert!(
            none_kept.to_string().contains("none is kept"),
            "{none_kept}"
        );

        drafts.apply(whole(5)).expect("whole");
        let other = drafts
            .apply(changes(4, 6, serde_json::json!([])))
            .unwrap_err();
        assert_eq!(other.code(), "stale_draft");
        assert!(other.to_string().contains("the draft kept is 5"), "{other}");
        assert_eq!(drafts.revision(), None, "a refused edit leaves no draft");
        assert!(drafts.apply(changes(5, 6, serde_json::json!([]))).is_err());
        drafts.apply(whole(7)).expect("whole again");
        assert!(drafts.apply(changes(7, 8, serde_json::json!([]))).is_ok());
    }

    #[test]
    fn a_change_of_an_item_the_draft_does_not_have_is_refused() {
        let drafts = Drafts::new();
        drafts.apply(whole(1)).expect("whole");
        let err = drafts
            .apply(changes(
                1,
                2,
                serde_json::json!([{ "kind": "template", "index": 2,
                    "template": { "id": "c", "role": "system" } }]),
            ))
            .unwrap_err();
        assert_eq!(err.code(), "stale_draft");
        assert!(
            err.to_string()
                .contains("no template 2 in the draft, which has 2"),
            "{err}"
        );
        assert_eq!(drafts.revision(), None);

        let mut bookless = preset();
        bookless.lorebook = None;
        drafts
            .apply(PresetEdit::Whole {
                revision: 3,
                preset: Box::new(bookless),
            })
            .expect("whole");
        let err = drafts
            .apply(changes(
                3,
                4,
                serde_json::json!([{ "kind": "lorebookEntry", "index": 0,
                    "entry": { "id": "e", "keys": [], "content": "" } }]),
            ))
            .unwrap_err();
        assert!(err.to_string().contains("no lorebook"), "{err}");
    }
}
