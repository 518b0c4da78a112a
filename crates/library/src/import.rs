//! An imported file into the store. Nothing already there is overwritten without saying so:
//!
//! - a preset (or a character card, made into one) and a session are saved under their id, or
//!   the first free `<id>-N`;
//! - world info goes into a preset and either replaces its lorebook's entries, said in a note with
//!   how many the old book had, or is merged into it: the new entries after the old ones, an id
//!   already taken renamed to a free `<id>-N`. Either way the book's settings stay: a SillyTavern
//!   world info file carries none (SillyTavern keeps them globally, and they win over any book);
//! - regex scripts go into a preset, in both front doors (no build reads rules kept anywhere
//!   else): a rule identical to one already there is skipped, one whose id is taken by a
//!   different rule gets a free `<id>-N`, each said in a note;
//! - SillyTavern's world info settings go into a preset: its lorebook takes them (its entries are
//!   kept) and the `lorebook` processor its `includeNames`, said in a note;
//! - a SillyTavern instruct template goes into a preset as its own (its builds become text
//!   completion), said in a note that names the template it replaced, if any;
//! - a SillyTavern system prompt goes into a preset as its variable `systemPrompt`, which the
//!   story string of an imported context template reads; the note says when no template of the
//!   preset reads it.

use std::collections::HashSet;

use promptloom_engine::model::{AgentPreset, Lorebook, RegexRule};
use promptloom_engine::Said;
use promptloom_import::{card_preset, Imported};
use promptloom_store::{free_id, Store};

use crate::LibraryError;

/// What an import says it did, each a code with its English (`promptloom_engine::said`); the app
/// says them in its language (`ui/src/i18n/engineTexts.json` is written from this list too).
pub mod texts {
    promptloom_engine::texts! {
        LOREBOOK_REPLACED = "import.lorebook-replaced" => "the entries of the lorebook of preset \"{preset}\" were replaced (it had {entries}); its settings are kept";
        LOREBOOK_MERGED = "import.lorebook-merged" => "{added} added to the lorebook of preset \"{preset}\", which keeps its {kept} and settings";
        ENTRY_RENAMED = "import.entry-renamed" => "entry \"{entry}\" is taken in the lorebook; added as \"{renamed}\"";
        ONE_ENTRY = "import.one-entry" => "1 entry";
        ENTRIES = "import.entries" => "{count} entries";
        RULE_SKIPPED = "import.rule-skipped" => "rule \"{rule}\" is there already, the same; skipped";
        RULE_RENAMED = "import.rule-renamed" => "rule id \"{rule}\" is taken by a different rule; added as \"{renamed}\"";
        WI_SETTINGS_APPLIED = "import.wi-settings-applied" => "the lorebook of preset \"{preset}\" takes SillyTavern's world info settings (scan depth, budget, recursion, matching) in place of its own, and keeps its {entries}";
        WI_SETTINGS_NEW_BOOK = "import.wi-settings-new-book" => "preset \"{preset}\" gets a lorebook with SillyTavern's world info settings (scan depth, budget, recursion, matching) and no entries yet";
        INSTRUCT_SET = "import.instruct-set" => "preset \"{preset}\" now builds text completion with the instruct template \"{template}\"";
        INSTRUCT_REPLACED = "import.instruct-replaced" => "preset \"{preset}\" now builds text completion with the instruct template \"{template}\", in place of \"{old}\"";
        SYSTEM_PROMPT_SET = "import.system-prompt-set" => "the system prompt of preset \"{preset}\" (its variable systemPrompt) is now \"{name}\"";
        SYSTEM_PROMPT_UNREAD = "import.system-prompt-unread" => "the system prompt \"{name}\" is kept as the variable systemPrompt of preset \"{preset}\", but no template of it reads {{getvar::systemPrompt}}, so it is not sent (a SillyTavern context template's story string reads it)";
    }
}

/// What world info does to a preset that has a lorebook already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LorebookMode {
    #[default]
    Replace,
    Merge,
}

