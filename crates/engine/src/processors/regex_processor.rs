//! `regex-processor` (priority 200): the preset's regex rules (SPEC 5.2) on the prompt only. Rules
//! of scope `history` or `both` rewrite the history here; rules of scope `templates` or `both` are
//! handed to the injection assembler on the blackboard, which applies them to each template
//! message after macros. The stored session is never changed: the engine only reads it.
//!
//! The default rules strip seed 003's legacy note and favourite blocks, which older clients saved
//! into the history together with the user's text.

use std::sync::Arc;

use crate::model::{RegexRule, RegexScope, Role};
use crate::pipeline::{
    ConfigField, PipelineContext, Processor, ProcessorDescriptor, ResolvedConfig,
};
use crate::regex_rule::CompiledRule;
use crate::EngineError;

use super::ephemeral_injection::{DOCUMENT_END, DOCUMENT_START, QUOTE_END, QUOTE_START};

pub struct RegexProcessor;

const ID: &str = "regex-processor";

/// The built-in rules, switched by the `defaultRules` setting.
pub fn default_rules() -> Vec<RegexRule> {
    let strip = |id: &str, name: &str, start: &str, end: &str| RegexRule {
        id: id.into(),
        name: Some(name.into()),
        pattern: format!(r"{}[\s\S]*?{}\s*", regex::escape(start), regex::escape(end)),
        replacement: String::new(),
        flags: String::new(),
        scope: RegexScope::History,
        roles: Some(vec![Role::User]),
        min_depth: None,
        max_depth: None,
        enabled: true,
    };
    vec![
        strip(
            "builtin-strip-legacy-note",
            "Strip legacy note blocks",
            DOCUMENT_START,
            DOCUMENT_END,
        ),
        strip(
            "builtin-strip-legacy-favourites",
            "Strip legacy favourite blocks",
            QUOTE_START,
            QUOTE_END,
        ),
    ]
}

impl Processor for RegexProcessor {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Regex rules",
            description: "Rewrites history and template text with the preset's regex rules, for \
                          the prompt only; the stored session is never changed.",
            priority: 200,
            is_core: false,
            default_enabled: true,
            config_fields: vec![ConfigField::boolean("defaultRules", "Built-in rules", true)
                .describe("Strip the legacy note and favourite blocks that older clients saved into the history.")],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let builtin = if config.bool("defaultRules") {
            default_rules()
        } else {
            Vec::new()
        };
        let preset_rules = ctx.preset.regex_rules.as_deref().unwrap_or_default();
        let mut history_rules = Vec::new();
        for rule in builtin.iter().chain(preset_rules).filter(|r| r.enabled) {
            let compiled = match CompiledRule::new(rule) {
                Ok(c) => c,
                Err(e) => {
                    // Validation refuses these on save; a build still never fails on one.
                    ctx.warn(ID, format!("rule \"{}\" skipped: {e}", rule.id));
                    continue;
                }
            };
            if matches!(rule.scope, RegexScope::Templates | RegexScope::Both) {
                ctx.blackboard.template_rules.push(compiled.clone());
            }
            if matches!(rule.scope, RegexScope::History | RegexScope::Both) {
                history_rules.push(compiled);
            }
        }
        if history_rules.is_empty() {
            return Ok(());
        }
        // What these rules made of each stored message in the session's last build is kept, so
        // that a rebuild after a template edit runs no pattern over a history it has seen.
        let key = rules_key(&history_rules);
        let memo_rules = history_rules.len() <= 64;
        let depth_matters = history_rules
            .iter()
            .any(|r| r.min_depth.is_some() || r.max_depth.is_some());
        let session = ctx.session;
        let mut memo = ctx.cache.take_history_rewrites(&session.id, key);
        let n = ctx.history.len();
        let mut changed = vec![0u32; history_rules.len()];
        for i in 0..n {
            let Some(m) = ctx.history.get(i) else { break };
            let (role, depth) = (m.role, (n - 1 - i) as u32);
            if !history_rules.iter().any(|r| r.applies(role, Some(depth))) {
                continue;
            }
            let depth_key = if depth_matters { depth } else { u32::MAX };
            let stored = m.as_stored().map(|(h, _)| h).filter(|_| memo_rules);
            if let Some(h) = stored {
                if let Some(outcome) = memo.get(h, m.content_arc(), role, depth_key) {
                    if let Some((text, bits)) = outcome {
                        // Kept only for at most 64 rules: one bit each.
                        for (k, count) in changed.iter_mut().enumerate() {
                            *count += u32::from(bits & (1 << k) != 0);
                        }
                        let text = Arc::clone(text);
                        ctx.history.set_content(i, text);
                    }
                    continue;
                }
            }
            let mut text: Option<String> = None;
            let mut bits = 0u64;
            for (k, rule) in history_rules.iter().enumerate() {
                if !rule.applies(role, Some(depth)) {
                    continue;
                }
                let current = text.as_deref().unwrap_or_else(|| m.content());
                if let Some(next) = rule.apply(current) {
                    text = Some(next);
                    changed[k] += 1;
                    bits |= 1u64.checked_shl(k as u32).unwrap_or(0);
                }
            }
            let text: Option<Arc<str>> = text.map(Arc::from);
            if let Some(h) = stored {
                let outcome = text.as_ref().map(|t| (Arc::clone(t), bits));
                memo.set(h, m.content_arc(), role, depth_key, outcome);
            }
            if let Some(text) = text {
                ctx.history.set_content(i, text);
            }
        }
        memo.truncate(session.messages.len());
        ctx.cache.keep_history_rewrites(&session.id, key, memo);
        for (rule, count) in history_rules.iter().zip(changed) {
            if count > 0 {
                ctx.info(
                    ID,
                    format!("rule \"{}\" changed {count} history messages", rule.id),
                );
            }
        }
        Ok(())
    }
}

/// Identifies a list of history rules by everything that decides what they do to a message.
fn rules_key(rules: &[CompiledRule]) -> u64 {
    let mut key = String::new();
    for r in rules {
        let fields = [
            r.regex.as_str().to_string(),
            r.flags.clone(),
            r.replacement.clone(),
            format!("{:?} {:?} {:?}", r.roles, r.min_depth, r.max_depth),
        ];
        for field in fields {
            // Each field after its length: no two lists of rules write the same key.
            key.push_str(&format!("{}:{field}", field.len()));
        }
    }
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_rules_strip_the_seed_markers() {
        let rules = default_rules();
        let text = format!("{DOCUMENT_START}\nold note\n{DOCUMENT_END}\n\nwhat is this?");
        let stripped = CompiledRule::new(&rules[0])
            .expect("compiles")
            .apply(&text)
            .expect("matched");
        assert_eq!(stripped, "what is this?");
        let text = format!("a {QUOTE_START}x{QUOTE_END} b");
        let stripped = CompiledRule::new(&rules[1])
            .expect("compiles")
            .apply(&text)
            .expect("matched");
        assert_eq!(stripped, "a b");
    }
}
