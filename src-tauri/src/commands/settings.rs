//! The user's settings, and the models the pickers offer (with those of the user's model
//! profiles).

use promptloom_engine::profiles::{ModelProfile, KNOWN_MODELS};
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;

/// The model ids the pickers offer, and the profiles the user added.
#[tauri::command]
#[specta::specta]
pub async fn known_models(app: AppHandle) -> Result<Vec<String>, AppError> {
    blocking(app, |s| {
        let mut models: Vec<String> = KNOWN_MODELS.iter().map(|m| m.to_string()).collect();
        let user: Vec<ModelProfile> = s.store()?.model_profiles()?;
        for p in user {
            for pattern in p.patterns {
                if !pattern.contains('*') && !models.contains(&pattern) {
                    models.push(pattern);
                }
            }
        }
        Ok(models)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn get_setting(app: AppHandle, key: String) -> Result<Option<String>, AppError> {
    blocking(app, move |s| Ok(s.store()?.setting(&key)?)).await
}

#[tauri::command]
#[specta::specta]
pub async fn set_setting(app: AppHandle, key: String, value: String) -> Result<(), AppError> {
    blocking(app, move |s| Ok(s.store()?.set_setting(&key, &value)?)).await
}
