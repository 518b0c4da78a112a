//! Long-term memory (RULES 5.15): a session's messages embedded through a connection's
//! embeddings endpoint, the vectors kept in the store with the model that made them, and the
//! search a build runs with its input.
//!
//! - [`index_session`] embeds what is new or changed, in batches of [`INDEX_BATCH`], each kept in
//!   one transaction: killed half way, the next run resumes from what was kept. Another model
//!   than the index's re-indexes the session from nothing (the store never mixes two models).
//! - [`MemoryIndex`] is a session's vectors in memory, read once and read again only when the
//!   store's revision moved ([`MemoryCache`]); a search is a plain scan of normalized vectors
//!   (docs/PERFORMANCE.md, "Memory search", has the numbers that chose it).
//! - [`recall`] embeds the input under a time limit and returns the hits for a build's
//!   [`BuildOptions::memory`]; when the limit runs out or the endpoint fails, the build goes on
//!   without memory and says why ([`BuildOptions::memory_skipped`]).
//!
//! [`BuildOptions::memory`]: promptloom_engine::BuildOptions::memory
//! [`BuildOptions::memory_skipped`]: promptloom_engine::BuildOptions::memory_skipped

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use promptloom_engine::model::Session;
use promptloom_engine::{texts, MemoryHit, Said};
use promptloom_send::{embed, embed_request, ApiKey, Connection, SendOptions};
use promptloom_store::memory::VectorRow;
use promptloom_store::Store;

use crate::memory_index::normalize;
pub use crate::memory_index::{MemoryCache, MemoryIndex};
use crate::LibraryError;

/// Texts embedded per request, and vectors kept per transaction.
pub const INDEX_BATCH: usize = 32;
/// A message's text is cut to this many bytes before it is embedded: embedding models read a
/// few hundred tokens, and a local server refuses an input past its batch size.
pub const EMBED_INPUT_BYTES: usize = 2048;
/// The most hits a search returns (the engine places no more, `limits::MEMORY_HITS`).
pub const MAX_HITS: usize = promptloom_engine::limits::MEMORY_HITS;
/// The longest time limit a search may be given.
pub const MAX_SEARCH_TIME: Duration = Duration::from_secs(10);

/// What a connection embeds with: the connection, its key and the model (the connection's
/// default model when none).
#[derive(Debug, Clone)]
pub struct Embedder {
    pub connection: Connection,
    pub key: Option<ApiKey>,
    pub model: Option<String>,
    pub options: SendOptions,
}

impl Embedder {
    pub fn new(connection: Connection, key: Option<ApiKey>, model: Option<String>) -> Self {
        let options = SendOptions::for_connection(&connection);
        Embedder {
            connection,
            key,
            model,
            options,
        }
    }

    /// The model's name as the vectors record it.
    pub fn model_name(&self) -> Result<String, LibraryError> {
        Ok(embed_request(&self.connection, self.model.as_deref(), &["x"])?.model)
    }

    /// One vector of length 1 per text, in order; the model's name with them.
    pub async fn embed(&self, texts: &[&str]) -> Result<(String, Vec<Vec<f32>>), LibraryError> {
        let request = embed_request(&self.connection, self.model.as_deref(), texts)?;
        let mut vectors =
            embed(&self.connection, self.key.clone(), &request, &self.options).await?;
        for v in &mut vectors {
            normalize(v);
        }
        Ok((request.model, vectors))
    }
}

/// Search settings (RULES 5.15), each capped.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    /// How many hits at most (1 to [`MAX_HITS`]).
    pub top_k: usize,
    /// The lowest cosine similarity a hit may have.
    pub threshold: f32,
    /// The newest messages, which the context holds anyway, are not searched.
    pub skip_recent: usize,
    /// How long the search (the input's embedding included) may take.
    pub time_limit: Duration,
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings {
            top_k: 4,
            threshold: 0.5,
            skip_recent: 4,
            time_limit: Duration::from_millis(1500),
        }
    }
}

impl MemorySettings {
    /// The settings within their caps.
    pub fn capped(&self) -> MemorySettings {
        MemorySettings {
            top_k: self.top_k.clamp(1, MAX_HITS),
            threshold: if self.threshold.is_finite() {
                self.threshold.clamp(-1.0, 1.0)
            } else {
                0.5
            },
            skip_recent: self.skip_recent,
            time_limit: self.time_limit.min(MAX_SEARCH_TIME),
        }
    }
}

/// What indexing did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexReport {
    pub model: String,
    pub dim: u32,
    /// Messages embedded now.
    pub embedded: usize,
    /// Messages whose vector was already kept for their text.
    pub unchanged: usize,
    /// Vectors of messages no longer in the session, removed.
    pub removed: usize,
    /// Vectors of another model (or dimension), removed before re-indexing.
    pub stale: usize,
    pub batches: usize,
}

