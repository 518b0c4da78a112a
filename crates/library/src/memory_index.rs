//! A session's memory index in memory (RULES 5.15): its vectors normalized, scanned in two
//! passes (one bit a number first, split between the cores, then the best rows in f32), and
//! kept between builds until the store's revision for the session moves.

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
    /// Each row's signs, one bit a number (set when the number is above 0), `words` 64-bit
    /// words a row: a thirty-second of the bytes to read, for the first pass of a search.
    signs: Vec<u64>,
    words: usize,
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
            .with_signs(),
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
        .with_signs()
    }

    /// The one-bit copy of the rows, for the first pass.
    fn with_signs(mut self) -> Self {
        if self.dim == 0 {
            return self;
        }
        self.words = self.dim.div_ceil(64);
        self.signs = sign_bits(&self.data, self.dim);
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
    /// Two passes (docs/PERFORMANCE.md, "Memory search"): every row's count of signs that
    /// differ from the query's (one bit a number, a thirty-second of the bytes), the rows split
    /// between the cores; each core keeps its `max(64 × k, 4,096)` rows with the fewest and
    /// rescores them exactly from the f32 rows. An index of no more rows than that is exact.
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
        let want = k.saturating_mul(64).max(CANDIDATES);
        let q = sign_bits(query, self.dim);
        let rows = self.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(rows.div_ceil(SPLIT_ROWS))
            .max(1);
        let per = rows.div_ceil(threads);
        // Each part of the rows: its `want` nearest by signs, rescored exactly in the same
        // thread, in row order; its best `k` at least `threshold`.
        let pass = |from: usize| {
            let mut best: Vec<(usize, f32)> = self
                .nearest_signs(&q, from..(from + per).min(rows), want, &skip)
                .into_iter()
                .map(|row| {
                    let row = row as usize;
                    (
                        row,
                        dot(query, &self.data[row * self.dim..(row + 1) * self.dim]),
                    )
                })
                .filter(|(_, score)| *score >= threshold)
                .collect();
            best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            best.truncate(k);
            best
        };
        let mut best: Vec<(usize, f32)> = if threads == 1 {
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
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        best.truncate(k);
        Ok(best)
    }

    /// The first pass over `rows`: the `want` rows whose signs differ least from `query`'s
    /// (on a tie, the earlier rows), in row order, leaving out those `skip` refuses.
    /// Every row's count is kept, then a count of rows per difference finds where the `want`
    /// best end: no sorted insert per row.
    fn nearest_signs(
        &self,
        query: &[u64],
        rows: std::ops::Range<usize>,
        want: usize,
        skip: &impl Fn(u32) -> bool,
    ) -> Vec<u32> {
        let words = self.words;
        let refused = u32::MAX;
        let differences: Vec<u32> = rows
            .clone()
            .map(|row| {
                if skip(self.positions[row]) {
                    return refused;
                }
                let v = &self.signs[row * words..(row + 1) * words];
                v.iter()
                    .zip(query)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum::<u32>()
            })
            .collect();
        let mut per_count = vec![0usize; self.dim + 1];
        for &d in &differences {
            if d != refused {
                per_count[d as usize] += 1;
            }
        }
        // The last count of differences that still has a place among the `want` best, and how
        // many rows of that count fit.
        let mut taken = 0;
        let mut last = self.dim;
        for (d, &n) in per_count.iter().enumerate() {
            if taken + n >= want {
                last = d;
                break;
            }
            taken += n;
        }
        let mut room_at_last = want.saturating_sub(taken);
        let mut found = Vec::with_capacity(want.min(differences.len()));
        for (row, &d) in rows.zip(&differences) {
            if d == refused || d as usize > last {
                continue;
            }
            if d as usize == last {
                if room_at_last == 0 {
                    continue;
                }
                room_at_last -= 1;
            }
            found.push(row as u32);
        }
        found
    }
}

/// How many rows the first pass of a search keeps at least, to rescore exactly.
const CANDIDATES: usize = 4_096;
/// A search is split between threads only past this many rows a thread.
const SPLIT_ROWS: usize = 16_384;

