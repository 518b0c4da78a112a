//! A store that only grows, whose items stay where they are until the store is dropped: what a
//! build puts in, it and later builds borrow for as long as the caller holds the store beside
//! its session (RULES 5.2). Thread-safe: builds that share one add to it side by side.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Slots in the first chunk; each next chunk has twice as many.
const FIRST: usize = 1024;
/// Chunks at most: room for `FIRST * (2^CHUNKS - 1)` items, about 8.4 million.
const CHUNKS: usize = 13;
/// The most items one store holds; past it, [`KeptStore::put`] refuses.
pub const KEPT_STORE_MAX: usize = FIRST * ((1 << CHUNKS) - 1);

pub struct KeptStore<T> {
    /// Tells the stores apart, so that a place kept in one is never looked for in another.
    id: u64,
    len: AtomicU32,
    chunks: [OnceLock<Box<[OnceLock<T>]>>; CHUNKS],
}

impl<T> std::fmt::Debug for KeptStore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptStore")
            .field("id", &self.id)
            .field("len", &self.len())
            .finish()
    }
}

impl<T> Default for KeptStore<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> KeptStore<T> {
    pub fn new() -> Self {
        static IDS: AtomicU64 = AtomicU64::new(1);
        KeptStore {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            len: AtomicU32::new(0),
            chunks: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// What tells this store apart from every other.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        (self.len.load(Ordering::Relaxed) as usize).min(KEPT_STORE_MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Puts `item` in; returns its slot and the item as kept. `None` when the store is full.
    pub fn put(&self, item: T) -> Option<(u32, &T)> {
        let slot = self
            .len
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                ((n as usize) < KEPT_STORE_MAX).then_some(n + 1)
            })
            .ok()?;
        let (chunk, offset) = place(slot);
        let cells = self.chunks[chunk]
            .get_or_init(|| (0..FIRST << chunk).map(|_| OnceLock::new()).collect());
        let cell = &cells[offset];
        // The slot is this call's alone: no other call sets it.
        cell.set(item).ok()?;
        cell.get().map(|item| (slot, item))
    }

    /// The item put in at `slot`, once it is in.
    pub fn get(&self, slot: u32) -> Option<&T> {
        let (chunk, offset) = place(slot);
        self.chunks.get(chunk)?.get()?.get(offset)?.get()
    }
}

/// The chunk and the place in it of `slot`: chunk `c` holds `FIRST << c` slots, after the
/// `FIRST * (2^c - 1)` of the chunks before it.
fn place(slot: u32) -> (usize, usize) {
    let n = slot as usize / FIRST + 1;
    let chunk = (usize::BITS - 1 - n.leading_zeros()) as usize;
    (chunk, slot as usize - FIRST * ((1 << chunk) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_each_chunk_in_turn() {
        assert_eq!(place(0), (0, 0));
        assert_eq!(place(1023), (0, 1023));
        assert_eq!(place(1024), (1, 0));
        assert_eq!(place(3071), (1, 2047));
        assert_eq!(place(3072), (2, 0));
        let last = (KEPT_STORE_MAX - 1) as u32;
        assert_eq!(place(last), (CHUNKS - 1, (FIRST << (CHUNKS - 1)) - 1));
    }

    #[test]
    fn items_stay_where_they_were_put_across_chunks() {
        let store = KeptStore::new();
        for i in 0..5_000u32 {
            let (slot, item) = store.put(i).expect("room");
            assert_eq!((slot, *item), (i, i));
        }
        assert_eq!(store.len(), 5_000);
        assert_eq!(store.get(0), Some(&0));
        assert_eq!(store.get(1_024), Some(&1_024));
        assert_eq!(store.get(4_999), Some(&4_999));
        assert_eq!(store.get(5_000), None, "not put in");
        assert_eq!(store.get(u32::MAX), None, "past every chunk");
        assert_ne!(KeptStore::<u32>::new().id(), store.id());
    }

    #[test]
    fn builds_side_by_side_each_get_a_slot_of_their_own() {
        let store = KeptStore::new();
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let store = &store;
                s.spawn(move || {
                    for i in 0..2_000u32 {
                        let (slot, item) = store.put(t * 10_000 + i).expect("room");
                        assert_eq!(store.get(slot), Some(item));
                    }
                });
            }
        });
        assert_eq!(store.len(), 8_000);
        let mut all: Vec<u32> = (0..8_000).map(|s| *store.get(s).expect("in")).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 8_000, "no slot given twice");
    }
}
