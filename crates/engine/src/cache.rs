//! What builds keep for the builds after them, so that a live preview redoes only what an edit
//! changed (RULES 5.8): token counts by (tokenizer, content hash), and per session what was worked
//! out about each stored message: its token count and what the history regex rules made of it.
//!
//! Per-session entries hold the stored text they were made for, so its address cannot be reused
//! by other text while the entry lives: a message whose content is the same `Arc` is the same
//! text, and a warm rebuild reads its answers in history order without hashing or matching it.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::lorebook::scan::KeyIndex;
use crate::model::{Lorebook, Session};
use crate::tokens::{KeyHasher, Vocabulary};

mod kept;
mod stored;

pub use kept::{KeptStore, KEPT_STORE_MAX};
pub use stored::{shape_of, ByStoredText, HistoryCounts, StoredTexts};

/// The cache key: tokenizer, xxh3 of the content, content length.
type CountKey = (Vocabulary, u64, usize);

/// Texts longer than this are counted by chunks ([`BuildCache::count`]).
const CHUNKED_FROM: usize = 2 * 1024;
/// A chunk ends after a piece where its text is at least this long and the piece's hash says
/// so (one piece in [`CHUNK_ODDS`]), or where it is [`CHUNK_MAX`] long: where a chunk ends
/// depends on the text around it only, so an edit moves no boundary but its own chunk's.
const CHUNK_MIN: usize = 512;
const CHUNK_ODDS: u64 = 8;
const CHUNK_MAX: usize = 8 * 1024;

/// `text` in chunks of whole independent pieces, cut where the content says (see [`CHUNK_MIN`]).
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut pieces = crate::tokens::independent_pieces(text).peekable();
    let mut start = 0;
    std::iter::from_fn(move || {
        let from = start;
        while let Some(piece) = pieces.next() {
            start += piece.len();
            let long = start - from;
            let cut = long >= CHUNK_MAX
                || (long >= CHUNK_MIN
                    && xxhash_rust::xxh3::xxh3_64(piece.as_bytes()).is_multiple_of(CHUNK_ODDS));
            if cut || pieces.peek().is_none() {
                break;
            }
        }
        (start > from).then(|| &text[from..start])
    })
}

/// How many sessions keep what their builds worked out at once; the app previews a handful at a
/// time.
const SESSIONS_KEPT: usize = 16;
/// How many items a session's [`KeptStore`] holds beyond twice its length before
/// [`BuildCache::kept_store`] gives a new one.
pub const STORE_KEPT_OVER: usize = 4096;
/// How many kinds of answers processors keep per session ([`BuildCache::take_kept`]).
const KINDS_KEPT: usize = 4;
/// How many lorebooks' key indexes are kept: the one being edited, and a compare or two.
const LOREBOOKS_KEPT: usize = 4;

/// Values kept per key for at most [`SESSIONS_KEPT`] keys. A build takes its session's value,
/// works with it and gives it back; a concurrent build of the same session meanwhile starts
/// from an empty one, which only costs it the shortcut.
#[derive(Debug)]
struct PerSession<K, V>(Mutex<HashMap<K, V>>);

impl<K, V> Default for PerSession<K, V> {
    fn default() -> Self {
        PerSession(Mutex::new(HashMap::new()))
    }
}

impl<K: Eq + Hash + Clone, V: Default> PerSession<K, V> {
    fn take(&self, key: &K) -> V {
        self.take_any(key).unwrap_or_default()
    }
}

impl<K: Eq + Hash + Clone, V> PerSession<K, V> {
    fn take_any(&self, key: &K) -> Option<V> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key)
    }

    fn keep(&self, key: K, value: V) {
        self.keep_at_most(SESSIONS_KEPT, key, value);
    }

    fn keep_at_most(&self, limit: usize, key: K, value: V) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= limit && !map.contains_key(&key) {
            // Any one goes: it is only a shortcut.
            if let Some(old) = map.keys().next().cloned() {
                map.remove(&old);
            }
        }
        map.insert(key, value);
    }
}

