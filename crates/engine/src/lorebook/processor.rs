//! `lorebook` (priority 280): keyword activation of the preset's lorebook entries (RULES 6).
//!
//! - Constant entries always activate. Keyed entries activate when a key occurs in the last
//!   `scanDepth` history messages (the pending input counts as the newest). A key is plain text,
//!   or `/pattern/flags` for a regular expression.
//! - Plain keys honour `caseSensitive` and `matchWholeWords`. A whole-word key must not touch a
//!   letter or digit of the text at an edge where the key itself starts or ends with a letter
//!   or digit of a spaced script. Keys in CJK scripts, written without spaces, match anywhere:
//!   word boundaries mean nothing there.
//! - Secondary keys follow `selectiveLogic`; an entry without secondary keys needs only a primary.
//! - With `recursive`, the content of activated entries is scanned too, for up to
//!   [`MAX_RECURSION`] rounds.
//! - `probability` is rolled with a seed from the session id, its length and the entry id, so a
//!   preview does not flicker.
//! - Activated entries are kept by `order`, highest first, while they fit in `tokenBudget`
//!   percent of the context budget, and go to the blackboard as injection candidates, placed by
//!   their strategies exactly like recipe steps. What activated, why, and what the budget cut is
//!   the build result's `lorebook` report.
//! - Its settings (RULES 5.11.1) switch on SillyTavern's behaviours, its defaults under
//!   SillyTavern compatibility: `activation: sillytavern` ([`super::sillytavern`]),
//!   `includeNames`, `budgetStops`, `joinPositions` and `wiFormat`. Their native values keep the
//!   rules above exactly.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::report::{ActivatedEntry, Activation, CutEntry, LorebookReport, SkippedEntry};
use super::scan::BookScan;
use super::sillytavern::{self, StInput, MAX_SCAN_DEPTH};
use super::tester::{self, Explain};
use crate::model::{AnchorPosition, InjectionStrategy, LorebookEntry, Role};
use crate::pipeline::{
    CompatDefaults, ConfigField, DropAction, DroppedItem, InjectionCandidate, PipelineContext,
    PipelineMessage, Placement, Processor, ProcessorDescriptor, ResolvedConfig, Source, SourceKind,
};
use crate::said::Said;
use crate::texts;
use crate::EngineError;

pub struct Lorebook;

const ID: &str = "lorebook";

/// How many rounds of recursion into activated content.
pub const MAX_RECURSION: usize = 3;

/// The activation rules (`activation`): RULES 6, or SillyTavern's (RULES 5.11.1).
const ACTIVATIONS: &[&str] = &["native", "sillytavern"];

impl Processor for Lorebook {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Lorebook",
            description: "Activates lorebook entries by keyword and places them like recipe steps.",
            priority: 280,
            is_core: false,
            default_enabled: true,
            config_fields: vec![
                ConfigField::select("activation", "Activation", ACTIVATIONS, "native").describe(
                    "native: the rules of this app. sillytavern: SillyTavern's scan (one text of the scanned messages, each entry's own scan settings, its recursion, minimum activations, delays, sticky and cooldown entries, inclusion groups, and a budget that stops at the first entry that does not fit).",
                ),
                ConfigField::boolean("includeNames", "Include names", false).describe(
                    "Read each scanned message as \"Name: text\", so that keys can match the speaker's name.",
                ),
                ConfigField::boolean("budgetStops", "Budget stops at the first miss", false)
                    .describe(
                        "Stop taking entries at the first one that does not fit the budget, instead of trying the later ones.",
                    ),
                ConfigField::boolean("joinPositions", "One message per position", false)
                    .describe(
                        "Join the entries that go to the same place into one message, one per line, lowest order first.",
                    ),
                ConfigField::text("wiFormat", "World info format", "{0}").describe(
                    "With one message per position: the text around the entries placed at worldInfoBefore or worldInfoAfter; {0} stands for the entries.",
                ),
            ],
        }
    }

    fn sillytavern(&self) -> Option<CompatDefaults> {
        Some(
            CompatDefaults::new(texts::LOREBOOK_COMPAT)
                .set("activation", "sillytavern")
                .set("includeNames", true)
                .set("budgetStops", true)
                .set("joinPositions", true),
        )
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(book) = ctx
            .preset
            .lorebook
            .as_ref()
            .filter(|b| !b.entries.is_empty())
        else {
            return Ok(());
        };
        let (kept, report) = if config.str("activation") == "sillytavern" {
            sillytavern_activation(ctx, config, book)
        } else {
            native_activation(ctx, config, book)
        };
        if config.bool("joinPositions") {
            place_joined(ctx, config, book, &kept);
        } else {
            for &i in &kept {
                let entry = &book.entries[i];
                ctx.blackboard.injections.push(InjectionCandidate {
                    role: entry.role,
                    content: entry.content.clone(),
                    strategy: entry.strategy.clone(),
                    source: source(entry),
                });
            }
        }
        ctx.blackboard.lorebook = Some(report);
        Ok(())
    }
}

