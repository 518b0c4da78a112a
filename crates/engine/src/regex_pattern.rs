//! Regular expressions from strangers' files, compiled within caps: the patterns of regex rules
//! and the `/pattern/flags` keys of lorebook entries (docs/RULES.md, "Regex rules"). This module
//! knows patterns only; applying a rule is [`crate::regex_rule`]'s.
//!
//! Everything a pattern can make grow is capped (docs/ARCHITECTURE.md, "Limits"): each automaton
//! of a pattern is at most [`PATTERN_NFA_BYTES`], the patterns one build keeps compiled at most
//! [`PATTERN_BUILD_BYTES`] ([`PatternBudget`]), the ones the process keeps between builds at most
//! [`PATTERN_CACHE_BYTES`]. A pattern's search cache (the states its lazy DFA built) is kept for
//! the next build's search, within [`PATTERN_SEARCH_CACHE_BYTES`] for all patterns together; a
//! pattern's cost counts its compiled program.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use regex_automata::meta::{self, Regex};
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind};

use crate::limits::{
    PATTERN_BUILD_BYTES, PATTERN_CACHE_BYTES, PATTERN_DFA_CACHE_BYTES, PATTERN_NFA_BYTES,
    PATTERN_SEARCH_CACHE_BYTES,
};
use crate::said::Said;
use crate::texts;

/// A compiled pattern. Clones share the program and its kept search cache.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub(crate) regex: Regex,
    source: Arc<str>,
    /// Bytes the compiled program takes.
    cost: usize,
    kept: Arc<KeptSearchCache>,
}

/// A search cache kept between searches: the lazy DFA keeps the states it built, so the next
/// build's search does not build them again. All the kept caches of the process take at most
/// [`PATTERN_SEARCH_CACHE_BYTES`]; one that would cross it is dropped after its search.
#[derive(Debug, Default)]
struct KeptSearchCache(Mutex<Option<(meta::Cache, usize)>>);

/// Bytes of search caches kept by all patterns together.
static KEPT_SEARCH_BYTES: AtomicUsize = AtomicUsize::new(0);

impl KeptSearchCache {
    fn take(&self) -> Option<meta::Cache> {
        let (cache, bytes) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        KEPT_SEARCH_BYTES.fetch_sub(bytes, Ordering::Relaxed);
        Some(cache)
    }

    fn give_back(&self, cache: meta::Cache) {
        let bytes = cache.memory_usage();
        let kept = KEPT_SEARCH_BYTES.fetch_add(bytes, Ordering::Relaxed);
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept + bytes > PATTERN_SEARCH_CACHE_BYTES || slot.is_some() {
            KEPT_SEARCH_BYTES.fetch_sub(bytes, Ordering::Relaxed);
            return;
        }
        *slot = Some((cache, bytes));
    }
}

impl Drop for KeptSearchCache {
    fn drop(&mut self) {
        self.take();
    }
}

impl Pattern {
    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Bytes the compiled program takes.
    pub fn cost(&self) -> usize {
        self.cost
    }

    /// A matcher for one batch of searches, with the pattern's kept search cache (or a new one,
    /// when another search holds it).
    pub fn matcher(&self) -> Matcher<'_> {
        Matcher {
            pattern: self,
            cache: Some(
                self.kept
                    .take()
                    .unwrap_or_else(|| self.regex.create_cache()),
            ),
        }
    }
}

/// Searches with one pattern; its cache goes back to the pattern when it is dropped.
pub struct Matcher<'p> {
    pattern: &'p Pattern,
    cache: Option<meta::Cache>,
}

impl Matcher<'_> {
    pub(crate) fn cache(&mut self) -> &mut meta::Cache {
        let regex = &self.pattern.regex;
        self.cache.get_or_insert_with(|| regex.create_cache())
    }

    pub fn is_match(&mut self, text: &str) -> bool {
        let input = Input::new(text).earliest(true);
        let regex = &self.pattern.regex;
        let cache = self.cache();
        regex.search_half_with(cache, &input).is_some()
    }
}

impl Matcher<'_> {
    /// Where the first match in `text` starts, if any.
    pub fn find(&mut self, text: &str) -> Option<usize> {
        let input = Input::new(text);
        let regex = &self.pattern.regex;
        let cache = self.cache();
        regex.search_with(cache, &input).map(|m| m.start())
    }
}

impl Drop for Matcher<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.cache.take() {
            self.pattern.kept.give_back(cache);
        }
    }
}