/// What builds keep for the builds after them. Thread-safe: the app shares one cache between
/// the preview builds it runs, for the life of the process.
#[derive(Debug, Default)]
pub struct BuildCache {
    counts: RwLock<HashMap<CountKey, u32, BuildHasherDefault<KeyHasher>>>,
    /// Per (tokenizer, wrapping, session id): the history counts of the last build of that
    /// session that wrapped its messages alike (the same affixes, trimming and overheads).
    histories: PerSession<(Vocabulary, u64, String), HistoryCounts>,
    /// What processors keep of a session's last build for the next, each under a key of its
    /// own and by its type ([`Self::take_kept`]): what history rules made of each stored
    /// message, whether each passed a history filter.
    kept: PerSession<(TypeId, String, u64), Box<dyn Any + Send>>,
    /// Per session id: its stored texts as its last build found them.
    stored: PerSession<String, StoredTexts>,
    /// Per (kind, session id): the store its builds borrow what they keep from (the history
    /// rules' rewrites).
    stores: PerSession<(TypeId, String), Arc<dyn Any + Send + Sync>>,
    /// The last generation of stored texts given out.
    generations: AtomicU64,
    /// The key indexes of the last few lorebooks built, by [`KeyIndex::fingerprint`].
    lorebooks: Mutex<Vec<(u64, Arc<KeyIndex>)>>,
    /// Template expansions that read only the macro environment (RULES 4.5).
    macros: crate::macros::MacroMemo,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl BuildCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Tokens in `text`, from the cache when this content was counted before. A long text in a
    /// shipped vocabulary is counted by chunks of its independent pieces (whose counts add up to
    /// the whole's, `tokens::independent_pieces`), each kept: a warm rebuild of a long message
    /// that changed in one place (a system prompt squashed from a hundred prompts, one of them
    /// being edited) counts only the chunk around the change.
    pub fn count(&self, kind: impl Into<Vocabulary>, text: &str) -> u32 {
        let kind = kind.into();
        if text.len() > CHUNKED_FROM && matches!(kind, Vocabulary::Shipped(_)) {
            return chunks(text)
                .map(|chunk| self.count_whole(kind, chunk))
                .sum();
        }
        self.count_whole(kind, text)
    }

    /// Tokens of `prefix`, `body` and `suffix` written together. A body longer than twice what
    /// a counter takes at once is counted as its head with the prefix, its middle, and its tail
    /// with the suffix, so that no copy of it is made (a counter cuts a line that long anyway,
    /// RULES 5.8).
    pub fn count_joined(&self, kind: Vocabulary, prefix: &str, body: &str, suffix: &str) -> u32 {
        let window = crate::tokens::MAX_COUNTED_AT_ONCE;
        if body.len() <= 2 * window {
            return self.count(kind, &format!("{prefix}{body}{suffix}"));
        }
        let mut head = window;
        while !body.is_char_boundary(head) {
            head -= 1;
        }
        let mut tail = body.len() - window;
        while !body.is_char_boundary(tail) {
            tail += 1;
        }
        self.count(kind, &format!("{prefix}{}", &body[..head]))
            + self.count(kind, &body[head..tail])
            + self.count(kind, &format!("{}{suffix}", &body[tail..]))
    }

