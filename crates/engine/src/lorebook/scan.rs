//! Which lorebook entries a text activates (docs/RULES.md, "Lorebook"), for books of thousands of
//! entries.
//!
//! Every plain key of the book is folded once and goes into one Aho-Corasick automaton, so a text
//! is read once for all of them, however many entries there are ([`KeyIndex`], kept between
//! builds of the same keys); `/pattern/flags` keys are compiled within the build's pattern budget
//! and each is run over a batch of texts with one search cache ([`BookScan`]). A text's hits (which keys occur in it, whole words honoured) decide every entry
//! at once: an entry activates on the first primary key, in its own order, that occurs, when its
//! secondary keys agree in the same text.
//!
//! Work is bounded (docs/ARCHITECTURE.md, "Limits"): at most [`PLAIN_KEY_BYTES`] of plain keys per
//! book, [`KEY_OCCURRENCES`] plain key occurrences and [`PATTERN_SCAN_BYTES`] of text read by regex
//! keys per build; past either of the last two the scan stops with a warning and the entries found
//! so far stand.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::limits::PATTERN_BUILD_BYTES;
use crate::model::{Lorebook, SelectiveLogic};
use crate::regex_rule::{Pattern, PatternBudget, PatternError};
use crate::said::Said;
use crate::texts;

/// Plain key occurrences one build looks at, at most. Natural text has a few per key and text;
/// only keys built to overlap (`a`, `aa`, `aaa`, ...) come near it.
pub const KEY_OCCURRENCES: usize = 20_000_000;
/// Bytes of text all regex keys of one build read together, at most.
pub const PATTERN_SCAN_BYTES: usize = 256 << 20;
/// Bytes of plain keys (folded, each distinct key once) a book may have; keys past it are left
/// out. A book of 8,000 entries with a few keys each takes a few hundred kilobytes.
pub const PLAIN_KEY_BYTES: usize = 1 << 20;
/// Problem keys named one by one in the warnings; the rest are counted.
const NAMED_PROBLEMS: usize = 20;

/// One entry's keys, as indices into the book's key table.
struct EntryKeys {
    /// (key, the key as written) in the entry's order.
    primary: Vec<(usize, String)>,
    secondary: Vec<usize>,
    logic: SelectiveLogic,
}

/// A key as first read: a plain key's index, or a regex key's among the regex keys.
#[derive(Clone, Copy)]
enum RawKey {
    Plain(usize),
    Pattern(usize),
}

struct RawEntry {
    primary: Vec<(RawKey, String)>,
    secondary: Vec<RawKey>,
}

/// A regex key of the book, not yet compiled: compiling it is counted against each build's
/// pattern budget.
struct PatternKey {
    pattern: String,
    flags: String,
    /// The key as first written, and the entry it was first seen in, for warnings.
    shown: String,
    entry: String,
    /// The entries that use it.
    users: Vec<usize>,
}

/// Every key of a book, read and indexed: the same for every build of the book, so the app keeps
/// it between builds ([`crate::cache::BuildCache`]) and a keystroke does not rebuild the
/// automaton.
pub struct KeyIndex {
    case_sensitive: bool,
    /// Folded plain keys; key `k < plain.len()` is `plain[k]`, pattern `k` of `automaton`.
    plain: Vec<String>,
    automaton: Option<AhoCorasick>,
    /// Regex keys; key `plain.len() + r` is `patterns[r]`.
    patterns: Vec<PatternKey>,
    entries: Vec<EntryKeys>,
    /// For each key, the entries it is a primary key of.
    primary_of: Vec<Vec<usize>>,
    /// Plain keys left out past [`PLAIN_KEY_BYTES`].
    left_out: usize,
}

