//! Lining up two builds' messages row by row (RULES 9.8): which messages the two contexts share,
//! which changed, and which only one of them has.
//!
//! A message is known by its source: the template (or lorebook entry, processor, one-turn
//! content) that made it, or for history its stored position, whether it went in as history or
//! as the pending input. Two messages of one source whose role or text differ are one message
//! that changed.
//!
//! Runs of identical messages at the start and the end (a long history, mostly) are paired in
//! one pass; the part between is aligned by a longest common subsequence of sources in which an
//! identical pair counts double, so identical pairs win over changed ones. Should that part be
//! too long for the table ([`LCS_CELLS`]), messages whose source occurs once on each side are
//! paired in order (patience), and the gaps between them aligned again.

use std::collections::HashMap;

use xxhash_rust::xxh3::Xxh3;

use super::RowKind;
use crate::pipeline::{BuiltMessage, SourceKind};

/// Above this many cells (middle length × middle length) the LCS table is not built.
pub const LCS_CELLS: usize = 1_000_000;

/// One aligned pair, by index into each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub kind: RowKind,
    pub left: Option<usize>,
    pub right: Option<usize>,
}

/// A message's source, hashed: what it is known by across the two builds.
pub fn source_key(m: &BuiltMessage<'_>) -> u64 {
    let s = m.source();
    let mut h = Xxh3::new();
    match s.kind {
        // History is known by its stored position, as history or as the pending input alike.
        SourceKind::History | SourceKind::Input => {
            h.update(b"history:");
            h.update(&s.history_index.unwrap_or(u32::MAX).to_le_bytes());
        }
        kind => {
            h.update(kind.as_str().as_bytes());
            h.update(b":");
            let id = s
                .template_id
                .as_deref()
                .or(s.entry_id.as_deref())
                .or(s.processor.as_deref());
            match (id, s.ephemeral) {
                (Some(id), _) => h.update(id.as_bytes()),
                (None, Some(e)) => h.update(format!("{e:?}").as_bytes()),
                (None, None) => {}
            }
        }
    }
    h.digest()
}

/// A message's source, role and text, hashed: identical messages have the same.
fn full_key(m: &BuiltMessage<'_>, source: u64) -> u64 {
    let mut h = Xxh3::new();
    h.update(&source.to_le_bytes());
    h.update(m.role.as_str().as_bytes());
    h.update(&[0]);
    h.update(m.name().unwrap_or("").as_bytes());
    h.update(&[0]);
    h.update(m.content().as_bytes());
    h.digest()
}

struct Sides {
    lk: Vec<u64>,
    rk: Vec<u64>,
    lf: Vec<u64>,
    rf: Vec<u64>,
    rows: Vec<Pair>,
}

impl Sides {
    fn pair(&mut self, i: usize, j: usize) {
        let kind = if self.lf[i] == self.rf[j] {
            RowKind::Same
        } else {
            RowKind::Changed
        };
        self.rows.push(Pair {
            kind,
            left: Some(i),
            right: Some(j),
        });
    }

    fn only_left(&mut self, i: usize) {
        self.rows.push(Pair {
            kind: RowKind::Left,
            left: Some(i),
            right: None,
        });
    }

    fn only_right(&mut self, j: usize) {
        self.rows.push(Pair {
            kind: RowKind::Right,
            left: None,
            right: Some(j),
        });
    }
}

/// The rows of `left` against `right`, in the order of both lists.
pub fn align(left: &[BuiltMessage<'_>], right: &[BuiltMessage<'_>]) -> Vec<Pair> {
    let lk: Vec<u64> = left.iter().map(source_key).collect();
    let rk: Vec<u64> = right.iter().map(source_key).collect();
    let lf = left.iter().zip(&lk).map(|(m, &k)| full_key(m, k)).collect();
    let rf = right
        .iter()
        .zip(&rk)
        .map(|(m, &k)| full_key(m, k))
        .collect();
    let mut sides = Sides {
        lk,
        rk,
        lf,
        rf,
        rows: Vec::with_capacity(left.len().max(right.len())),
    };
    let (n, m) = (left.len(), right.len());
    let shorter = n.min(m);
    let mut head = 0;
    while head < shorter && sides.lf[head] == sides.rf[head] {
        head += 1;
    }
    let mut tail = 0;
    while tail < shorter - head && sides.lf[n - 1 - tail] == sides.rf[m - 1 - tail] {
        tail += 1;
    }
    for i in 0..head {
        sides.pair(i, i);
    }
    middle(&mut sides, head, n - tail, head, m - tail, true);
    for t in (1..=tail).rev() {
        sides.pair(n - t, m - t);
    }
    sides.rows
}

