//! The history that processors see (RULES 5.3): messages in intermediate form with
//! per-role indices, so that the n most recent messages of a role, a range of a role's messages
//! and a role's count come without scanning the whole history. The indices are made on the first
//! question about roles (most builds ask none) and kept right from then on.

use std::ops::Range;
use std::sync::OnceLock;

use super::PipelineMessage;
use crate::model::Role;

#[derive(Debug, Clone, Default)]
pub struct History<'s> {
    items: Vec<PipelineMessage<'s>>,
    /// For each role (by `Role::index`), the positions of its messages, ascending: made when
    /// first asked for, then kept right through every change.
    by_role: OnceLock<[Vec<u32>; 4]>,
    /// How many messages from the start are still the session's stored messages as the session
    /// loader put them in, in order: every change at a position below it lowers it.
    loaded: usize,
}

impl<'s> History<'s> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        History {
            items: Vec::with_capacity(n),
            by_role: OnceLock::new(),
            loaded: 0,
        }
    }

    /// How many messages from the start are the session's stored messages, in order, as the
    /// session loader put them in: nothing inserted, removed or changed among them since.
    pub fn loaded(&self) -> usize {
        self.loaded
    }

    /// Notes that every message so far is a stored message as the session loader put it in.
    pub(crate) fn mark_loaded(&mut self) {
        self.loaded = self.items.len();
    }

    /// Notes a change at `index`.
    fn changed_at(&mut self, index: usize) {
        self.loaded = self.loaded.min(index);
    }

    /// The per-role positions, made now if no one asked for them before.
    fn by_role(&self) -> &[Vec<u32>; 4] {
        self.by_role.get_or_init(|| {
            let mut by_role: [Vec<u32>; 4] = Default::default();
            for (i, m) in self.items.iter().enumerate() {
                by_role[m.role.index()].push(i as u32);
            }
            by_role
        })
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&PipelineMessage<'s>> {
        self.items.get(index)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, PipelineMessage<'s>> {
        self.items.iter()
    }

    pub fn as_slice(&self) -> &[PipelineMessage<'s>] {
        &self.items
    }

    pub fn last(&self) -> Option<&PipelineMessage<'s>> {
        self.items.last()
    }

    pub fn push(&mut self, message: PipelineMessage<'s>) {
        if let Some(by_role) = self.by_role.get_mut() {
            by_role[message.role.index()].push(self.items.len() as u32);
        }
        self.items.push(message);
    }

    /// Inserts at `index` (clamped to the end); later positions shift by one in every index.
    pub fn insert(&mut self, index: usize, message: PipelineMessage<'s>) {
        let index = index.min(self.items.len());
        self.changed_at(index);
        if let Some(by_role) = self.by_role.get_mut() {
            for positions in by_role.iter_mut() {
                let from = positions.partition_point(|&p| (p as usize) < index);
                for p in &mut positions[from..] {
                    *p += 1;
                }
            }
            let role = &mut by_role[message.role.index()];
            let at = role.partition_point(|&p| (p as usize) < index);
            role.insert(at, index as u32);
        }
        self.items.insert(index, message);
    }

    /// Removes and returns the message at `index`, or `None` past the end.
    pub fn remove(&mut self, index: usize) -> Option<PipelineMessage<'s>> {
        if index >= self.items.len() {
            return None;
        }
        let message = self.items.remove(index);
        self.changed_at(index);
        if let Some(by_role) = self.by_role.get_mut() {
            let role = &mut by_role[message.role.index()];
            if let Ok(at) = role.binary_search(&(index as u32)) {
                role.remove(at);
            }
            for positions in by_role.iter_mut() {
                let from = positions.partition_point(|&p| (p as usize) <= index);
                for p in &mut positions[from..] {
                    *p -= 1;
                }
            }
        }
        Some(message)
    }

    /// Keeps the messages for which `keep` is true, rebuilding the indices once.
    pub fn retain(&mut self, mut keep: impl FnMut(&PipelineMessage<'s>) -> bool) {
        self.retain_indexed(|_, m| keep(m));
    }

    /// Keeps the messages for which `keep(position, message)` is true, rebuilding the indices
    /// once.
    pub fn retain_indexed(&mut self, mut keep: impl FnMut(usize, &PipelineMessage<'s>) -> bool) {
        let mut position = 0;
        let mut first_out = None;
        self.items.retain(|m| {
            let kept = keep(position, m);
            if !kept && first_out.is_none() {
                first_out = Some(position);
            }
            position += 1;
            kept
        });
        if let Some(at) = first_out {
            self.changed_at(at);
        }
        self.reindex();
    }

    /// Replaces message `index` whole; its role may change, so the indices are kept right.
    pub fn replace(&mut self, index: usize, message: PipelineMessage<'s>) {
        let Some(slot) = self.items.get_mut(index) else {
            return;
        };
        self.loaded = self.loaded.min(index);
        let old_role = slot.role;
        *slot = message;
        let new_role = self.items[index].role;
        if let (true, Some(by_role)) = (old_role != new_role, self.by_role.get_mut()) {
            let at = index as u32;
            let old = &mut by_role[old_role.index()];
            if let Ok(k) = old.binary_search(&at) {
                old.remove(k);
            }
            let new = &mut by_role[new_role.index()];
            let k = new.partition_point(|&p| p < at);
            new.insert(k, at);
        }
    }

    /// Positions of every message of `role`, ascending.
    pub fn positions_of(&self, role: Role) -> &[u32] {
        &self.by_role()[role.index()]
    }

    /// Replaces the content of message `index` (roles stay, so the indices stay right).
    pub fn set_content(&mut self, index: usize, content: impl Into<std::sync::Arc<str>>) {
        if let Some(m) = self.items.get_mut(index) {
            m.set_content(content);
            self.changed_at(index);
        }
    }

    /// Gives stored message `index` the text of `rewritten` (see
    /// [`PipelineMessage::set_rewritten`]); gives it back, changing nothing, when it cannot.
    pub fn set_rewritten(
        &mut self,
        index: usize,
        rewritten: super::KeptRewrite<'s>,
    ) -> Result<(), super::KeptRewrite<'s>> {
        self.give(index, rewritten, |m, r| m.set_rewritten(r))
    }

    /// Gives the message at `index`, stored message `index` as stored, the text of `rewritten`
    /// (see [`PipelineMessage::set_replayed`]); gives it back, changing nothing, when it cannot.
    pub fn set_replayed(
        &mut self,
        index: usize,
        rewritten: super::KeptRewrite<'s>,
        named: bool,
    ) -> Result<(), super::KeptRewrite<'s>> {
        self.give(index, rewritten, |m, r| {
            m.set_replayed(index as u32, r, named)
        })
    }

    /// `rewritten` to the message at `index` by `set`, the change noted when it took it.
    fn give(
        &mut self,
        index: usize,
        rewritten: super::KeptRewrite<'s>,
        set: impl FnOnce(
            &mut PipelineMessage<'s>,
            super::KeptRewrite<'s>,
        ) -> Result<(), super::KeptRewrite<'s>>,
    ) -> Result<(), super::KeptRewrite<'s>> {
        let Some(m) = self.items.get_mut(index) else {
            return Err(rewritten);
        };
        let done = set(m, rewritten);
        if done.is_ok() {
            self.changed_at(index);
        }
        done
    }

    /// Positions of the `n` most recent messages of `role`, oldest first.
    pub fn recent_by_role(&self, role: Role, n: usize) -> &[u32] {
        let positions = &self.by_role()[role.index()];
        &positions[positions.len().saturating_sub(n)..]
    }

    /// Positions of the `range`-th messages of `role` (0 = its oldest), clamped.
    pub fn range_by_role(&self, role: Role, range: Range<usize>) -> &[u32] {
        let positions = &self.by_role()[role.index()];
        let end = range.end.min(positions.len());
        let start = range.start.min(end);
        &positions[start..end]
    }

    pub fn count_by_role(&self, role: Role) -> usize {
        self.by_role()[role.index()].len()
    }

    /// The newest message of `role`.
    pub fn last_of_role(&self, role: Role) -> Option<&PipelineMessage<'s>> {
        self.by_role()[role.index()]
            .last()
            .map(|&p| &self.items[p as usize])
    }

    pub fn into_vec(self) -> Vec<PipelineMessage<'s>> {
        self.items
    }

    /// The same history with every message's parts its own, so that it no longer borrows the
    /// session.
    pub fn into_owned(self) -> History<'static> {
        History {
            items: self
                .items
                .into_iter()
                .map(PipelineMessage::into_owned)
                .collect(),
            by_role: self.by_role,
            loaded: self.loaded,
        }
    }

    /// Forgets the per-role positions after a change that moves many messages; the next
    /// question makes them again.
    fn reindex(&mut self) {
        self.by_role.take();
    }
}

