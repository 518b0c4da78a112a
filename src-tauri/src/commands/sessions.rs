//! Sessions: the list, and opening, saving, creating and deleting one.

use promptloom_engine::model::Session;
use tauri::AppHandle;

use super::{blocking, slug, ListItem};
use crate::error::AppError;

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

#[tauri::command]
#[specta::specta]
pub async fn create_session(app: AppHandle, title: String) -> Result<Session, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let id = store.free_session_id(&slug(&title, "session"))?;
        let session = Session {
            format_version: 1,
            id,
            title: Some(title),
            user_profile: None,
            summary: None,
            messages: Vec::new(),
        };
        store.save_session(&session)?;
        Ok(session)
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