/// Aligns `left[a0..a1)` with `right[b0..b1)` onto the rows.
fn middle(sides: &mut Sides, a0: usize, a1: usize, b0: usize, b1: usize, patience: bool) {
    let (n, m) = (a1 - a0, b1 - b0);
    if n == 0 || m == 0 {
        (a0..a1).for_each(|i| sides.only_left(i));
        (b0..b1).for_each(|j| sides.only_right(j));
        return;
    }
    if n.saturating_mul(m) <= LCS_CELLS {
        lcs(sides, a0, a1, b0, b1);
        return;
    }
    let anchors = if patience {
        unique_anchors(sides, a0, a1, b0, b1)
    } else {
        Vec::new()
    };
    if anchors.is_empty() {
        // Nothing to hold on to: one side's messages, then the other's.
        (a0..a1).for_each(|i| sides.only_left(i));
        (b0..b1).for_each(|j| sides.only_right(j));
        return;
    }
    let (mut i, mut j) = (a0, b0);
    for (ai, bj) in anchors {
        middle(sides, i, ai, j, bj, false);
        sides.pair(ai, bj);
        i = ai + 1;
        j = bj + 1;
    }
    middle(sides, i, a1, j, b1, false);
}

/// The table of a longest common subsequence of sources, an identical pair counting double.
fn lcs(sides: &mut Sides, a0: usize, a1: usize, b0: usize, b1: usize) {
    let (n, m) = (a1 - a0, b1 - b0);
    let w = m + 1;
    // score[i][j]: the best alignment of left[a0+i..a1) with right[b0+j..b1).
    let mut score = vec![0u32; (n + 1) * w];
    let gain = |s: &Sides, i: usize, j: usize| -> Option<u32> {
        (s.lk[a0 + i] == s.rk[b0 + j]).then(|| if s.lf[a0 + i] == s.rf[b0 + j] { 2 } else { 1 })
    };
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let mut best = score[(i + 1) * w + j].max(score[i * w + j + 1]);
            if let Some(g) = gain(sides, i, j) {
                best = best.max(score[(i + 1) * w + j + 1] + g);
            }
            score[i * w + j] = best;
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let here = score[i * w + j];
        if let Some(g) = gain(sides, i, j) {
            if here == score[(i + 1) * w + j + 1] + g {
                sides.pair(a0 + i, b0 + j);
                i += 1;
                j += 1;
                continue;
            }
        }
        if score[(i + 1) * w + j] >= score[i * w + j + 1] {
            sides.only_left(a0 + i);
            i += 1;
        } else {
            sides.only_right(b0 + j);
            j += 1;
        }
    }
    (a0 + i..a1).for_each(|i| sides.only_left(i));
    (b0 + j..b1).for_each(|j| sides.only_right(j));
}

/// Pairs of positions whose source occurs exactly once on each side, the longest run of them in
/// order on both sides (patience diff): O(n log n).
fn unique_anchors(
    sides: &Sides,
    a0: usize,
    a1: usize,
    b0: usize,
    b1: usize,
) -> Vec<(usize, usize)> {
    fn once(keys: &[u64], from: usize, to: usize) -> HashMap<u64, Option<usize>> {
        let mut seen: HashMap<u64, Option<usize>> = HashMap::new();
        for (i, k) in keys.iter().enumerate().take(to).skip(from) {
            seen.entry(*k)
                .and_modify(|at| *at = None)
                .or_insert(Some(i));
        }
        seen
    }
    let on_left = once(&sides.lk, a0, a1);
    let on_right = once(&sides.rk, b0, b1);
    let pairs: Vec<(usize, usize)> = (a0..a1)
        .filter_map(|i| {
            let k = sides.lk[i];
            match (on_left.get(&k), on_right.get(&k)) {
                (Some(Some(at)), Some(Some(bj))) if *at == i => Some((i, *bj)),
                _ => None,
            }
        })
        .collect();
    // The longest increasing run of right positions, in the left order.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous = vec![usize::MAX; pairs.len()];
    for (p, &(_, bj)) in pairs.iter().enumerate() {
        let at = tails.partition_point(|&t| pairs[t].1 < bj);
        previous[p] = if at > 0 { tails[at - 1] } else { usize::MAX };
        if at == tails.len() {
            tails.push(p);
        } else {
            tails[at] = p;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut p = tails.last().copied().unwrap_or(usize::MAX);
    while p != usize::MAX {
        chain.push(pairs[p]);
        p = previous[p];
    }
    chain.reverse();
    chain
}
