//! What SillyTavern's scan reads and how a key matches (RULES 5.11.1): the scanned text of the
//! newest messages and the recursion buffer, by depth; each entry's case and whole-word
//! settings; plain and `/regex/` keys within the build's byte caps.

use std::collections::HashMap;

use crate::lorebook::scan::PATTERN_SCAN_BYTES;
use crate::model::{Lorebook, LorebookEntry, SelectiveLogic};
use crate::regex_pattern::{Pattern, PatternBudget, PatternError};
use crate::said::Said;
use crate::texts;

/// Messages a scan reads at most, whatever the scan depth (SillyTavern's limit too).
pub const MAX_SCAN_DEPTH: usize = 1000;
/// Bytes of text plain keys read in one build, at most.
pub const PLAIN_SCAN_BYTES: usize = 1 << 30;
/// What starts each message in the scanned text.
const MARK: &str = "\u{1}";

/// The key matcher of one build: regex keys compiled once, and the work done.
pub(super) struct Keys<'b> {
    pub(super) patterns: HashMap<String, Option<Pattern>>,
    pub(super) budget: &'b mut PatternBudget,
    pub(super) over_budget: usize,
    pub(super) plain_bytes: usize,
    pub(super) regex_bytes: usize,
    pub(super) stopped: Option<Said>,
    pub(super) warnings: Vec<Said>,
}

/// The scanned text at one depth, as written and folded to lower case.
pub(super) struct Text {
    pub(super) raw: String,
    pub(super) lower: String,
}

impl Text {
    pub(super) fn new(raw: String) -> Text {
        let lower = raw.to_lowercase();
        Text { raw, lower }
    }
}

impl Keys<'_> {
    /// Whether `key` occurs in `text` under the entry's settings.
    pub(super) fn matches(
        &mut self,
        text: &Text,
        key: &str,
        case_sensitive: bool,
        whole: bool,
    ) -> bool {
        self.matches_for("", text, key, case_sensitive, whole)
    }

    fn matches_for(
        &mut self,
        entry: &str,
        text: &Text,
        key: &str,
        case_sensitive: bool,
        whole: bool,
    ) -> bool {
        let key = key.trim();
        if key.is_empty() || self.stopped.is_some() {
            return false;
        }
        if let Some((pattern, flags)) = regex_key(key) {
            return self.regex_matches(entry, &text.raw, key, pattern, &flags);
        }
        self.plain_bytes += text.raw.len();
        if self.plain_bytes > PLAIN_SCAN_BYTES {
            self.stopped = Some(texts::ST_TEXT_CAP.with("mib", PLAIN_SCAN_BYTES >> 20));
            return false;
        }
        let (haystack, needle) = if case_sensitive {
            (text.raw.as_str(), std::borrow::Cow::Borrowed(key))
        } else {
            (
                text.lower.as_str(),
                std::borrow::Cow::Owned(key.to_lowercase()),
            )
        };
        if whole && needle.split_whitespace().nth(1).is_none() {
            whole_word(haystack, &needle)
        } else {
            haystack.contains(needle.as_ref())
        }
    }

    fn regex_matches(
        &mut self,
        entry: &str,
        raw: &str,
        key: &str,
        pattern: &str,
        flags: &str,
    ) -> bool {
        if !self.patterns.contains_key(key) {
            let compiled = match self.budget.compile(pattern, flags) {
                Ok(p) => Some(p),
                Err(PatternError::Invalid(why)) => {
                    self.warnings.push(
                        texts::KEY_INVALID
                            .with("entry", entry)
                            .with("key", key)
                            .part("why", why),
                    );
                    None
                }
                Err(PatternError::OverBudget) => {
                    self.over_budget += 1;
                    None
                }
            };
            self.patterns.insert(key.to_string(), compiled);
        }
        let Some(Some(pattern)) = self.patterns.get(key) else {
            return false;
        };
        self.regex_bytes += raw.len();
        if self.regex_bytes > PATTERN_SCAN_BYTES {
            self.stopped = Some(texts::REGEX_TEXT_CAP.with("mib", PATTERN_SCAN_BYTES >> 20));
            return false;
        }
        pattern.matcher().is_match(raw)
    }

    /// The primary key that activates `entry` on `text`, its secondary keys agreeing.
    pub(super) fn activating_key(
        &mut self,
        book: &Lorebook,
        entry: &LorebookEntry,
        text: &Text,
    ) -> Option<String> {
        let (cs, whole) = settings(book, entry);
        let key = entry
            .keys
            .iter()
            .find(|k| self.matches_for(&entry.id, text, k, cs, whole))?
            .clone();
        if entry.secondary_keys.is_empty() {
            return Some(key);
        }
        let hits: Vec<bool> = entry
            .secondary_keys
            .iter()
            .map(|k| self.matches_for(&entry.id, text, k, cs, whole))
            .collect();
        let any = hits.iter().any(|h| *h);
        let all = hits.iter().all(|h| *h);
        let ok = match entry.selective_logic {
            SelectiveLogic::AndAny => any,
            SelectiveLogic::NotAll => !all,
            SelectiveLogic::NotAny => !any,
            SelectiveLogic::AndAll => all,
        };
        ok.then_some(key)
    }

    /// Group scoring: the primary keys that occur, plus the secondary ones where the logic is
    /// positive (all of them for `andAll`, only when all occur).
    pub(super) fn score(&mut self, book: &Lorebook, entry: &LorebookEntry, text: &Text) -> usize {
        if entry.keys.is_empty() {
            return 0;
        }
        let (cs, whole) = settings(book, entry);
        let primary = entry
            .keys
            .iter()
            .filter(|k| self.matches(text, k, cs, whole))
            .count();
        if entry.secondary_keys.is_empty() {
            return primary;
        }
        let secondary = entry
            .secondary_keys
            .iter()
            .filter(|k| self.matches(text, k, cs, whole))
            .count();
        match entry.selective_logic {
            SelectiveLogic::AndAny => primary + secondary,
            SelectiveLogic::AndAll if secondary == entry.secondary_keys.len() => {
                primary + secondary
            }
            _ => primary,
        }
    }
}

