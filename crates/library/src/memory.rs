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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use promptloom_engine::model::Session;
use promptloom_engine::MemoryHit;
use promptloom_send::{embed, embed_request, ApiKey, Connection, SendOptions};
use promptloom_store::memory::VectorRow;
use promptloom_store::Store;

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

/// A session's vectors in memory, normalized, for scanning.
#[derive(Debug, Clone, Default)]
pub struct MemoryIndex {
    pub model: String,
    pub dim: usize,
    pub revision: i64,
    pub positions: Vec<u32>,
    pub hashes: Vec<u64>,
    pub data: Vec<f32>,
    /// `data` in 8-bit numbers, each row scaled by `scales[row]`: a quarter of the bytes to
    /// read, for the first pass of a search.
    quantized: Vec<i8>,
    scales: Vec<f32>,
}

impl MemoryIndex {
    /// Stored session `session_id`'s vectors; none when it has no index.
    pub fn load(store: &Store, session_id: &str) -> Result<Option<MemoryIndex>, LibraryError> {
        let Some(stored) = store.memory_vectors(session_id)? else {
            return Ok(None);
        };
        Ok(Some(
            MemoryIndex {
                model: stored.model,
                dim: stored.dim as usize,
                revision: stored.revision,
                positions: stored.positions,
                hashes: stored.hashes,
                data: stored.data,
                ..MemoryIndex::default()
            }
            .quantize(),
        ))
    }

    /// An index over `vectors` (normalized here), for benches and tests.
    pub fn from_vectors(model: &str, positions: Vec<u32>, vectors: &[Vec<f32>]) -> MemoryIndex {
        let dim = vectors.first().map_or(0, Vec::len);
        let mut data = Vec::with_capacity(dim * vectors.len());
        for v in vectors {
            let mut v = v.clone();
            normalize(&mut v);
            data.extend_from_slice(&v);
        }
        MemoryIndex {
            model: model.to_string(),
            dim,
            revision: 0,
            hashes: vec![0; positions.len()],
            positions,
            data,
            ..MemoryIndex::default()
        }
        .quantize()
    }

    /// The 8-bit copy of the rows, for the first pass.
    fn quantize(mut self) -> Self {
        if self.dim == 0 {
            return self;
        }
        let (quantized, scales) = quantize_rows(&self.data, self.dim);
        self.quantized = quantized;
        self.scales = scales;
        self
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The rows most similar to `query` (normalized), best first: at most `k`, each at least
    /// `threshold`, none whose position `skip` refuses. A query of another length is an error.
    ///
    /// Two passes (docs/PERFORMANCE.md, "Memory search"): every row's score from its 8-bit copy
    /// (a quarter of the bytes to read), the rows split between the cores, keeping the best
    /// `max(8k, 64)`; then those rescored exactly from the f32 rows.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        threshold: f32,
        skip: impl Fn(u32) -> bool + Sync,
    ) -> Result<Vec<(usize, f32)>, LibraryError> {
        if query.len() != self.dim {
            return Err(LibraryError::Memory(format!(
                "the input's vector has {} numbers and the index's have {} (model \"{}\"); index \
                 the session again with the connection used for searching",
                query.len(),
                self.dim,
                self.model
            )));
        }
        if k == 0 || self.dim == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        // First pass over the 8-bit rows, split between the cores: the `CANDIDATES` best by
        // the approximate score. Second pass: those rescored exactly, in f32.
        let want = (k * 8).max(CANDIDATES);
        let (q, _) = quantize_rows(query, self.dim);
        let rows = self.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(rows.div_ceil(SPLIT_ROWS))
            .max(1);
        let per = rows.div_ceil(threads);
        let pass = |from: usize| {
            let to = (from + per).min(rows);
            let mut best: Vec<(usize, f32)> = Vec::with_capacity(want + 1);
            for row in from..to {
                let v = &self.quantized[row * self.dim..(row + 1) * self.dim];
                let score = dot_i8(&q, v) as f32 * self.scales[row];
                if best.len() == want && score <= best[want - 1].1 {
                    continue;
                }
                if skip(self.positions[row]) {
                    continue;
                }
                let at = best.partition_point(|(_, s)| *s >= score);
                best.insert(at, (row, score));
                best.truncate(want);
            }
            best
        };
        let candidates: Vec<(usize, f32)> = if threads == 1 {
            pass(0)
        } else {
            std::thread::scope(|scope| {
                let pass = &pass;
                let handles: Vec<_> = (0..threads)
                    .map(|t| scope.spawn(move || pass(t * per)))
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            })
        };
        let mut best: Vec<(usize, f32)> = candidates
            .into_iter()
            .map(|(row, _)| {
                let v = &self.data[row * self.dim..(row + 1) * self.dim];
                (row, dot(query, v))
            })
            .filter(|(_, score)| *score >= threshold)
            .collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        best.truncate(k);
        Ok(best)
    }
}

