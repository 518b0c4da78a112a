//! What the history regex rules keep of a session's last build for the next (RULES 5.2): what
//! they made of each stored message, and the last full pass, to replay.

use std::sync::Arc;

use crate::cache::ByStoredText;
use crate::model::Role;
use crate::pipeline::{History, KeptAt, KeptRewrites, Rewritten};

/// What the history regex rules made of one stored message (bit k: rule k).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RuleOutcome {
    /// The message with its rewritten text, shared by every build that keeps it; `None` when no
    /// rule changed it.
    pub text: Option<Rewritten>,
    /// The rules that changed it.
    pub changed: u64,
    /// The rules left out because they would have made it too long.
    pub too_long: u64,
    /// Where `text` was put in the caller's [`KeptRewrites`] (the last one it was put in).
    pub kept_at: Option<KeptAt>,
}

/// For which role and depth the history regex rules were run over one stored message, and
/// whether they did anything to it.
#[derive(Debug, Clone)]
struct Rewrite {
    role: Role,
    /// The depth it was at, where a rule's depth limits make depth matter; else `u32::MAX`.
    depth: u32,
    /// Whether its outcome is in [`HistoryRewrites::outcomes`]; else the rules did nothing.
    did_something: bool,
}

pub(super) const NOTHING: RuleOutcome = RuleOutcome {
    text: None,
    changed: 0,
    too_long: 0,
    kept_at: None,
};

/// What one set of history regex rules (RULES 5.2) made of each of a session's stored messages
/// in its last build with them, by stored position: a small row for every message, and apart,
/// in position order, the outcomes of those the rules did something to. A rebuild reads both
/// in order: the common row (nothing done) stays small, and no outcome is behind a pointer.
#[derive(Debug, Default)]
pub(crate) struct HistoryRewrites {
    rows: ByStoredText<Rewrite>,
    outcomes: Vec<(u32, RuleOutcome)>,
    /// What the last full pass rewrote among the stored messages.
    pub(super) replay: Option<Replay>,
    /// Where the last outcome asked for was in `outcomes`: a rebuild asks in order.
    next: usize,
}

impl HistoryRewrites {
    /// Brings the rows up to this build's stored texts (see [`ByStoredText::sync`]).
    pub fn sync(&mut self, session: &crate::model::Session, generation: Option<u64>) {
        self.rows.sync(session, generation);
    }

    /// What the rules made of stored message `index` with its stored text `text`, of this role,
    /// at this depth (`u32::MAX` where depth does not matter): `Some(None)` when they did
    /// nothing to it.
    pub fn get(
        &mut self,
        index: usize,
        text: &Arc<str>,
        role: Role,
        depth: u32,
    ) -> Option<Option<&mut RuleOutcome>> {
        let row = self
            .rows
            .get_stored(index, || text)
            .filter(|r| r.role == role && r.depth == depth)?;
        if !row.did_something {
            return Some(None);
        }
        let at = match self.outcomes.get(self.next) {
            Some((i, _)) if *i as usize == index => self.next,
            _ => self.find(index).ok()?,
        };
        self.next = at + 1;
        Some(Some(&mut self.outcomes[at].1))
    }

    fn find(&self, index: usize) -> Result<usize, usize> {
        self.outcomes
            .binary_search_by_key(&(index as u32), |(i, _)| *i)
    }

    pub fn set(
        &mut self,
        index: usize,
        text: &Arc<str>,
        role: Role,
        depth: u32,
        outcome: RuleOutcome,
    ) {
        let did_something = outcome != NOTHING;
        match (self.find(index), did_something) {
            (Ok(at), true) => self.outcomes[at].1 = outcome,
            (Ok(at), false) => {
                self.outcomes.remove(at);
            }
            (Err(at), true) => self.outcomes.insert(at, (index as u32, outcome)),
            (Err(_), false) => {}
        }
        self.rows.set_stored(
            index,
            text,
            Rewrite {
                role,
                depth,
                did_something,
            },
        );
    }

    /// Forgets positions past the end of a session that got shorter.
    pub fn truncate(&mut self, len: usize) {
        self.rows.truncate(len);
        let keep = self.outcomes.partition_point(|(i, _)| (*i as usize) < len);
        self.outcomes.truncate(keep);
    }
}

/// The kept outcomes' rule bits, counted a run of equal ones at a time (most rewritten
/// messages were changed by the same rules) and added to the per-rule counts when they change.
#[derive(Default)]
pub(super) struct Tally {
    changed: u64,
    too_long: u64,
    run: u32,
}

