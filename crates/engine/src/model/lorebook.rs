//! RULES 6: the lorebook (world info) and RULES 5.2: regex rules, as stored in a preset.

use serde::{Deserialize, Serialize};

use super::{InjectionStrategy, Role};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Lorebook {
    #[serde(default = "default_scan_depth")]
    pub scan_depth: u32,
    /// Percent of the context window.
    #[serde(default = "default_token_budget")]
    pub token_budget: u32,
    #[serde(default = "yes")]
    pub recursive: bool,
    #[serde(default)]
    pub case_sensitive: bool,
    #[serde(default = "yes")]
    pub match_whole_words: bool,
    #[serde(default)]
    pub entries: Vec<LorebookEntry>,
}

impl Default for Lorebook {
    fn default() -> Self {
        Lorebook {
            scan_depth: default_scan_depth(),
            token_budget: default_token_budget(),
            recursive: true,
            case_sensitive: false,
            match_whole_words: true,
            entries: Vec::new(),
        }
    }
}

fn default_scan_depth() -> u32 {
    2
}
fn default_token_budget() -> u32 {
    25
}
fn yes() -> bool {
    true
}
fn default_entry_order() -> i32 {
    100
}
fn system_role() -> Role {
    Role::System
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SelectiveLogic {
    #[default]
    AndAny,
    NotAll,
    NotAny,
    AndAll,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LorebookEntry {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub secondary_keys: Vec<String>,
    #[serde(default)]
    pub selective_logic: SelectiveLogic,
    #[serde(default)]
    pub constant: bool,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub content: String,
    #[serde(default = "default_entry_order")]
    pub order: i32,
    #[serde(default)]
    pub strategy: InjectionStrategy,
    #[serde(default = "system_role")]
    pub role: Role,
    /// Percent chance (0-100) that a matching entry activates; absent = always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum RegexScope {
    History,
    Templates,
    #[default]
    Both,
}

/// A find/replace rule applied to prompt content only (RULES 5.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RegexRule {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub pattern: String,
    #[serde(default)]
    pub replacement: String,
    /// Any of `i`, `m`, `s`.
    #[serde(default)]
    pub flags: String,
    #[serde(default)]
    pub scope: RegexScope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<Role>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    #[serde(default = "yes")]
    pub enabled: bool,
}
