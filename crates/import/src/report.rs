//! What an importer could not map, item by item (RULES 7.3).

use promptloom_engine::Said;
use serde::{Deserialize, Serialize};

/// One thing from the source file that did not come through as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportItem {
    /// Where in the source: `prompts[3] (nsfw)`, `entries.12`, `line 4`, `temperature, top_p`.
    pub item: String,
    /// In English, as the command line prints it.
    pub message: String,
    /// The same as a code with parameters (`crate::texts`), for the app to say in its language.
    pub said: Said,
}

/// `item: message`, as the command line lists it.
impl std::fmt::Display for ReportItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.item, self.message)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The format that was recognised, in words (`SillyTavern chat-completion preset`).
    pub format: String,
    /// The same, as a code the app says in its language.
    #[serde(skip)]
    pub format_said: Said,
    pub items: Vec<ReportItem>,
}

impl ImportReport {
    pub fn new(format: impl Into<Said>) -> Self {
        let format_said = format.into();
        ImportReport {
            format: format_said.to_string(),
            format_said,
            items: Vec::new(),
        }
    }

    /// Says the format as `format` (a card in its container).
    pub fn set_format(&mut self, format: Said) {
        self.format = format.to_string();
        self.format_said = format;
    }

    /// Reports `item` with one of the texts of `crate::texts`.
    pub fn push(&mut self, item: impl Into<String>, said: impl Into<Said>) {
        let said = said.into();
        self.items.push(ReportItem {
            item: item.into(),
            message: said.to_string(),
            said,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// True when some item's text contains `needle` (for tests and quick checks).
    pub fn mentions(&self, needle: &str) -> bool {
        self.items
            .iter()
            .any(|i| i.item.contains(needle) || i.message.contains(needle))
    }
}

/// An importer's result together with its report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reported<T> {
    pub value: T,
    pub report: ImportReport,
}
