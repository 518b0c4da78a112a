//! SillyTavern's activation of lorebook entries (RULES 5.11.1), the `lorebook` processor's
//! `activation: sillytavern`. The native activation (RULES 6, [`crate::lorebook::scan`]) is left
//! as it is; this one follows SillyTavern 1.12's scan:
//!
//! - The scanned messages, newest first, are one text: each message trimmed, each one started
//!   with a `\u{1}` marker and the messages separated by a newline; in recursion rounds the
//!   content of the entries activated so far follows, the same way.
//! - Every entry is read against that text with its own scan depth, case and whole-word settings
//!   (the book's when it has none). A key of several words matches as a substring; a key of one
//!   word, with whole words, must not touch an ASCII letter, digit or `_`.
//! - Rounds: the first scan; then recursion rounds while new entries whose content may be
//!   scanned activated; deeper scans a message at a time while `minActivations` is not reached;
//!   then each level of `delayUntilRecursion` in turn. `maxRecursionSteps` bounds the rounds.
//! - In each round: delay, cooldown and recursion flags leave entries out; sticky entries
//!   activate by themselves; the inclusion groups keep one entry each; the chance is rolled;
//!   and the entries are taken in the book's order (highest `order` first, sticky ones before)
//!   until the first that does not fit the budget, where the whole scan stops.
//! - Sticky and cooldown are approximated from the chat itself (no state is kept between
//!   builds): the entry's keys are read against the chat as it was 1, 2, ... messages ago; the
//!   most recent of those activations says whether the entry is still sticky or cooling down.
//!
//! Work is bounded (docs/ARCHITECTURE.md, "Limits"): regex keys compile within the build's
//! pattern budget and read at most [`PATTERN_SCAN_BYTES`](crate::lorebook::scan::PATTERN_SCAN_BYTES), plain keys at most
//! [`PLAIN_SCAN_BYTES`] of text per build, and the scan makes at most [`MAX_ROUNDS`] rounds;
//! past a cap the scan stops with a warning and what activated so far stands.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::lorebook::report::Activation;
use crate::model::{Lorebook, LorebookEntry};
use crate::regex_pattern::PatternBudget;
use crate::said::Said;
use crate::texts;

mod keys;

use keys::{depth_of, scanned, settings, Keys, Scanned, Text};
pub use keys::{MAX_SCAN_DEPTH, PLAIN_SCAN_BYTES};

/// Scan rounds of one build, at most.
pub const MAX_ROUNDS: usize = 10_000;
/// An entry's group weight when it has none.
const DEFAULT_WEIGHT: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Initial,
    Recursion,
    MinActivations,
}

/// What the scan reads.
pub struct StInput<'a> {
    pub book: &'a Lorebook,
    /// The chat as scanned, newest first: each message's history index (none for the pending
    /// input) and its text (with the speaker's name when names are included).
    pub chat: &'a [(Option<u32>, String)],
    /// Messages in the chat, for `delay` and the timed effects.
    pub chat_length: usize,
    /// Seeds the chance and group rolls (the same as the native roll's).
    pub seed: u64,
    /// Tokens, after the cap.
    pub budget: u32,
}

/// What the scan decided.
#[derive(Debug, Default)]
pub struct StOutcome {
    /// Entries taken, in the order they were taken, with the reason and their tokens.
    pub activated: Vec<(usize, Activation, u32)>,
    /// Entries left out when the budget stopped the scan, with their tokens.
    pub cut: Vec<(usize, u32)>,
    /// The tokens taken when the budget stopped the scan.
    pub stopped_at: Option<u32>,
    /// Entries that matched (or would have) but were left out, with why.
    pub skipped: Vec<(usize, Said)>,
    /// Group winners and other notes for the log.
    pub notes: Vec<Said>,
    pub warnings: Vec<Said>,
}

/// The chance roll (the same as the native one) and the group roll.
fn roll(what: &str, seed: u64, modulo: u64) -> u64 {
    xxh3_64_with_seed(what.as_bytes(), seed) % modulo.max(1)
}

/// Timed effects, approximated from the chat (RULES 5.11.1): for each entry, how many messages
/// ago it was last sticky-activated (when still sticky) or whether it cools down.
struct Timed {
    /// Messages since the activation that keeps the entry sticky.
    sticky: Vec<Option<u32>>,
    /// Messages since the activation that keeps the entry cooling down.
    cooldown: Vec<Option<u32>>,
}

