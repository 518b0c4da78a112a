//! Exports, the same in both front doors: a preset in each format, a session as native JSON, and
//! the file name to propose for them.

use promptloom_engine::model::{AgentPreset, Session};
pub use promptloom_import::ExportFormat;
use promptloom_import::ReportItem;
use promptloom_store::{Store, StoreError};

use crate::LibraryError;

/// An export's text, and what its format could not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub text: String,
    pub not_mapped: Vec<ReportItem>,
}

/// `preset` as `format` writes it; an error when the preset has nothing that format holds (a
/// card without a character, world info without a lorebook).
pub fn preset(preset: &AgentPreset, format: ExportFormat) -> Result<Export, LibraryError> {
    let reported = promptloom_import::export_preset_as(preset, format)?;
    Ok(Export {
        text: reported.value,
        not_mapped: reported.report.items,
    })
}

/// `session` as native JSON, which holds everything.
pub fn session(session: &Session) -> Export {
    Export {
        text: promptloom_import::native::export_session(session),
        not_mapped: Vec::new(),
    }
}

/// Stored preset `id` as `format`; when no preset has that id, stored session `id` (native
/// JSON only).
pub fn stored(store: &Store, id: &str, format: ExportFormat) -> Result<Export, LibraryError> {
    match store.get_preset(id) {
        Ok(p) => preset(&p, format),
        Err(StoreError::NotFound { .. }) if format == ExportFormat::Native => {
            Ok(session(&store.get_session(id)?))
        }
        Err(e) => Err(e.into()),
    }
}

/// The file name to propose for `id` exported as `format`: characters no file system takes
/// become dashes, and the format's suffix (`.st-preset.json` and the like) follows.
pub fn file_name(id: &str, format: ExportFormat) -> String {
    let mut safe = String::new();
    for c in id.chars() {
        if c.is_control() || c.is_whitespace() || r#"\/:*?"<>|"#.contains(c) {
            if !safe.ends_with('-') {
                safe.push('-');
            }
        } else {
            safe.push(c);
        }
    }
    if safe.trim_matches(['-', '.']).is_empty() {
        safe = "export".into();
    }
    safe + suffix(format)
}

fn suffix(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Native => ".json",
        ExportFormat::SillyTavernPreset => ".st-preset.json",
        ExportFormat::SillyTavernCard => ".card.json",
        ExportFormat::SillyTavernWorldInfo => ".world-info.json",
    }
}