impl<'s> FromIterator<PipelineMessage<'s>> for History<'s> {
    fn from_iter<I: IntoIterator<Item = PipelineMessage<'s>>>(iter: I) -> Self {
        let iter = iter.into_iter();
        // One more: the session loader may append the pending input.
        let mut items = Vec::with_capacity(iter.size_hint().0 + 1);
        items.extend(iter);
        History {
            items,
            by_role: OnceLock::new(),
            loaded: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Source;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Push(Role),
        Insert(usize, Role),
        Remove(usize),
        Replace(usize, Role),
        RetainEvery(usize),
    }

    fn role() -> impl Strategy<Value = Role> {
        prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool])
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => role().prop_map(Op::Push),
            2 => (0usize..60, role()).prop_map(|(i, r)| Op::Insert(i, r)),
            2 => (0usize..60).prop_map(Op::Remove),
            1 => (0usize..60, role()).prop_map(|(i, r)| Op::Replace(i, r)),
            1 => (2usize..5).prop_map(Op::RetainEvery),
        ]
    }

    fn message(role: Role, tag: usize) -> PipelineMessage<'static> {
        PipelineMessage::new(role, format!("m{tag}"), Source::history(tag))
    }

    /// The positions of `role`'s messages in `messages`, by a plain scan.
    fn positions_in(messages: &[PipelineMessage], role: Role) -> Vec<u32> {
        messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == role)
            .map(|(i, _)| i as u32)
            .collect()
    }

    #[test]
    fn messages_pushed_after_the_loaded_ones_or_changed_past_them_leave_them_loaded() {
        let mut h: History = (0..4).map(|i| message(Role::User, i)).collect();
        assert_eq!(h.loaded(), 0, "none until the loader says so");
        h.mark_loaded();
        h.push(message(Role::User, 4));
        h.set_content(4, "changed");
        assert_eq!(h.loaded(), 4);
        h.set_content(2, "changed");
        assert_eq!(h.loaded(), 2);
        h.retain(|m| m.content() != "m1");
        assert_eq!(h.loaded(), 1);
    }

    proptest! {
        /// Every operation keeps the per-role indices equal to a fresh scan of the messages, and
        /// the messages it counts as loaded are the first ones pushed, each still in its place.
        #[test]
        fn per_role_indices_stay_right_through_every_operation(ops in prop::collection::vec(op(), 0..80)) {
            let mut h = History::new();
            // The same operations on a history asked about roles only at the end: its positions
            // are made then, not kept through the changes.
            let mut lazy = History::new();
            let mut model: Vec<PipelineMessage> = Vec::new();
            // Ten loaded messages first, `m0` to `m9`; every later message has a tag from 100.
            for tag in 0..10 {
                let r = [Role::User, Role::Assistant][tag % 2];
                h.push(message(r, tag));
                lazy.push(message(r, tag));
                model.push(message(r, tag));
            }
            h.mark_loaded();
            prop_assert_eq!(h.loaded(), 10);
            for (tag, op) in ops.into_iter().enumerate() {
                let tag = tag + 100;
                match op {
                    Op::Push(r) => {
                        h.push(message(r, tag));
                        lazy.push(message(r, tag));
                        model.push(message(r, tag));
                    }
                    Op::Insert(i, r) => {
                        h.insert(i, message(r, tag));
                        lazy.insert(i, message(r, tag));
                        model.insert(i.min(model.len()), message(r, tag));
                    }
                    Op::Remove(i) => {
                        let removed = h.remove(i);
                        lazy.remove(i);
                        prop_assert_eq!(removed.is_some(), i < model.len());
                        if i < model.len() {
                            model.remove(i);
                        }
                    }
                    Op::Replace(i, r) => {
                        h.replace(i, message(r, tag));
                        lazy.replace(i, message(r, tag));
                        if let Some(slot) = model.get_mut(i) {
                            *slot = message(r, tag);
                        }
                    }
                    Op::RetainEvery(k) => {
                        h.retain_indexed(|i, _| i % k != 0);
                        lazy.retain_indexed(|i, _| i % k != 0);
                        let mut i = 0;
                        model.retain(|_| {
                            i += 1;
                            (i - 1) % k != 0
                        });
                    }
                }
                prop_assert_eq!(h.as_slice(), model.as_slice());
                for (i, m) in model.iter().enumerate().take(h.loaded()) {
                    prop_assert_eq!(m.content(), format!("m{i}"));
                }
                for r in [Role::System, Role::User, Role::Assistant, Role::Tool] {
                    let scan = positions_in(&model, r);
                    prop_assert_eq!(h.positions_of(r), scan.as_slice());
                    prop_assert_eq!(h.count_by_role(r), scan.len());
                    let recent = &scan[scan.len().saturating_sub(3)..];
                    prop_assert_eq!(h.recent_by_role(r, 3), recent);
                    let range = &scan[1.min(scan.len())..4.min(scan.len())];
                    prop_assert_eq!(h.range_by_role(r, 1..4), range);
                    prop_assert_eq!(
                        h.last_of_role(r).map(|m| m.content().to_string()),
                        scan.last().map(|&p| model[p as usize].content().to_string())
                    );
                }
            }
            prop_assert_eq!(lazy.as_slice(), model.as_slice());
            for r in [Role::System, Role::User, Role::Assistant, Role::Tool] {
                let scan = positions_in(&model, r);
                prop_assert_eq!(lazy.positions_of(r), scan.as_slice());
            }
        }
    }
}