/// A scanned message's text: as it is, or `Name: text` with `includeNames`.
fn scanned_text<'m>(
    m: &'m PipelineMessage<'_>,
    names: Option<(&str, &str)>,
) -> std::borrow::Cow<'m, str> {
    match names {
        None => std::borrow::Cow::Borrowed(m.content()),
        Some((user, character)) => {
            let name = m.name().unwrap_or(match m.role {
                Role::User => user,
                Role::Assistant => character,
                _ => "System",
            });
            std::borrow::Cow::Owned(format!("{name}: {}", m.content()))
        }
    }
}

/// The speakers' names for `includeNames`: the user profile's (else "User") and the
/// character's (else the preset's name).
fn speaker_names<'p>(ctx: &'p PipelineContext<'_, '_>) -> (&'p str, &'p str) {
    (
        ctx.session
            .user_profile
            .as_ref()
            .map_or("User", |p| p.name.as_str()),
        ctx.preset
            .character
            .as_ref()
            .map_or(ctx.preset.name.as_str(), |c| c.name.as_str()),
    )
}

/// RULES 6.2-6.3: the native activation and budget. Returns the entries kept, in budget order.
fn native_activation(
    ctx: &mut PipelineContext<'_, '_>,
    config: &ResolvedConfig,
    book: &crate::model::Lorebook,
) -> (Vec<usize>, LorebookReport) {
    let index = ctx.cache.lorebook_keys(book);
    let (mut keys, warnings) = BookScan::new(&index, book.match_whole_words, &mut ctx.patterns);
    for w in warnings {
        ctx.warn(ID, w);
    }
    let names = config.bool("includeNames").then(|| speaker_names(ctx));
    let n = ctx.history.len();
    let scanned: Vec<(Option<u32>, String)> = ctx.history.as_slice()
        [n.saturating_sub(book.scan_depth as usize)..]
        .iter()
        .rev()
        .map(|m| (m.history_index(), keys.fold(&scanned_text(m, names))))
        .collect();
    let seed = xxh3_64_with_seed(ctx.session.id.as_bytes(), ctx.session.messages.len() as u64);

    let mut reasons: Vec<Option<Activation>> = vec![None; book.entries.len()];
    for (i, entry) in book.entries.iter().enumerate() {
        if entry.enabled && entry.constant {
            reasons[i] = Some(Activation::Constant);
        }
    }
    let keyed = |e: usize| book.entries[e].enabled && !book.entries[e].constant;
    let texts: Vec<&str> = scanned.iter().map(|(_, t)| t.as_str()).collect();
    let mut fresh: Vec<usize> = (0..book.entries.len())
        .filter(|&i| reasons[i].is_some())
        .collect();
    for (t, e, key) in keys.scan(&texts, keyed) {
        reasons[e] = Some(Activation::Key {
            key,
            history_index: scanned[t].0,
        });
        fresh.push(e);
    }
    if book.recursive {
        // Each round reads only what the round before activated: the content of entries
        // activated earlier was read then, and an entry it did not activate it never will.
        fresh.sort_unstable();
        for _ in 0..MAX_RECURSION {
            let sources: Vec<String> = fresh
                .iter()
                .map(|&e| keys.fold(&book.entries[e].content))
                .collect();
            let texts: Vec<&str> = sources.iter().map(String::as_str).collect();
            let inactive = |e: usize| keyed(e) && reasons[e].is_none();
            let found = keys.scan(&texts, inactive);
            if found.is_empty() {
                break;
            }
            let mut next = Vec::with_capacity(found.len());
            for (t, e, key) in found {
                reasons[e] = Some(Activation::Recursion {
                    key,
                    from_entry: book.entries[fresh[t]].id.clone(),
                });
                next.push(e);
            }
            next.sort_unstable();
            fresh = next;
        }
    }
    if let Some(why) = keys.stopped.take() {
        ctx.warn(ID, why);
    }

    // Probability, then the budget by order (highest first, ties in book order).
    let mut activated: Vec<(usize, Activation)> = Vec::new();
    let mut chance_failed: Vec<usize> = Vec::new();
    for (i, reason) in reasons.into_iter().enumerate() {
        let Some(reason) = reason else { continue };
        let entry = &book.entries[i];
        if let Some(p) = entry.probability.filter(|p| *p < 100) {
            let roll = xxh3_64_with_seed(entry.id.as_bytes(), seed) % 100;
            if roll >= u64::from(p) {
                ctx.info(
                    ID,
                    texts::CHANCE_FAILED
                        .with("entry", &entry.id)
                        .with("chance", p),
                );
                chance_failed.push(i);
                continue;
            }
        }
        activated.push((i, reason));
    }
    activated.sort_by(|(a, _), (b, _)| {
        book.entries[*b]
            .order
            .cmp(&book.entries[*a].order)
            .then(a.cmp(b))
    });

    let budget = (u64::from(ctx.budget()) * u64::from(book.token_budget) / 100) as u32;
    let overhead = ctx.profile.overhead().per_message;
    let stops = config.bool("budgetStops");
    let mut stopped = false;
    let mut used = 0u32;
    let mut report = LorebookReport {
        budget,
        ..LorebookReport::default()
    };
    let mut kept = Vec::new();
    for (i, reason) in activated {
        let entry = &book.entries[i];
        let tokens = ctx.cache.count(ctx.tokenizer.vocabulary, &entry.content) + overhead;
        if stopped || used + tokens > budget {
            let why = if stops {
                texts::BUDGET_STOP.with("budget", budget).with("used", used)
            } else {
                texts::LOREBOOK_OVER_BUDGET
                    .with("budget", budget)
                    .with("used", used)
            };
            stopped = stops;
            cut(ctx, &mut report, entry, tokens, why);
            continue;
        }
        used += tokens;
        activated_entry(ctx, &mut report, entry, reason, tokens);
        kept.push(i);
    }
    if ctx.options.explain_lorebook {
        let names = config.bool("includeNames").then(|| speaker_names(ctx));
        let chat = scanned_chat(ctx, names, false);
        let explain = Explain {
            book,
            report: &report,
            chat: &chat,
            chance_failed: &chance_failed,
            sillytavern: false,
            max_recursion: MAX_RECURSION,
        };
        let (cache, kind) = (ctx.cache, ctx.tokenizer.vocabulary);
        let verdicts = tester::explain(&explain, |e| cache.count(kind, &e.content) + overhead);
        ctx.blackboard.lorebook_test = Some(verdicts);
    }
    (kept, report)
}