impl std::fmt::Debug for KeyIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyIndex")
            .field("plain_keys", &self.plain.len())
            .field("regex_keys", &self.patterns.len())
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl KeyIndex {
    pub fn new(book: &Lorebook) -> KeyIndex {
        let mut plain: Vec<String> = Vec::new();
        let mut plain_bytes = 0usize;
        let mut left_out = 0usize;
        let mut plain_index: HashMap<String, usize> = HashMap::new();
        let mut patterns: Vec<PatternKey> = Vec::new();
        let mut pattern_index: HashMap<(String, String), usize> = HashMap::new();
        // Regex keys are numbered after the plain ones, known only at the end.
        let mut raw_entries: Vec<RawEntry> = Vec::with_capacity(book.entries.len());
        for (e, entry) in book.entries.iter().enumerate() {
            let mut key_of = |k: &String| -> Option<RawKey> {
                if k.trim().is_empty() {
                    return None;
                }
                if let Some((pattern, flags)) = parse_pattern(k, book.case_sensitive) {
                    let id = (pattern.to_string(), flags);
                    if let Some(&r) = pattern_index.get(&id) {
                        patterns[r].users.push(e);
                        return Some(RawKey::Pattern(r));
                    }
                    let r = patterns.len();
                    patterns.push(PatternKey {
                        pattern: id.0.clone(),
                        flags: id.1.clone(),
                        shown: k.clone(),
                        entry: entry.id.clone(),
                        users: vec![e],
                    });
                    pattern_index.insert(id, r);
                    return Some(RawKey::Pattern(r));
                }
                let folded = fold(k.trim(), book.case_sensitive);
                if let Some(&k) = plain_index.get(&folded) {
                    return Some(RawKey::Plain(k));
                }
                if plain_bytes + folded.len() > PLAIN_KEY_BYTES {
                    left_out += 1;
                    return None;
                }
                plain_bytes += folded.len();
                let k = plain.len();
                plain.push(folded.clone());
                plain_index.insert(folded, k);
                Some(RawKey::Plain(k))
            };
            let primary = entry
                .keys
                .iter()
                .filter_map(|k| key_of(k).map(|id| (id, k.clone())))
                .collect();
            let secondary = entry
                .secondary_keys
                .iter()
                .filter_map(&mut key_of)
                .collect();
            raw_entries.push(RawEntry { primary, secondary });
        }
        let p = plain.len();
        let number = |id: RawKey| match id {
            RawKey::Plain(k) => k,
            RawKey::Pattern(r) => p + r,
        };
        let mut primary_of = vec![Vec::new(); p + patterns.len()];
        let entries = raw_entries
            .into_iter()
            .zip(&book.entries)
            .enumerate()
            .map(|(e, (RawEntry { primary, secondary }, entry))| {
                let primary: Vec<(usize, String)> =
                    primary.into_iter().map(|(id, k)| (number(id), k)).collect();
                for (k, _) in &primary {
                    if primary_of[*k].last() != Some(&e) {
                        primary_of[*k].push(e);
                    }
                }
                EntryKeys {
                    primary,
                    secondary: secondary.into_iter().map(number).collect(),
                    logic: entry.selective_logic,
                }
            })
            .collect();
        // Standard semantics report every key at every place it occurs, also keys inside longer
        // ones ("moat" inside "moats"): each is its own key. No prefilter: keys that share their
        // first letters ("place1", "place2", ...) put a literal prefilter in one bucket, where
        // every candidate is checked against all of them; the automaton alone reads at a steady
        // speed whatever the keys.
        let automaton = (!plain.is_empty())
            .then(|| {
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(&plain)
                    .ok()
            })
            .flatten();
        KeyIndex {
            case_sensitive: book.case_sensitive,
            plain,
            automaton,
            patterns,
            entries,
            primary_of,
            left_out,
        }
    }

    /// What identifies a book's keys: the same value, the same index.
    pub fn fingerprint(book: &Lorebook) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&[u8::from(book.case_sensitive)]);
        for entry in &book.entries {
            // Each key after its length, each list after its count: no two books write the same.
            h.update(&(entry.keys.len() as u64).to_le_bytes());
            for k in entry.keys.iter().chain(&entry.secondary_keys) {
                h.update(&(k.len() as u64).to_le_bytes());
                h.update(k.as_bytes());
            }
            h.update(&(entry.secondary_keys.len() as u64).to_le_bytes());
            h.update(&[entry.selective_logic as u8]);
        }
        h.digest()
    }

    /// The text as keys are matched against it.
    pub fn fold(&self, text: &str) -> String {
        fold(text, self.case_sensitive)
    }
}

/// One build's scan over a [`KeyIndex`]: its regex keys compiled within the build's budget, and
/// the work done so far.
pub struct BookScan<'k> {
    index: &'k KeyIndex,
    whole_words: bool,
    /// The compiled regex keys; `None` for one that is invalid or past the budget.
    patterns: Vec<Option<Pattern>>,
    occurrences: usize,
    pattern_bytes: usize,
    /// Set when a cap stopped the scan, with the warning that says so.
    pub stopped: Option<Said>,
}

/// Which keys occur in one text.
struct Hits {
    hit: Vec<bool>,
    set: Vec<usize>,
}

impl Hits {
    fn mark(&mut self, key: usize) {
        if !self.hit[key] {
            self.hit[key] = true;
            self.set.push(key);
        }
    }

    fn clear(&mut self) {
        for k in self.set.drain(..) {
            self.hit[k] = false;
        }
    }
}