impl Tally {
    pub(super) fn add(&mut self, outcome: &RuleOutcome, changed: &mut [u32], too_long: &mut [u32]) {
        if (outcome.changed, outcome.too_long) != (self.changed, self.too_long) {
            self.flush(changed, too_long);
            (self.changed, self.too_long) = (outcome.changed, outcome.too_long);
        }
        self.run += 1;
    }

    /// Adds the run so far to the per-rule counts (kept only for at most 64 rules: one bit each).
    pub(super) fn flush(&mut self, changed: &mut [u32], too_long: &mut [u32]) {
        if self.run > 0 && self.changed | self.too_long != 0 {
            for (bits, counts) in [(self.changed, changed), (self.too_long, too_long)] {
                for (k, count) in counts.iter_mut().enumerate() {
                    *count += self.run * u32::from(bits & (1 << k) != 0);
                }
            }
        }
        self.run = 0;
    }
}

/// What a full pass of the history rules over a session's stored messages did, for the next
/// build over the same stored texts (the same generation) to do again without reading each
/// message: which positions it gave which kept rewrite, and the counts and growth it added.
#[derive(Debug)]
pub(super) struct Replay {
    pub(super) generation: u64,
    /// The stored messages, each at its own position in the history.
    pub(super) len: usize,
    rewrites: Vec<Replayed>,
    changed: Vec<u32>,
    too_long: Vec<u32>,
    growth: usize,
    /// Whether the counts and growth are in (the pass got past the last stored message).
    pub(super) closed: bool,
}

impl Replay {
    pub(super) fn new(generation: u64, len: usize) -> Self {
        Replay {
            generation,
            len,
            rewrites: Vec::new(),
            changed: Vec::new(),
            too_long: Vec::new(),
            growth: 0,
            closed: false,
        }
    }

    /// The counts and growth once the pass is past the stored messages.
    pub(super) fn close(&mut self, changed: &[u32], too_long: &[u32], growth: usize) {
        self.changed = changed.to_vec();
        self.too_long = too_long.to_vec();
        self.growth = growth;
        self.closed = true;
    }

    pub(super) fn sorted(mut self) -> Self {
        self.rewrites.sort_unstable_by_key(|r| r.at);
        self
    }

    /// Gives each position its rewrite from `keeper` and adds the counts; returns the growth.
    /// `None`, changing nothing, when a rewrite is not in `keeper` (a new store) or a message
    /// does not take it (the session loader's names setting changed).
    pub(super) fn apply<'s>(
        &self,
        keeper: &'s KeptRewrites,
        history: &mut History<'s>,
        changed: &mut [u32],
        too_long: &mut [u32],
    ) -> Option<usize> {
        // Every rewrite is looked for, and every message asked whether it takes it (its name
        // sent as then), before any is given, so that a miss changes nothing.
        if !self.rewrites.iter().all(|r| {
            keeper.get_at(r.kept).is_some()
                && history
                    .get(r.at as usize)
                    .is_some_and(|m| m.takes_replayed(r.at, r.named))
        }) {
            return None;
        }
        for &Replayed { at, kept, named } in &self.rewrites {
            let Some(r) = keeper.get_at(kept) else {
                continue;
            };
            // The same generation: the stored message is what the rewrite was made from.
            if let Err(r) = history.set_replayed(at as usize, r, named) {
                history.set_content(at as usize, Arc::clone(r.content_arc()));
            }
        }
        for (count, n) in changed.iter_mut().zip(&self.changed) {
            *count += n;
        }
        for (count, n) in too_long.iter_mut().zip(&self.too_long) {
            *count += n;
        }
        Some(self.growth)
    }
}

/// Notes in `record` that position `at` got the rewrite kept at `kept`.
/// `history` is the build's: whether the message there now sends a name (its rewrite has one).
pub(super) fn note(
    record: &mut Option<Replay>,
    history: &History<'_>,
    at: usize,
    kept: Option<KeptAt>,
) {
    let named = history.get(at).is_some_and(|m| m.name().is_some());
    match (record.as_mut(), kept) {
        (Some(r), Some(kept)) => r.rewrites.push(Replayed {
            at: at as u32,
            kept,
            named,
        }),
        _ => *record = None,
    }
}

/// A position a pass gave a kept rewrite.
#[derive(Debug, Clone, Copy)]
pub(super) struct Replayed {
    at: u32,
    kept: KeptAt,
    /// Whether the rewrite carries the stored name: the session loader sent it then.
    named: bool,
}
