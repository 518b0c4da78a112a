//! A session's summary and long-term memory in the app (RULES 5.15, 9.9): the summaries with the
//! range each covers, edited and restored; one made now through a connection; the index's status
//! and indexing through a connection's embeddings endpoint, its progress sent as it goes.
//!
//! What goes to the network (a summary, indexing) runs on a connection of its own to the
//! database, so that the app's store stays free for the preview and for saves meanwhile; the
//! library keeps every batch of vectors as it comes, so closing the app loses nothing finished.

use std::collections::HashSet;
use std::sync::Mutex;

use promptloom_engine::model::{parse_preset, AgentPreset};
use promptloom_engine::{codes, texts};
use promptloom_library::keychain::OsKeychain;
use promptloom_library::memory::{self, Embedder, Recall};
use promptloom_library::{connections, summary};
use promptloom_store::summaries::SummaryRecord;
use promptloom_store::Store;
use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;
use crate::state::{AppState, RecallKey};

/// One summary of a session, as the summary editor shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    pub id: u32,
    pub text: String,
    /// The stored positions of the first and last message it covers.
    pub first_position: u32,
    pub last_position: u32,
    /// The connection and model that wrote it.
    pub connection: Option<String>,
    pub model: Option<String>,
    /// Changed by hand.
    pub edited: bool,
    /// The one in use: its text is the session's summary.
    pub current: bool,
    /// Milliseconds since 1970.
    pub created_at: f64,
}

impl From<SummaryRecord> for SummaryView {
    fn from(r: SummaryRecord) -> Self {
        SummaryView {
            id: u32::try_from(r.id).unwrap_or(u32::MAX),
            text: r.text,
            first_position: r.first_position,
            last_position: r.last_position,
            connection: r.connection,
            model: r.model,
            edited: r.edited,
            current: r.current,
            created_at: r.created_at as f64,
        }
    }
}

/// How far a session's long-term memory is indexed.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStatus {
    /// The embeddings model and the connection its vectors were made with; none before the
    /// first indexing.
    pub model: Option<String>,
    pub connection: Option<String>,
    /// How many numbers each vector has.
    pub dim: u32,
    /// Messages with a vector for their current text, of `messages` that have text.
    pub indexed: u32,
    pub messages: u32,
    /// Messages still to embed (new or edited since).
    pub pending: u32,
}

/// Indexing's progress, after each batch kept.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct IndexProgress {
    pub done: u32,
    pub total: u32,
}

/// What indexing did.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct IndexDone {
    pub model: String,
    pub dim: u32,
    pub embedded: u32,
    pub unchanged: u32,
    pub removed: u32,
    /// Vectors of another model removed first: the session was indexed again from nothing.
    pub stale: u32,
}

/// Every summary of session `session_id`, newest first.
#[tauri::command]
#[specta::specta]
pub async fn session_summaries(
    app: AppHandle,
    session_id: String,
) -> Result<Vec<SummaryView>, AppError> {
    blocking(app, move |s| summaries_of(s, &session_id)).await
}

fn summaries_of(s: &AppState, session_id: &str) -> Result<Vec<SummaryView>, AppError> {
    Ok(s.store()?
        .summaries(session_id)?
        .into_iter()
        .map(SummaryView::from)
        .collect())
}

/// The current summary changed by hand: kept as a new summary over the same range, marked
/// edited (the one it replaces stays, to restore).
#[tauri::command]
#[specta::specta]
pub async fn edit_summary(
    app: AppHandle,
    session_id: String,
    text: String,
) -> Result<SummaryView, AppError> {
    blocking(app, move |s| {
        let edited = summary::edit(&*s.store()?, &session_id, &text)?;
        s.forget_session(&session_id)?;
        Ok(edited.into())
    })
    .await
}

/// Makes summary `id` of session `session_id` the current one again.
#[tauri::command]
#[specta::specta]
pub async fn restore_summary(
    app: AppHandle,
    session_id: String,
    id: u32,
) -> Result<SummaryView, AppError> {
    blocking(app, move |s| {
        let restored = s.store()?.restore_summary(&session_id, i64::from(id))?;
        s.forget_session(&session_id)?;
        Ok(restored.into())
    })
    .await
}

