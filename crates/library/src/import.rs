//! An imported file into the store. Nothing already there is overwritten without saying so:
//!
//! - a preset (or a character card, made into one) and a session are saved under their id, or
//!   the first free `<id>-N`;
//! - world info goes into a preset and either replaces its lorebook, said in a note with how many
//!   entries the old one had, or is merged into it: the new entries after the old ones, an id
//!   already taken renamed to a free `<id>-N`, the book's settings kept;
//! - regex scripts go into a preset, in both front doors (no build reads rules kept anywhere
//!   else): a rule identical to one already there is skipped, one whose id is taken by a
//!   different rule gets a free `<id>-N`, each said in a note.

use std::collections::HashSet;

use promptloom_engine::model::{AgentPreset, Lorebook, RegexRule};
use promptloom_import::{card_preset, Imported};
use promptloom_store::{free_id, Store};

use crate::LibraryError;

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
    /// replaced, ids renamed, duplicates skipped.
    pub notes: Vec<String>,
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
    Ok(Outcome { place, notes })
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
fn lay_lorebook(preset: &mut AgentPreset, book: Lorebook, mode: LorebookMode) -> Vec<String> {
    let Some(old) = preset.lorebook.as_mut().filter(|b| !b.entries.is_empty()) else {
        preset.lorebook = Some(book);
        return Vec::new();
    };
    match mode {
        LorebookMode::Replace => {
            let note = format!(
                "the lorebook of preset \"{}\" was replaced; it had {}",
                preset.id,
                entries(old.entries.len())
            );
            preset.lorebook = Some(book);
            vec![note]
        }
        LorebookMode::Merge => {
            let mut taken: HashSet<String> = old.entries.iter().map(|e| e.id.clone()).collect();
            let mut notes = Vec::new();
            let added = book.entries.len();
            for mut entry in book.entries {
                if taken.contains(&entry.id) {
                    let renamed = free_in(&taken, &entry.id);
                    notes.push(format!(
                        "entry \"{}\" is taken in the lorebook; added as \"{renamed}\"",
                        entry.id
                    ));
                    entry.id = renamed;
                }
                taken.insert(entry.id.clone());
                old.entries.push(entry);
            }
            notes.insert(
                0,
                format!(
                    "{} added to the lorebook of preset \"{}\", which keeps its {} and settings",
                    entries(added),
                    preset.id,
                    entries(old.entries.len() - added)
                ),
            );
            notes
        }
    }
}

/// "1 entry", "3 entries".
fn entries(n: usize) -> String {
    if n == 1 {
        "1 entry".to_string()
    } else {
        format!("{n} entries")
    }
}

/// Adds `rules` to `kept`: one identical to a kept rule is skipped, one whose id is taken gets a
/// free `<id>-N`. Returns a note for each.
fn add_rules(kept: &mut Vec<RegexRule>, rules: Vec<RegexRule>) -> Vec<String> {
    let mut notes = Vec::new();
    let mut taken: HashSet<String> = kept.iter().map(|r| r.id.clone()).collect();
    for mut rule in rules {
        if kept.contains(&rule) {
            notes.push(format!(
                "rule \"{}\" is there already, the same; skipped",
                rule.id
            ));
            continue;
        }
        if taken.contains(&rule.id) {
            let renamed = free_in(&taken, &rule.id);
            notes.push(format!(
                "rule id \"{}\" is taken by a different rule; added as \"{renamed}\"",
                rule.id
            ));
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