/// How many rows the first pass of a search keeps at least, to rescore exactly.
const CANDIDATES: usize = 64;
/// A search is split between threads only past this many rows a thread.
const SPLIT_ROWS: usize = 16_384;

/// Each row of `data` (of `dim` numbers) as 8-bit numbers with its scale: `x ≈ q × scale`.
fn quantize_rows(data: &[f32], dim: usize) -> (Vec<i8>, Vec<f32>) {
    let mut quantized = Vec::with_capacity(data.len());
    let mut scales = Vec::with_capacity(data.len() / dim.max(1));
    for row in data.chunks_exact(dim) {
        let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        quantized.extend(
            row.iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
        );
        scales.push(scale);
    }
    (quantized, scales)
}

/// The dot product of two 8-bit rows, over sixteen lanes so that it vectorizes.
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let mut sum: i32 = lanes.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// The dot product, over eight lanes so that it vectorizes.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    let mut sum: f32 = lanes.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in v {
            *x /= norm;
        }
    }
}

/// Sessions' indexes kept in memory between builds: read again only when the store's revision
/// for the session moved (an indexing batch, a model change).
#[derive(Debug, Default)]
pub struct MemoryCache {
    indexes: Mutex<HashMap<String, Arc<MemoryIndex>>>,
}

impl MemoryCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stored session `session_id`'s index, from memory when it is current.
    pub fn get(
        &self,
        store: &Store,
        session_id: &str,
    ) -> Result<Option<Arc<MemoryIndex>>, LibraryError> {
        let Some(state) = store.memory_state(session_id)? else {
            return Ok(None);
        };
        let mut indexes = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = indexes.get(session_id) {
            if index.revision == state.revision && index.model == state.model {
                return Ok(Some(index.clone()));
            }
        }
        let Some(index) = MemoryIndex::load(store, session_id)? else {
            indexes.remove(session_id);
            return Ok(None);
        };
        let index = Arc::new(index);
        indexes.insert(session_id.to_string(), index.clone());
        Ok(Some(index))
    }
}

/// What a build gets from memory: the hits, or why it has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recall {
    pub hits: Vec<MemoryHit>,
    /// Why the search gave nothing although the session has an index.
    pub skipped: Option<String>,
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
            recall.skipped = Some(e.to_string());
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
            recall.skipped = Some(format!(
                "the memory search took more than {} ms",
                settings.time_limit.as_millis()
            ));
            return recall;
        }
        Ok(Err(e)) => {
            recall.skipped = Some(format!("the input could not be embedded: {e}"));
            return recall;
        }
        Ok(Ok((model, mut vectors))) => (model, vectors.pop().unwrap_or_default()),
    };
    if model != index.model {
        recall.skipped = Some(format!(
            "the session is indexed with \"{}\", not \"{model}\"; index it again",
            index.model
        ));
        return recall;
    }
    let searched = Instant::now();
    match hits_for(&index, session, &query, &settings) {
        Ok(hits) => recall.hits = hits,
        Err(e) => recall.skipped = Some(e.to_string()),
    }
    recall.search_time = searched.elapsed();
    recall
}