impl<'k> BookScan<'k> {
    /// Compiles the index's regex keys within `budget`. Keys that are invalid, too large, or past
    /// the budget are skipped; the warnings name them.
    pub fn new(
        index: &'k KeyIndex,
        whole_words: bool,
        budget: &mut PatternBudget,
    ) -> (BookScan<'k>, Vec<Said>) {
        let mut problems: Vec<Said> = Vec::new();
        let mut over_budget = 0usize;
        let patterns = index
            .patterns
            .iter()
            .map(|key| match budget.compile(&key.pattern, &key.flags) {
                Ok(compiled) => Some(compiled),
                Err(PatternError::Invalid(why)) => {
                    problems.push(
                        texts::KEY_INVALID
                            .with("entry", &key.entry)
                            .with("key", &key.shown)
                            .part("why", why),
                    );
                    None
                }
                Err(PatternError::OverBudget) => {
                    over_budget += 1;
                    None
                }
            })
            .collect();
        let named = problems.len().min(NAMED_PROBLEMS);
        let more = problems.len() - named;
        let mut warnings: Vec<Said> = problems;
        warnings.truncate(named);
        if more > 0 {
            warnings.push(texts::MORE_KEYS_INVALID.with("count", more));
        }
        if over_budget > 0 {
            warnings.push(
                texts::REGEX_KEYS_OVER_BUDGET
                    .with("count", over_budget)
                    .with("mib", PATTERN_BUILD_BYTES >> 20),
            );
        }
        if index.left_out > 0 {
            warnings.push(
                texts::PLAIN_KEYS_OVER_CAP
                    .with("count", index.left_out)
                    .with("mib", PLAIN_KEY_BYTES >> 20),
            );
        }
        let scan = BookScan {
            index,
            whole_words,
            patterns,
            occurrences: 0,
            pattern_bytes: 0,
            stopped: None,
        };
        (scan, warnings)
    }

    /// The text as keys are matched against it.
    pub fn fold(&self, text: &str) -> String {
        self.index.fold(text)
    }

    /// For each of `texts` (already folded), in order, the entries it activates that `eligible`
    /// allows, each with the primary key that matched (as written). An entry is given once, for
    /// the first text it activates on.
    pub fn scan(
        &mut self,
        texts: &[&str],
        eligible: impl Fn(usize) -> bool,
    ) -> Vec<(usize, usize, String)> {
        let mut found: Vec<(usize, usize, String)> = Vec::new();
        if texts.is_empty() || self.stopped.is_some() {
            return found;
        }
        let index = self.index;
        let pattern_hits = self.pattern_hits(texts, &eligible);
        let p = index.plain.len();
        let mut hits = Hits {
            hit: vec![false; p + index.patterns.len()],
            set: Vec::new(),
        };
        let mut taken = vec![false; index.entries.len()];
        for (t, text) in texts.iter().enumerate() {
            self.plain_hits(text, &mut hits);
            for &r in &pattern_hits[t] {
                hits.mark(p + r);
            }
            let mut candidates: Vec<usize> = hits
                .set
                .iter()
                .flat_map(|&k| index.primary_of[k].iter().copied())
                .filter(|&e| !taken[e] && eligible(e))
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            for e in candidates {
                if let Some(key) = activates(&index.entries[e], &hits.hit) {
                    taken[e] = true;
                    found.push((t, e, key));
                }
            }
            hits.clear();
            if self.stopped.is_some() {
                break;
            }
        }
        found
    }

    /// The plain keys that occur in `text`, whole words honoured.
    fn plain_hits(&mut self, text: &str, hits: &mut Hits) {
        let Some(automaton) = &self.index.automaton else {
            return;
        };
        for m in automaton.find_overlapping_iter(text) {
            self.occurrences += 1;
            if self.occurrences > KEY_OCCURRENCES {
                self.stopped = Some(texts::OCCURRENCES_CAP.with("count", KEY_OCCURRENCES));
                return;
            }
            let k = m.pattern().as_usize();
            if hits.hit[k] {
                continue;
            }
            if !self.whole_words || whole_word_at(text, m.start(), m.end()) {
                hits.mark(k);
            }
        }
    }

    /// For each text, the regex keys that match it, among the keys some eligible entry uses.
    fn pattern_hits(
        &mut self,
        texts: &[&str],
        eligible: &impl Fn(usize) -> bool,
    ) -> Vec<Vec<usize>> {
        let mut hits = vec![Vec::new(); texts.len()];
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        for (r, key) in self.index.patterns.iter().enumerate() {
            let Some(pattern) = &self.patterns[r] else {
                continue;
            };
            if !key.users.iter().any(|&e| eligible(e)) {
                continue;
            }
            if self.pattern_bytes + bytes > PATTERN_SCAN_BYTES {
                self.stopped = Some(texts::REGEX_TEXT_CAP.with("mib", PATTERN_SCAN_BYTES >> 20));
                break;
            }
            self.pattern_bytes += bytes;
            let mut matcher = pattern.matcher();
            for (t, text) in texts.iter().enumerate() {
                if matcher.is_match(text) {
                    hits[t].push(r);
                }
            }
        }
        hits
    }
}

