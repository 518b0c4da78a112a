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

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::lorebook_scan::BookScan;
use crate::model::LorebookEntry;
use crate::pipeline::{
    ActivatedEntry, Activation, CutEntry, DropAction, DroppedItem, InjectionCandidate,
    LorebookReport, PipelineContext, Placement, Processor, ProcessorDescriptor, ResolvedConfig,
    Source, SourceKind,
};
use crate::texts;
use crate::EngineError;

pub struct Lorebook;

const ID: &str = "lorebook";

/// How many rounds of recursion into activated content.
pub const MAX_RECURSION: usize = 3;

impl Processor for Lorebook {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "Lorebook",
            description: "Activates lorebook entries by keyword and places them like recipe steps.",
            priority: 280,
            is_core: false,
            default_enabled: true,
            config_fields: Vec::new(),
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        _: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let Some(book) = ctx
            .preset
            .lorebook
            .as_ref()
            .filter(|b| !b.entries.is_empty())
        else {
            return Ok(());
        };
        let index = ctx.cache.lorebook_keys(book);
        let (mut keys, warnings) = BookScan::new(&index, book.match_whole_words, &mut ctx.patterns);
        for w in warnings {
            ctx.warn(ID, w);
        }
        let n = ctx.history.len();
        let scanned: Vec<(Option<u32>, String)> = ctx.history.as_slice()
            [n.saturating_sub(book.scan_depth as usize)..]
            .iter()
            .rev()
            .map(|m| (m.history_index(), keys.fold(m.content())))
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
        let mut used = 0u32;
        let mut report = LorebookReport {
            budget,
            ..LorebookReport::default()
        };
        for (i, reason) in activated {
            let entry = &book.entries[i];
            let tokens = ctx.cache.count(ctx.tokenizer.kind, &entry.content) + overhead;
            if used + tokens > budget {
                let why = texts::LOREBOOK_OVER_BUDGET
                    .with("budget", budget)
                    .with("used", used);
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
                continue;
            }
            used += tokens;
            ctx.info(
                ID,
                texts::ACTIVATED
                    .with("entry", &entry.id)
                    .part("reason", reason.said()),
            );
            ctx.blackboard.injections.push(InjectionCandidate {
                role: entry.role,
                content: entry.content.clone(),
                strategy: entry.strategy.clone(),
                source: source(entry),
            });
            report.activated.push(ActivatedEntry {
                entry_id: entry.id.clone(),
                name: entry.name.clone(),
                reason,
                tokens,
            });
        }
        ctx.blackboard.lorebook = Some(report);
        Ok(())
    }
}