/// Makes the next summary of session `session_id` through connection `connection` (with
/// `model`, else the connection's default) and the summary prompt of stored preset `preset_id`
/// (the shipped one without), and keeps it as the current summary.
#[tauri::command]
#[specta::specta]
pub async fn summarize_session(
    app: AppHandle,
    session_id: String,
    connection: String,
    model: Option<String>,
    preset_id: Option<String>,
) -> Result<SummaryView, AppError> {
    blocking(app, move |s| {
        summarize_in(s, &session_id, &connection, model, preset_id.as_deref())
    })
    .await
}

fn summarize_in(
    s: &AppState,
    session_id: &str,
    name: &str,
    model: Option<String>,
    preset_id: Option<&str>,
) -> Result<SummaryView, AppError> {
    let store = own_store(s)?;
    let preset = match preset_id {
        Some(id) => store.get_preset(id)?,
        None => no_preset()?,
    };
    let connection = connections::get(&store, name)?;
    let key = connections::require_key(&connection, &OsKeychain)?;
    let model = model
        .filter(|m| !m.trim().is_empty())
        .or_else(|| connection.default_model.clone())
        .ok_or_else(|| {
            AppError::new(
                codes::INVALID_CONNECTION,
                format!(
                    "connection \"{name}\" has no default model: name the model to summarize with"
                ),
            )
        })?;
    let made = tauri::async_runtime::block_on(summary::summarize(
        &store,
        session_id,
        &preset,
        &connection,
        key,
        &model,
        true,
    ))?;
    s.forget_session(session_id)?;
    Ok(made.into())
}

/// A preset without settings of its own: the shipped summary prompt.
fn no_preset() -> Result<AgentPreset, AppError> {
    Ok(parse_preset(
        r#"{"formatVersion": 1, "id": "default", "name": "Default",
            "messageTemplates": [], "contextRecipes": []}"#,
    )?)
}

/// How much of session `session_id` is indexed, with which model and connection.
#[tauri::command]
#[specta::specta]
pub async fn memory_status(app: AppHandle, session_id: String) -> Result<MemoryStatus, AppError> {
    blocking(app, move |s| status_of(&*s.store()?, &session_id)).await
}

fn status_of(store: &Store, session_id: &str) -> Result<MemoryStatus, AppError> {
    let status = memory::index_status(store, session_id)?;
    let state = store.memory_state(session_id)?;
    Ok(MemoryStatus {
        model: status.model,
        connection: state.as_ref().and_then(|s| s.connection.clone()),
        dim: state.map_or(0, |s| s.dim),
        indexed: (status.messages - status.pending) as u32,
        messages: status.messages as u32,
        pending: status.pending as u32,
    })
}

/// Embeds the messages of session `session_id` that have no vector for their text through
/// `connection`'s embeddings endpoint (`model`, else the connection's default), a batch at a
/// time, each kept as it comes; `progress` hears after each. Another model than the index's
/// indexes the session again from nothing.
#[tauri::command]
#[specta::specta]
pub async fn index_memory(
    app: AppHandle,
    session_id: String,
    connection: String,
    model: Option<String>,
    progress: Channel<IndexProgress>,
) -> Result<IndexDone, AppError> {
    blocking(app, move |s| {
        index_in(s, &session_id, &connection, model, |done, total| {
            let _ = progress.send(IndexProgress {
                done: done as u32,
                total: total as u32,
            });
        })
    })
    .await
}

fn index_in(
    s: &AppState,
    session_id: &str,
    name: &str,
    model: Option<String>,
    progress: impl FnMut(usize, usize),
) -> Result<IndexDone, AppError> {
    let store = own_store(s)?;
    let connection = connections::get(&store, name)?;
    let key = connections::require_key(&connection, &OsKeychain)?;
    let model = model.filter(|m| !m.trim().is_empty());
    let embedder = Embedder::new(connection, key, model);
    let report = tauri::async_runtime::block_on(memory::index_session(
        &store, session_id, &embedder, progress,
    ))?;
    Ok(IndexDone {
        model: report.model,
        dim: report.dim,
        embedded: report.embedded as u32,
        unchanged: report.unchanged as u32,
        removed: report.removed as u32,
        stale: report.stale as u32,
    })
}

