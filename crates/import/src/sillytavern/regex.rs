//! SillyTavern regex scripts (the Regex extension's export: one script, or a list) -> regex rules
//! (RULES 5.2).
//!
//! `placement` 1 (user input) and 2 (AI output) become the rule's roles; the scope is the history,
//! where those scripts act. Other placements (slash commands, world info, reasoning) have no
//! counterpart and are reported; a script left with none of 1 or 2 comes in disabled. A script
//! marked `markdownOnly` only changes what SillyTavern displays, so it comes in disabled too.

use promptloom_engine::model::{RegexRule, RegexScope, Role};
use promptloom_engine::regex_rule;
use serde_json::Value;

use super::world_info::clamp_u32;
use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};
use promptloom_engine::Text;

pub(crate) fn looks_like_regex(value: &Value) -> bool {
    match value {
        Value::Object(obj) => obj.contains_key("findRegex"),
        Value::Array(items) => {
            !items.is_empty()
                && items
                    .iter()
                    .all(|v| v.as_object().is_some_and(|o| o.contains_key("findRegex")))
        }
        _ => false,
    }
}

/// Splits JavaScript's `/pattern/flags` notation. A string without it is a bare pattern.
pub(crate) fn split_js_regex(text: &str) -> (String, String) {
    if let Some(rest) = text.strip_prefix('/') {
        if let Some(end) = rest.rfind('/') {
            let flags = &rest[end + 1..];
            if flags.chars().all(|c| c.is_ascii_alphabetic()) {
                return (rest[..end].to_owned(), flags.to_owned());
            }
        }
    }
    (text.to_owned(), String::new())
}

const SCRIPT_KNOWN: &[&str] = &[
    "id",
    "scriptName",
    "findRegex",
    "replaceString",
    "placement",
    "disabled",
    "markdownOnly",
    "promptOnly",
    "runOnEdit",
    "minDepth",
    "maxDepth",
];

pub(crate) fn rules_from_value(value: &Value) -> Result<Reported<Vec<RegexRule>>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_REGEX);
    let scripts: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![value],
        other => {
            return Err(Problem::shape(format!(
                "{} instead of a regex script",
                json::kind(other)
            )))
        }
    };
    let mut rules = Vec::new();
    for (i, script) in scripts.into_iter().enumerate() {
        let Value::Object(obj) = script else {
            report.push(
                format!("[{i}]"),
                texts::NOT_A_SCRIPT.part("kind", json::kind_text(script)),
            );
            continue;
        };
        let name = json::text(obj, "scriptName");
        let item = match &name {
            Some(n) => format!("script {n}"),
            None => format!("script {}", i + 1),
        };
        if let Some(rule) = rule_from_script(i, obj, &item, &mut report) {
            if rules.iter().any(|r: &RegexRule| r.id == rule.id) {
                report.push(&item, texts::SECOND_SCRIPT.with("id", &rule.id));
                continue;
            }
            rules.push(rule);
        }
    }
    Ok(Reported {
        value: rules,
        report,
    })
}

fn rule_from_script(
    index: usize,
    obj: &Object,
    item: &str,
    report: &mut ImportReport,
) -> Option<RegexRule> {
    let Some(find) = json::text(obj, "findRegex") else {
        report.push(item, texts::NO_FIND_REGEX);
        return None;
    };
    let (pattern, js_flags) = split_js_regex(&find);
    let mut flags = String::new();
    let mut dropped = String::new();
    for flag in js_flags.chars() {
        match flag {
            'i' | 'm' | 's' if !flags.contains(flag) => flags.push(flag),
            // Global: every rule here replaces all matches.
            'g' => {}
            other => dropped.push(other),
        }
    }
    if !dropped.is_empty() {
        report.push(item, texts::FLAGS_NOT_MAPPED.with("flags", &dropped));
    }
    let mut enabled = !json::boolean(obj, "disabled").unwrap_or(false);
    let placements: Vec<i64> = match obj.get("placement") {
        Some(Value::Array(items)) => items.iter().filter_map(json::value_int).collect(),
        _ => Vec::new(),
    };
    let mut roles = Vec::new();
    for placement in &placements {
        match placement {
            1 => roles.push(Role::User),
            2 => roles.push(Role::Assistant),
            other => report.push(
                item,
                texts::PLACEMENT_NOT_MAPPED
                    .with("placement", other)
                    .part("name", placement_name(*other)),
            ),
        }
    }
    roles.sort();
    roles.dedup();
    if roles.is_empty() && enabled {
        report.push(item, texts::APPLIES_TO_NOTHING);
        enabled = false;
    }
    if json::boolean(obj, "markdownOnly") == Some(true) && enabled {
        report.push(item, texts::MARKDOWN_ONLY);
        enabled = false;
    }
    for key in json::unknown_set_keys(obj, SCRIPT_KNOWN) {
        report.push(item, texts::KEY_NOT_MAPPED.with("key", key));
    }
    let depth = |key: &str| json::int(obj, key).filter(|d| *d >= 0).map(clamp_u32);
    let rule = RegexRule {
        id: json::text(obj, "id").unwrap_or_else(|| format!("regex-{}", index + 1)),
        name: json::text(obj, "scriptName"),
        pattern,
        // `$&` is JavaScript's whole match; this model writes it `{{match}}`.
        replacement: json::string(obj, "replaceString")
            .unwrap_or_default()
            .replace("$&", "{{match}}"),
        flags,
        scope: RegexScope::History,
        // Both roles is every message SillyTavern's scripts touch: no filter needed.
        roles: (roles.len() == 1).then_some(roles),
        min_depth: depth("minDepth"),
        max_depth: depth("maxDepth"),
        enabled,
    };
    if let Err(e) = regex_rule::compile(&rule) {
        report.push(item, texts::PATTERN_NOT_SUPPORTED.part("why", e));
        return None;
    }
    Some(rule)
}

fn placement_name(placement: i64) -> Text {
    match placement {
        0 => texts::PLACEMENT_MARKDOWN,
        3 => texts::PLACEMENT_SLASH_COMMANDS,
        5 => texts::PLACEMENT_WORLD_INFO,
        6 => texts::PLACEMENT_REASONING,
        _ => texts::PLACEMENT_UNKNOWN,
    }
}
