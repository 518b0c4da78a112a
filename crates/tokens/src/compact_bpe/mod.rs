//! A byte-pair model read from a Hugging Face `tokenizer.json`, held compactly: every token's
//! text in one buffer, and two open-addressing tables of plain integers (text to id, and pair of
//! ids to merge). The `tokenizers` crate's own BPE model keeps each token twice as a `String` in
//! hash maps and each merge in a third map, several times the memory for the same vocabulary
//! (docs/PERFORMANCE.md). It merges the same way: the pair with the lowest merge rank first, the
//! leftmost of equal ranks, characters missing from the vocabulary through byte fallback or the
//! unknown token, and a word that is one whole token left whole when the file says
//! `ignore_merges`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tokenizers::{Model, Token};

mod read;

/// One slot of the merge table: the pair (left id, right id) packed in `pair`, the rank of the
/// merge and the id it makes. `EMPTY_PAIR` marks a free slot.
#[derive(Debug, Clone, Copy)]
struct MergeSlot {
    pair: u64,
    rank: u32,
    id: u32,
}

const EMPTY_PAIR: u64 = u64::MAX;

const NO_BYTE: u16 = u16::MAX;

/// Words of at most this many symbols are merged by looking at every pair
/// ([`CompactBpe::merge_short`]); longer ones through a heap.
const SHORT_WORD: usize = 16;

/// For each character of GPT-2's byte-level alphabet (by code point, up to U+0143), the byte it
/// stands for: printable bytes stand for themselves, the others were moved up past U+0100 in
/// order.
fn byte_level_alphabet() -> Vec<u16> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut table = vec![NO_BYTE; 0x144];
    let mut moved = 0;
    for b in 0..=255u8 {
        if printable(b) {
            table[b as usize] = u16::from(b);
        } else {
            table[0x100 + moved] = u16::from(b);
            moved += 1;
        }
    }
    table
}

/// Merges waiting to be made: (rank, position, the id it makes, the pair's ids), lowest rank
/// first, then leftmost.
type MergeQueue = BinaryHeap<Reverse<(u32, usize, u32, [u32; 2])>>;
const NO_ID: u32 = u32::MAX;
/// The largest id a vocabulary may give (the largest shipped has 262,144 tokens).
const MAX_ID: u32 = 4_000_000;
/// The most merges a vocabulary may list (the most shipped, Gemma 3's, are 514,906).
const MAX_MERGES: usize = 2_000_000;

#[derive(Debug, Default)]
pub struct CompactBpe {
    /// Every token's text, one after the other, by id.
    text: Vec<u8>,
    /// Where the token of each id ends in `text` (it starts where the one before ends).
    ends: Vec<u32>,
    /// Open addressing by the hash of a token's text: id + 1, or 0 for a free slot.
    by_text: Vec<u32>,
    merges: Vec<MergeSlot>,
    /// Merges read, the ones listed twice included: the next one's rank.
    merge_count: usize,
    /// Slots of `merges` in use.
    merges_held: usize,
    /// The id of `<0xXX>` for each byte, where the vocabulary has it.
    bytes: Vec<u32>,
    /// In a vocabulary of raw bytes, the id of each one-byte token.
    single: Vec<u32>,
    /// In a vocabulary of raw bytes, the merge of every pair of ids below 256 (where its bytes
    /// are, in OpenAI's vocabularies), straight from a table of 512 KiB: the first lookups of
    /// every piece are pairs of bytes, and the hash table's misses were most of the time.
    low_pairs: Vec<(u32, u32)>,
    byte_fallback: bool,
    unk: Option<String>,
    fuse_unk: bool,
    ignore_merges: bool,
}

/// The slot a hash falls in among `len` (any length, not only powers of two: the tables are
/// sized to their contents).
fn slot_of(hash: u64, len: usize) -> usize {
    ((u128::from(hash) * len as u128) >> 64) as usize
}

/// The slot after `slot` among `len`, round to the first.
fn next_slot(slot: usize, len: usize) -> usize {
    if slot + 1 == len {
        0
    } else {
        slot + 1
    }
}

