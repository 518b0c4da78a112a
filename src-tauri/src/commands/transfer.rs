//! Files in and out: import through the native open dialog or a file dropped on the window, and
//! export through the native save dialog. The dialogs open here, in Rust, and paths stay here:
//! the page names a chosen file by the number it was given, and an export by what to write, so a
//! page that misbehaved could still read or write no file the user did not pick.

use std::path::PathBuf;

use promptloom_engine::codes;
use promptloom_engine::model::AgentPreset;
use promptloom_engine::Said;
use promptloom_import::{texts, Imported};
use promptloom_library::export::{self, ExportFormat};
use promptloom_library::files::write_atomically;
use promptloom_library::{import_into, ImportTarget, LorebookMode, Place};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};

use super::blocking;
use crate::dialogs;
use crate::error::AppError;
use crate::state::ChosenFiles;

/// A file the user chose for import, by the open dialog or by dropping it on the window. The page
/// names it by `id`; only its file name crosses to the page, for the dialog to show.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type)]
pub struct ChosenFile {
    pub id: u32,
    pub name: String,
}

impl From<(u32, String)> for ChosenFile {
    fn from((id, name): (u32, String)) -> Self {
        ChosenFile { id, name }
    }
}

/// A file was dropped on the window; the page shows what it would import.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct FileDropped {
    pub file: ChosenFile,
}

/// The titles of a native dialog, in the UI's language.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct DialogText {
    pub title: String,
    /// The name of the file type filter.
    pub filter: String,
}

/// Opens the native open dialog; the chosen file, or none when the user cancelled.
#[tauri::command]
#[specta::specta]
pub async fn choose_import_file(
    app: AppHandle,
    text: DialogText,
) -> Result<Option<ChosenFile>, AppError> {
    let handle = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let path = dialogs::pick_file(&handle, &text.title, &text.filter)?;
        Ok(path.map(|p| ChosenFile::from(handle.state::<ChosenFiles>().add(p))))
    })
    .await
    .map_err(|e| AppError::new(codes::INTERNAL, format!("a background task failed: {e}")))?
}

/// A file dropped on the window is chosen like one picked in the dialog; the page hears of it.
pub fn file_dropped(app: &AppHandle, paths: &[PathBuf]) {
    use tauri_specta::Event as _;
    let Some(path) = paths.first() else {
        return;
    };
    let file = ChosenFile::from(app.state::<ChosenFiles>().add(path.clone()));
    if let Err(e) = (FileDropped { file }).emit(app) {
        eprintln!("promptloom: a dropped file could not be shown: {e}");
    }
}

/// What a file would bring in, read and mapped but not saved: the user sees it first.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    /// The format recognised, in words (`SillyTavern chat-completion preset`).
    pub format: String,
    /// The same, said in the UI's language.
    pub format_said: Said,
    /// `preset`, `character`, `lorebook`, `regexRules` or `session`.
    pub kind: String,
    /// The name or id of what would be created.
    pub name: String,
    /// The name when it is a count (`3 entries`), said in the UI's language.
    pub name_said: Option<Said>,
    /// Lorebooks and regex rules go into an existing preset.
    pub needs_preset: bool,
    /// Everything the importer could not map, item by item.
    pub not_mapped: Vec<NotMapped>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct NotMapped {
    pub item: String,
    /// In English.
    pub message: String,
    /// The same as a code with parameters, which the page says in its language.
    pub said: Said,
}

impl From<promptloom_import::ReportItem> for NotMapped {
    fn from(i: promptloom_import::ReportItem) -> Self {
        NotMapped {
            item: i.item,
            message: i.message,
            said: i.said,
        }
    }
}

/// `n` things, said with `one` or `many`.
fn counted(
    n: usize,
    one: promptloom_engine::said::Text,
    many: promptloom_engine::said::Text,
) -> Said {
    if n == 1 { one } else { many }.with("count", n)
}

/// What a report lists as not mapped, for the page.
fn not_mapped(report: promptloom_import::ImportReport) -> Vec<NotMapped> {
    report.items.into_iter().map(NotMapped::from).collect()
}

