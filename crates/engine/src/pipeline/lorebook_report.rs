//! The lorebook's report of one build (RULES 6.5): what activated and why, what the budget cut,
//! and the budget. The `lorebook` processor writes it on the blackboard; the build result carries
//! it to the preview and the text listing.

use serde::{Deserialize, Serialize};

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
    pub reason: String,
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
    /// The lorebook's share of the context, in tokens.
    pub budget: u32,
}

impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Activation::Constant => write!(f, "constant"),
            Activation::Key {
                key,
                history_index: Some(i),
            } => write!(f, "key \"{key}\" in history #{i}"),
            Activation::Key { key, .. } => write!(f, "key \"{key}\" in the input"),
            Activation::Recursion { key, from_entry } => {
                write!(f, "key \"{key}\" in the content of entry \"{from_entry}\"")
            }
        }
    }
}