/// A connection of its own to the app's database, for work that waits on the network.
fn own_store(s: &AppState) -> Result<Store, AppError> {
    let path = s.store()?.path().map(std::path::Path::to_path_buf);
    let path = path
        .ok_or_else(|| AppError::new(codes::DATABASE, "the database has no file to open again"))?;
    Ok(Store::open(&path)?)
}

/// The current summary of stored session `session`, when its text is the session's summary.
pub(super) fn summary_in_use(
    s: &AppState,
    session: &promptloom_engine::model::Session,
) -> Result<Option<SummaryView>, AppError> {
    if session.summary.is_none() {
        return Ok(None);
    }
    // Not a stored session (none picked): it has none.
    let current = s.store()?.current_summary(&session.id).unwrap_or_default();
    Ok(current
        .filter(|c| session.summary.as_deref() == Some(c.text.as_str()))
        .map(SummaryView::from))
}

/// The build options memory gives a build over stored session `request.session_id` (RULES
/// 5.15): the position the current summary covers, and what long-term memory recalls for the
/// input. Memory is searched only when the session was indexed (through the connection the
/// index names, with its model), the `memory` processor is on and there is an input; the
/// search has its time limit, and when it runs out or fails the build goes on without memory
/// and warns why. The last search is kept: an edit of the preset does not embed the input again.
pub(super) fn memory_options(
    s: &AppState,
    request: &super::preview::PreviewRequest,
    session: &promptloom_engine::model::Session,
    profiles: &[promptloom_engine::profiles::ModelProfile],
    options: &mut promptloom_engine::BuildOptions,
) -> Result<(), AppError> {
    let Some(id) = request.session_id.as_deref() else {
        return Ok(());
    };
    let (current, state) = {
        let store = s.store()?;
        (store.current_summary(id)?, store.memory_state(id)?)
    };
    options.summarized_through = summary::summarized_through(session, current.as_ref());
    let input = options.input.clone().unwrap_or_default();
    let Some((state, name)) = state.and_then(|st| st.connection.clone().map(|c| (st, c))) else {
        return Ok(());
    };
    if input.trim().is_empty() || !memory::processor_on(&request.preset, &request.model, profiles) {
        return Ok(());
    }
    let key = RecallKey {
        session: id.to_string(),
        input,
        connection: name.clone(),
        model: state.model.clone(),
        revision: state.revision,
    };
    let found = {
        let kept = s.recalled.lock().unwrap_or_else(|e| e.into_inner());
        kept.as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, r)| r.clone())
    };
    let found = match found {
        Some(found) => found,
        None => {
            let found = recall(s, &key, session)?;
            *s.recalled.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, found.clone()));
            found
        }
    };
    options.memory = found.hits;
    options.memory_skipped = found.skipped;
    Ok(())
}

/// One search of `key.session`'s memory, on the app's second connection to the database (the
/// first stays free while the input is embedded). A connection or key that cannot be had is a
/// search skipped, said in the build's warning, not an error of the preview.
fn recall(
    s: &AppState,
    key: &RecallKey,
    session: &promptloom_engine::model::Session,
) -> Result<Recall, AppError> {
    let skipped = |why: String| Recall {
        skipped: Some(texts::MEMORY_SKIP_CONNECTION.with("why", why)),
        ..Recall::default()
    };
    let connection = match connections::get(&*s.store()?, &key.connection) {
        Ok(c) => c,
        Err(e) => return Ok(skipped(e.to_string())),
    };
    let api_key = match connections::require_key(&connection, &OsKeychain) {
        Ok(k) => k,
        Err(e) => return Ok(skipped(e.to_string())),
    };
    let embedder = Embedder::new(connection, api_key, Some(key.model.clone()));
    let mut second = s.memory_store.lock().unwrap_or_else(|e| e.into_inner());
    if second.is_none() {
        *second = Some(own_store(s)?);
    }
    let Some(store) = second.as_ref() else {
        return Ok(Recall::default());
    };
    Ok(tauri::async_runtime::block_on(memory::recall(
        store,
        &s.memory,
        session,
        &embedder,
        &key.input,
        &memory::MemorySettings::default(),
    )))
}

