//! The regex rules of presets (docs/RULES.md, "Regex rules"): a rule compiled for a build, where
//! it applies (roles, depth) and its replacement, which stops as soon as it would make its text
//! more than its allowance longer (docs/ARCHITECTURE.md, "Limits"). The patterns themselves, and
//! their caps, are [`crate::regex_pattern`]'s.

use regex_automata::util::captures::Captures;
use regex_automata::util::interpolate;
use regex_automata::util::iter::Searcher;
use regex_automata::{Input, PatternID};

use crate::limits::{REGEX_BUILD_GROWTH, REGEX_RULE_GROWTH};
use crate::model::{RegexRule, Role};
pub use crate::regex_pattern::{compile_pattern, Matcher, Pattern, PatternBudget, PatternError};
use crate::said::Said;

/// Compiles a rule's pattern with its flags (`i`, `m`, `s`). The error text says where the pattern
/// is wrong, or that it compiles too large; an unknown flag is an error too.
pub fn compile(rule: &RegexRule) -> Result<Pattern, Said> {
    compile_pattern(&rule.pattern, &rule.flags)
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
    use crate::limits::{PATTERN_BUILD_BYTES, REGEX_RULE_GROWTH};
    use crate::model::RegexScope;
    use crate::texts;

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
