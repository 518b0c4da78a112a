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
    /// SillyTavern activation (RULES 5.11.1): scan deeper, a message at a time, until this many
    /// entries activated; 0 = off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_activations: u32,
    /// How deep the scan for `minActivations` may go; 0 = the whole chat.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_activations_depth_max: u32,
    /// SillyTavern activation: scan rounds at most (the first one counts); 0 = until nothing new
    /// activates.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_recursion_steps: u32,
    /// SillyTavern activation: the budget in tokens at most; 0 = no cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub budget_cap: u32,
    /// SillyTavern activation: inclusion groups keep only the entries whose keys scored best.
    #[serde(default, skip_serializing_if = "is_false")]
    pub use_group_scoring: bool,
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
            min_activations: 0,
            min_activations_depth_max: 0,
            max_recursion_steps: 0,
            budget_cap: 0,
            use_group_scoring: false,
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
fn is_zero(n: &u32) -> bool {
    *n == 0
}
fn is_false(b: &bool) -> bool {
    !*b
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
    // SillyTavern's per-entry settings (RULES 5.11.1). Absent follows the book; the native
    // activation (RULES 6) reads none of them.
    /// Messages scanned for this entry, in place of the book's `scanDepth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_whole_words: Option<bool>,
    /// Not activated by the content of other entries.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_recursion: bool,
    /// Its content is not scanned for other entries.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prevent_recursion: bool,
    /// Activated only by recursion, from this recursion level on (1 = the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_until_recursion: Option<u32>,
    /// Stays active for this many messages after it activated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sticky: Option<u32>,
    /// Cannot activate for this many messages after it activated (after its sticky time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<u32>,
    /// Cannot activate before the chat has this many messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<u32>,
    /// Inclusion groups, comma-separated: of the entries of one group that activate together,
    /// one is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Wins its groups over entries without it (the highest `order` first).
    #[serde(default, skip_serializing_if = "is_false")]
    pub group_override: bool,
    /// Weight of the group roll; absent = 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_weight: Option<u32>,
    /// Group scoring for this entry, in place of the book's `useGroupScoring`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_group_scoring: Option<bool>,
}

impl LorebookEntry {
    /// The inclusion groups the entry is in, as SillyTavern splits them (at commas).
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.group
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
    }
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