/// The chat as the lorebook reads it, newest first, at most [`MAX_SCAN_DEPTH`] messages: each
/// message's history index and its text (`Name: text` with `includeNames`; trimmed for
/// SillyTavern's activation).
fn scanned_chat(
    ctx: &PipelineContext<'_, '_>,
    names: Option<(&str, &str)>,
    trim: bool,
) -> Vec<(Option<u32>, String)> {
    ctx.history
        .iter()
        .rev()
        .take(MAX_SCAN_DEPTH)
        .map(|m| {
            let text = scanned_text(m, names);
            let text = if trim { text.trim() } else { &text };
            (m.history_index(), text.to_string())
        })
        .collect()
}

/// RULES 5.11.1: SillyTavern's activation, its budget included.
fn sillytavern_activation(
    ctx: &mut PipelineContext<'_, '_>,
    config: &ResolvedConfig,
    book: &crate::model::Lorebook,
) -> (Vec<usize>, LorebookReport) {
    let names = config.bool("includeNames").then(|| speaker_names(ctx));
    let chat = scanned_chat(ctx, names, true);
    let seed = xxh3_64_with_seed(ctx.session.id.as_bytes(), ctx.session.messages.len() as u64);
    // A share of the build's budget, rounded, at least 1; then the cap.
    let share = (f64::from(ctx.budget()) * f64::from(book.token_budget) / 100.0).round();
    let mut budget = (share as u32).max(1);
    if book.budget_cap > 0 {
        budget = budget.min(book.budget_cap);
    }
    let input = StInput {
        book,
        chat: &chat,
        chat_length: ctx.history.len(),
        seed,
        budget,
    };
    let (cache, kind) = (ctx.cache, ctx.tokenizer.vocabulary);
    let mut cost = |e: &LorebookEntry| cache.count(kind, &e.content);
    let outcome = sillytavern::activate(&input, &mut ctx.patterns, &mut cost);
    for w in outcome.warnings {
        ctx.warn(ID, w);
    }
    for note in outcome.notes {
        ctx.info(ID, note);
    }
    let mut report = LorebookReport {
        budget,
        ..LorebookReport::default()
    };
    // An entry left out in several rounds is reported once, with the first reason.
    let mut told = vec![false; book.entries.len()];
    for (e, said) in outcome.skipped {
        if std::mem::replace(&mut told[e], true) {
            continue;
        }
        ctx.info(ID, said.clone());
        report.skipped.push(SkippedEntry {
            entry_id: book.entries[e].id.clone(),
            reason: said.to_string(),
            said,
        });
    }
    let mut kept = Vec::new();
    for (e, reason, tokens) in outcome.activated {
        activated_entry(ctx, &mut report, &book.entries[e], reason, tokens);
        kept.push(e);
    }
    let used = outcome.stopped_at.unwrap_or(0);
    for (e, tokens) in outcome.cut {
        let why = texts::BUDGET_STOP.with("budget", budget).with("used", used);
        cut(ctx, &mut report, &book.entries[e], tokens, why);
    }
    if ctx.options.explain_lorebook {
        let explain = Explain {
            book,
            report: &report,
            chat: &chat,
            chance_failed: &[],
            sillytavern: true,
            max_recursion: match book.max_recursion_steps {
                0 => sillytavern::MAX_ROUNDS,
                steps => steps as usize,
            },
        };
        let (cache, kind) = (ctx.cache, ctx.tokenizer.vocabulary);
        let verdicts = tester::explain(&explain, |e| cache.count(kind, &e.content));
        ctx.blackboard.lorebook_test = Some(verdicts);
    }
    (kept, report)
}

