//! SillyTavern's global world info settings, from its `settings.json` (under
//! `world_info_settings`, or the `world_info_*` keys at the top level as older versions wrote
//! them), as a lorebook's settings and the `lorebook` processor's `includeNames` (RULES 5.11.1,
//! 7.2). SillyTavern keeps them for every book at once; here they belong to the book of one
//! preset, so [`WorldInfoSettings::apply_to`] puts them on a preset.

use promptloom_engine::model::{AgentPreset, Lorebook, ProcessorConfig};
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};

/// The settings read: the book's (no entries) and whether the speakers' names are scanned.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldInfoSettings {
    /// The book's settings; its entries are empty.
    pub lorebook: Lorebook,
    /// `world_info_include_names`, the `lorebook` processor's `includeNames`.
    pub include_names: Option<bool>,
}

/// The keys read, and the ones known but not mapped.
const NOT_MAPPED: &[&str] = &[
    "world_info",
    "world_info_overflow_alert",
    "world_info_character_strategy",
];

/// True when `root` carries SillyTavern's world info settings.
pub fn looks_like_world_info_settings(root: &Object) -> bool {
    matches!(root.get("world_info_settings"), Some(Value::Object(_)))
        || root.contains_key("world_info_depth")
}

/// Reads the settings from a `settings.json` (or its `world_info_settings` object alone).
pub fn world_info_settings_from_value(
    root: &Object,
) -> Result<Reported<WorldInfoSettings>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_WI_SETTINGS);
    let (settings, prefix) = match root.get("world_info_settings") {
        Some(Value::Object(s)) => (s, "world_info_settings."),
        Some(other) => {
            return Err(Problem::shape(format!(
                "`world_info_settings` is {}, expected an object",
                json::kind(other)
            )))
        }
        None if root.contains_key("world_info_depth") => (root, ""),
        None => return Err(Problem::shape("no `world_info_settings`")),
    };
    let mut book = Lorebook::default();
    let count = |key: &str, report: &mut ImportReport| -> Option<u32> {
        let value = settings.get(key).filter(|v| !v.is_null())?;
        match json::value_int(value).and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                report.push(
                    format!("{prefix}{key}"),
                    texts::WI_SETTING_NOT_A_COUNT.with("value", value),
                );
                None
            }
        }
    };
    if let Some(depth) = count("world_info_depth", &mut report) {
        book.scan_depth = depth;
    }
    if let Some(n) = count("world_info_min_activations", &mut report) {
        book.min_activations = n;
    }
    if let Some(n) = count("world_info_min_activations_depth_max", &mut report) {
        book.min_activations_depth_max = n;
    }
    if let Some(percent) = count("world_info_budget", &mut report) {
        // SillyTavern reads a share over 100 % as its default, 25.
        book.token_budget = if percent > 100 { 25 } else { percent };
    }
    if let Some(cap) = count("world_info_budget_cap", &mut report) {
        book.budget_cap = cap;
    }
    if let Some(n) = count("world_info_max_recursion_steps", &mut report) {
        book.max_recursion_steps = n;
    }
    let flag = |key: &str| json::boolean(settings, key);
    if let Some(b) = flag("world_info_recursive") {
        book.recursive = b;
    }
    if let Some(b) = flag("world_info_case_sensitive") {
        book.case_sensitive = b;
    }
    if let Some(b) = flag("world_info_match_whole_words") {
        book.match_whole_words = b;
    }
    if let Some(b) = flag("world_info_use_group_scoring") {
        book.use_group_scoring = b;
    }
    // `world_info` is `{ "globalSelect": [] }` when no global book is chosen: nothing is lost.
    let set = |value: &Value| match value {
        Value::Object(o) => o.values().any(json::is_set),
        value => json::is_set(value),
    };
    for key in NOT_MAPPED {
        if settings.get(*key).is_some_and(set) {
            report.push(format!("{prefix}{key}"), texts::WI_SETTING_NOT_MAPPED);
        }
    }
    Ok(Reported {
        value: WorldInfoSettings {
            lorebook: book,
            include_names: flag("world_info_include_names"),
        },
        report,
    })
}

impl WorldInfoSettings {
    /// Puts the settings on `preset`: its lorebook's settings (a book without entries when it
    /// has none; its entries are kept) and the `lorebook` processor's `includeNames`.
    pub fn apply_to(&self, preset: &mut AgentPreset) {
        let entries = preset
            .lorebook
            .take()
            .map(|b| b.entries)
            .unwrap_or_default();
        preset.lorebook = Some(Lorebook {
            entries,
            ..self.lorebook.clone()
        });
        if let Some(include) = self.include_names {
            let configs = preset.processors.get_or_insert_with(Vec::new);
            let at = match configs.iter().position(|c| c.id == "lorebook") {
                Some(at) => at,
                None => {
                    configs.push(ProcessorConfig {
                        id: "lorebook".into(),
                        enabled: None,
                        priority: None,
                        settings: Default::default(),
                    });
                    configs.len() - 1
                }
            };
            configs[at]
                .settings
                .insert("includeNames".into(), Value::Bool(include));
        }
    }
}