/// Where an import goes.
#[derive(Debug, Clone, Copy)]
pub struct ImportTarget<'a> {
    /// The preset that world info and regex scripts go into.
    pub into: Option<&'a str>,
    pub lorebook: LorebookMode,
}

/// What an import made or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Preset { id: String, name: String },
    Session { id: String },
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub place: Place,
    /// What the import did beyond the importer's mapping that the user should know: a lorebook
    /// replaced, ids renamed, duplicates skipped. In English.
    pub notes: Vec<String>,
    /// The same notes as codes with parameters ([`texts`]), for the app to say in its language.
    pub notes_said: Vec<Said>,
}

/// Saves what a file held into `store`, as `target` says. Everything is read and mapped before
/// this is called, so bad input has written nothing; a store error here leaves the store as it
/// was (each save is one transaction).
pub fn import_into(
    store: &Store,
    imported: Imported,
    target: ImportTarget<'_>,
) -> Result<Outcome, LibraryError> {
    let mut notes = Vec::new();
    let place = match imported {
        Imported::Preset { preset } => new_preset(store, *preset)?,
        Imported::Character(card) => new_preset(store, card_preset(&card))?,
        Imported::Session { mut session } => {
            session.id = store.free_session_id(&session.id)?;
            store.save_session(&session)?;
            Place::Session { id: session.id }
        }
        Imported::Lorebook { lorebook } => {
            let id = target
                .into
                .ok_or(LibraryError::NeedsPreset { what: "world info" })?;
            let mut preset = store.get_preset(id)?;
            notes.extend(lay_lorebook(&mut preset, lorebook, target.lorebook));
            store.save_preset(&preset)?;
            Place::Preset {
                id: preset.id,
                name: preset.name,
            }
        }
        Imported::WorldInfoSettings { settings } => {
            let id = target.into.ok_or(LibraryError::NeedsPreset {
                what: "SillyTavern's world info settings",
            })?;
            let mut preset = store.get_preset(id)?;
            let kept = preset.lorebook.as_ref().map_or(0, |b| b.entries.len());
            settings.apply_to(&mut preset);
            notes.push(if kept == 0 {
                texts::WI_SETTINGS_NEW_BOOK.with("preset", &preset.id)
            } else {
                texts::WI_SETTINGS_APPLIED
                    .with("preset", &preset.id)
                    .part("entries", entries(kept))
            });
            store.save_preset(&preset)?;
            Place::Preset {
                id: preset.id,
                name: preset.name,
            }
        }
        Imported::InstructTemplate { template } => {
            let id = target.into.ok_or(LibraryError::NeedsPreset {
                what: "an instruct template",
            })?;
            let mut preset = store.get_preset(id)?;
            let old = preset.instruct.replace(template.clone());
            notes.push(match old {
                Some(old) if old.name != template.name => texts::INSTRUCT_REPLACED
                    .with("preset", &preset.id)
                    .with("template", &template.name)
                    .with("old", &old.name),
                _ => texts::INSTRUCT_SET
                    .with("preset", &preset.id)
                    .with("template", &template.name),
            });
            store.save_preset(&preset)?;
            Place::Preset {
                id: preset.id,
                name: preset.name,
            }
        }
        Imported::SystemPrompt { prompt } => {
            let id = target.into.ok_or(LibraryError::NeedsPreset {
                what: "a system prompt",
            })?;
            let mut preset = store.get_preset(id)?;
            let read = prompt.apply_to(&mut preset);
            notes.push(
                if read {
                    texts::SYSTEM_PROMPT_SET
                } else {
                    texts::SYSTEM_PROMPT_UNREAD
                }
                .with("preset", &preset.id)
                .with("name", &prompt.name),
            );
            store.save_preset(&preset)?;
            Place::Preset {
                id: preset.id,
                name: preset.name,
            }
        }
        Imported::RegexRules { rules } => {
            let id = target.into.ok_or(LibraryError::NeedsPreset {
                what: "a set of regex scripts",
            })?;
            let mut preset = store.get_preset(id)?;
            let kept = preset.regex_rules.get_or_insert_with(Vec::new);
            notes.extend(add_rules(kept, rules));
            store.save_preset(&preset)?;
            Place::Preset {
                id: preset.id,
                name: preset.name,
            }
        }
    };
    Ok(Outcome {
        place,
        notes: notes.iter().map(Said::to_string).collect(),
        notes_said: notes,
    })
}

