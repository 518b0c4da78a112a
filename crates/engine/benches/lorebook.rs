//! Issue 7's lorebook bench: 1,000 entries (plain keys, regex keys, a few constant) over a
//! 10,000-message session with scan depth 2, warm (the count cache filled by an earlier build).
//! The whole build is timed, and beside it, as the baseline in the same run, the same build with
//! the lorebook removed: the difference is the lorebook's share. Each is timed twice: in the native
//! mode, and under SillyTavern compatibility (its activation, budget and joins; RULES 5.11.1),
//! each against its own baseline.

use std::hint::black_box;

use chrono::DateTime;
use criterion::{criterion_group, criterion_main, Criterion};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{parse_preset, parse_session, AgentPreset, Session};
use promptloom_engine::{build, BuildOptions, BuildRequest, BuildResult};
use serde_json::{json, Value};

const PLACES: &[&str] = &[
    "harbour",
    "lighthouse",
    "market",
    "chapel",
    "mill",
    "bridge",
    "tavern",
    "forge",
    "garden",
    "library",
];

fn preset(with_book: bool, sillytavern: bool) -> AgentPreset {
    let entries: Vec<Value> = (0..1000)
        .map(|i| {
            let place = PLACES[i % PLACES.len()];
            let key = if i % 10 == 0 {
                json!(format!("/\\b{place}-{i}\\b/i"))
            } else {
                json!(format!("{place} {i}"))
            };
            json!({
                "id": format!("e{i}"),
                "keys": [key],
                "constant": i % 250 == 0,
                "order": (i % 7) * 20,
                "content": format!("The {place} numbered {i} has a story of its own."),
                "strategy": { "anchorTarget": "worldInfoBefore", "order": 100 },
            })
        })
        .collect();
    let mut v = json!({
        "formatVersion": 1, "id": "lore-bench", "name": "Lore bench",
        "messageTemplates": [
            { "id": "main", "role": "system", "content": "You narrate the town." },
            { "id": "worldInfoBefore", "role": "system", "type": "placeholder" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "main", "enabled": true },
            { "messageId": "worldInfoBefore", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
    });
    if with_book {
        v["lorebook"] = json!({ "scanDepth": 2, "entries": entries });
    }
    if sillytavern {
        v["compatibility"] = json!("sillytavern");
    }
    parse_preset(&v.to_string()).expect("the bench preset is valid")
}

fn session() -> Session {
    let messages: Vec<Value> = (0..10_000)
        .map(|i| {
            let place = PLACES[i % PLACES.len()];
            json!({
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "content": format!("We walked past the {place} {} and the {place}-{} at dusk, talking.", i % 1000, (i * 7) % 1000),
            })
        })
        .collect();
    parse_session(&json!({ "formatVersion": 1, "id": "lore", "messages": messages }).to_string())
        .expect("the bench session is valid")
}

fn run<'s>(preset: &AgentPreset, session: &'s Session, tokens: &BuildCache) -> BuildResult<'s> {
    let options =
        BuildOptions::at(DateTime::parse_from_rfc3339("2026-03-01T18:30:00+00:00").expect("time"));
    build(&BuildRequest {
        preset,
        session,
        kept_rewrites: None,
        model: "gpt-4o",
        options: &options,
        cache: tokens,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    })
    .expect("builds")
}

/// Each group's series: its name, whether the preset has the book, whether it runs under
/// SillyTavern compatibility.
const SERIES: [(&str, bool, bool); 4] = [
    ("warm build", true, false),
    ("warm build without lorebook (baseline)", false, false),
    ("warm build, SillyTavern compatibility", true, true),
    (
        "warm build without lorebook (baseline), SillyTavern compatibility",
        false,
        true,
    ),
];

fn lorebook(c: &mut Criterion) {
    let session = session();
    let mut group = c.benchmark_group("lorebook_1000_entries_10000_messages");
    for (name, with_book, sillytavern) in SERIES {
        let preset = preset(with_book, sillytavern);
        let tokens = BuildCache::new();
        let first = run(&preset, &session, &tokens);
        if with_book {
            let report = first.lorebook.as_ref().expect("a report");
            assert!(
                report.activated.len() >= 4,
                "some entries activate: {}",
                report.activated.len()
            );
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(run(&preset, &session, &tokens)))
        });
    }
    group.finish();
}

/// 4,000 constant entries whose content names the keys of 4,000 keyed ones, which name each
/// other in turn: recursion reads a great deal of activated content.
fn big_book(with_book: bool, sillytavern: bool) -> AgentPreset {
    let mut entries: Vec<Value> = (0..4_000)
        .map(|i| {
            json!({ "id": format!("c{i}"), "constant": true,
                    "content": format!("Constant {i} of the town mentions place{} in passing.", i * 3) })
        })
        .collect();
    // One keyed entry in ten has a regex key besides its plain one, as in the 1,000-entry book.
    entries.extend((0..4_000).map(|i| {
        let keys = if i % 10 == 0 {
            json!([format!("place{i}"), format!("/\\bspot-{i}\\b/")])
        } else {
            json!([format!("place{i}")])
        };
        json!({ "id": format!("k{i}"), "keys": keys,
                "content": format!("Place {i} lies next to place{} and spot-{}.", i + 1, i + 2) })
    }));
    let mut v = serde_json::to_value(preset(false, sillytavern)).expect("a preset is JSON");
    if with_book {
        v["lorebook"] = json!({ "scanDepth": 2, "tokenBudget": 100, "entries": entries });
    }
    parse_preset(&v.to_string()).expect("the bench preset is valid")
}

fn lorebook_8000(c: &mut Criterion) {
    let session = session();
    let mut group = c.benchmark_group("lorebook_8000_entries_recursive");
    group.sample_size(20);
    for (name, with_book, sillytavern) in SERIES {
        let preset = big_book(with_book, sillytavern);
        let tokens = BuildCache::new();
        let first = run(&preset, &session, &tokens);
        if with_book {
            let report = first.lorebook.as_ref().expect("a report");
            let active = report.activated.len() + report.cut.len();
            // SillyTavern reads the whole recursion buffer again each round, as it does itself:
            // on this chain of 4,000 rounds that meets the cap on text read, which stops it.
            let capped = sillytavern
                && first
                    .warnings
                    .iter()
                    .any(|w| w.said.code == "lorebook.text-cap");
            assert!(
                active >= 8_000 - 2 || capped,
                "all chain on: {active}, {:?}",
                first.warnings
            );
            eprintln!("{name}: {active} entries activated or cut");
        }
        group.bench_function(name, |b| {
            b.iter(|| black_box(run(&preset, &session, &tokens)))
        });
    }
    group.finish();
}

criterion_group!(benches, lorebook, lorebook_8000);
criterion_main!(benches);