/// The primary key that activates an entry given `hit`, with its secondary keys' logic.
fn activates(keys: &EntryKeys, hit: &[bool]) -> Option<String> {
    let (_, shown) = keys.primary.iter().find(|(k, _)| hit[*k])?;
    if !keys.secondary.is_empty() {
        let any = keys.secondary.iter().any(|&k| hit[k]);
        let all = keys.secondary.iter().all(|&k| hit[k]);
        let ok = match keys.logic {
            SelectiveLogic::AndAny => any,
            SelectiveLogic::NotAll => !all,
            SelectiveLogic::NotAny => !any,
            SelectiveLogic::AndAll => all,
        };
        if !ok {
            return None;
        }
    }
    Some(shown.clone())
}

/// `/pattern/flags` as a pattern and flags for [`PatternBudget::compile`]; `None` when the key
/// is plain text.
pub(super) fn parse_pattern(key: &str, case_sensitive: bool) -> Option<(&str, String)> {
    let rest = key.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (pattern, flags) = (&rest[..end], &rest[end + 1..]);
    if pattern.is_empty() || !flags.chars().all(|c| "gimsuy".contains(c)) {
        return None;
    }
    // JavaScript's `g`, `u` and `y` change nothing for a yes/no match.
    let mut flags: String = flags.chars().filter(|c| "ims".contains(*c)).collect();
    if !case_sensitive && !flags.contains('i') {
        flags.push('i');
    }
    Some((pattern, flags))
}

fn fold(text: &str, case_sensitive: bool) -> String {
    if case_sensitive {
        text.to_string()
    } else {
        text.to_lowercase()
    }
}

/// Whether the key at `text[start..end]` stands as a whole word: where the key starts or ends
/// with a letter or digit of a spaced script, the text beside it is none. Keys in CJK scripts,
/// written without spaces, match anywhere.
pub(super) fn whole_word_at(text: &str, start: usize, end: usize) -> bool {
    let spaced_word = |c: char| c.is_alphanumeric() && !is_cjk(c);
    let key = &text[start..end];
    let (Some(first), Some(last)) = (key.chars().next(), key.chars().next_back()) else {
        return false;
    };
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let left_ok = !spaced_word(first) || !before.is_some_and(spaced_word);
    let right_ok = !spaced_word(last) || !after.is_some_and(spaced_word);
    left_ok && right_ok
}

/// Han, kana and Hangul: scripts written without spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn book(entries: serde_json::Value) -> Lorebook {
        serde_json::from_value(json!({ "entries": entries })).expect("lorebook")
    }

    fn activated(book: &Lorebook, text: &str) -> Vec<(usize, String)> {
        let index = KeyIndex::new(book);
        let (mut keys, warnings) = BookScan::new(&index, true, &mut PatternBudget::default());
        assert!(warnings.is_empty(), "{warnings:?}");
        let folded = keys.fold(text);
        let mut found: Vec<(usize, String)> = keys
            .scan(&[folded.as_str()], |_| true)
            .into_iter()
            .map(|(_, e, k)| (e, k))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn a_key_inside_a_longer_key_is_found_too() {
        let b = book(json!([
            { "id": "moat", "keys": ["moat"], "content": "" },
            { "id": "moats", "keys": ["moats"], "content": "" },
            { "id": "oat", "keys": ["oat"], "content": "" },
        ]));
        // "oat" is inside "moats" but not a whole word there.
        assert_eq!(
            activated(&b, "Two MOATS and a moat."),
            [(0, "moat".to_string()), (1, "moats".to_string())]
        );
    }

    #[test]
    fn the_first_primary_key_in_the_entrys_order_is_the_one_named() {
        let b = book(json!([{ "id": "e", "keys": ["sword", "/fi.e/", "ice"], "content": "" }]));
        assert_eq!(activated(&b, "ice and fire"), [(0, "/fi.e/".to_string())]);
    }

    #[test]
    fn secondary_keys_may_be_regexes_and_share_the_text() {
        let b = book(
            json!([{ "id": "e", "keys": ["sword"], "secondaryKeys": ["/\\bfire\\b/"],
                             "selectiveLogic": "andAll", "content": "" }]),
        );
        assert_eq!(activated(&b, "a sword of fire"), [(0, "sword".to_string())]);
        assert!(activated(&b, "a sword of firewood").is_empty());
    }

    #[test]
    fn only_eligible_entries_are_given_and_each_once() {
        let b = book(json!([
            { "id": "a", "keys": ["x"], "content": "" },
            { "id": "b", "keys": ["x"], "content": "" },
        ]));
        let index = KeyIndex::new(&b);
        let (mut keys, _) = BookScan::new(&index, true, &mut PatternBudget::default());
        let found = keys.scan(&["x", "x"], |e| e == 1);
        assert_eq!(found, [(0, 1, "x".to_string())]);
    }
}
