//! Regular expressions from presets: the regex rules (docs/RULES.md, "Regex rules") and the
//! `/pattern/flags` keys of lorebook entries. Used when a preset is validated (an invalid pattern
//! is refused when saved) and by the processors that run them.
//!
//! Patterns come from strangers' files, so everything they can make grow is capped
//! (docs/ARCHITECTURE.md, "Limits"): each automaton of a pattern is at most
//! [`PATTERN_NFA_BYTES`], the patterns one build keeps compiled at most [`PATTERN_BUILD_BYTES`]
//! ([`PatternBudget`]), the ones the process keeps between builds at most
//! [`PATTERN_CACHE_BYTES`], and a replacement stops as soon as it would make its text more than
//! its allowance longer. A pattern's search cache (the states its lazy DFA built) is kept for the
//! next build's search, within [`PATTERN_SEARCH_CACHE_BYTES`] for all patterns together; a
//! pattern's cost counts its compiled program.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use regex_automata::meta::{self, Regex};
use regex_automata::util::captures::Captures;
use regex_automata::util::interpolate;
use regex_automata::util::iter::Searcher;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternID};

use crate::limits::{
    PATTERN_BUILD_BYTES, PATTERN_CACHE_BYTES, PATTERN_DFA_CACHE_BYTES, PATTERN_NFA_BYTES,
    PATTERN_SEARCH_CACHE_BYTES, REGEX_BUILD_GROWTH, REGEX_RULE_GROWTH,
};
use crate::model::{RegexRule, Role};
use crate::said::Said;
use crate::texts;

/// A compiled pattern. Clones share the program and its kept search cache.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
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
    fn cache(&mut self) -> &mut meta::Cache {
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

/// Compiles a rule's pattern with its flags (`i`, `m`, `s`). The error text says where the pattern
/// is wrong, or that it compiles too large; an unknown flag is an error too.
pub fn compile(rule: &RegexRule) -> Result<Pattern, Said> {
    compile_pattern(&rule.pattern, &rule.flags)
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

/// A rule ready to run: its pattern and its replacement in `$1` / `${name}` syntax.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub id: String,
    pub pattern: Pattern,
    /// The flags it was compiled with (`i`, `m`, `s`).
    pub flags: String,
    /// `{{match}}` already turned into `${0}`; `$1` and `${name}` as written.
    pub replacement: String,
    pub roles: Option<Vec<Role>>,
    pub min_depth: Option<u32>,
    pub max_depth: Option<u32>,
}

/// What one rule did to one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Nothing matched.
    Unchanged,
    Changed(String),
    /// The text would have grown by more than it may; it is left as it was.
    TooLong,
}

impl CompiledRule {
    /// The rule compiled within the build's pattern budget.
    pub fn new(rule: &RegexRule, budget: &mut PatternBudget) -> Result<Self, PatternError> {
        Ok(CompiledRule {
            id: rule.id.clone(),
            pattern: budget.compile(&rule.pattern, &rule.flags)?,
            flags: rule.flags.clone(),
            replacement: rule.replacement.replace("{{match}}", "${0}"),
            roles: rule.roles.clone(),
            min_depth: rule.min_depth,
            max_depth: rule.max_depth,
        })
    }

    /// Whether the rule applies to a message of `role` at `depth` (0 = newest; `None` for
    /// messages outside the history, which depth limits do not concern).
    pub fn applies(&self, role: Role, depth: Option<u32>) -> bool {
        let role_ok = self.roles.as_ref().is_none_or(|r| r.contains(&role));
        let depth_ok = depth.is_none_or(|d| {
            self.min_depth.is_none_or(|min| d >= min) && self.max_depth.is_none_or(|max| d <= max)
        });
        role_ok && depth_ok
    }

    /// `text` with every match replaced. The replacement stops, and the text is left as it was,
    /// as soon as the result would be more than `growth` bytes longer than `text`.
    pub fn apply(&self, text: &str, growth: usize) -> Applied {
        let regex = &self.pattern.regex;
        let mut matcher = self.pattern.matcher();
        let cache = matcher.cache();
        let mut caps = regex.create_captures();
        let mut searcher = Searcher::new(Input::new(text));
        let mut out = String::new();
        let mut copied = 0; // bytes of `text` already accounted for in `out`
        let mut matched = false;
        loop {
            let found = searcher.advance(|input| {
                regex.search_captures_with(cache, input, &mut caps);
                Ok(caps.get_match())
            });
            let Some(m) = found else { break };
            if !matched {
                matched = true;
                out.reserve(text.len());
            }
            out.push_str(&text[copied..m.start()]);
            expand(&self.replacement, &caps, text, &mut out);
            copied = m.end();
            // `out` stands for text[..copied]: the result grows by what `out` exceeds that.
            if out.len() > copied + growth {
                return Applied::TooLong;
            }
        }
        if !matched {
            return Applied::Unchanged;
        }
        out.push_str(&text[copied..]);
        Applied::Changed(out)
    }
}

