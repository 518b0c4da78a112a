//! The lorebook tester (RULES 6.6): every entry of the book, fired or not, and why, as a code
//! with the key and the place that decided it. The `lorebook` processor asks for it only when a
//! build's options say `explainLorebook`; it reads the build's report (what fired, what the
//! budget cut, what SillyTavern's activation left out) and looks for the nearest key of every
//! other entry in the messages the lorebook read.
//!
//! Bounded (docs/ARCHITECTURE.md, "Limits"): the search reads at most [`EXPLAIN_BYTES`] of text
//! in all; the entries after that are said to be unexplained.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::report::{Activation, LorebookReport};
pub use super::tester_search::EXPLAIN_BYTES;
use super::tester_search::{Search, Settings};
use crate::model::{Lorebook, LorebookEntry, SelectiveLogic};
use crate::said::Said;
use crate::texts;

/// Why an entry fired or did not, as a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum VerdictCode {
    /// Fired: a constant entry.
    Constant,
    /// Fired: a key occurred in a scanned message.
    Key,
    /// Fired: a key occurred in the content of an entry that fired (`step` says which round).
    Recursion,
    /// Fired: still sticky from an earlier activation (SillyTavern activation).
    Sticky,
    /// The entry is switched off.
    Disabled,
    /// Not constant, and no key to match.
    NoKeys,
    /// No key occurs anywhere near.
    NoMatch,
    /// A key occurs only in another case, and the entry is case-sensitive.
    Case,
    /// A key occurs only inside a longer word, and the entry matches whole words.
    WholeWord,
    /// A key occurs only in a message older than the scan depth.
    ScanDepth,
    /// A key occurs, but the secondary keys' logic does not hold.
    SecondaryKeys,
    /// Matched, but its chance did not come up.
    Probability,
    /// Matched, but SillyTavern's `delay` holds it back.
    Delay,
    /// Matched, but it is cooling down.
    Cooldown,
    /// Matched, but another entry of its inclusion group was kept.
    Group,
    /// Matched, but the budget had no room for it.
    Budget,
    /// A key occurs only in the content of an entry that fired, and recursion did not reach it.
    RecursionLimit,
    /// A key occurs, but the entry fires only in a recursion round.
    WaitsForRecursion,
    /// A key occurs, and yet the scan did not take it (a scan cap stopped it).
    NotTaken,
    /// The tester's work cap was reached before this entry.
    Unexplained,
}

impl VerdictCode {
    /// Whether the code says the entry fired.
    pub fn fired(self) -> bool {
        matches!(
            self,
            VerdictCode::Constant | VerdictCode::Key | VerdictCode::Recursion | VerdictCode::Sticky
        )
    }
}

/// Which text a key was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum PlaceKind {
    /// The pending input (the tester's text).
    Input,
    /// A stored message of the history.
    History,
    /// The content of another entry.
    Entry,
}

/// Where a key was found: the text, and the byte where the key starts in it as the lorebook
/// reads it (with the speaker's name in front when names are included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct KeyPlace {
    pub kind: PlaceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub offset: u32,
}

/// One entry as the tester shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct EntryVerdict {
    pub entry_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the entry is in what the build sends.
    pub fired: bool,
    pub reason: VerdictCode,
    /// Why, in English.
    pub why: String,
    /// Why, as a code with parameters, for the app to say in its language.
    pub said: Said,
    /// The key that decided it (the one that matched, or the one that came nearest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<KeyPlace>,
    /// For an entry fired by recursion, the round: 1 for the content of an entry the messages
    /// fired, 2 for the content of one fired in round 1, and so on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// Its content's tokens as the budget counts them.
    pub tokens: u32,
}

/// What the tester reads of one build's lorebook.
pub struct Explain<'a> {
    pub book: &'a Lorebook,
    pub report: &'a LorebookReport,
    /// The chat as the lorebook reads it, newest first: each message's history index (none for
    /// the pending input) and its text (with the speaker's name when names are included).
    pub chat: &'a [(Option<u32>, String)],
    /// Entries that matched but whose chance failed (native activation; SillyTavern's are in
    /// the report's `skipped`).
    pub chance_failed: &'a [usize],
    /// SillyTavern's activation (RULES 5.11.1): each entry's own scan settings and its rules of
    /// whole words.
    pub sillytavern: bool,
    /// The recursion rounds the activation runs at most.
    pub max_recursion: usize,
}

