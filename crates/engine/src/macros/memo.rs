//! Expansions kept between builds (RULES 4.5). An expansion whose macros read only the
//! environment's names, fields and newest messages (no variable, random draw, pick or clock) gives
//! the same text for the same text and environment, so a rebuild after an edit elsewhere takes it
//! from here instead of scanning again. It still charges the build's cap with the bytes it
//! produced, so a kept expansion and a fresh one use the cap alike.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use xxhash_rust::xxh3::Xxh3;

use super::env::MacroEnv;
use crate::said::Said;

/// Expansions kept at most; past it the memo starts again (the templates of the presets being
/// edited fill it again in one build).
const KEPT: usize = 4096;
/// Bytes of kept text at most (docs/ARCHITECTURE.md, "Limits"); past it the memo starts again.
pub const KEPT_BYTES: usize = 32 << 20;

/// A pure expansion's outcome: its text, warnings and the bytes its macros produced.
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) text: String,
    pub(super) warnings: Vec<Said>,
    pub(super) produced: usize,
}

/// Pure expansions by text and environment. Thread-safe; the build cache holds one.
#[derive(Debug, Default)]
pub struct MacroMemo {
    kept: Mutex<Memo>,
}

type Key = (u64, usize, u64);

#[derive(Debug, Default)]
struct Memo {
    map: HashMap<Key, Arc<Kept>>,
    /// The bytes of the kept texts.
    bytes: usize,
}

impl MacroMemo {
    fn lock(&self) -> std::sync::MutexGuard<'_, Memo> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn get(&self, key: Key) -> Option<Arc<Kept>> {
        self.lock().map.get(&key).cloned()
    }

    pub(super) fn keep(&self, key: Key, kept: Kept) {
        let size = kept.text.len();
        if size > KEPT_BYTES / 4 {
            return;
        }
        let mut memo = self.lock();
        if memo.map.len() >= KEPT || memo.bytes + size > KEPT_BYTES {
            memo.map.clear();
            memo.bytes = 0;
        }
        if let Some(old) = memo.map.insert(key, Arc::new(kept)) {
            memo.bytes -= old.text.len();
        }
        memo.bytes += size;
    }

    /// How many expansions are kept.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// The bytes of the kept texts.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl MacroEnv<'_> {
    /// A hash of everything a pure expansion can read: the names, the character's fields, the
    /// persona, the lorebook's texts, the summary, the model, the newest messages and their ids,
    /// and whether legacy names are on. The clock, the idle time and the random seed are not in
    /// it: the macros that read them make an expansion impure.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Xxh3::new();
        for text in [
            self.user,
            self.char_name,
            self.description,
            self.personality,
            self.scenario,
            self.persona,
            self.mes_examples,
            self.wi_before,
            self.wi_after,
            self.summary,
            self.model,
            self.last_message,
            self.last_user_message,
            self.last_char_message,
        ] {
            h.update(&(text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        for id in [self.last_message_id, self.first_included_message_id] {
            h.update(&id.map_or(u64::MAX, |i| i as u64).to_le_bytes());
        }
        h.update(&[u8::from(self.legacy_names)]);
        h.digest()
    }
}