/// What a chain of rules made of one text.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rewrite {
    /// The text after the rules, when one of them changed it.
    pub text: Option<String>,
    /// The indices of the rules that changed it.
    pub changed: Vec<usize>,
    /// The indices of the rules left out because they would have made it too long.
    pub too_long: Vec<usize>,
}

/// Runs `rules` (each with its index) over `text` in order, each on what the one before left.
/// A rule may make the text at most [`REGEX_RULE_GROWTH`] longer, and all of them together at
/// most [`REGEX_BUILD_GROWTH`]; a rule past either is left out.
pub fn rewrite<'r>(
    rules: impl IntoIterator<Item = (usize, &'r CompiledRule)>,
    text: &str,
) -> Rewrite {
    let mut out = Rewrite::default();
    for (index, rule) in rules {
        let current = out.text.as_deref().unwrap_or(text);
        let grown = current.len().saturating_sub(text.len());
        let allowance = REGEX_RULE_GROWTH.min(REGEX_BUILD_GROWTH.saturating_sub(grown));
        match rule.apply(current, allowance) {
            Applied::Unchanged => {}
            Applied::Changed(next) => {
                out.text = Some(next);
                out.changed.push(index);
            }
            Applied::TooLong => out.too_long.push(index),
        }
    }
    out
}