/// How a message is known to the index: its id, or `#<position>` without one.
pub fn message_key(id: Option<&str>, position: usize) -> String {
    match id {
        Some(id) => id.to_string(),
        None => format!("#{position}"),
    }
}

/// What a message's vector is made of: its role and its text, cut to [`EMBED_INPUT_BYTES`].
fn embed_text(text: &str) -> &str {
    if text.len() <= EMBED_INPUT_BYTES {
        return text;
    }
    let mut end = EMBED_INPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn content_hash(role: &str, text: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(role.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    h.digest()
}

/// Embeds the messages of stored session `session_id` that have no vector for their text yet,
/// [`INDEX_BATCH`] at a time, each batch kept in its own transaction; removes the vectors of
/// messages that are gone. `progress` hears (done, to do) after each batch.
pub async fn index_session(
    store: &Store,
    session_id: &str,
    embedder: &Embedder,
    mut progress: impl FnMut(usize, usize),
) -> Result<IndexReport, LibraryError> {
    let session = store.get_session(session_id)?;
    let model = embedder.model_name()?;
    let state = store.memory_state(session_id)?;
    let mut kept = match &state {
        Some(s) if s.model == model => store.memory_hashes(session_id, &model)?,
        _ => HashMap::new(),
    };
    let entries: Vec<(String, u32, u64, &str)> = session
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.content.trim().is_empty())
        .map(|(i, m)| {
            let text = embed_text(&m.content);
            (
                message_key(m.id.as_deref(), i),
                i as u32,
                content_hash(m.role.as_str(), text),
                text,
            )
        })
        .collect();
    let live: HashSet<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    let mut gone: Vec<String> = kept
        .keys()
        .filter(|k| !live.contains(k.as_str()))
        .cloned()
        .collect();
    gone.sort();
    let mut report = IndexReport {
        model: model.clone(),
        removed: gone.len(),
        ..IndexReport::default()
    };
    let mut todo: Vec<&(String, u32, u64, &str)> = entries
        .iter()
        .filter(|e| kept.get(&e.0) != Some(&e.2))
        .collect();
    report.unchanged = entries.len() - todo.len();
    let mut begun = false;
    let mut done = 0;
    let mut at = 0;
    while at < todo.len() {
        let batch = &todo[at..(at + INDEX_BATCH).min(todo.len())];
        let texts: Vec<&str> = batch.iter().map(|e| e.3).collect();
        let (_, vectors) = embedder.embed(&texts).await?;
        let dim = vectors.first().map_or(0, Vec::len) as u32;
        if !begun {
            let stale = store.memory_begin(session_id, &model, dim, &embedder.connection.name)?;
            begun = true;
            report.stale = stale;
            report.dim = dim;
            if stale > 0 && !kept.is_empty() {
                // Vectors of this model but another dimension went: embed everything.
                kept.clear();
                todo = entries.iter().collect();
                report.unchanged = 0;
                continue;
            }
        } else if dim != report.dim {
            return Err(LibraryError::Memory(format!(
                "the embeddings model \"{model}\" answered with {dim} numbers, then {}; nothing \
                 more was kept",
                report.dim
            )));
        }
        let rows: Vec<VectorRow<'_>> = batch
            .iter()
            .zip(&vectors)
            .map(|(e, v)| VectorRow {
                message_key: &e.0,
                position: e.1,
                content_hash: e.2,
                vector: v,
            })
            .collect();
        store.memory_write(session_id, &model, &rows, &std::mem::take(&mut gone))?;
        report.batches += 1;
        done += batch.len();
        report.embedded = done;
        progress(done, todo.len());
        at += batch.len();
    }
    if !gone.is_empty() && state.as_ref().is_some_and(|s| s.model == model) {
        // Nothing to embed, only vectors of deleted messages to remove.
        store.memory_write(session_id, &model, &[], &gone)?;
    }
    if report.dim == 0 {
        report.dim = state.map_or(0, |s| s.dim);
    }
    Ok(report)
}

/// How far a session's index is: for the app's index status.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    pub model: Option<String>,
    pub indexed: usize,
    pub messages: usize,
    /// Messages without a vector for their current text.
    pub pending: usize,
}