/// Every entry of the book explained, in book order; `tokens` counts an entry's content as the
/// budget does.
pub fn explain(
    x: &Explain<'_>,
    mut tokens: impl FnMut(&LorebookEntry) -> u32,
) -> Vec<EntryVerdict> {
    let book = x.book;
    let index: HashMap<&str, usize> = book
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let mut search = Search::new(x.sillytavern);
    // The entries whose content was read for recursion: every one that matched.
    let mut matched: Vec<usize> = Vec::new();
    for a in &x.report.activated {
        matched.extend(index.get(a.entry_id.as_str()));
    }
    for c in &x.report.cut {
        matched.extend(index.get(c.entry_id.as_str()));
    }
    matched.extend(x.chance_failed.iter().copied());
    let steps = recursion_steps(x.report);
    book.entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let (code, said, key, place) = verdict(x, &mut search, &matched, i, entry);
            let fired = x.report.activated.iter().any(|a| a.entry_id == entry.id);
            let tokens = x
                .report
                .activated
                .iter()
                .find(|a| a.entry_id == entry.id)
                .map(|a| a.tokens)
                .or_else(|| {
                    let cut = x.report.cut.iter().find(|c| c.entry_id == entry.id);
                    cut.map(|c| c.tokens)
                })
                .unwrap_or_else(|| tokens(entry));
            EntryVerdict {
                entry_id: entry.id.clone(),
                name: entry.name.clone(),
                fired,
                reason: code,
                why: said.to_string(),
                said,
                key,
                place,
                step: (code == VerdictCode::Recursion)
                    .then(|| steps.get(entry.id.as_str()).copied())
                    .flatten(),
                tokens,
            }
        })
        .collect()
}

type Found = (VerdictCode, Said, Option<String>, Option<KeyPlace>);

fn verdict(
    x: &Explain<'_>,
    search: &mut Search,
    matched: &[usize],
    i: usize,
    entry: &LorebookEntry,
) -> Found {
    if let Some(a) = x.report.activated.iter().find(|a| a.entry_id == entry.id) {
        return fired(x, search, entry, &a.reason);
    }
    let settings = search.settings(x.book, entry);
    // Matched but left out: the key that matched, and the reason the report gives.
    let left_out = |search: &mut Search, code: VerdictCode, said: Said| {
        let hit = search.first_hit(x.chat, entry, settings);
        (
            code,
            said,
            hit.as_ref().map(|h| h.0.clone()),
            hit.map(|(_, h, at)| message_place(h, at)),
        )
    };
    if let Some(c) = x.report.cut.iter().find(|c| c.entry_id == entry.id) {
        return left_out(search, VerdictCode::Budget, c.said.clone());
    }
    if let Some(s) = x.report.skipped.iter().find(|s| s.entry_id == entry.id) {
        let code = match s.said.code.as_ref() {
            "lorebook.delayed" => VerdictCode::Delay,
            "lorebook.cooldown" => VerdictCode::Cooldown,
            "lorebook.chance-failed" => VerdictCode::Probability,
            _ => VerdictCode::Group,
        };
        return left_out(search, code, s.said.clone());
    }
    if x.chance_failed.contains(&i) {
        let chance = entry.probability.unwrap_or(100);
        let said = texts::CHANCE_FAILED
            .with("entry", &entry.id)
            .with("chance", chance);
        return left_out(search, VerdictCode::Probability, said);
    }
    if !entry.enabled {
        return (
            VerdictCode::Disabled,
            texts::TEST_DISABLED.into(),
            None,
            None,
        );
    }
    if entry.keys.iter().all(|k| k.trim().is_empty()) {
        return (VerdictCode::NoKeys, texts::TEST_NO_KEYS.into(), None, None);
    }
    nearest(x, search, matched, entry, settings)
}