/// Reads and maps chosen file `file` (a native preset, a SillyTavern preset, card, world info,
/// regex scripts or chat) without saving anything.
#[tauri::command]
#[specta::specta]
pub async fn inspect_import(app: AppHandle, file: u32) -> Result<ImportPreview, AppError> {
    let path = app.state::<ChosenFiles>().path(file)?;
    blocking(app, move |_| {
        let reported = promptloom_import::import_file(&path)?;
        let name_said: Option<Said> = match &reported.value {
            Imported::Lorebook { lorebook } => Some(counted(
                lorebook.entries.len(),
                texts::NAME_ENTRY,
                texts::NAME_ENTRIES,
            )),
            Imported::RegexRules { rules } => {
                Some(counted(rules.len(), texts::NAME_RULE, texts::NAME_RULES))
            }
            _ => None,
        };
        let name = match &reported.value {
            Imported::Preset { preset } => preset.name.clone(),
            Imported::Character(card) => card.character.name.clone(),
            Imported::Session { session } => {
                session.title.clone().unwrap_or_else(|| session.id.clone())
            }
            // Settings have no name of their own: the file's says which they are.
            Imported::WorldInfoSettings { .. } => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Imported::InstructTemplate { template } => template.name.clone(),
            Imported::SystemPrompt { prompt } => prompt.name.clone(),
            _ => name_said.as_ref().map(Said::to_string).unwrap_or_default(),
        };
        Ok(ImportPreview {
            format: reported.report.format.clone(),
            format_said: reported.report.format_said.clone(),
            name_said,
            kind: reported.value.kind().to_string(),
            name,
            needs_preset: matches!(
                reported.value,
                Imported::Lorebook { .. }
                    | Imported::RegexRules { .. }
                    | Imported::WorldInfoSettings { .. }
                    | Imported::InstructTemplate { .. }
                    | Imported::SystemPrompt { .. }
            ),
            not_mapped: not_mapped(reported.report),
        })
    })
    .await
}

/// What world info does to a preset that has a lorebook already.
#[derive(Debug, Clone, Copy, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub enum LorebookChoice {
    Replace,
    Merge,
}

/// What an import created or changed.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ImportOutcome {
    /// `preset` or `session`: which list to refresh and what to open.
    pub kind: String,
    pub id: String,
    /// What the import did beyond the mapping: a lorebook replaced, ids renamed, duplicates
    /// skipped. In English.
    pub notes: Vec<String>,
    /// The same notes as codes with parameters, which the page says in its language.
    pub notes_said: Vec<Said>,
}

/// Imports chosen file `file` into the database: a preset or card becomes a new preset, a chat a
/// new session (never over an existing id); world info and regex scripts go into preset `into`.
#[tauri::command]
#[specta::specta]
pub async fn import_file(
    app: AppHandle,
    file: u32,
    into: Option<String>,
    lorebook: LorebookChoice,
) -> Result<ImportOutcome, AppError> {
    let path = app.state::<ChosenFiles>().path(file)?;
    blocking(app, move |s| {
        // Read and map before the database is touched: bad input writes nothing.
        let reported = promptloom_import::import_file(&path)?;
        let target = ImportTarget {
            into: into.as_deref(),
            lorebook: match lorebook {
                LorebookChoice::Replace => LorebookMode::Replace,
                LorebookChoice::Merge => LorebookMode::Merge,
            },
        };
        let outcome = import_into(&*s.store()?, reported.value, target)?;
        let (kind, id) = match outcome.place {
            Place::Preset { id, .. } => ("preset", id),
            Place::Session { id } => ("session", id),
        };
        Ok(ImportOutcome {
            kind: kind.to_string(),
            id,
            notes: outcome.notes,
            notes_said: outcome.notes_said,
        })
    })
    .await
}

/// Where an export went and what its format could not hold.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    /// The file written, to show.
    pub path: String,
    pub not_mapped: Vec<NotMapped>,
}

/// Asks where to write `preset` in `format` (the native save dialog), then writes it there and
/// returns what the format could not hold; none when the user cancelled. Nothing is asked or
/// written when the preset has nothing to export in that format. The file is written whole or not
/// at all: a failed write leaves the file that was there.
#[tauri::command]
#[specta::specta]
pub async fn export_preset(
    app: AppHandle,
    preset: AgentPreset,
    format: ExportFormat,
    text: DialogText,
) -> Result<Option<Exported>, AppError> {
    let handle = app.clone();
    blocking(app, move |_| {
        let export = export::preset(&preset, format)?;
        let name = export::file_name(&preset.id, format);
        let Some(path) = dialogs::save_file(&handle, &text.title, &text.filter, &name)? else {
            return Ok(None);
        };
        write(&path, &export.text)?;
        Ok(Some(Exported {
            path: path.display().to_string(),
            not_mapped: export.not_mapped.into_iter().map(NotMapped::from).collect(),
        }))
    })
    .await
}

/// Asks where to write session `id`, then writes it there as native JSON; none when the user
/// cancelled.
#[tauri::command]
#[specta::specta]
pub async fn export_session(
    app: AppHandle,
    id: String,
    text: DialogText,
) -> Result<Option<Exported>, AppError> {
    let handle = app.clone();
    blocking(app, move |s| {
        let export = export::session(&s.store()?.get_session(&id)?);
        let name = export::file_name(&id, ExportFormat::Native);
        let Some(path) = dialogs::save_file(&handle, &text.title, &text.filter, &name)? else {
            return Ok(None);
        };
        write(&path, &export.text)?;
        Ok(Some(Exported {
            path: path.display().to_string(),
            not_mapped: Vec::new(),
        }))
    })
    .await
}

fn write(path: &std::path::Path, text: &str) -> Result<(), AppError> {
    write_atomically(path, text.as_bytes())
        .map_err(|e| AppError::new(codes::IO, format!("cannot write {}: {e}", path.display())))
}