/// Each row of `data` (of `dim` numbers) as its signs, one bit a number (set above 0), in
/// `dim.div_ceil(64)` words a row; the last word's unused bits are 0 in every row.
fn sign_bits(data: &[f32], dim: usize) -> Vec<u64> {
    let words = dim.div_ceil(64);
    let mut bits = Vec::with_capacity(words * data.len() / dim.max(1));
    for row in data.chunks_exact(dim) {
        for chunk in row.chunks(64) {
            let mut word = 0u64;
            for (i, x) in chunk.iter().enumerate() {
                if *x > 0.0 {
                    word |= 1 << i;
                }
            }
            bits.push(word);
        }
    }
    bits
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic numbers in -1..1 (a linear congruential generator).
    fn numbers(seed: u64, n: usize) -> Vec<f32> {
        let mut x = seed.wrapping_mul(6364136223846793005) ^ 0x9E37_79B9_7F4A_7C15;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Every row scored exactly: the best `k` at least `threshold`, as `search` orders them.
    fn exact(index: &MemoryIndex, query: &[f32], k: usize, threshold: f32) -> Vec<usize> {
        let mut q = query.to_vec();
        normalize(&mut q);
        let mut all: Vec<(usize, f32)> = (0..index.len())
            .map(|row| {
                (
                    row,
                    dot(&q, &index.data[row * index.dim..(row + 1) * index.dim]),
                )
            })
            .filter(|(_, s)| *s >= threshold)
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.into_iter().take(k).map(|(row, _)| row).collect()
    }

    fn found(index: &MemoryIndex, query: &[f32], k: usize) -> Vec<usize> {
        let mut q = query.to_vec();
        normalize(&mut q);
        let hits = index.search(&q, k, -1.0, |_| false).unwrap();
        hits.into_iter().map(|(row, _)| row).collect()
    }

    /// 100,000 rows of 384 uniform random numbers: the first pass's worst case, where the
    /// best rows are barely closer than the rest (cosine about 0.18 against a spread of 0.05).
    fn random_index() -> &'static MemoryIndex {
        static INDEX: std::sync::OnceLock<MemoryIndex> = std::sync::OnceLock::new();
        INDEX.get_or_init(|| {
            let vectors: Vec<Vec<f32>> = (0..100_000).map(|i| numbers(i, 384)).collect();
            MemoryIndex::from_vectors("t", (0..100_000).collect(), &vectors)
        })
    }

    #[test]
    fn an_index_of_few_rows_is_searched_exactly() {
        let vectors: Vec<Vec<f32>> = (0..3_000).map(|i| numbers(i, 48)).collect();
        let index = MemoryIndex::from_vectors("t", (0..3_000).collect(), &vectors);
        for q in 0..10 {
            let query = numbers(50_000 + q, 48);
            for (k, threshold) in [(1, -1.0), (4, 0.2), (16, 0.0), (100, 0.4)] {
                let mut norm = query.clone();
                normalize(&mut norm);
                let got: Vec<usize> = index
                    .search(&norm, k, threshold, |p| p % 7 == 0)
                    .unwrap()
                    .into_iter()
                    .map(|(row, _)| row)
                    .collect();
                let want: Vec<usize> = exact(&index, &query, usize::MAX, threshold)
                    .into_iter()
                    .filter(|row| row % 7 != 0)
                    .take(k)
                    .collect();
                assert_eq!(got, want, "query {q}, top {k} at least {threshold}");
            }
        }
    }

    #[test]
    fn close_matches_among_100000_rows_are_always_found_in_order() {
        // Rows at a cosine of 0.5 to 0.8 from the query, as real matches above the default
        // threshold are, hidden among random ones.
        let index = random_index();
        for q in 0..5u64 {
            let query = numbers(1_000_000 + q, 384);
            let planted: Vec<usize> = (0..4)
                .map(|i| (q as usize * 19_997 + i * 23_459) % 100_000)
                .collect();
            let mut index = index.clone();
            for (i, &row) in planted.iter().enumerate() {
                let noise = numbers(2_000_000 + q * 10 + i as u64, 384);
                let mix = 0.6 + 0.25 * i as f32;
                let mut v: Vec<f32> = query.iter().zip(&noise).map(|(a, b)| a + mix * b).collect();
                normalize(&mut v);
                index.data[row * 384..(row + 1) * 384].copy_from_slice(&v);
            }
            index = index.with_signs();
            let want = exact(&index, &query, 4, 0.5);
            assert_eq!(want.len(), 4, "the planted rows are above 0.5");
            assert_eq!(found(&index, &query, 4), want, "query {q}");
        }
    }

    #[test]
    fn most_of_the_best_uniform_random_rows_are_found() {
        // Measured: all 40 of the exact best 4 of 10 queries (docs/PERFORMANCE.md, "Memory
        // search"); one bit a number and a candidate list half as long lose several.
        let index = random_index();
        let mut hit = 0;
        for q in 0..10u64 {
            let query = numbers(1_000_000 + q, 384);
            let want = exact(index, &query, 4, -1.0);
            let got = found(index, &query, 4);
            hit += want.iter().filter(|r| got.contains(r)).count();
        }
        assert!(hit >= 38, "{hit} of the 40 best rows found");
    }
}