fn activated_entry(
    ctx: &mut PipelineContext<'_, '_>,
    report: &mut LorebookReport,
    entry: &LorebookEntry,
    reason: Activation,
    tokens: u32,
) {
    ctx.info(
        ID,
        texts::ACTIVATED
            .with("entry", &entry.id)
            .part("reason", reason.said()),
    );
    report.activated.push(ActivatedEntry {
        entry_id: entry.id.clone(),
        name: entry.name.clone(),
        reason,
        tokens,
    });
}

fn cut(
    ctx: &mut PipelineContext<'_, '_>,
    report: &mut LorebookReport,
    entry: &LorebookEntry,
    tokens: u32,
    why: Said,
) {
    ctx.dropped.push(DroppedItem::one(
        ID,
        DropAction::Dropped,
        source(entry),
        Some(tokens),
        why.clone(),
    ));
    report.cut.push(CutEntry {
        entry_id: entry.id.clone(),
        tokens,
        reason: why.to_string(),
        said: why,
    });
}

/// Where an entry goes, as one key: its depth and role, or its anchor and side (none for list
/// order).
#[derive(Clone, Copy, PartialEq)]
enum Position<'a> {
    Depth(u32, Role),
    Anchor(&'a str, AnchorPosition),
    List,
}

fn position(entry: &LorebookEntry) -> Position<'_> {
    let s: &InjectionStrategy = &entry.strategy;
    match (s.depth, s.anchor_target.as_deref()) {
        (Some(d), _) => Position::Depth(d, entry.role),
        (None, Some(a)) => Position::Anchor(a, s.anchor_position.unwrap_or(AnchorPosition::After)),
        (None, None) => Position::List,
    }
}