    fn count_whole(&self, kind: Vocabulary, text: &str) -> u32 {
        if text.is_empty() {
            return 0;
        }
        let key = (
            kind,
            xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
            text.len(),
        );
        if let Some(&n) = self
            .counts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return n;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let n = u32::try_from(kind.count(text)).unwrap_or(u32::MAX);
        self.counts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, n);
        n
    }

    /// Takes the history counts kept for a session (empty when there are none), to give back
    /// with [`Self::keep_history_counts`] when the build is done with them.
    pub fn take_history_counts(
        &self,
        kind: impl Into<Vocabulary>,
        wrapping: u64,
        session_id: &str,
    ) -> HistoryCounts {
        let mut counts = self
            .histories
            .take(&(kind.into(), wrapping, session_id.to_string()));
        // Not read without their texts until the session loader says they hold.
        counts.holds = false;
        counts
    }

    pub fn keep_history_counts(
        &self,
        kind: impl Into<Vocabulary>,
        wrapping: u64,
        session_id: &str,
        counts: HistoryCounts,
    ) {
        self.histories
            .keep((kind.into(), wrapping, session_id.to_string()), counts);
    }

    /// Takes what a processor kept of a session's last build under `key` as a `T` (a default
    /// one when nothing is kept), to give back with [`Self::keep`] when the build is done with
    /// it. A processor keys what it keeps by everything its answers depend on besides the
    /// stored messages (the rules, the filter's texts): a preview and a compare of two models
    /// may run different ones.
    /// The stored texts `session_id`'s last build found (none when there was none), for the
    /// session loader to compare its messages with as it loads them.
    pub fn take_stored_texts(&self, session_id: &str) -> StoredTexts {
        self.stored.take(&session_id.to_string())
    }

    /// Keeps `seen`, or when `same` is false (the loader found a text it did not hold, or a
    /// length it did not have) or `shape` is not its fingerprint ([`stored::shape_of`]),
    /// `session`'s texts under a new generation; returns the generation of this build's stored
    /// texts.
    pub fn keep_stored_texts(
        &self,
        session: &Session,
        seen: StoredTexts,
        same: bool,
        shape: u64,
    ) -> u64 {
        let seen = if same && seen.generation != 0 && seen.shape == shape {
            seen
        } else {
            StoredTexts {
                texts: session
                    .messages
                    .iter()
                    .map(|m| Arc::clone(&m.content))
                    .collect(),
                roles: session.messages.iter().map(|m| m.role).collect(),
                _held: session
                    .messages
                    .iter()
                    .flat_map(|m| m.name.iter().chain(&m.id).cloned())
                    .collect(),
                shape,
                generation: self.generations.fetch_add(1, Ordering::Relaxed) + 1,
            }
        };
        let generation = seen.generation;
        self.stored.keep(session.id.clone(), seen);
        generation
    }

    pub fn take_kept<T: Any + Send + Default>(&self, session_id: &str, key: u64) -> T {
        let key = (TypeId::of::<T>(), session_id.to_string(), key);
        self.kept
            .take_any(&key)
            .and_then(|kept| kept.downcast::<T>().ok())
            .map_or_else(T::default, |kept| *kept)
    }

    pub fn keep<T: Any + Send>(&self, session_id: &str, key: u64, value: T) {
        self.kept.keep_at_most(
            KINDS_KEPT * SESSIONS_KEPT,
            (TypeId::of::<T>(), session_id.to_string(), key),
            Box::new(value),
        );
    }

    /// The store of `T`s that the builds of `session` borrow from, held by the caller beside
    /// the session for as long as it holds the build's result (the history rules' rewrites,
    /// RULES 5.2): the one its last builds used, or a new one when that holds more than
    /// [`STORE_KEPT_OVER`] plus twice the session's length. A store only grows (what was kept
    /// for texts since changed, or by rules since edited, stays in it), and goes when the last
    /// build holding it does.
    pub fn kept_store<T: Send + Sync + 'static>(&self, session: &Session) -> Arc<KeptStore<T>> {
        let most = STORE_KEPT_OVER + 2 * session.messages.len();
        let key = (TypeId::of::<T>(), session.id.clone());
        let mut map = self.stores.0.lock().unwrap_or_else(|e| e.into_inner());
        let kept = map
            .get(&key)
            .and_then(|s| Arc::clone(s).downcast::<KeptStore<T>>().ok())
            .filter(|s| s.len() <= most);
        if let Some(kept) = kept {
            return kept;
        }
        map.remove(&key);
        drop(map);
        let fresh = Arc::new(KeptStore::new());
        self.stores
            .keep(key, Arc::clone(&fresh) as Arc<dyn Any + Send + Sync>);
        fresh
    }

    /// The expansions kept between builds.
    pub fn macros(&self) -> &crate::macros::MacroMemo {
        &self.macros
    }

    /// The index of `book`'s keys: kept from an earlier build of the same keys, or made now.
    pub fn lorebook_keys(&self, book: &Lorebook) -> Arc<KeyIndex> {
        let fingerprint = KeyIndex::fingerprint(book);
        let lock = || self.lorebooks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, index)) = lock().iter().find(|(f, _)| *f == fingerprint) {
            return Arc::clone(index);
        }
        let index = Arc::new(KeyIndex::new(book));
        let mut kept = lock();
        if kept.len() >= LOREBOOKS_KEPT {
            kept.remove(0);
        }
        kept.push((fingerprint, Arc::clone(&index)));
        index
    }

    /// Adds `n` counts served from kept history counts to [`Self::stats`]; a build tells them
    /// once rather than touching the shared counter for every message.
    pub fn record_hits(&self, n: u64) {
        if n > 0 {
            self.hits.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// How many counts were served from the cache, and how many were computed.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    pub fn len(&self) -> usize {
        self.counts.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        self.counts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;
    use crate::tokens::TokenizerKind;

    #[test]
    fn a_sessions_store_is_kept_until_it_grows_well_past_the_session() {
        let cache = BuildCache::new();
        let mut session = Session::empty("s");
        session
            .messages
            .extend((0..10).map(|i| crate::model::ChatMessage::new(Role::User, &i.to_string())));
        let store = cache.kept_store::<u32>(&session);
        assert_eq!(cache.kept_store::<u32>(&session).id(), store.id());
        assert_ne!(
            cache.kept_store::<u64>(&session).id(),
            store.id(),
            "a store for each kind"
        );
        let most = STORE_KEPT_OVER + 2 * session.messages.len();
        for i in 0..most as u32 {
            store.put(i);
        }
        assert_eq!(cache.kept_store::<u32>(&session).id(), store.id());
        store.put(0);
        let fresh = cache.kept_store::<u32>(&session);
        assert_ne!(fresh.id(), store.id(), "one more: a new store");
        assert!(fresh.is_empty());
        assert_eq!(store.get(0), Some(&0), "the old one lives while held");
        assert_eq!(cache.kept_store::<u32>(&session).id(), fresh.id());
    }

    #[test]
    fn cache_recounts_only_changed_content() {
        let cache = BuildCache::new();
        let a = cache.count(TokenizerKind::O200kBase, "hello world");
        let b = cache.count(TokenizerKind::O200kBase, "hello world");
        assert_eq!(a, b);
        assert_eq!(cache.stats(), (1, 1));
        cache.count(TokenizerKind::Cl100kBase, "hello world");
        assert_eq!(cache.stats(), (1, 2), "another tokenizer is another key");
        cache.count(TokenizerKind::O200kBase, "hello world!");
        assert_eq!(cache.stats(), (1, 3));
    }

    /// A long text of many lines, some of them starting with white space or `/`, some long.
    fn long_text(lines: usize, seed: u64) -> String {
        let words = [
            "lantern", " harbour", "'s", "42", "灯塔", "。", "...", "😀", "\t", "/x",
        ];
        let mut x = seed | 1;
        let mut text = String::new();
        for i in 0..lines {
            for _ in 0..(3 + i % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(words[(x % words.len() as u64) as usize]);
                text.push(' ');
            }
            text.push_str(["\n", "\n\n", "\r\n", "\n  ", "\n/"][i % 5]);
        }
        text
    }

    #[test]
    fn a_long_text_counted_by_chunks_counts_as_the_whole() {
        for kind in [TokenizerKind::O200kBase, TokenizerKind::Cl100kBase] {
            for seed in 1..6 {
                let text = long_text(400, seed);
                assert!(text.len() > CHUNKED_FROM * 4);
                assert!(chunks(&text).count() > 4, "cut in chunks");
                assert_eq!(chunks(&text).collect::<String>(), text);
                let cache = BuildCache::new();
                assert_eq!(
                    cache.count(kind, &text) as usize,
                    kind.count(&text),
                    "{kind:?}"
                );
            }
        }
    }

    #[test]
    fn an_edit_in_a_long_text_recounts_only_the_chunks_around_it() {
        let kind = TokenizerKind::O200kBase;
        let cache = BuildCache::new();
        let text = long_text(600, 7);
        cache.count(kind, &text);
        let (_, before) = cache.stats();
        let middle = text.len() / 2;
        let at = (middle..)
            .find(|&i| text.is_char_boundary(i))
            .expect("a boundary");
        let edited = format!("{} (an edit) {}", &text[..at], &text[at..]);
        assert_eq!(cache.count(kind, &edited) as usize, kind.count(&edited));
        let (_, after) = cache.stats();
        assert!(after - before <= 2, "{} chunks recounted", after - before);
    }

    #[test]
    fn history_counts_answer_only_for_the_same_content() {
        let cache = BuildCache::new();
        let kind = TokenizerKind::O200kBase;
        let text: Arc<str> = Arc::from("hello there, traveller");
        let mut history = cache.take_history_counts(kind, 0, "s1");
        history.set(3, &text, (5, Role::User));
        assert_eq!(history.get(3, &text), Some(&(5, Role::User)));
        // Equal text in another allocation is not the held content.
        let copy: Arc<str> = Arc::from("hello there, traveller");
        assert_eq!(history.get(3, &copy), None);
        history.set(3, &copy, (5, Role::User));
        cache.keep_history_counts(kind, 0, "s1", history);
        assert_eq!(
            cache
                .take_history_counts(TokenizerKind::Cl100kBase, 0, "s1")
                .get(3, &copy),
            None,
            "kept per tokenizer"
        );
        assert_eq!(
            cache.take_history_counts(kind, 7, "s1").get(3, &copy),
            None,
            "kept per wrapping"
        );
        let history = cache.take_history_counts(kind, 0, "s1");
        assert_eq!(history.get(3, &copy), Some(&(5, Role::User)));
        assert_eq!(
            cache.take_history_counts(kind, 0, "s1").get(3, &copy),
            None,
            "taken once"
        );
    }
}
