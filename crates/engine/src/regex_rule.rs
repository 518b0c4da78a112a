//! Compiling the regex rules of SPEC 5.2. Used when a preset is validated (an invalid pattern is
//! refused when saved) and by the regex processor.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::{Regex, RegexBuilder};

use crate::model::RegexRule;

/// Compiled patterns by (pattern, flags): a live preview rebuilds on every keystroke, and
/// compiling a pattern costs far more than the rest of a small build. `Regex` clones share their
/// program. Bounded: past the limit the cache starts over.
fn cache() -> &'static Mutex<HashMap<(String, String), Regex>> {
    static CACHE: OnceLock<Mutex<HashMap<(String, String), Regex>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

const CACHE_LIMIT: usize = 512;

/// Compiles a rule's pattern with its flags (`i`, `m`, `s`). The error text is the regex crate's,
/// which shows where the pattern is wrong; an unknown flag is an error too.
pub fn compile(rule: &RegexRule) -> Result<Regex, String> {
    compile_pattern(&rule.pattern, &rule.flags)
}

/// [`compile`] for a bare pattern and its flags (lorebook keys written `/pattern/flags`).
pub fn compile_pattern(pattern: &str, flags: &str) -> Result<Regex, String> {
    let key = (pattern.to_string(), flags.to_string());
    if let Some(regex) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(regex.clone());
    }
    let regex = build(pattern, flags)?;
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(key, regex.clone());
    Ok(regex)
}

fn build(pattern: &str, flags: &str) -> Result<Regex, String> {
    let mut builder = RegexBuilder::new(pattern);
    for flag in flags.chars() {
        match flag {
            'i' => builder.case_insensitive(true),
            'm' => builder.multi_line(true),
            's' => builder.dot_matches_new_line(true),
            // JavaScript's global flag is how SillyTavern writes "replace all": always so here.
            'g' => &mut builder,
            other => return Err(format!("unknown regex flag '{other}' (use i, m or s)")),
        };
    }
    builder
        .size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// A rule ready to run: its regex and its replacement in the regex crate's syntax.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub id: String,
    pub regex: Regex,
    /// The flags it was compiled with (`i`, `m`, `s`).
    pub flags: String,
    /// `{{match}}` already turned into `${0}`; `$1` and `${name}` as written.
    pub replacement: String,
    pub roles: Option<Vec<crate::model::Role>>,
    pub min_depth: Option<u32>,
    pub max_depth: Option<u32>,
}

impl CompiledRule {
    pub fn new(rule: &RegexRule) -> Result<Self, String> {
        Ok(CompiledRule {
            id: rule.id.clone(),
            regex: compile(rule)?,
            flags: rule.flags.clone(),
            replacement: rule.replacement.replace("{{match}}", "${0}"),
            roles: rule.roles.clone(),
            min_depth: rule.min_depth,
            max_depth: rule.max_depth,
        })
    }

    /// Whether the rule applies to a message of `role` at `depth` (0 = newest; `None` for
    /// messages outside the history, which depth limits do not concern).
    pub fn applies(&self, role: crate::model::Role, depth: Option<u32>) -> bool {
        let role_ok = self.roles.as_ref().is_none_or(|r| r.contains(&role));
        let depth_ok = depth.is_none_or(|d| {
            self.min_depth.is_none_or(|min| d >= min) && self.max_depth.is_none_or(|max| d <= max)
        });
        role_ok && depth_ok
    }

    /// `text` with every match replaced, or `None` when nothing matched.
    pub fn apply(&self, text: &str) -> Option<String> {
        match self.regex.replace_all(text, self.replacement.as_str()) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(s) => Some(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RegexScope, Role};

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

    #[test]
    fn replacement_takes_groups_names_and_the_whole_match() {
        let r = CompiledRule::new(&rule(
            r"(?P<who>\w+) says (\w+)",
            "${who}: $2 [{{match}}]",
            "",
        ))
        .expect("compiles");
        assert_eq!(
            r.apply("Ann says hi").as_deref(),
            Some("Ann: hi [Ann says hi]")
        );
        assert_eq!(r.apply("nothing here"), None);
    }

    #[test]
    fn flags_and_errors() {
        let r = CompiledRule::new(&rule("^hello", "x", "im")).expect("compiles");
        assert_eq!(r.apply("a\nHELLO").as_deref(), Some("a\nx"));
        let err = compile(&rule("(open", "", "")).unwrap_err();
        assert!(err.contains("unclosed"), "{err}");
        let err = compile(&rule("a", "", "q")).unwrap_err();
        assert!(err.contains("'q'"), "{err}");
    }

    #[test]
    fn roles_and_depth_limit_where_a_rule_applies() {
        let mut raw = rule("a", "b", "");
        raw.roles = Some(vec![Role::Assistant]);
        raw.min_depth = Some(1);
        raw.max_depth = Some(3);
        let r = CompiledRule::new(&raw).expect("compiles");
        assert!(!r.applies(Role::User, Some(2)));
        assert!(!r.applies(Role::Assistant, Some(0)));
        assert!(r.applies(Role::Assistant, Some(3)));
        assert!(!r.applies(Role::Assistant, Some(4)));
        assert!(r.applies(Role::Assistant, None));
    }
}
