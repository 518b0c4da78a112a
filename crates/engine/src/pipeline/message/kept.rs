//! Rewritten history messages kept for as long as a caller holds them beside its session, so
//! that a build's messages borrow them as they borrow the stored messages (RULES 5.2).
//!
//! A history regex rule's rewrite of a stored message is the same every build and is kept
//! between builds ([`Rewritten`]). A message that shared it by a counted reference paid for the
//! count twice a build (taken by the regex pass, given back when the build result was dropped),
//! over every rewritten message of a long session. Borrowed from a [`KeptRewrites`] the caller
//! holds, it costs nothing to take or give back.

use std::sync::Arc;

use super::{RewriteParts, Rewritten};
use crate::cache::{BuildCache, KeptStore};
use crate::model::Session;

/// Rewritten history messages that builds borrow for as long as the caller holds this store.
/// It only grows: [`KeptRewrites::of_session`] gives a new one when it has grown well past
/// the session.
pub type KeptRewrites = KeptStore<Rewritten>;

/// Where a rewrite was put in a [`KeptRewrites`], to find it there again on the next build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptAt {
    store: u64,
    slot: u32,
}

/// A rewrite borrowed from a [`KeptRewrites`], for a message to share.
#[derive(Debug, Clone, Copy)]
pub struct KeptRewrite<'s>(pub(super) &'s RewriteParts);

impl KeptRewrite<'_> {
    /// The new text.
    pub fn content_arc(&self) -> &Arc<str> {
        &self.0.content
    }
}

impl KeptStore<Rewritten> {
    /// The store `cache` keeps for `session`'s builds (see [`BuildCache::kept_store`]).
    pub fn of_session(cache: &BuildCache, session: &Session) -> Arc<Self> {
        cache.kept_store(session)
    }

    /// `rewritten`, borrowed from this store: found where `at` says it was put, else put in
    /// now (and `at` set to where). `None` when the store is full.
    pub fn share(&self, rewritten: &Rewritten, at: &mut Option<KeptAt>) -> Option<KeptRewrite<'_>> {
        let found = at
            .and_then(|at| self.get_at(at))
            // The same parts, not a rewrite put in under that place by another memo.
            .filter(|kept| std::ptr::eq(kept.0, &*rewritten.0));
        if let Some(kept) = found {
            return Some(kept);
        }
        let (slot, kept) = self.put(rewritten.clone())?;
        *at = Some(KeptAt {
            store: self.id(),
            slot,
        });
        Some(KeptRewrite(&kept.0))
    }

    /// The rewrite put in at `at`, when `at` is a place in this store.
    pub fn get_at(&self, at: KeptAt) -> Option<KeptRewrite<'_>> {
        if at.store != self.id() {
            return None;
        }
        self.get(at.slot).map(|r| KeptRewrite(&r.0))
    }
}