/// What the page hears of a summary made in the background after a reply (RULES 9.9): that it
/// runs, then the summary made or the error.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
#[serde(rename_all = "camelCase")]
pub struct SummaryUpdate {
    pub session_id: String,
    pub running: bool,
    pub summary: Option<SummaryView>,
    pub error: Option<AppError>,
}

/// After a reply was stored in `session` by a send through `connection` with `model`: starts
/// the automatic summary update in the background when the preset turns it on and one is due
/// (RULES 5.15); the send does not wait for it.
pub(super) fn start_auto_summary(app: &AppHandle, after: AutoSummary) {
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        use tauri::Manager as _;
        use tauri_specta::Event as _;
        let Ok(s) = &app.state::<crate::state::Startup>().0 else {
            return;
        };
        auto_summary(s, after, |update| {
            if let Err(e) = update.emit(&app) {
                eprintln!("promptloom: a summary update could not be shown: {e}");
            }
        });
    });
}

/// What an automatic summary is made from: the session as stored after the reply, the preset
/// it was built with, the connection, key and model the send used, and whether that build's
/// token limiter dropped history.
pub(super) struct AutoSummary {
    pub session: promptloom_engine::model::Session,
    pub preset: std::sync::Arc<AgentPreset>,
    pub connection: promptloom_send::Connection,
    pub key: Option<promptloom_send::ApiKey>,
    pub model: String,
    pub limiter_dropped: bool,
}

/// Makes the automatic summary when it is on and due and no other summary of the session is
/// being made in the background; `heard` hears that it runs and how it ended. Whether one was
/// made (or tried).
pub(super) fn auto_summary(
    s: &AppState,
    after: AutoSummary,
    mut heard: impl FnMut(SummaryUpdate),
) -> bool {
    let settings = summary::SummarySettings::of(&after.preset);
    if !settings.auto {
        return false;
    }
    let id = after.session.id.clone();
    let update = |running, summary, error| SummaryUpdate {
        session_id: id.clone(),
        running,
        summary,
        error,
    };
    let current = match s.store().and_then(|st| Ok(st.current_summary(&id)?)) {
        Ok(current) => current,
        Err(e) => {
            heard(update(false, None, Some(e)));
            return true;
        }
    };
    if !summary::is_due(
        &after.session,
        current.as_ref(),
        &settings,
        after.limiter_dropped,
    ) {
        return false;
    }
    let Some(claim) = Claim::take(&s.summarizing, &id) else {
        return false;
    };
    heard(update(true, None, None));
    let made = (|| {
        let store = own_store(s)?;
        let made = tauri::async_runtime::block_on(summary::summarize(
            &store,
            &id,
            &after.preset,
            &after.connection,
            after.key,
            &after.model,
            true,
        ))?;
        s.forget_session(&id)?;
        Ok::<_, AppError>(SummaryView::from(made))
    })();
    drop(claim);
    match made {
        Ok(view) => heard(update(false, Some(view), None)),
        Err(e) => heard(update(false, None, Some(e))),
    }
    true
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;

/// A session claimed for an automatic summary: given back when dropped, also when the summary's
/// task panics, so that the session can be summarised again.
pub(super) struct Claim<'a> {
    claims: &'a Mutex<HashSet<String>>,
    id: String,
}

impl<'a> Claim<'a> {
    /// Claims session `id`; `None` while another claim holds it.
    pub(super) fn take(claims: &'a Mutex<HashSet<String>>, id: &str) -> Option<Self> {
        let mut held = claims.lock().unwrap_or_else(|e| e.into_inner());
        held.insert(id.to_string()).then(|| Claim {
            claims,
            id: id.to_string(),
        })
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.claims
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}
