//! The lorebook tester's key search (RULES 6.6): where an entry's key occurs in the messages the
//! lorebook read, matched as the book matches it, within the tester's byte budget.

use std::collections::HashMap;

use super::scan::{parse_pattern, whole_word_at};
use crate::model::{Lorebook, LorebookEntry};
use crate::regex_pattern::{Pattern, PatternBudget};

/// Bytes of text the tester's search for near keys reads in all; past it the entries not yet
/// explained are said to be unexplained.
pub const EXPLAIN_BYTES: usize = 256 << 20;

/// How an entry's keys are matched.
#[derive(Clone, Copy)]
pub(super) struct Settings {
    pub(super) case_sensitive: bool,
    pub(super) whole_words: bool,
    /// Messages scanned, newest first.
    pub(super) depth: usize,
}

/// The tester's key search: regex keys compiled once within a pattern budget, and the bytes
/// read so far.
pub(super) struct Search {
    sillytavern: bool,
    budget: PatternBudget,
    patterns: HashMap<(String, String), Option<Pattern>>,
    read: usize,
    pub(super) stopped: bool,
}

impl Search {
    pub(super) fn new(sillytavern: bool) -> Self {
        Search {
            sillytavern,
            budget: PatternBudget::default(),
            patterns: HashMap::new(),
            read: 0,
            stopped: false,
        }
    }

    pub(super) fn settings(&self, book: &Lorebook, entry: &LorebookEntry) -> Settings {
        if self.sillytavern {
            Settings {
                case_sensitive: entry.case_sensitive.unwrap_or(book.case_sensitive),
                whole_words: entry.match_whole_words.unwrap_or(book.match_whole_words),
                depth: entry.scan_depth.unwrap_or(book.scan_depth) as usize,
            }
        } else {
            Settings {
                case_sensitive: book.case_sensitive,
                whole_words: book.match_whole_words,
                depth: book.scan_depth as usize,
            }
        }
    }

    /// The first key of the entry that occurs in a scanned message of `chat` (newest first:
    /// each message's history index and text), with the message and the byte it starts at.
    pub(super) fn first_hit(
        &mut self,
        chat: &[(Option<u32>, String)],
        entry: &LorebookEntry,
        settings: Settings,
    ) -> Option<(String, Option<u32>, usize)> {
        let depth = settings.depth.min(chat.len());
        entry
            .keys
            .iter()
            .filter(|k| !k.trim().is_empty())
            .find_map(|key| {
                chat[..depth].iter().find_map(|(h, text)| {
                    self.find(key, text, settings)
                        .map(|at| (key.clone(), *h, at))
                })
            })
    }

    /// Where `key` first occurs in `text` under `settings`, as the lorebook reads it.
    pub(super) fn find(&mut self, key: &str, text: &str, settings: Settings) -> Option<usize> {
        if self.stopped || key.trim().is_empty() {
            return None;
        }
        self.read += text.len();
        if self.read > EXPLAIN_BYTES {
            self.stopped = true;
            return None;
        }
        // SillyTavern's regex keys follow their own flags only (RULES 5.11.1).
        if let Some((pattern, flags)) =
            parse_pattern(key, self.sillytavern || settings.case_sensitive)
        {
            let id = (pattern.to_string(), flags);
            let budget = &mut self.budget;
            let compiled = self
                .patterns
                .entry(id)
                .or_insert_with_key(|(p, f)| budget.compile(p, f).ok());
            return compiled.as_ref().and_then(|p| p.matcher().find(text));
        }
        let key = key.trim();
        let (haystack, needle) = if settings.case_sensitive {
            (text.to_string(), key.to_string())
        } else {
            (text.to_lowercase(), key.to_lowercase())
        };
        let several_words = needle.contains(char::is_whitespace);
        haystack
            .match_indices(needle.as_str())
            .map(|(at, _)| at)
            .find(|&at| {
                let end = at + needle.len();
                match (settings.whole_words, self.sillytavern) {
                    (false, _) => true,
                    (true, false) => whole_word_at(&haystack, at, end),
                    (true, true) => several_words || ascii_word_apart(&haystack, at, end),
                }
            })
    }
}

/// SillyTavern's whole word: no ASCII letter, digit or `_` right before or after.
fn ascii_word_apart(text: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !text[..start].chars().next_back().is_some_and(word)
        && !text[end..].chars().next().is_some_and(word)
}