pub(super) fn settings(book: &Lorebook, entry: &LorebookEntry) -> (bool, bool) {
    (
        entry.case_sensitive.unwrap_or(book.case_sensitive),
        entry.match_whole_words.unwrap_or(book.match_whole_words),
    )
}

/// `/pattern/flags` as a pattern and the flags the regex engine takes; none for a plain key.
/// The key's own flags decide its case, whatever the entry's case setting.
fn regex_key(key: &str) -> Option<(&str, String)> {
    let rest = key.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (pattern, flags) = (&rest[..end], &rest[end + 1..]);
    if pattern.is_empty() || !flags.chars().all(|c| "gimsuy".contains(c)) {
        return None;
    }
    Some((
        pattern,
        flags.chars().filter(|c| "ims".contains(*c)).collect(),
    ))
}

/// Whether `needle` occurs in `haystack` with no ASCII letter, digit or `_` right before or
/// after it.
fn whole_word(haystack: &str, needle: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = haystack[from..].find(needle) {
        let start = from + found;
        let end = start + needle.len();
        let before = haystack[..start].chars().next_back();
        let after = haystack[end..].chars().next();
        if !before.is_some_and(word) && !after.is_some_and(word) {
            return true;
        }
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The scanned text: the newest `depth` messages of `chat`, then the recursion buffer.
pub(super) fn scanned(
    chat: &[(Option<u32>, String)],
    depth: usize,
    recursion: &[String],
) -> String {
    if depth == 0 {
        return String::new();
    }
    let mut text = String::from(MARK);
    for (i, (_, message)) in chat.iter().take(depth.min(MAX_SCAN_DEPTH)).enumerate() {
        if i > 0 {
            text.push('\n');
            text.push_str(MARK);
        }
        text.push_str(message);
    }
    for part in recursion {
        text.push('\n');
        text.push_str(MARK);
        text.push_str(part);
    }
    text
}

/// One round's scanned texts, by depth.
pub(super) struct Scanned<'r> {
    pub(super) chat: &'r [(Option<u32>, String)],
    pub(super) recursion: &'r [String],
    pub(super) at: HashMap<usize, Text>,
}

impl Scanned<'_> {
    pub(super) fn get(&mut self, depth: usize) -> &Text {
        let (chat, recursion) = (self.chat, self.recursion);
        self.at
            .entry(depth)
            .or_insert_with(|| Text::new(scanned(chat, depth, recursion)))
    }
}

/// The depth an entry is scanned at in this round.
pub(super) fn depth_of(book: &Lorebook, entry: &LorebookEntry, skew: usize) -> usize {
    entry
        .scan_depth
        .map(|d| d as usize)
        .unwrap_or(book.scan_depth as usize + skew)
}