fn source(entry: &LorebookEntry) -> Source {
    Source {
        entry_id: Some(entry.id.clone()),
        ..Source::new(SourceKind::Lorebook, Placement::List)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AgentPreset, Role};
    use crate::pipeline::PipelineMessage;
    use crate::processors::testing::{empty_session, options, with_context};
    use serde_json::{json, Value};

    fn book(entries: Value, extra: Value) -> crate::model::Lorebook {
        let mut v = json!({ "entries": entries });
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        serde_json::from_value(v).expect("lorebook")
    }

    /// Runs the lorebook over `history` (oldest first) and returns the report and warnings.
    fn run(book: crate::model::Lorebook, history: &[&str]) -> (LorebookReport, Vec<String>) {
        with_context(
            &Lorebook,
            &[],
            &empty_session(),
            &options(),
            |mut ctx, config| {
                let mut preset: AgentPreset = ctx.preset.clone();
                preset.lorebook = Some(book);
                let preset: &AgentPreset = Box::leak(Box::new(preset));
                ctx.preset = preset;
                for (i, text) in history.iter().enumerate() {
                    ctx.history
                        .push(PipelineMessage::new(Role::User, *text, Source::history(i)));
                }
                Lorebook.execute(&mut ctx, config).expect("runs");
                let warnings = ctx
                    .logs
                    .iter()
                    .filter(|l| l.level == crate::pipeline::LogLevel::Warning)
                    .map(|l| l.message.clone())
                    .collect();
                (
                    ctx.blackboard.lorebook.clone().unwrap_or_default(),
                    warnings,
                )
            },
        )
    }

    fn ids(report: &LorebookReport) -> Vec<&str> {
        report
            .activated
            .iter()
            .map(|a| a.entry_id.as_str())
            .collect()
    }

    fn e(id: &str, keys: &[&str]) -> Value {
        json!({ "id": id, "keys": keys, "content": format!("about {id}") })
    }

    #[test]
    fn constant_entries_always_activate_and_disabled_ones_never() {
        let b = book(
            json!([{ "id": "c", "constant": true, "content": "always" },
                   { "id": "off", "constant": true, "enabled": false, "content": "x" }]),
            json!({}),
        );
        let (r, _) = run(b, &["nothing here"]);
        assert_eq!(ids(&r), ["c"]);
        assert_eq!(r.activated[0].reason, Activation::Constant);
    }

    #[test]
    fn a_plain_key_matches_case_insensitively_by_default_and_names_the_message() {
        let (r, _) = run(
            book(json!([e("dragon", &["Dragon"])]), json!({})),
            &["a DRAGON!", "hi"],
        );
        assert_eq!(ids(&r), ["dragon"]);
        assert_eq!(
            r.activated[0].reason,
            Activation::Key {
                key: "Dragon".into(),
                history_index: Some(0)
            }
        );
        let (r, _) = run(
            book(
                json!([e("dragon", &["Dragon"])]),
                json!({ "caseSensitive": true }),
            ),
            &["a DRAGON!"],
        );
        assert!(r.activated.is_empty());
    }

    #[test]
    fn whole_words_do_not_match_inside_words_except_in_cjk() {
        let b = || book(json!([e("cat", &["cat"]), e("mao", &["猫"])]), json!({}));
        let (r, _) = run(b(), &["a concatenation of 小猫咪"]);
        assert_eq!(ids(&r), ["mao"]);
        let (r, _) = run(b(), &["the cat, sleeping"]);
        assert_eq!(ids(&r), ["cat"]);
        let (r, _) = run(
            book(
                json!([e("cat", &["cat"])]),
                json!({ "matchWholeWords": false }),
            ),
            &["concatenation"],
        );
        assert_eq!(ids(&r), ["cat"]);
    }

    #[test]
    fn regex_keys_match_and_invalid_ones_warn() {
        let b = book(
            json!([e("num", &["/\\bno\\.\\s*\\d+/"]), e("bad", &["/(open/"])]),
            json!({}),
        );
        let (r, warnings) = run(b, &["See No. 42"]);
        assert_eq!(ids(&r), ["num"]);
        assert!(
            warnings.iter().any(|w| w.contains("\"bad\"")),
            "{warnings:?}"
        );
    }

    #[test]
    fn only_the_last_scan_depth_messages_are_scanned() {
        let b = || book(json!([e("old", &["ancient"])]), json!({ "scanDepth": 2 }));
        let (r, _) = run(b(), &["ancient", "x", "y"]);
        assert!(r.activated.is_empty());
        let (r, _) = run(b(), &["x", "ancient", "y"]);
        assert_eq!(ids(&r), ["old"]);
    }

    #[test]
    fn selective_logic_with_secondary_keys() {
        let entry = |logic: &str| {
            json!([{ "id": "s", "keys": ["sword"], "secondaryKeys": ["fire", "ice"],
                     "selectiveLogic": logic, "content": "c" }])
        };
        let cases = [
            ("andAny", "sword of fire", true),
            ("andAny", "sword", false),
            ("notAll", "sword of fire", true),
            ("notAll", "sword of fire and ice", false),
            ("notAny", "sword", true),
            ("notAny", "sword of ice", false),
            ("andAll", "sword of fire and ice", true),
            ("andAll", "sword of fire", false),
        ];
        for (logic, text, expected) in cases {
            let (r, _) = run(book(entry(logic), json!({})), &[text]);
            assert_eq!(!r.activated.is_empty(), expected, "{logic} on {text:?}");
        }
    }

    #[test]
    fn recursion_follows_activated_content_and_can_be_switched_off() {
        let entries = json!([
            { "id": "a", "keys": ["castle"], "content": "The castle has a moat." },
            { "id": "b", "keys": ["moat"], "content": "The moat hides an eel." },
            { "id": "c", "keys": ["eel"], "content": "The eel is old." },
        ]);
        let (r, _) = run(book(entries.clone(), json!({})), &["to the castle"]);
        assert_eq!(ids(&r), ["a", "b", "c"]);
        assert_eq!(
            r.activated[1].reason,
            Activation::Recursion {
                key: "moat".into(),
                from_entry: "a".into()
            }
        );
        let (r, _) = run(
            book(entries, json!({ "recursive": false })),
            &["to the castle"],
        );
        assert_eq!(ids(&r), ["a"]);
    }

    #[test]
    fn recursion_stops_after_its_bound_even_on_a_cycle() {
        let entries = json!([
            { "id": "a", "keys": ["one"], "content": "two" },
            { "id": "b", "keys": ["two"], "content": "one" },
        ]);
        let (r, _) = run(book(entries, json!({})), &["one"]);
        assert_eq!(ids(&r), ["a", "b"]);
    }

    #[test]
    fn probability_zero_never_and_a_roll_is_deterministic() {
        let b = |p: u32| {
            book(
                json!([{ "id": "p", "constant": true, "probability": p, "content": "c" }]),
                json!({}),
            )
        };
        assert!(run(b(0), &[]).0.activated.is_empty());
        let first = run(b(50), &[]).0;
        for _ in 0..5 {
            assert_eq!(run(b(50), &[]).0, first);
        }
    }

    #[test]
    fn the_budget_keeps_the_highest_orders_and_reports_the_cut() {
        let long = "word ".repeat(500);
        let entries = json!([
            { "id": "low", "constant": true, "order": 10, "content": long },
            { "id": "high", "constant": true, "order": 300, "content": long },
            { "id": "mid", "constant": true, "order": 100, "content": long },
        ]);
        // 1% of gpt-4o's 123,904-token budget: room for two of the three.
        let (r, _) = run(book(entries, json!({ "tokenBudget": 1 })), &[]);
        assert_eq!(r.budget, 1239);
        assert_eq!(ids(&r), ["high", "mid"]);
        assert_eq!(r.cut.len(), 1);
        assert_eq!(r.cut[0].entry_id, "low");
        assert!(r.cut[0].reason.contains("budget"));
    }
}
