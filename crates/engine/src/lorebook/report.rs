//! The lorebook's report of one build (RULES 6.5): what activated and why, what the budget cut,
//! and the budget. The `lorebook` processor writes it on the blackboard; the build result carries
//! it to the preview and the text listing.

use serde::{Deserialize, Serialize};

use crate::said::Said;
use crate::texts;

/// Why an entry activated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Activation {
    Constant,
    /// `key` occurred in history message `history_index` (absent for the pending input).
    #[serde(rename_all = "camelCase")]
    Key {
        key: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        history_index: Option<u32>,
    },
    /// `key` occurred in the content of activated entry `from_entry`.
    #[serde(rename_all = "camelCase")]
    Recursion {
        key: String,
        from_entry: String,
    },
    /// Still sticky from an activation `messages_ago` messages ago (SillyTavern activation,
    /// RULES 5.11.1).
    #[serde(rename_all = "camelCase")]
    Sticky {
        messages_ago: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ActivatedEntry {
    pub entry_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub reason: Activation,
    pub tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CutEntry {
    pub entry_id: String,
    pub tokens: u32,
    /// Why, in English.
    pub reason: String,
    /// The reason as a code with parameters, for the app to say in its language.
    pub said: Said,
}

/// An entry that matched (or was sticky) but was left out before the budget: its chance, a
/// delay, a cooldown, or an inclusion group (RULES 5.11.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    pub entry_id: String,
    /// Why, in English.
    pub reason: String,
    /// The reason as a code with parameters, for the app to say in its language.
    pub said: Said,
}

/// What the lorebook did in one build, for the preview.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct LorebookReport {
    /// Entries sent, in the order they were budgeted (highest `order` first).
    pub activated: Vec<ActivatedEntry>,
    /// Entries that activated but did not fit the budget.
    pub cut: Vec<CutEntry>,
    /// Entries left out by SillyTavern activation before the budget (RULES 5.11.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedEntry>,
    /// The lorebook's share of the context, in tokens.
    pub budget: u32,
}

impl Activation {
    /// The reason as the logs say it.
    pub fn said(&self) -> Said {
        match self {
            Activation::Constant => texts::BY_CONSTANT.into(),
            Activation::Key {
                key,
                history_index: Some(i),
            } => texts::BY_KEY_IN_HISTORY.with("key", key).with("index", i),
            Activation::Key { key, .. } => texts::BY_KEY_IN_INPUT.with("key", key),
            Activation::Recursion { key, from_entry } => texts::BY_RECURSION
                .with("key", key)
                .with("entry", from_entry),
            Activation::Sticky { messages_ago } => texts::BY_STICKY.with("ago", messages_ago),
        }
    }
}

/// In English.
impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.said())
    }
}