/// The anchor of SillyTavern's example positions, whose entries are not joined.
const EXAMPLES_ANCHOR: &str = "dialogueExamples";

/// `joinPositions` (RULES 5.11.1): the kept entries of one position become one candidate, their
/// contents one a line, lowest `order` first (ties: the later taken first); the blocks at the
/// world info anchors (and list order, which goes there) are put in `wiFormat`.
fn place_joined(
    ctx: &mut PipelineContext<'_, '_>,
    config: &ResolvedConfig,
    book: &crate::model::Lorebook,
    kept: &[usize],
) {
    // Highest order first (ties as taken), each put in front of its block: a block reads lowest
    // order first, and the blocks come in the order their first entry was met.
    let mut ordered: Vec<usize> = kept
        .iter()
        .copied()
        .filter(|&e| !book.entries[e].content.is_empty())
        .collect();
    ordered.sort_by(|a, b| book.entries[*b].order.cmp(&book.entries[*a].order));
    let mut groups: Vec<(Position<'_>, Vec<usize>)> = Vec::new();
    for e in ordered {
        let p = position(&book.entries[e]);
        match groups.iter_mut().find(|(q, _)| *q == p) {
            Some((_, members)) => members.insert(0, e),
            None => groups.push((p, vec![e])),
        }
    }
    // SillyTavern keeps the example entries apart: each is an example block of its own.
    let groups: Vec<(Position<'_>, Vec<usize>)> = groups
        .into_iter()
        .flat_map(|(p, members)| match p {
            Position::Anchor(EXAMPLES_ANCHOR, _) => {
                members.into_iter().map(|e| (p, vec![e])).collect()
            }
            _ => vec![(p, members)],
        })
        .collect();
    let format = config.str("wiFormat");
    for (p, members) in groups {
        let contents: Vec<&str> = members
            .iter()
            .map(|&e| book.entries[e].content.as_str())
            .collect();
        let mut content = contents.join("\n");
        let world_info = matches!(
            p,
            Position::List | Position::Anchor("worldInfoBefore" | "worldInfoAfter", _)
        );
        if world_info && !format.trim().is_empty() {
            content = format.replace("{0}", &content);
        }
        // The block is placed as its last (highest order) entry would be.
        let last = &book.entries[*members.last().unwrap_or(&0)];
        let ids: Vec<&str> = members
            .iter()
            .map(|&e| book.entries[e].id.as_str())
            .collect();
        ctx.blackboard.injections.push(InjectionCandidate {
            role: last.role,
            content,
            strategy: last.strategy.clone(),
            source: Source {
                entry_id: Some(ids.join(", ")),
                ..Source::new(SourceKind::Lorebook, Placement::List)
            },
        });
    }
}

fn source(entry: &LorebookEntry) -> Source {
    Source {
        entry_id: Some(entry.id.clone()),
        ..Source::new(SourceKind::Lorebook, Placement::List)
    }
}

#[cfg(test)]
#[path = "processor_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sillytavern_tests.rs"]
mod st_tests;
