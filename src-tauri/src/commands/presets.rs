//! Presets: the list, the editor's open and save, and creating, duplicating, renaming and
//! deleting one, or restoring the built-in ones.

use promptloom_engine::codes;
use promptloom_engine::model::AgentPreset;
use promptloom_library::presets;
use serde::Serialize;
use tauri::AppHandle;

use super::{blocking, ListItem};
use crate::error::AppError;

#[tauri::command]
#[specta::specta]
pub async fn list_presets(app: AppHandle) -> Result<Vec<ListItem>, AppError> {
    blocking(app, |s| {
        Ok(s.store()?
            .list_presets()?
            .into_iter()
            .map(ListItem::from)
            .collect())
    })
    .await
}

/// A preset as the editor opens it: with the revision it is at, which its saves name.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct OpenedPreset {
    pub preset: AgentPreset,
    pub revision: u32,
}

#[tauri::command]
#[specta::specta]
pub async fn get_preset(app: AppHandle, id: String) -> Result<OpenedPreset, AppError> {
    blocking(app, move |s| {
        let (preset, revision) = s.store()?.get_preset_with_revision(&id)?;
        Ok(OpenedPreset {
            preset,
            revision: wire_revision(revision),
        })
    })
    .await
}

/// Saves an edited preset (autosave) over `revision`, the one it was opened at, and returns the
/// new revision. When another program saved it meanwhile (`promptloom import --into`), nothing
/// is written and the error's code is `conflict`; without a revision it is saved over whatever
/// is stored (the user chose to keep their version). A preset that does not pass validation is
/// refused and the stored one stays as it was.
#[tauri::command]
#[specta::specta]
pub async fn save_preset(
    app: AppHandle,
    preset: AgentPreset,
    revision: Option<u32>,
) -> Result<u32, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let saved = match revision {
            Some(r) => store.save_preset_at(&preset, i64::from(r))?,
            None => store.save_preset(&preset)?,
        };
        Ok(wire_revision(saved))
    })
    .await
}

/// A revision as the UI holds it: a count of saves, which stays far below `u32::MAX`.
fn wire_revision(revision: i64) -> u32 {
    u32::try_from(revision).unwrap_or(u32::MAX)
}

/// A new preset named `name`: a system prompt and the chat history in one recipe for every model.
#[tauri::command]
#[specta::specta]
pub async fn create_preset(app: AppHandle, name: String) -> Result<AgentPreset, AppError> {
    blocking(app, move |s| Ok(presets::create(&*s.store()?, &name)?)).await
}

#[tauri::command]
#[specta::specta]
pub async fn duplicate_preset(
    app: AppHandle,
    id: String,
    name: String,
) -> Result<AgentPreset, AppError> {
    blocking(app, move |s| {
        Ok(presets::duplicate(&*s.store()?, &id, &name)?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn rename_preset(app: AppHandle, id: String, name: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        if name.trim().is_empty() {
            return Err(AppError::new(codes::INVALID_NAME, "a preset needs a name"));
        }
        Ok(s.store()?.rename_preset(&id, name.trim())?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_preset(app: AppHandle, id: String) -> Result<(), AppError> {
    blocking(app, move |s| Ok(s.store()?.delete_preset(&id)?)).await
}

/// Puts every built-in preset back as shipped (RULES 9.1); returns their ids.
#[tauri::command]
#[specta::specta]
pub async fn restore_builtin_presets(app: AppHandle) -> Result<Vec<String>, AppError> {
    blocking(app, |s| Ok(presets::restore_builtins(&*s.store()?)?)).await
}