fn timed_effects(input: &StInput<'_>, keys: &mut Keys<'_>) -> Timed {
    let book = input.book;
    let n = book.entries.len();
    let mut timed = Timed {
        sticky: vec![None; n],
        cooldown: vec![None; n],
    };
    for (e, entry) in book.entries.iter().enumerate() {
        let sticky = entry.sticky.unwrap_or(0) as usize;
        let cooldown = entry.cooldown.unwrap_or(0) as usize;
        if !entry.enabled || sticky + cooldown == 0 {
            continue;
        }
        let window = (sticky + cooldown).min(MAX_SCAN_DEPTH);
        let depth = depth_of(book, entry, 0);
        // The most recent earlier chat (k messages ago) the entry activated on.
        let last = (1..window.min(input.chat.len())).find(|&k| {
            let length_then = input.chat_length.saturating_sub(k);
            if entry.delay.is_some_and(|d| length_then < d as usize) {
                return false;
            }
            entry.constant || {
                let text = Text::new(scanned(&input.chat[k..], depth, &[]));
                keys.activating_key(book, entry, &text).is_some()
            }
        });
        let Some(k) = last else { continue };
        if k < sticky {
            timed.sticky[e] = Some(k as u32);
        } else if cooldown > 0 && k < sticky + cooldown {
            timed.cooldown[e] = Some(k as u32);
        }
    }
    timed
}

