//! The commands the UI calls. Each is thin: it runs off the main thread and hands the work to the
//! application layer (`promptloom-library`), the store or the engine. The UI reaches them only
//! through the generated `bindings.ts`.
//! They are grouped by domain, one module each; what several share lives here.

pub mod about;
pub mod changes;
pub mod connections;
pub mod instruct;
pub mod lorebook;
pub mod memory;
pub mod pipeline;
pub mod presets;
pub mod preview;
pub mod send;
pub mod sessions;
pub mod settings;
pub mod transfer;

use promptloom_engine::codes;
use serde::Serialize;
use tauri::{AppHandle, Manager};

use crate::error::AppError;
use crate::state::{AppState, Startup};

/// A preset or session in a list: its id, name and last change (milliseconds since 1970).
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ListItem {
    pub id: String,
    pub name: String,
    pub updated_at: f64,
}

impl From<promptloom_store::Listed> for ListItem {
    fn from(l: promptloom_store::Listed) -> Self {
        ListItem {
            id: l.id,
            name: l.name,
            updated_at: l.updated_at as f64,
        }
    }
}

/// Runs `work` on a blocking thread with the app state, so that the window never waits on SQLite
/// or a build.
pub(crate) async fn blocking<T, F>(app: AppHandle, work: F) -> Result<T, AppError>
where
    T: Send + 'static,
    F: FnOnce(&AppState) -> Result<T, AppError> + Send + 'static,
{
    tauri::async_runtime::spawn_blocking(move || match &app.state::<Startup>().0 {
        Ok(state) => work(state),
        Err(e) => Err(e.clone()),
    })
    .await
    .map_err(|e| AppError::new(codes::INTERNAL, format!("a background task failed: {e}")))?
}
