//! Compiling the regex rules of SPEC 5.2. Used when a preset is validated (an invalid pattern is
//! refused when saved) and by the regex processor.

use regex::{Regex, RegexBuilder};

use crate::model::RegexRule;

/// Compiles a rule's pattern with its flags (`i`, `m`, `s`). The error text is the regex crate's,
/// which shows where the pattern is wrong; an unknown flag is an error too.
pub fn compile(rule: &RegexRule) -> Result<Regex, String> {
    let mut builder = RegexBuilder::new(&rule.pattern);
    for flag in rule.flags.chars() {
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
