//! Model-id patterns (`claude-*`, `gpt-4?`, `*`), shared by recipe choice (RULES 3.1) and model
//! profile lookup (RULES 5.9). Compared case-insensitively.

use crate::said::Said;
use crate::texts;

/// How well a pattern matches a model id; greater is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MatchRank {
    /// A pattern of wildcards only, such as `*`: the fallback.
    CatchAll,
    /// A wildcard pattern, ranked by its number of non-wildcard characters.
    Wildcard(usize),
    /// The pattern is the id itself.
    Exact,
}

/// The rank of `pattern` for `id`, or `None` when it does not match.
pub fn rank(pattern: &str, id: &str) -> Option<MatchRank> {
    let pattern = pattern.trim().to_lowercase();
    let id = id.trim().to_lowercase();
    let literals = pattern.chars().filter(|c| !matches!(c, '*' | '?')).count();
    let has_wildcard = literals != pattern.chars().count();
    if !has_wildcard {
        return (pattern == id).then_some(MatchRank::Exact);
    }
    if !glob_match(&pattern, &id) {
        return None;
    }
    Some(if literals == 0 && !pattern.contains('?') {
        MatchRank::CatchAll
    } else {
        MatchRank::Wildcard(literals)
    })
}

/// Glob match with `*` (any run, also empty) and `?` (one character).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Why `pattern` cannot be a model filter, or `None` when it can: model ids are letters, digits
/// and `. _ - : / @ +`, and a pattern adds the wildcards `*` and `?`.
pub fn pattern_problem(pattern: &str) -> Option<Said> {
    if pattern.trim().is_empty() {
        return Some(texts::PATTERN_EMPTY.into());
    }
    if let Some(c) = pattern.chars().find(|c| c.is_whitespace()) {
        return Some(
            texts::PATTERN_SPACE
                .with("pattern", pattern)
                .with("char", format!("{c:?}")),
        );
    }
    pattern
        .chars()
        .find(|c| !(c.is_alphanumeric() || "._-:/@+*?".contains(*c)))
        .map(|c| {
            texts::PATTERN_CHARACTER
                .with("pattern", pattern)
                .with("char", c)
        })
}

/// Index of the best match among candidates, each a list of patterns; ties go to the earlier.
pub fn best_match<'a, I>(candidates: I, id: &str) -> Option<usize>
where
    I: IntoIterator<Item = &'a [String]>,
{
    let mut best: Option<(MatchRank, usize)> = None;
    for (i, patterns) in candidates.into_iter().enumerate() {
        let Some(r) = patterns.iter().filter_map(|p| rank(p, id)).max() else {
            continue;
        };
        if best.is_none_or(|(b, _)| r > b) {
            best = Some((r, i));
        }
    }
    best.map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_problem_names_what_is_wrong() {
        assert_eq!(pattern_problem("claude-*"), None);
        assert_eq!(pattern_problem("gpt-4?"), None);
        assert_eq!(pattern_problem("openrouter/anthropic:claude@2+"), None);
        let problem = |p: &str| pattern_problem(p).unwrap().to_string();
        assert!(problem("").contains("empty"));
        assert!(problem("  ").contains("empty"));
        assert!(problem("gpt 4").contains("space"));
        assert!(problem("gpt-[45]").contains("'['"));
    }

    #[test]
    fn glob_handles_stars_and_question_marks() {
        assert!(glob_match("claude-*", "claude-3-5-sonnet"));
        assert!(glob_match("*sonnet*", "claude-3-5-sonnet-latest"));
        assert!(glob_match("gpt-4?", "gpt-4o"));
        assert!(!glob_match("gpt-4?", "gpt-4o-mini"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a*b", "acbd"));
    }

    #[test]
    fn ranks_order_exact_then_specific_then_catch_all() {
        assert_eq!(rank("GPT-4o", "gpt-4o"), Some(MatchRank::Exact));
        assert_eq!(rank("gpt-*", "gpt-4o"), Some(MatchRank::Wildcard(4)));
        assert_eq!(rank("*", "gpt-4o"), Some(MatchRank::CatchAll));
        assert_eq!(rank("gpt-4", "gpt-4o"), None);
        assert!(MatchRank::Exact > MatchRank::Wildcard(100));
        assert!(MatchRank::Wildcard(0) > MatchRank::CatchAll);
    }
}