/// A fired entry: its activation, with where its key stands.
fn fired(x: &Explain<'_>, search: &mut Search, entry: &LorebookEntry, a: &Activation) -> Found {
    let settings = search.settings(x.book, entry);
    match a {
        Activation::Constant => (VerdictCode::Constant, a.said(), None, None),
        Activation::Sticky { .. } => (VerdictCode::Sticky, a.said(), None, None),
        Activation::Key { key, history_index } => {
            let text = x.chat.iter().find(|(h, _)| h == history_index);
            let offset = text.and_then(|(_, t)| search.find(key, t, settings));
            let place = KeyPlace {
                kind: match history_index {
                    Some(_) => PlaceKind::History,
                    None => PlaceKind::Input,
                },
                history_index: *history_index,
                entry: None,
                offset: offset.unwrap_or(0) as u32,
            };
            (VerdictCode::Key, a.said(), Some(key.clone()), Some(place))
        }
        Activation::Recursion { key, from_entry } => {
            let content = x.book.entries.iter().find(|e| &e.id == from_entry);
            let offset = content.and_then(|e| search.find(key, &e.content, settings));
            let place = KeyPlace {
                kind: PlaceKind::Entry,
                history_index: None,
                entry: Some(from_entry.clone()),
                offset: offset.unwrap_or(0) as u32,
            };
            (
                VerdictCode::Recursion,
                a.said(),
                Some(key.clone()),
                Some(place),
            )
        }
    }
}

/// The key of an entry that did not match that came nearest: one that matched where its
/// secondary keys did not agree, then one inside a longer word, one in another case, one past
/// the scan depth, one in the content of an entry that matched; else none.
fn nearest(
    x: &Explain<'_>,
    search: &mut Search,
    matched: &[usize],
    entry: &LorebookEntry,
    settings: Settings,
) -> Found {
    let depth = settings.depth.min(x.chat.len());
    let (scanned, older) = x.chat.split_at(depth);
    let keys: Vec<&String> = entry.keys.iter().filter(|k| !k.trim().is_empty()).collect();
    // A key that occurs in a scanned message.
    for key in &keys {
        for (h, text) in scanned {
            let Some(at) = search.find(key, text, settings) else {
                continue;
            };
            let place = message_place(*h, at);
            let shown = place_said(&place);
            if !secondary_agree(search, entry, text, settings) {
                let present = entry
                    .secondary_keys
                    .iter()
                    .filter(|k| search.find(k, text, settings).is_some())
                    .count();
                let said = texts::TEST_SECONDARY
                    .with("key", key)
                    .part("place", shown)
                    .with("logic", logic_name(entry.selective_logic))
                    .with("present", present)
                    .with("count", entry.secondary_keys.len());
                return (
                    VerdictCode::SecondaryKeys,
                    said,
                    Some(key.to_string()),
                    Some(place),
                );
            }
            if x.sillytavern {
                if let Some(level) = entry.delay_until_recursion {
                    let said = texts::TEST_WAITS_RECURSION
                        .with("key", key)
                        .part("place", shown)
                        .with("level", level);
                    return (
                        VerdictCode::WaitsForRecursion,
                        said,
                        Some(key.to_string()),
                        Some(place),
                    );
                }
            }
            let said = texts::TEST_NOT_TAKEN.with("key", key).part("place", shown);
            return (
                VerdictCode::NotTaken,
                said,
                Some(key.to_string()),
                Some(place),
            );
        }
    }
    let near = |search: &mut Search, s: Settings, texts: &[(Option<u32>, String)]| {
        keys.iter().find_map(|key| {
            texts.iter().find_map(|(h, text)| {
                search
                    .find(key, text, s)
                    .map(|at| (key.to_string(), message_place(*h, at)))
            })
        })
    };
    if settings.whole_words {
        let loose = Settings {
            whole_words: false,
            ..settings
        };
        if let Some((key, place)) = near(search, loose, scanned) {
            let said = texts::TEST_WHOLE_WORD
                .with("key", &key)
                .part("place", place_said(&place));
            return (VerdictCode::WholeWord, said, Some(key), Some(place));
        }
    }
    if settings.case_sensitive {
        let folded = Settings {
            case_sensitive: false,
            ..settings
        };
        if let Some((key, place)) = near(search, folded, scanned) {
            let said = texts::TEST_CASE
                .with("key", &key)
                .part("place", place_said(&place));
            return (VerdictCode::Case, said, Some(key), Some(place));
        }
    }
    if let Some((key, place)) = near(search, settings, older) {
        let said = texts::TEST_SCAN_DEPTH
            .with("key", &key)
            .with("index", place.history_index.unwrap_or(0))
            .with("depth", settings.depth);
        return (VerdictCode::ScanDepth, said, Some(key), Some(place));
    }
    for &m in matched {
        let source = &x.book.entries[m];
        if source.id == entry.id || (x.sillytavern && source.prevent_recursion) {
            continue;
        }
        for key in &keys {
            let Some(at) = search.find(key, &source.content, settings) else {
                continue;
            };
            let place = KeyPlace {
                kind: PlaceKind::Entry,
                history_index: None,
                entry: Some(source.id.clone()),
                offset: at as u32,
            };
            let said = if !x.book.recursive {
                texts::TEST_RECURSION_OFF.with("key", key)
            } else if x.sillytavern && entry.exclude_recursion {
                texts::TEST_EXCLUDES_RECURSION.with("key", key)
            } else {
                texts::TEST_RECURSION_LIMIT
                    .with("key", key)
                    .with("rounds", x.max_recursion)
            }
            .with("entry", &source.id);
            return (
                VerdictCode::RecursionLimit,
                said,
                Some(key.to_string()),
                Some(place),
            );
        }
    }
    if search.stopped {
        return (
            VerdictCode::Unexplained,
            texts::TEST_UNEXPLAINED.into(),
            None,
            None,
        );
    }
    (
        VerdictCode::NoMatch,
        texts::TEST_NO_MATCH.into(),
        None,
        None,
    )
}