/// How much of stored session `session_id` has vectors for its current texts.
pub fn index_status(store: &Store, session_id: &str) -> Result<IndexStatus, LibraryError> {
    let session = store.get_session(session_id)?;
    let state = store.memory_state(session_id)?;
    let kept = match &state {
        Some(s) => store.memory_hashes(session_id, &s.model)?,
        None => HashMap::new(),
    };
    let mut messages = 0;
    let mut pending = 0;
    for (i, m) in session.messages.iter().enumerate() {
        if m.content.trim().is_empty() {
            continue;
        }
        messages += 1;
        let key = message_key(m.id.as_deref(), i);
        let hash = content_hash(m.role.as_str(), embed_text(&m.content));
        if kept.get(&key) != Some(&hash) {
            pending += 1;
        }
    }
    Ok(IndexStatus {
        model: state.map(|s| s.model),
        indexed: kept.len(),
        messages,
        pending,
    })
}

/// Whether the `memory` processor runs for `preset` and `model` (with the user's model
/// profiles): only then is it worth embedding the input before a build.
pub fn processor_on(
    preset: &promptloom_engine::model::AgentPreset,
    model: &str,
    profiles: &[promptloom_engine::profiles::ModelProfile],
) -> bool {
    let profile = promptloom_engine::profiles::profile_for_model(model, profiles);
    promptloom_engine::Pipeline::builtin()
        .resolve(preset, &profile)
        .iter()
        .any(|c| c.id == "memory" && c.enabled)
}

/// What a build gets from memory: the hits, or why it has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recall {
    pub hits: Vec<MemoryHit>,
    /// Why the search gave nothing although the session has an index (said in the build's
    /// warning, in the user's language).
    pub skipped: Option<Said>,
    /// How long the embedding request took, and the search after it.
    pub embed_time: Duration,
    pub search_time: Duration,
}

/// The hits of `index` for a query vector over `session` as it is now: messages whose text
/// changed since they were embedded are not recalled, nor the newest `skip_recent`.
pub fn hits_for(
    index: &MemoryIndex,
    session: &Session,
    query: &[f32],
    settings: &MemorySettings,
) -> Result<Vec<MemoryHit>, LibraryError> {
    let settings = settings.capped();
    let recent_from = session.messages.len().saturating_sub(settings.skip_recent) as u32;
    let found = index.search(query, settings.top_k, settings.threshold, |p| {
        p >= recent_from
    })?;
    let mut hits = Vec::with_capacity(found.len());
    for (row, score) in found {
        let position = index.positions[row];
        let Some(m) = session.messages.get(position as usize) else {
            continue;
        };
        let hash = content_hash(m.role.as_str(), embed_text(&m.content));
        if index.hashes[row] != hash {
            continue;
        }
        hits.push(MemoryHit {
            role: m.role,
            text: m.content.to_string(),
            score,
            index: Some(position),
            message_id: m.id.as_deref().map(str::to_string),
        });
    }
    Ok(hits)
}

/// Searches stored session `session`'s memory with `input` for one build: the input embedded
/// under `settings.time_limit`, then the scan. Never an error: without an index there is
/// nothing to recall, and a failure or a timeout is said in [`Recall::skipped`].
pub async fn recall(
    store: &Store,
    cache: &MemoryCache,
    session: &Session,
    embedder: &Embedder,
    input: &str,
    settings: &MemorySettings,
) -> Recall {
    let settings = settings.capped();
    let mut recall = Recall::default();
    let index = match cache.get(store, &session.id) {
        Ok(Some(index)) if !index.is_empty() => index,
        Ok(_) => return recall,
        Err(e) => {
            recall.skipped = Some(texts::MEMORY_SKIP_INDEX.with("why", e));
            return recall;
        }
    };
    if input.trim().is_empty() {
        return recall;
    }
    let started = Instant::now();
    let text = embed_text(input);
    let answer = tokio::time::timeout(settings.time_limit, embedder.embed(&[text])).await;
    recall.embed_time = started.elapsed();
    let (model, query) = match answer {
        Err(_) => {
            recall.skipped =
                Some(texts::MEMORY_SKIP_TIME.with("ms", settings.time_limit.as_millis()));
            return recall;
        }
        Ok(Err(e)) => {
            recall.skipped = Some(texts::MEMORY_SKIP_EMBED.with("why", e));
            return recall;
        }
        Ok(Ok((model, mut vectors))) => (model, vectors.pop().unwrap_or_default()),
    };
    if model != index.model {
        recall.skipped = Some(
            texts::MEMORY_SKIP_MODEL
                .with("indexed", &index.model)
                .with("model", &model),
        );
        return recall;
    }
    let searched = Instant::now();
    match hits_for(&index, session, &query, &settings) {
        Ok(hits) => recall.hits = hits,
        Err(e) => recall.skipped = Some(texts::MEMORY_SKIP_INDEX.with("why", e)),
    }
    recall.search_time = searched.elapsed();
    recall
}