/// Runs SillyTavern's activation over the book. `cost` gives an entry's tokens.
pub fn activate(
    input: &StInput<'_>,
    patterns: &mut PatternBudget,
    cost: &mut dyn FnMut(&LorebookEntry) -> u32,
) -> StOutcome {
    let book = input.book;
    let entries = &book.entries;
    let n = entries.len();
    let mut out = StOutcome::default();
    let mut keys = Keys {
        patterns: HashMap::new(),
        budget: patterns,
        over_budget: 0,
        plain_bytes: 0,
        regex_bytes: 0,
        stopped: None,
        warnings: Vec::new(),
    };
    let timed = timed_effects(input, &mut keys);
    // The book's order: highest `order` first, ties in book order.
    let mut sorted: Vec<usize> = (0..n).collect();
    sorted.sort_by(|a, b| entries[*b].order.cmp(&entries[*a].order));
    let mut rank = vec![0usize; n];
    for (r, &e) in sorted.iter().enumerate() {
        rank[e] = r;
    }

    let mut levels: Vec<u32> = entries
        .iter()
        .filter_map(|e| e.delay_until_recursion.filter(|l| *l > 0))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let mut levels = levels.into_iter();
    let mut level = levels.next().unwrap_or(0);

    let mut active = vec![false; n];
    let mut failed = vec![false; n];
    let mut told = vec![false; n];
    let mut taken: Vec<usize> = Vec::new();
    let mut recursion: Vec<String> = Vec::new();
    // Entries whose content is in the recursion buffer.
    let mut recursed: Vec<usize> = Vec::new();
    let mut skew = 0usize;
    let mut used = 0u32;
    let mut overflow = false;
    let mut rounds = 0usize;
    let mut round = Some(Round::Initial);

    while let Some(now) = round {
        if book.max_recursion_steps > 0 && rounds >= book.max_recursion_steps as usize {
            break;
        }
        if rounds >= MAX_ROUNDS {
            out.warnings
                .push(texts::ST_ROUNDS_CAP.with("count", MAX_ROUNDS));
            break;
        }
        rounds += 1;
        let mut texts_at = Scanned {
            chat: input.chat,
            recursion: if now == Round::MinActivations {
                &[]
            } else {
                &recursion
            },
            at: HashMap::new(),
        };

        let mut found: Vec<(usize, Activation)> = Vec::new();
        for &e in &sorted {
            let entry = &entries[e];
            if failed[e] || active[e] || !entry.enabled {
                continue;
            }
            let sticky = timed.sticky[e];
            if let Some(delay) = entry.delay.filter(|d| input.chat_length < *d as usize) {
                if !std::mem::replace(&mut told[e], true) {
                    out.skipped.push((
                        e,
                        texts::ST_DELAYED
                            .with("entry", &entry.id)
                            .with("delay", delay)
                            .with("count", input.chat_length),
                    ));
                }
                continue;
            }
            if let (Some(ago), None) = (timed.cooldown[e], sticky) {
                if !std::mem::replace(&mut told[e], true) {
                    out.skipped.push((
                        e,
                        texts::ST_COOLDOWN.with("entry", &entry.id).with("ago", ago),
                    ));
                }
                continue;
            }
            let waits = entry.delay_until_recursion.filter(|l| *l > 0);
            if sticky.is_none() {
                if now != Round::Recursion && waits.is_some() {
                    continue;
                }
                if now == Round::Recursion && waits.is_some_and(|l| l > level) {
                    continue;
                }
                if now == Round::Recursion && book.recursive && entry.exclude_recursion {
                    continue;
                }
            }
            if entry.constant {
                found.push((e, Activation::Constant));
                continue;
            }
            if let Some(ago) = sticky {
                found.push((e, Activation::Sticky { messages_ago: ago }));
                continue;
            }
            if entry.keys.is_empty() {
                continue;
            }
            let depth = depth_of(book, entry, skew);
            let text = texts_at.get(depth);
            if let Some(key) = keys.activating_key(book, entry, text) {
                let reason = locate(
                    &mut keys,
                    input,
                    entry,
                    key,
                    depth,
                    now != Round::MinActivations,
                    &recursed,
                );
                found.push((e, reason));
            }
        }
        if keys.stopped.is_some() {
            found.clear();
        }

        // Sticky entries first, then the book's order.
        found.sort_by_key(|(e, _)| (timed.sticky[*e].is_none(), rank[*e]));
        let mut new: Vec<usize> = found.iter().map(|(e, _)| *e).collect();
        let mut reasons: HashMap<usize, Activation> = found.into_iter().collect();
        let score = |keys: &mut Keys<'_>, e: usize| {
            let text = texts_at.get(depth_of(book, &entries[e], skew));
            keys.score(book, &entries[e], text)
        };
        inclusion_groups(input, &mut new, &taken, &timed, &mut keys, score, &mut out);
        drop(texts_at);

        let mut this_round: Vec<usize> = Vec::new();
        for (i, &e) in new.iter().enumerate() {
            let entry = &entries[e];
            if let Some(p) = entry.probability.filter(|p| *p < 100) {
                if timed.sticky[e].is_none() && roll(&entry.id, input.seed, 100) >= u64::from(p) {
                    failed[e] = true;
                    out.skipped.push((
                        e,
                        texts::CHANCE_FAILED
                            .with("entry", &entry.id)
                            .with("chance", p),
                    ));
                    continue;
                }
            }
            let tokens = cost(entry);
            if used.saturating_add(tokens) >= input.budget {
                overflow = true;
                out.stopped_at = Some(used);
                out.cut.push((e, tokens));
                for &rest in &new[i + 1..] {
                    if !failed[rest] {
                        out.cut.push((rest, cost(&entries[rest])));
                    }
                }
                break;
            }
            used += tokens;
            active[e] = true;
            taken.push(e);
            this_round.push(e);
            let reason = reasons.remove(&e).unwrap_or(Activation::Constant);
            out.activated.push((e, reason, tokens));
        }
        let for_recursion: Vec<usize> = this_round
            .iter()
            .copied()
            .filter(|&e| !entries[e].prevent_recursion)
            .collect();

        let mut next = None;
        if book.recursive && !overflow && !for_recursion.is_empty() {
            next = Some(Round::Recursion);
        }
        if book.recursive && !overflow && now == Round::MinActivations && !recursion.is_empty() {
            next = Some(Round::Recursion);
        }
        let wanting = book.min_activations > 0 && taken.len() < book.min_activations as usize;
        if next.is_none() && !overflow && wanting {
            let depth = book.scan_depth as usize + skew;
            let too_deep = (book.min_activations_depth_max > 0
                && depth > book.min_activations_depth_max as usize)
                || depth > input.chat_length;
            if !too_deep {
                next = Some(Round::MinActivations);
                skew += 1;
            }
        }
        if next.is_none() {
            if let Some(l) = levels.next() {
                next = Some(Round::Recursion);
                level = l;
            }
        }
        if keys.stopped.is_some() {
            next = None;
        }
        round = next;
        if round.is_some() {
            let text: Vec<&str> = for_recursion
                .iter()
                .map(|&e| entries[e].content.as_str())
                .collect();
            recursion.push(text.join("\n"));
            recursed.extend(for_recursion);
        }
    }

    if let Some(why) = keys.stopped.take() {
        keys.warnings.push(why);
    }
    if keys.over_budget > 0 {
        keys.warnings.push(
            texts::REGEX_KEYS_OVER_BUDGET
                .with("count", keys.over_budget)
                .with("mib", crate::limits::PATTERN_BUILD_BYTES >> 20),
        );
    }
    out.warnings.append(&mut keys.warnings);
    out
}

/// Why an entry activated on `key`: the newest scanned message the key occurs in, else the
/// content of an entry in the recursion buffer, else the scanned text as a whole (the key
/// spans two messages), said as the newest message.
fn locate(
    keys: &mut Keys<'_>,
    input: &StInput<'_>,
    entry: &LorebookEntry,
    key: String,
    depth: usize,
    with_recursion: bool,
    recursed: &[usize],
) -> Activation {
    let (cs, whole) = settings(input.book, entry);
    for (index, message) in input.chat.iter().take(depth.min(MAX_SCAN_DEPTH)) {
        if keys.matches(&Text::new(message.clone()), &key, cs, whole) {
            return Activation::Key {
                key,
                history_index: *index,
            };
        }
    }
    if with_recursion {
        for &r in recursed {
            let content = &input.book.entries[r].content;
            if keys.matches(&Text::new(content.clone()), &key, cs, whole) {
                return Activation::Recursion {
                    key,
                    from_entry: input.book.entries[r].id.clone(),
                };
            }
        }
    }
    Activation::Key {
        key,
        history_index: input.chat.first().and_then(|(i, _)| *i),
    }
}

