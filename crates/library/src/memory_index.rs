//! A session's memory index in memory (RULES 5.15): its vectors normalized, scanned in two
//! passes (an 8-bit copy first, split between the cores, then the best rows in f32), and kept
//! between builds until the store's revision for the session moves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use promptloom_store::Store;

use crate::LibraryError;

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

pub(crate) fn normalize(v: &mut [f32]) {
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
