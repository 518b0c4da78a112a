//! What the app holds while it runs: the store, the shared token cache, the sessions already
//! read and the preset the preview builds, so a preview after each keystroke neither rereads a
//! long session nor recounts it, nor receives the whole preset again.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use promptloom_engine::cache::BuildCache;
use promptloom_engine::codes;
use promptloom_engine::model::Session;
use promptloom_library::drafts::Drafts;
use promptloom_library::memory::{MemoryCache, Recall};
use promptloom_store::Store;

use crate::error::AppError;

/// The app state, or why it could not be opened.
pub struct Startup(pub Result<AppState, AppError>);

pub struct AppState {
    store: Mutex<Store>,
    pub cache: BuildCache,
    /// The preset the live preview builds, changed by each edit (`preview_draft`).
    pub drafts: Drafts,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Long-term memory (RULES 5.15): the sessions' vectors read once, and the last search, so
    /// that a preview after an edit of the preset does not embed the same input again.
    pub memory: MemoryCache,
    pub recalled: Mutex<Option<(RecallKey, Recall)>>,
    /// A second connection to the database, for the memory search: the first stays free while
    /// the input is being embedded.
    pub memory_store: Mutex<Option<Store>>,
    /// The sessions whose summary is being made in the background: one at a time each.
    pub summarizing: Mutex<HashSet<String>>,
}

/// What a search depends on: the session, the input, and the index and connection searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallKey {
    pub session: String,
    pub input: String,
    pub connection: String,
    pub model: String,
    pub revision: i64,
}

impl AppState {
    /// Opens (or creates) the database at `path` and installs the built-in presets and the example
    /// session on first start.
    pub fn open(path: &std::path::Path) -> Result<AppState, AppError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                AppError::new(
                    codes::DATABASE,
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
            drafts: Drafts::new(),
            sessions: Mutex::new(HashMap::new()),
            memory: MemoryCache::new(),
            recalled: Mutex::new(None),
            memory_store: Mutex::new(None),
            summarizing: Mutex::new(HashSet::new()),
        })
    }

    pub fn store(&self) -> Result<MutexGuard<'_, Store>, AppError> {
        self.store
            .lock()
            .map_err(|_| AppError::new(codes::INTERNAL, "the database lock was poisoned"))
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
        // Its messages changed: what memory recalled may be stale.
        let _ = self
            .recalled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take_if(|(k, _)| k.session == id);
        Ok(())
    }

    fn cached_sessions(&self) -> Result<MutexGuard<'_, HashMap<String, Arc<Session>>>, AppError> {
        self.sessions
            .lock()
            .map_err(|_| AppError::new(codes::INTERNAL, "the session cache lock was poisoned"))
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
            codes::DATABASE,
            "cannot find the app data folder (no HOME or XDG_DATA_HOME); set PROMPTLOOM_DB",
        )
    })
}

/// The files the user chose for import (the open dialog, a file dropped on the window), by the
/// number the page knows them by. Only these paths are ever read for an import.
#[derive(Default)]
pub struct ChosenFiles(Mutex<(u32, Vec<(u32, PathBuf)>)>);

/// How many chosen files are remembered: the dialog shows one at a time.
const CHOSEN_KEPT: usize = 16;

impl ChosenFiles {
    /// Remembers `path`; its number and its file name, which the page may see.
    pub fn add(&self, path: PathBuf) -> (u32, String) {
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (next, files) = &mut *guard;
        *next += 1;
        let id = *next;
        if files.len() >= CHOSEN_KEPT {
            files.remove(0);
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        files.push((id, path));
        (id, name)
    }

    /// The path of chosen file `id`.
    pub fn path(&self, id: u32) -> Result<PathBuf, AppError> {
        let guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .1
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, p)| p.clone())
            .ok_or_else(|| {
                AppError::new(
                    codes::NOT_FOUND,
                    "that file is no longer chosen; choose it again",
                )
            })
    }
}

/// The send under way, if any, so that Stop can end it. One at a time: the page sends one reply
/// after another.
#[derive(Default)]
pub struct Sending(Mutex<Option<promptloom_send::CancellationToken>>);

impl Sending {
    pub fn start(&self, cancel: promptloom_send::CancellationToken) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(cancel);
    }

    pub fn finish(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// Stops the send under way; what arrived is kept.
    pub fn stop(&self) {
        if let Some(cancel) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            cancel.cancel();
        }
    }
}