/// Keeps one entry of each inclusion group among `new` (RULES 5.11.1): a sticky entry holds its
/// group; group scoring leaves out the entries whose keys scored below the best; a group an
/// earlier round already took is left out whole; of the rest, the highest `order` among the
/// entries with `groupOverride` wins, else a roll weighted by `groupWeight`.
fn inclusion_groups(
    input: &StInput<'_>,
    new: &mut Vec<usize>,
    taken: &[usize],
    timed: &Timed,
    keys: &mut Keys<'_>,
    mut score: impl FnMut(&mut Keys<'_>, usize) -> usize,
    out: &mut StOutcome,
) {
    let book = input.book;
    let entries = &book.entries;
    let mut grouped: Vec<(&str, Vec<usize>)> = Vec::new();
    for &e in new.iter() {
        for g in entries[e].groups() {
            match grouped.iter_mut().find(|(name, _)| *name == g) {
                Some((_, members)) => members.push(e),
                None => grouped.push((g, vec![e])),
            }
        }
    }
    if grouped.is_empty() {
        return;
    }
    let mut left_out = |new: &mut Vec<usize>, e: usize, why: Said| {
        if new.contains(&e) {
            new.retain(|&x| x != e);
            out.skipped.push((e, why));
        }
    };
    let mut held = vec![false; grouped.len()];
    for (g, (name, members)) in grouped.iter().enumerate() {
        if members.iter().any(|&e| timed.sticky[e].is_some()) {
            held[g] = true;
            for &e in members.iter().filter(|&&e| timed.sticky[e].is_none()) {
                left_out(
                    new,
                    e,
                    texts::ST_GROUP_STICKY
                        .with("entry", &entries[e].id)
                        .with("group", *name),
                );
            }
        }
    }
    for (g, (name, members)) in grouped.iter_mut().enumerate() {
        let scoring = book.use_group_scoring
            || members
                .iter()
                .any(|&e| entries[e].use_group_scoring == Some(true));
        if !scoring || held[g] {
            continue;
        }
        let scores: Vec<usize> = members.iter().map(|&e| score(keys, e)).collect();
        let best = scores.iter().copied().max().unwrap_or(0);
        let mut kept = Vec::with_capacity(members.len());
        for (&e, &s) in members.iter().zip(&scores) {
            let scored = entries[e]
                .use_group_scoring
                .unwrap_or(book.use_group_scoring);
            if scored && s < best {
                left_out(
                    new,
                    e,
                    texts::ST_GROUP_SCORE
                        .with("entry", &entries[e].id)
                        .with("group", *name)
                        .with("score", s)
                        .with("best", best),
                );
            } else {
                kept.push(e);
            }
        }
        *members = kept;
    }
    for (g, (name, members)) in grouped.iter().enumerate() {
        if held[g] {
            continue;
        }
        if taken
            .iter()
            .any(|&t| entries[t].groups().any(|x| x == *name))
        {
            for &e in members {
                left_out(
                    new,
                    e,
                    texts::ST_GROUP_TAKEN
                        .with("entry", &entries[e].id)
                        .with("group", *name),
                );
            }
            continue;
        }
        if members.len() <= 1 {
            continue;
        }
        let mut first: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&e| entries[e].group_override)
            .collect();
        first.sort_by(|a, b| entries[*b].order.cmp(&entries[*a].order));
        let (winner, said) = if let Some(&w) = first.first() {
            (w, texts::ST_GROUP_WON_PRIORITY)
        } else {
            let weight = |e: usize| entries[e].group_weight.map_or(DEFAULT_WEIGHT, u64::from);
            let total: u64 = members.iter().map(|&e| weight(e)).sum();
            let r = roll(&format!("group:{name}"), input.seed, total);
            let mut sum = 0u64;
            let w = members
                .iter()
                .copied()
                .find(|&e| {
                    sum += weight(e);
                    r < sum
                })
                .unwrap_or(members[0]);
            (w, texts::ST_GROUP_WON_ROLL)
        };
        out.notes
            .push(said.with("entry", &entries[winner].id).with("group", *name));
        for &e in members.iter().filter(|&&e| e != winner) {
            left_out(
                new,
                e,
                texts::ST_GROUP_LOST
                    .with("entry", &entries[e].id)
                    .with("group", *name)
                    .with("winner", &entries[winner].id),
            );
        }
    }
}