/// Saves an imported preset under its id, or the first free `<id>-N`, never over another.
fn new_preset(store: &Store, mut preset: AgentPreset) -> Result<Place, LibraryError> {
    preset.id = store.free_preset_id(&preset.id)?;
    store.save_preset(&preset)?;
    Ok(Place::Preset {
        id: preset.id,
        name: preset.name,
    })
}

/// Puts `book` into `preset` as `mode` says; returns the notes that say what happened to the
/// lorebook it had.
fn lay_lorebook(preset: &mut AgentPreset, book: Lorebook, mode: LorebookMode) -> Vec<Said> {
    let Some(old) = preset.lorebook.as_mut() else {
        preset.lorebook = Some(book);
        return Vec::new();
    };
    if old.entries.is_empty() {
        // A book of settings only (SillyTavern's world info settings came first): nothing to say.
        old.entries = book.entries;
        return Vec::new();
    }
    match mode {
        LorebookMode::Replace => {
            let note = texts::LOREBOOK_REPLACED
                .with("preset", &preset.id)
                .part("entries", entries(old.entries.len()));
            old.entries = book.entries;
            vec![note]
        }
        LorebookMode::Merge => {
            let mut taken: HashSet<String> = old.entries.iter().map(|e| e.id.clone()).collect();
            let mut notes = Vec::new();
            let added = book.entries.len();
            for mut entry in book.entries {
                if taken.contains(&entry.id) {
                    let renamed = free_in(&taken, &entry.id);
                    notes.push(
                        texts::ENTRY_RENAMED
                            .with("entry", &entry.id)
                            .with("renamed", &renamed),
                    );
                    entry.id = renamed;
                }
                taken.insert(entry.id.clone());
                old.entries.push(entry);
            }
            notes.insert(
                0,
                texts::LOREBOOK_MERGED
                    .part("added", entries(added))
                    .with("preset", &preset.id)
                    .part("kept", entries(old.entries.len() - added)),
            );
            notes
        }
    }
}

/// "1 entry", "3 entries".
fn entries(n: usize) -> Said {
    if n == 1 {
        texts::ONE_ENTRY.into()
    } else {
        texts::ENTRIES.with("count", n)
    }
}

/// Adds `rules` to `kept`: one identical to a kept rule is skipped, one whose id is taken gets a
/// free `<id>-N`. Returns a note for each.
fn add_rules(kept: &mut Vec<RegexRule>, rules: Vec<RegexRule>) -> Vec<Said> {
    let mut notes = Vec::new();
    let mut taken: HashSet<String> = kept.iter().map(|r| r.id.clone()).collect();
    for mut rule in rules {
        if kept.contains(&rule) {
            notes.push(texts::RULE_SKIPPED.with("rule", &rule.id));
            continue;
        }
        if taken.contains(&rule.id) {
            let renamed = free_in(&taken, &rule.id);
            notes.push(
                texts::RULE_RENAMED
                    .with("rule", &rule.id)
                    .with("renamed", &renamed),
            );
            rule.id = renamed;
        }
        taken.insert(rule.id.clone());
        kept.push(rule);
    }
    notes
}

/// `wanted`, or the first `<wanted>-N` that `taken` does not hold.
fn free_in(taken: &HashSet<String>, wanted: &str) -> String {
    free_id(wanted, |id| Ok(taken.contains(id))).unwrap_or_else(|_| format!("{wanted}-new"))
}