/// Slots for `n` entries in an open-addressing table: a load of at most 4/5.
fn slots_for(n: usize) -> usize {
    (n + n / 4 + 1).max(16)
}

fn hash_text(text: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text)
}

fn hash_pair(pair: u64) -> u64 {
    // A multiplicative mix: ids are small and dense, so their bits need spreading.
    (pair ^ (pair >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl CompactBpe {
    fn token(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    fn id_of(&self, text: &[u8]) -> Option<u32> {
        if self.by_text.is_empty() {
            return None;
        }
        let len = self.by_text.len();
        let mut slot = slot_of(hash_text(text), len);
        loop {
            match self.by_text[slot] {
                0 => return None,
                n if self.token(n - 1) == text => return Some(n - 1),
                _ => slot = next_slot(slot, len),
            }
        }
    }

    fn merge_of(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        if left < 256 && right < 256 && !self.low_pairs.is_empty() {
            let found = self.low_pairs[(left << 8 | right) as usize];
            return (found.1 != NO_ID).then_some(found);
        }
        if self.merges.is_empty() {
            return None;
        }
        let pair = (u64::from(left) << 32) | u64::from(right);
        let len = self.merges.len();
        let mut slot = slot_of(hash_pair(pair), len);
        loop {
            let s = self.merges[slot];
            if s.pair == EMPTY_PAIR {
                return None;
            }
            if s.pair == pair {
                return Some((s.rank, s.id));
            }
            slot = next_slot(slot, len);
        }
    }

    /// Builds the text table once every token is in, and the byte-fallback ids.
    fn index_texts(&mut self) {
        let slots = slots_for(self.ends.len());
        let mut by_text = vec![0u32; slots];
        for id in 0..self.ends.len() as u32 {
            let text = self.token(id);
            if text.is_empty() {
                continue;
            }
            let mut slot = slot_of(hash_text(text), slots);
            while by_text[slot] != 0 {
                slot = next_slot(slot, slots);
            }
            by_text[slot] = id + 1;
        }
        self.by_text = by_text;
        self.bytes = (0..=255u8)
            .map(|b| {
                self.id_of(format!("<0x{b:02X}>").as_bytes())
                    .unwrap_or(NO_ID)
            })
            .collect();
    }

    /// Puts the vocabulary's tokens, read in the file's order, in id order: each token's text
    /// is in `read` at its (start, end), by id (an id listed twice keeps its last text; an id
    /// the file leaves out is an empty token).
    fn set_tokens(&mut self, read: &[u8], tokens: &[(u32, u32, u32)]) {
        let size = tokens.iter().map(|t| t.0 as usize + 1).max().unwrap_or(0);
        let mut span = vec![(0u32, 0u32); size];
        for &(id, start, end) in tokens {
            span[id as usize] = (start, end);
        }
        self.text = Vec::with_capacity(read.len());
        self.ends = Vec::with_capacity(size);
        for (start, end) in span {
            self.text
                .extend_from_slice(&read[start as usize..end as usize]);
            self.ends.push(self.text.len() as u32);
        }
    }

    fn add_merge(&mut self, left: u32, right: u32, id: u32) -> Result<(), String> {
        if self.merges_held >= MAX_MERGES {
            return Err(format!(
                "more than {MAX_MERGES} merges, past what a vocabulary may have"
            ));
        }
        if slots_for(self.merges_held + 1) > self.merges.len() {
            self.resize_merges(slots_for(self.merges.len() * 2));
        }
        let pair = (u64::from(left) << 32) | u64::from(right);
        let len = self.merges.len();
        let mut slot = slot_of(hash_pair(pair), len);
        loop {
            let s = &mut self.merges[slot];
            if s.pair == pair {
                // A pair listed twice: the later entry wins, as in the tokenizers crate, whose
                // map of merges keeps the last one inserted.
                s.rank = self.merge_count as u32;
                s.id = id;
                self.merge_count += 1;
                return Ok(());
            }
            if s.pair == EMPTY_PAIR {
                *s = MergeSlot {
                    pair,
                    rank: self.merge_count as u32,
                    id,
                };
                self.merge_count += 1;
                self.merges_held += 1;
                return Ok(());
            }
            slot = next_slot(slot, len);
        }
    }

    /// Moves the merges into a table of `slots` slots.
    fn resize_merges(&mut self, slots: usize) {
        let empty = MergeSlot {
            pair: EMPTY_PAIR,
            rank: 0,
            id: 0,
        };
        let old = std::mem::replace(&mut self.merges, vec![empty; slots]);
        for s in old.into_iter().filter(|s| s.pair != EMPTY_PAIR) {
            let mut slot = slot_of(hash_pair(s.pair), slots);
            while self.merges[slot].pair != EMPTY_PAIR {
                slot = next_slot(slot, slots);
            }
            self.merges[slot] = s;
        }
    }

    /// Once every merge is in: the table no larger than its contents need.
    fn fit_merges(&mut self) {
        if self.merges_held > 0 && slots_for(self.merges_held) < self.merges.len() {
            self.resize_merges(slots_for(self.merges_held));
        }
    }

    /// The word's symbols before any merge: each character's token, else its bytes' fallback
    /// tokens, else the unknown token (runs of it fused when the file says so); a character
    /// with none of these is left out, as the tokenizers crate leaves it out.
    fn symbols(&self, word: &str, out: &mut Vec<Symbol>) {
        out.clear();
        let unk = self.unk.as_deref().and_then(|u| self.id_of(u.as_bytes()));
        let mut pending_unk: Option<(u32, u32)> = None;
        for (i, c) in word.char_indices() {
            let s = &word[i..i + c.len_utf8()];
            let len = s.len() as u32;
            if let Some(id) = self.id_of(s.as_bytes()) {
                if let Some((u, l)) = pending_unk.take() {
                    out.push(Symbol::new(u, l));
                }
                out.push(Symbol::new(id, len));
                continue;
            }
            if self.byte_fallback && s.bytes().all(|b| self.bytes[b as usize] != NO_ID) {
                if let Some((u, l)) = pending_unk.take() {
                    out.push(Symbol::new(u, l));
                }
                out.extend(s.bytes().map(|b| Symbol::new(self.bytes[b as usize], 1)));
                continue;
            }
            if let Some(u) = unk {
                pending_unk = match pending_unk {
                    Some((u, l)) if self.fuse_unk => Some((u, l + len)),
                    Some(prev) => {
                        out.push(Symbol::new(prev.0, prev.1));
                        Some((u, len))
                    }
                    None => Some((u, len)),
                };
            }
        }
        if let Some((u, l)) = pending_unk {
            out.push(Symbol::new(u, l));
        }
    }

    /// Merges the symbols of one word, lowest rank first (leftmost among equals); the merged
    /// away ones are left with length 0.
    fn merge(&self, symbols: &mut [Symbol], queue: &mut MergeQueue) {
        if symbols.len() <= SHORT_WORD {
            self.merge_short(symbols);
            return;
        }
        queue.clear();
        let n = symbols.len();
        for i in 0..n.saturating_sub(1) {
            let pair = [symbols[i].id, symbols[i + 1].id];
            if let Some((rank, id)) = self.merge_of(pair[0], pair[1]) {
                queue.push(Reverse((rank, i, id, pair)));
            }
        }
        while let Some(Reverse((_, pos, id, pair))) = queue.pop() {
            let left = symbols[pos];
            if left.len == 0 || left.next < 0 {
                continue;
            }
            let next = left.next as usize;
            let right = symbols[next];
            // A stale entry: one of the two has changed since it was queued. (A symbol changes
            // only by taking in the one after it, so the same two ids are the same pair, and
            // the same merge, as the tokenizers crate's check of the merge's id finds.)
            if [left.id, right.id] != pair {
                continue;
            }
            symbols[pos].id = id;
            symbols[pos].len += right.len;
            symbols[pos].next = right.next;
            symbols[next].len = 0;
            if right.next >= 0 {
                symbols[right.next as usize].prev = pos as isize;
            }
            let current = symbols[pos];
            if current.prev >= 0 {
                let prev = current.prev as usize;
                let pair = [symbols[prev].id, current.id];
                if let Some((rank, id)) = self.merge_of(pair[0], pair[1]) {
                    queue.push(Reverse((rank, prev, id, pair)));
                }
            }
            if current.next >= 0 {
                let pair = [current.id, symbols[current.next as usize].id];
                if let Some((rank, id)) = self.merge_of(pair[0], pair[1]) {
                    queue.push(Reverse((rank, pos, id, pair)));
                }
            }
        }
    }

    /// The same vocabulary with each token's text as the bytes it stands for: for a byte-level
    /// vocabulary (GPT-2's alphabet, `Ġ` for a space), counted over raw text pieces with
    /// [`Self::count_bytes`].
    pub fn into_raw_bytes(mut self) -> Self {
        let alphabet = byte_level_alphabet();
        let mut text = Vec::with_capacity(self.text.len());
        let mut ends = Vec::with_capacity(self.ends.len());
        for id in 0..self.ends.len() as u32 {
            let token = String::from_utf8_lossy(self.token(id)).into_owned();
            for c in token.chars() {
                match alphabet.get(c as usize) {
                    Some(&b) if b != NO_BYTE => text.push(b as u8),
                    _ => text.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                }
            }
            ends.push(text.len() as u32);
        }
        self.text = text;
        self.ends = ends;
        self.index_texts();
        self.single = (0..=255u8)
            .map(|b| self.id_of(&[b]).unwrap_or(NO_ID))
            .collect();
        self.low_pairs = (0..256u32 * 256)
            .map(|pair| {
                self.merge_of(pair >> 8, pair & 0xff)
                    .unwrap_or((u32::MAX, NO_ID))
            })
            .collect();
        self
    }

    /// Tokens in one pre-tokenized piece of raw text, for a vocabulary made with
    /// [`Self::into_raw_bytes`]: a piece that is one whole token is that token (tiktoken's
    /// rule), else its bytes are merged.
    pub fn count_bytes(&self, piece: &[u8]) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if self.id_of(piece).is_some() {
            return 1;
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (symbols, queue) = &mut *scratch;
            self.byte_symbols(piece, symbols);
            link(symbols);
            self.merge(symbols, queue);
            symbols.iter().filter(|s| s.len > 0).count()
        })
    }

    /// [`Self::merge`] for a short word: the same merges in the same order (lowest rank, then
    /// leftmost), found by looking at every pair each time instead of through a heap, which is
    /// faster when there are few.
    fn merge_short(&self, symbols: &mut [Symbol]) {
        let n = symbols.len();
        // The merge each live symbol makes with the next one, if any.
        let mut pair = [(u32::MAX, NO_ID); SHORT_WORD];
        let merge_at = |symbols: &[Symbol], i: usize| -> (u32, u32) {
            let next = symbols[i].next;
            if symbols[i].len == 0 || next < 0 {
                return (u32::MAX, NO_ID);
            }
            self.merge_of(symbols[i].id, symbols[next as usize].id)
                .unwrap_or((u32::MAX, NO_ID))
        };
        for (i, p) in pair.iter_mut().enumerate().take(n) {
            *p = merge_at(symbols, i);
        }
        loop {
            let mut best = (u32::MAX, usize::MAX);
            let mut i = 0isize;
            while i >= 0 {
                let at = i as usize;
                if pair[at].0 < best.0 {
                    best = (pair[at].0, at);
                }
                i = symbols[at].next;
            }
            if best.0 == u32::MAX {
                return;
            }
            let pos = best.1;
            let next = symbols[pos].next as usize;
            let right = symbols[next];
            symbols[pos].id = pair[pos].1;
            symbols[pos].len += right.len;
            symbols[pos].next = right.next;
            symbols[next].len = 0;
            pair[next] = (u32::MAX, NO_ID);
            if right.next >= 0 {
                symbols[right.next as usize].prev = pos as isize;
            }
            pair[pos] = merge_at(symbols, pos);
            if symbols[pos].prev >= 0 {
                let prev = symbols[pos].prev as usize;
                pair[prev] = merge_at(symbols, prev);
            }
        }
    }

    /// The byte length of each token of one raw piece, in order (see [`Self::count_bytes`]).
    pub fn token_lengths(&self, piece: &[u8]) -> Vec<u32> {
        if self.id_of(piece).is_some() {
            return vec![piece.len() as u32];
        }
        let mut symbols = Vec::new();
        let mut queue = BinaryHeap::new();
        self.byte_symbols(piece, &mut symbols);
        link(&mut symbols);
        self.merge(&mut symbols, &mut queue);
        symbols
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| s.len)
            .collect()
    }

    fn byte_symbols(&self, piece: &[u8], out: &mut Vec<Symbol>) {
        out.clear();
        out.extend(
            piece
                .iter()
                .map(|&b| self.single[b as usize])
                .filter(|&id| id != NO_ID)
                .map(|id| Symbol::new(id, 1)),
        );
    }

    /// Tokens in one pre-tokenized word.
    pub fn count_word(&self, word: &str) -> usize {
        if word.is_empty() {
            return 0;
        }
        if self.ignore_merges && self.id_of(word.as_bytes()).is_some() {
            return 1;
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let (symbols, queue) = &mut *scratch;
            self.symbols(word, symbols);
            link(symbols);
            self.merge(symbols, queue);
            symbols.iter().filter(|s| s.len > 0).count()
        })
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<(Vec<Symbol>, MergeQueue)> =
        Default::default();
}

#[derive(Debug, Clone, Copy)]
struct Symbol {
    id: u32,
    len: u32,
    prev: isize,
    next: isize,
}

impl Symbol {
    fn new(id: u32, len: u32) -> Self {
        Symbol {
            id,
            len,
            prev: -1,
            next: -1,
        }
    }
}

fn link(symbols: &mut [Symbol]) {
    let n = symbols.len() as isize;
    for (i, s) in symbols.iter_mut().enumerate() {
        let i = i as isize;
        s.prev = i - 1;
        s.next = if i + 1 < n { i + 1 } else { -1 };
    }
}

impl Model for CompactBpe {
    type Trainer = tokenizers::models::bpe::BpeTrainer;

    fn tokenize(&self, sequence: &str) -> tokenizers::Result<Vec<Token>> {
        if sequence.is_empty() {
            return Ok(Vec::new());
        }
        let value = |id: u32| String::from_utf8_lossy(self.token(id)).into_owned();
        if self.ignore_merges {
            if let Some(id) = self.id_of(sequence.as_bytes()) {
                return Ok(vec![Token::new(id, value(id), (0, sequence.len()))]);
            }
        }
        let mut symbols = Vec::new();
        let mut queue = BinaryHeap::new();
        self.symbols(sequence, &mut symbols);
        link(&mut symbols);
        self.merge(&mut symbols, &mut queue);
        let mut at = 0;
        Ok(symbols
            .iter()
            .filter(|s| s.len > 0)
            .map(|s| {
                let start = at;
                at += s.len as usize;
                Token::new(s.id, value(s.id), (start, at))
            })
            .collect())
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.id_of(token.as_bytes())
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        ((id as usize) < self.ends.len())
            .then(|| String::from_utf8_lossy(self.token(id)).into_owned())
    }

    fn get_vocab(&self) -> std::collections::HashMap<String, u32> {
        (0..self.ends.len() as u32)
            .filter(|&id| !self.token(id).is_empty())
            .map(|id| (String::from_utf8_lossy(self.token(id)).into_owned(), id))
            .collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.ends.len()
    }

    fn save(
        &self,
        _folder: &std::path::Path,
        _prefix: Option<&str>,
    ) -> tokenizers::Result<Vec<std::path::PathBuf>> {
        Err("Promptloom's byte-pair model is read-only".into())
    }

    fn get_trainer(&self) -> Self::Trainer {
        Self::Trainer::default()
    }
}