/// Compiled patterns by (pattern, flags): a live preview rebuilds on every keystroke, and
/// compiling a pattern costs far more than the rest of a small build. At most
/// [`PATTERN_CACHE_BYTES`] of programs are kept; past it the cache starts over.
#[derive(Default)]
struct Cache {
    patterns: HashMap<(String, String), Pattern>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

/// [`compile`] for a bare pattern and its flags (lorebook keys written `/pattern/flags`).
pub fn compile_pattern(pattern: &str, flags: &str) -> Result<Pattern, Said> {
    let key = (pattern.to_string(), flags.to_string());
    if let Some(found) = lock().patterns.get(&key) {
        return Ok(found.clone());
    }
    let compiled = build(pattern, flags)?;
    let mut cache = lock();
    if cache.bytes + compiled.cost > PATTERN_CACHE_BYTES {
        cache.patterns.clear();
        cache.bytes = 0;
    }
    if compiled.cost <= PATTERN_CACHE_BYTES {
        cache.bytes += compiled.cost;
        cache.patterns.insert(key, compiled.clone());
    }
    Ok(compiled)
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

fn build(pattern: &str, flags: &str) -> Result<Pattern, Said> {
    let mut syntax = syntax::Config::new().utf8(true);
    for flag in flags.chars() {
        syntax = match flag {
            'i' => syntax.case_insensitive(true),
            'm' => syntax.multi_line(true),
            's' => syntax.dot_matches_new_line(true),
            // JavaScript's global flag is how SillyTavern writes "replace all": always so here.
            'g' => syntax,
            other => return Err(texts::PATTERN_UNKNOWN_FLAG.with("flag", other)),
        };
    }
    // What the regex crate does, with our caps; no full DFA, whose size grows fastest.
    let config = meta::Config::new()
        .match_kind(MatchKind::LeftmostFirst)
        .utf8_empty(true)
        .nfa_size_limit(Some(PATTERN_NFA_BYTES))
        .onepass_size_limit(Some(PATTERN_NFA_BYTES))
        .hybrid_cache_capacity(PATTERN_DFA_CACHE_BYTES)
        .dfa(false);
    let regex = meta::Builder::new()
        .configure(config)
        .syntax(syntax)
        .build(pattern)
        .map_err(|e| {
            if let Some(limit) = e.size_limit() {
                texts::PATTERN_TOO_LARGE.with("kib", limit >> 10)
            } else if let Some(syntax) = e.syntax_error() {
                syntax_said(pattern, syntax)
            } else {
                texts::PATTERN_INVALID.with("detail", e)
            }
        })?;
    Ok(Pattern {
        cost: regex.memory_usage(),
        regex,
        source: Arc::from(pattern),
        kept: Arc::default(),
    })
}

/// Why `pattern` does not parse: the common cases (SillyTavern's JavaScript patterns use
/// look-around and back-references, which this syntax has not) in texts of their own, the rest
/// with the regex library's words; each with the character where it goes wrong.
fn syntax_said(pattern: &str, error: &regex_syntax::Error) -> Said {
    use regex_syntax::ast::ErrorKind as Kind;
    let (text, span, detail) = match error {
        regex_syntax::Error::Parse(e) => {
            let text = match e.kind() {
                Kind::UnsupportedLookAround => Some(texts::PATTERN_LOOK_AROUND),
                Kind::UnsupportedBackreference => Some(texts::PATTERN_BACKREFERENCE),
                Kind::GroupUnclosed => Some(texts::PATTERN_GROUP_UNCLOSED),
                Kind::GroupUnopened => Some(texts::PATTERN_GROUP_UNOPENED),
                Kind::ClassUnclosed => Some(texts::PATTERN_CLASS_UNCLOSED),
                Kind::RepetitionMissing => Some(texts::PATTERN_REPETITION_MISSING),
                Kind::EscapeUnrecognized => Some(texts::PATTERN_ESCAPE),
                _ => None,
            };
            (text, *e.span(), e.kind().to_string())
        }
        regex_syntax::Error::Translate(e) => (None, *e.span(), e.kind().to_string()),
        other => return texts::PATTERN_INVALID.with("detail", other),
    };
    let at = pattern
        .get(..span.start.offset)
        .map_or(0, |before| before.chars().count())
        + 1;
    match text {
        Some(text) => text.with("at", at),
        None => texts::PATTERN_SYNTAX.with("at", at).with("detail", detail),
    }
}

/// What one build may keep compiled: [`PATTERN_BUILD_BYTES`] of distinct patterns. Once it is
/// spent, further patterns are not compiled at all.
#[derive(Debug, Default)]
pub struct PatternBudget {
    used: usize,
    counted: HashSet<(String, String)>,
    spent: bool,
}

/// Why a pattern could not be had within a build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    Invalid(Said),
    /// The build's budget for compiled patterns is spent.
    OverBudget,
}

impl PatternBudget {
    /// The pattern compiled, its cost counted against this build once.
    pub fn compile(&mut self, pattern: &str, flags: &str) -> Result<Pattern, PatternError> {
        let key = (pattern.to_string(), flags.to_string());
        if self.spent && !self.counted.contains(&key) {
            return Err(PatternError::OverBudget);
        }
        let compiled = compile_pattern(pattern, flags).map_err(PatternError::Invalid)?;
        if self.counted.contains(&key) {
            return Ok(compiled);
        }
        if self.used + compiled.cost > PATTERN_BUILD_BYTES {
            self.spent = true;
            return Err(PatternError::OverBudget);
        }
        self.used += compiled.cost;
        self.counted.insert(key);
        Ok(compiled)
    }

    /// Bytes of compiled patterns counted so far.
    pub fn used(&self) -> usize {
        self.used
    }
}
