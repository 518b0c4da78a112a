//! What the app holds while it runs: the store, the shared token cache and the sessions already
//! read, so a preview after each keystroke neither rereads a long session nor recounts it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::Session;
use promptloom_store::Store;

use crate::error::AppError;

/// The app state, or why it could not be opened.
pub struct Startup(pub Result<AppState, AppError>);

pub struct AppState {
    store: Mutex<Store>,
    pub cache: BuildCache,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

impl AppState {
    /// Opens (or creates) the database at `path` and installs the built-in presets and the example
    /// session on first start.
    pub fn open(path: &std::path::Path) -> Result<AppState, AppError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                AppError::new(
                    "database",
                    format!("cannot create the folder {}: {e}", parent.display()),
                )
            })?;
        }
        let store = Store::open(path)?;
        store.install_builtin_presets(promptloom_store::builtin_presets())?;
        store.install_builtin_sessions(promptloom_store::builtin_sessions())?;
        Ok(AppState {
            store: Mutex::new(store),
            cache: BuildCache::new(),
            sessions: Mutex::new(HashMap::new()),
        })
    }

    pub fn store(&self) -> Result<MutexGuard<'_, Store>, AppError> {
        self.store
            .lock()
            .map_err(|_| AppError::new("internal", "the database lock was poisoned"))
    }

    /// The session `id`, read once and then kept until it is saved or deleted.
    pub fn session(&self, id: &str) -> Result<Arc<Session>, AppError> {
        if let Some(s) = self.cached_sessions()?.get(id) {
            return Ok(s.clone());
        }
        let session = Arc::new(self.store()?.get_session(id)?);
        self.cached_sessions()?
            .insert(id.to_string(), session.clone());
        Ok(session)
    }

    pub fn forget_session(&self, id: &str) -> Result<(), AppError> {
        self.cached_sessions()?.remove(id);
        Ok(())
    }

    fn cached_sessions(&self) -> Result<MutexGuard<'_, HashMap<String, Arc<Session>>>, AppError> {
        self.sessions
            .lock()
            .map_err(|_| AppError::new("internal", "the session cache lock was poisoned"))
    }
}

/// Where the app keeps its database: `PROMPTLOOM_DB` when set (tests, several profiles), else the
/// platform's app data folder.
pub fn database_path() -> Result<PathBuf, AppError> {
    if let Some(path) = std::env::var_os("PROMPTLOOM_DB") {
        return Ok(PathBuf::from(path));
    }
    promptloom_store::default_database_path().ok_or_else(|| {
        AppError::new(
            "database",
            "cannot find the app data folder (no HOME or XDG_DATA_HOME); set PROMPTLOOM_DB",
        )
    })
}