/// The replacement for one match, `$1` and `${name}` filled in from `caps`.
fn expand(replacement: &str, caps: &Captures, text: &str, out: &mut String) {
    interpolate::string(
        replacement,
        |index, out| {
            if let Some(span) = caps.get_group(index) {
                out.push_str(&text[span.range()]);
            }
        },
        |name| caps.group_info().to_index(PatternID::ZERO, name),
        out,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::REGEX_RULE_GROWTH;
    use crate::model::RegexScope;

    fn rule(pattern: &str, replacement: &str, flags: &str) -> RegexRule {
        RegexRule {
            id: "r".into(),
            name: None,
            pattern: pattern.into(),
            replacement: replacement.into(),
            flags: flags.into(),
            scope: RegexScope::Both,
            roles: None,
            min_depth: None,
            max_depth: None,
            enabled: true,
        }
    }

    fn compiled(pattern: &str, replacement: &str, flags: &str) -> CompiledRule {
        CompiledRule::new(
            &rule(pattern, replacement, flags),
            &mut PatternBudget::default(),
        )
        .expect("compiles")
    }

    fn apply(r: &CompiledRule, text: &str) -> Option<String> {
        match r.apply(text, REGEX_RULE_GROWTH) {
            Applied::Changed(s) => Some(s),
            Applied::Unchanged => None,
            Applied::TooLong => panic!("too long"),
        }
    }

    #[test]
    fn replacement_takes_groups_names_and_the_whole_match() {
        let r = compiled(r"(?P<who>\w+) says (\w+)", "${who}: $2 [{{match}}]", "");
        assert_eq!(
            apply(&r, "Ann says hi").as_deref(),
            Some("Ann: hi [Ann says hi]")
        );
        assert_eq!(apply(&r, "nothing here"), None);
        assert_eq!(
            apply(&compiled("a", "$$", ""), "banana").as_deref(),
            Some("b$n$n$")
        );
    }

    #[test]
    fn empty_matches_are_replaced_between_characters_as_the_regex_crate_does() {
        let r = compiled("(?:)", "-", "");
        assert_eq!(apply(&r, "añb").as_deref(), Some("-a-ñ-b-"));
        assert_eq!(apply(&r, "").as_deref(), Some("-"));
        let r = compiled("x*", "<$0>", "");
        assert_eq!(
            apply(&r, "axxb").as_deref(),
            regex::Regex::new("x*")
                .map(|re| re.replace_all("axxb", "<$0>").into_owned())
                .ok()
                .as_deref()
        );
    }

    #[test]
    fn flags_and_errors() {
        let r = compiled("^hello", "x", "im");
        assert_eq!(apply(&r, "a\nHELLO").as_deref(), Some("a\nx"));
        let err = compile(&rule("ab(open", "", "")).unwrap_err();
        assert_eq!(err.code, texts::PATTERN_GROUP_UNCLOSED.code);
        assert_eq!(
            err.to_string(),
            "the group opened at character 3 is not closed"
        );
        let err = compile(&rule("a", "", "q")).unwrap_err();
        assert_eq!(err.to_string(), "unknown regex flag 'q' (use i, m or s)");
    }

    #[test]
    fn why_a_pattern_does_not_parse_is_a_text_of_its_own_with_the_character() {
        let cases = [
            ("ñ(?=x)", texts::PATTERN_LOOK_AROUND, 2),
            (r"(a)\1", texts::PATTERN_BACKREFERENCE, 4),
            ("a)", texts::PATTERN_GROUP_UNOPENED, 2),
            ("[ab", texts::PATTERN_CLASS_UNCLOSED, 1),
            ("*a", texts::PATTERN_REPETITION_MISSING, 1),
            (r"\q", texts::PATTERN_ESCAPE, 1),
        ];
        for (pattern, text, at) in cases {
            let err = compile_pattern(pattern, "").unwrap_err();
            assert_eq!(err.code, text.code, "{pattern}: {err}");
            assert_eq!(err.params["at"], at.to_string(), "{pattern}: {err}");
        }
        // The rest keep the regex library's words, with the character.
        let err = compile_pattern(r"\p{Nope}", "").unwrap_err();
        assert_eq!(err.code, texts::PATTERN_SYNTAX.code);
        assert_eq!(err.params["at"], "1");
        assert!(
            err.to_string().contains("Unicode property not found"),
            "{err}"
        );
    }

    #[test]
    fn a_replacement_that_grows_past_its_allowance_leaves_the_text() {
        let r = compiled("", &"x".repeat(200), "");
        let text = "y".repeat(10_000);
        // 10,001 empty matches of 200 bytes each: about 2 MB more.
        assert_eq!(r.apply(&text, REGEX_RULE_GROWTH), Applied::TooLong);
        assert!(
            matches!(r.apply(&text, 4 << 20), Applied::Changed(s) if s.len() == 10_000 + 10_001 * 200)
        );
        // Shrinking is always allowed.
        let r = compiled("y+", "", "");
        assert_eq!(r.apply(&text, 0), Applied::Changed(String::new()));
    }

    #[test]
    fn a_pattern_over_the_size_cap_is_refused_with_a_reason() {
        let err = compile(&rule(r"\w{200}", "", "")).unwrap_err();
        assert_eq!(err.code, texts::PATTERN_TOO_LARGE.code);
        assert!(err.to_string().contains("KiB"), "{err}");
    }

    #[test]
    fn a_build_keeps_at_most_its_budget_of_patterns_and_counts_each_once() {
        let mut budget = PatternBudget::default();
        let first = budget.compile(r"\w{5}a", "").expect("fits");
        let cost = first.cost();
        assert!(cost > 0);
        budget.compile(r"\w{5}a", "").expect("the same again");
        assert_eq!(budget.used(), cost, "the same pattern costs once");
        let mut compiled = 1;
        let mut refused = false;
        for i in 0..10_000 {
            match budget.compile(&format!(r"\w{{12}}{i}"), "") {
                Ok(_) => compiled += 1,
                Err(PatternError::OverBudget) => {
                    refused = true;
                    break;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(
            refused,
            "{compiled} patterns compiled without reaching the budget"
        );
        assert!(budget.used() <= PATTERN_BUILD_BYTES);
        // Once spent, a new pattern is not even compiled; one already counted still is had.
        assert_eq!(
            budget.compile("fresh", "").unwrap_err(),
            PatternError::OverBudget
        );
        budget.compile(r"\w{5}a", "").expect("counted before");
    }

    #[test]
    fn roles_and_depth_limit_where_a_rule_applies() {
        let mut raw = rule("a", "b", "");
        raw.roles = Some(vec![Role::Assistant]);
        raw.min_depth = Some(1);
        raw.max_depth = Some(3);
        let r = CompiledRule::new(&raw, &mut PatternBudget::default()).expect("compiles");
        assert!(!r.applies(Role::User, Some(2)));
        assert!(!r.applies(Role::Assistant, Some(0)));
        assert!(r.applies(Role::Assistant, Some(3)));
        assert!(!r.applies(Role::Assistant, Some(4)));
        assert!(r.applies(Role::Assistant, None));
    }
}