fn message_place(history_index: Option<u32>, at: usize) -> KeyPlace {
    KeyPlace {
        kind: match history_index {
            Some(_) => PlaceKind::History,
            None => PlaceKind::Input,
        },
        history_index,
        entry: None,
        offset: at as u32,
    }
}

/// A message's place in words: "the input", "history #3".
fn place_said(place: &KeyPlace) -> Said {
    match (place.kind, place.history_index, &place.entry) {
        (PlaceKind::History, Some(i), _) => texts::PLACE_HISTORY.with("index", i),
        (PlaceKind::Entry, _, Some(e)) => texts::PLACE_ENTRY.with("entry", e),
        _ => texts::PLACE_INPUT.into(),
    }
}

fn logic_name(logic: SelectiveLogic) -> &'static str {
    match logic {
        SelectiveLogic::AndAny => "andAny",
        SelectiveLogic::NotAll => "notAll",
        SelectiveLogic::NotAny => "notAny",
        SelectiveLogic::AndAll => "andAll",
    }
}

fn secondary_agree(
    search: &mut Search,
    entry: &LorebookEntry,
    text: &str,
    settings: Settings,
) -> bool {
    let keys: Vec<&String> = entry
        .secondary_keys
        .iter()
        .filter(|k| !k.trim().is_empty())
        .collect();
    if keys.is_empty() {
        return true;
    }
    let hits: Vec<bool> = keys
        .iter()
        .map(|k| search.find(k, text, settings).is_some())
        .collect();
    let (any, all) = (hits.iter().any(|&h| h), hits.iter().all(|&h| h));
    match entry.selective_logic {
        SelectiveLogic::AndAny => any,
        SelectiveLogic::NotAll => !all,
        SelectiveLogic::NotAny => !any,
        SelectiveLogic::AndAll => all,
    }
}

/// For each entry fired by recursion, its round: one more than the entry whose content it was
/// found in.
fn recursion_steps(report: &LorebookReport) -> HashMap<&str, u32> {
    let from: HashMap<&str, &str> = report
        .activated
        .iter()
        .filter_map(|a| match &a.reason {
            Activation::Recursion { from_entry, .. } => {
                Some((a.entry_id.as_str(), from_entry.as_str()))
            }
            _ => None,
        })
        .collect();
    from.keys()
        .map(|&id| {
            let (mut step, mut at) = (0u32, id);
            // A chain is as long as the activation's rounds; the bound only guards the loop.
            while let Some(&up) = from.get(at) {
                step += 1;
                at = up;
                if step > 10_000 {
                    break;
                }
            }
            (id, step)
        })
        .collect()
}
