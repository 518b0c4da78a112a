//! Sessions: the list, and opening, saving, creating and deleting one.

use promptloom_engine::model::Session;
use tauri::AppHandle;

use super::{blocking, ListItem};
use crate::error::AppError;
use promptloom_library::sessions;

#[tauri::command]
#[specta::specta]
pub async fn list_sessions(app: AppHandle) -> Result<Vec<ListItem>, AppError> {
    blocking(app, |s| {
        Ok(s.store()?
            .list_sessions()?
            .into_iter()
            .map(ListItem::from)
            .collect())
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn get_session(app: AppHandle, id: String) -> Result<Session, AppError> {
    blocking(app, move |s| Ok((*s.session(&id)?).clone())).await
}

#[tauri::command]
#[specta::specta]
pub async fn save_session(app: AppHandle, session: Session) -> Result<(), AppError> {
    blocking(app, move |s| {
        s.forget_session(&session.id)?;
        Ok(s.store()?.save_session(&session)?)
    })
    .await
}

/// A new chat titled `title`: for `preset`, when one is named, it opens with the character's
/// greeting.
#[tauri::command]
#[specta::specta]
pub async fn create_session(
    app: AppHandle,
    title: String,
    preset: Option<String>,
) -> Result<Session, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let preset = preset.map(|id| store.get_preset(&id)).transpose()?;
        Ok(sessions::create(&store, &title, preset.as_ref())?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_session(app: AppHandle, id: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        s.forget_session(&id)?;
        Ok(s.store()?.delete_session(&id)?)
    })
    .await
}
