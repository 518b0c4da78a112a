//! Presets built to make a build grow without bound: macros that double a variable or fan out a
//! large field, regex rules that multiply text, lorebook keys that compile into gigabytes, books
//! whose recursion rescans everything, keys that overlap at every position. Each one builds
//! through the whole pipeline under a counting allocator: the build ends with a warning that
//! names the cap, and the memory it took at its peak stays under a bound (docs/ARCHITECTURE.md,
//! "Limits").

mod common;

use std::cell::Cell;

use common::{options, preset_from, session_of, try_run};
use promptloom_engine::limits::{
    MACRO_BUILD_BYTES, MACRO_EXPANSION_BYTES, PATTERN_BUILD_BYTES, PATTERN_SEARCH_CACHE_BYTES,
    REGEX_RULE_GROWTH,
};
use promptloom_engine::model::Session;
use promptloom_engine::pipeline::BuildResult;
use serde_json::{json, Value};

mod counting;

use counting::{NOW, PEAK};

const MIB: usize = 1 << 20;

/// Builds `preset` over `session` for gpt-4o and returns the result's warnings and the most
/// memory the build held at once beyond what was held before it.
fn build_measured(preset: &Value, session: &Session) -> (Vec<String>, usize, usize) {
    build_measured_for("gpt-4o", preset, session)
}

fn build_measured_for(
    model: &str,
    preset: &Value,
    session: &Session,
) -> (Vec<String>, usize, usize) {
    // The tokenizer's vocabulary is loaded once per process: not the build's doing.
    let warm = preset_from(json!({ "formatVersion": 1, "id": "w", "name": "W",
        "messageTemplates": [{ "id": "s", "role": "system", "content": "warm" }],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [{ "messageId": "s", "enabled": true }] }] }));
    try_run(&warm, session, model, &options()).expect("warms up");
    let preset = preset_from(preset.clone());
    let before = NOW.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let result: BuildResult<'_> = try_run(&preset, session, model, &options()).expect("builds");
    let peak = (PEAK.with(Cell::get) - before).max(0) as usize;
    eprintln!("peak {:.1} MiB", peak as f64 / MIB as f64);
    let warnings = result.warnings.iter().map(|w| w.message.clone()).collect();
    let sent: usize = result.messages.iter().map(|m| m.content().len()).sum();
    (warnings, peak, sent)
}

fn template_preset(content: &str, extra: Value) -> Value {
    let mut v = json!({
        "formatVersion": 1, "id": "hostile", "name": "Hostile",
        "messageTemplates": [
            { "id": "main", "role": "system", "content": content },
            { "id": "worldInfoBefore", "role": "system", "type": "placeholder" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "main", "enabled": true },
            { "messageId": "worldInfoBefore", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
    });
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    v
}

fn assert_warned(warnings: &[String], needle: &str) {
    assert!(
        warnings.iter().any(|w| w.contains(needle)),
        "no warning with {needle:?} in {warnings:#?}"
    );
}

// RULES 5.8: a counter's working memory grows with the text it is given, so a text is given to
// it in parts of at most 64 KiB. A 4 MiB line without a break, counted by each kind of counter,
// stays within the memory a build may take beyond its texts.
#[test]
fn a_huge_line_is_counted_in_bounded_parts_by_every_kind_of_counter() {
    let line = "ABCDEFGHIJ".repeat(400 * 1024);
    let (text, cjk) = (line.as_str(), "灯塔".repeat(700 * 1024));
    for model in [
        "gpt-4o",
        "llama-3.1-8b-instruct",
        "gemma3:27b",
        "claude-sonnet-4-5",
    ] {
        for content in [text, cjk.as_str()] {
            let (_, peak, sent) = build_measured_for(
                model,
                &template_preset(content, json!({})),
                &session_of(&["u1"]),
            );
            assert!(sent >= content.len(), "{model}: the text is sent whole");
            assert!(peak < 16 * MIB, "{model}: peak {} MiB", peak / MIB);
        }
    }
}

#[test]
fn a_variable_doubled_34_times_stops_at_the_cap() {
    let bomb = format!(
        "{{{{setvar::x::ABCDEFGH}}}}{}{{{{getvar::x}}}}",
        "{{addvar::x::{{getvar::x}}}}".repeat(34)
    );
    assert!(bomb.len() < 1_400, "a 1.3 KB file");
    let (warnings, peak, sent) =
        build_measured(&template_preset(&bomb, json!({})), &session_of(&["u1"]));
    assert_warned(&warnings, "MiB");
    assert!(sent <= bomb.len() + MACRO_EXPANSION_BYTES + 100);
    assert!(peak < 16 * MIB, "peak {} MiB", peak / MIB);
}

#[test]
fn a_large_card_field_repeated_thousands_of_times_stops_at_the_cap() {
    let text = "{{description}}{{char}}".repeat(5_000);
    let preset = template_preset(
        &text,
        json!({ "character": { "name": "N".repeat(1_000), "description": "d".repeat(500_000) } }),
    );
    let (warnings, peak, sent) = build_measured(&preset, &session_of(&["u1"]));
    assert_warned(&warnings, "2 MiB");
    assert!(sent <= text.len() + MACRO_EXPANSION_BYTES + 100);
    assert!(peak < 16 * MIB, "peak {} MiB", peak / MIB);
}

#[test]
fn macros_in_many_lorebook_entries_stop_at_the_build_cap() {
    // 40 constant entries, each asking for 1.5 MB: 60 MB in all, past the build's 16 MiB.
    let entries: Vec<Value> = (0..40)
        .map(|i| json!({ "id": format!("e{i}"), "constant": true, "content": "{{description}}{{description}}{{description}}" }))
        .collect();
    let preset = template_preset(
        "main",
        json!({ "character": { "name": "C", "description": "d".repeat(500_000) },
                "lorebook": { "tokenBudget": 100, "entries": entries } }),
    );
    let (warnings, peak, _) = build_measured(&preset, &session_of(&["u1"]));
    assert_warned(&warnings, "16 MiB");
    assert!(
        peak < MACRO_BUILD_BYTES + 16 * MIB,
        "peak {} MiB",
        peak / MIB
    );
}

#[test]
fn chained_empty_pattern_rules_stop_at_the_growth_cap_and_are_named() {
    let rules: Vec<Value> = (0..5)
        .map(|i| {
            json!({ "id": format!("grow-{i}"), "pattern": "", "replacement": "r".repeat(200),
                    "flags": "", "scope": "both", "enabled": true })
        })
        .collect();
    let preset = template_preset(&"t".repeat(1_000), json!({ "regexRules": rules }));
    let history = ["u".repeat(1_000), "a".repeat(1_000), "u".repeat(1_000)];
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let (warnings, peak, sent) = build_measured(&preset, &session_of(&refs));
    // The first rule makes 1 KB into 200 KB; the second would make that 40 MB and is left out.
    assert_warned(&warnings, "rule \"grow-1\" was not applied");
    assert_warned(&warnings, "history messages");
    assert_warned(&warnings, "templates");
    assert!(
        sent < 4 * (1_000 + 5 * REGEX_RULE_GROWTH),
        "{sent} bytes sent"
    );
    assert!(peak < 16 * MIB, "peak {} MiB", peak / MIB);
}

#[test]
fn thousands_of_huge_regex_keys_are_skipped_past_the_budget_and_the_rest_still_works() {
    // 3,000 keys like /\w{12}N/, each about 650 KB compiled: 2 GB in all.
    let mut entries: Vec<Value> = (0..3_000)
        .map(|i| json!({ "id": format!("k{i}"), "keys": [format!("/\\w{{12}}{i}/")], "content": format!("entry {i}") }))
        .collect();
    entries.push(json!({ "id": "dragon", "keys": ["dragon"], "content": "Dragons nest here." }));
    // A key over the cap of one pattern, read before the build's budget is spent.
    entries.insert(
        0,
        json!({ "id": "too-big", "keys": ["/\\w{400}/"], "content": "never" }),
    );
    let preset = template_preset("main", json!({ "lorebook": { "entries": entries } }));
    let (warnings, peak, _) =
        build_measured(&preset, &session_of(&["u a dragon! wordwordword12 x"]));
    assert_warned(
        &warnings,
        "regex keys skipped: the patterns of this build already take 64 MiB",
    );
    assert_warned(&warnings, "entry \"too-big\": key /\\w{400}/");
    assert!(
        peak < PATTERN_BUILD_BYTES + PATTERN_SEARCH_CACHE_BYTES + 16 * MIB,
        "peak {} MiB",
        peak / MIB
    );
    let preset = preset_from(preset);
    let session = session_of(&["u a dragon!"]);
    let result = try_run(&preset, &session, "gpt-4o", &options()).expect("builds");
    let report = result.lorebook.expect("a report");
    assert!(report.activated.iter().any(|a| a.entry_id == "dragon"));
}

#[test]
fn keys_that_overlap_everywhere_stop_the_scan_with_a_warning() {
    // Keys a, aa, aaa, ... occur at every position of a long run of a: hundreds of millions of
    // occurrences without the cap.
    let entries: Vec<Value> = (1..=400)
        .map(|n| json!({ "id": format!("a{n}"), "keys": ["a".repeat(n)], "content": "x" }))
        .collect();
    let preset = template_preset(
        "main",
        json!({ "lorebook": { "matchWholeWords": false, "entries": entries } }),
    );
    let text = format!("u{}", "a".repeat(200_000));
    let (warnings, peak, _) = build_measured(&preset, &session_of(&[&text]));
    assert_warned(&warnings, "the scan stopped there");
    assert!(peak < 16 * MIB, "peak {} MiB", peak / MIB);
}

#[test]
fn a_book_whose_plain_keys_take_more_than_the_cap_skips_the_rest_and_stays_within_memory() {
    // 10,000 distinct keys of 120 bytes: 1.2 MB of keys, each its own path in the automaton.
    let mut entries: Vec<Value> =
        vec![json!({ "id": "dragon", "keys": ["dragon"], "content": "Dragons nest here." })];
    entries.extend((0..10_000).map(|i| {
        let key: String = format!("{i:08}").chars().cycle().take(120).collect();
        json!({ "id": format!("k{i}"), "keys": [key], "content": "x" })
    }));
    let preset = template_preset("main", json!({ "lorebook": { "entries": entries } }));
    let (warnings, peak, _) = build_measured(&preset, &session_of(&["u a dragon!"]));
    assert_warned(
        &warnings,
        "plain keys skipped: the book's keys take more than 1 MiB",
    );
    assert!(peak < 96 * MIB, "peak {} MiB", peak / MIB);
    let preset = preset_from(preset);
    let session = session_of(&["u a dragon!"]);
    let result = try_run(&preset, &session, "gpt-4o", &options()).expect("builds");
    let report = result.lorebook.expect("a report");
    assert!(report.activated.iter().any(|a| a.entry_id == "dragon"));
}

#[test]
fn a_book_of_8000_entries_with_recursion_activates_what_it_should() {
    // 4,000 constant entries whose content names keys of 4,000 keyed ones, which chain on.
    let mut entries: Vec<Value> = (0..4_000)
        .map(|i| json!({ "id": format!("c{i}"), "constant": true, "content": format!("Constant {i} mentions place{}.", i * 3) }))
        .collect();
    entries.extend((0..4_000).map(|i| {
        json!({ "id": format!("k{i}"), "keys": [format!("place{i}")],
                "content": format!("Place {i} is next to place{}.", i + 1) })
    }));
    let preset = preset_from(template_preset(
        "main",
        json!({ "lorebook": { "tokenBudget": 100, "entries": entries } }),
    ));
    let session = session_of(&["u we begin"]);
    let result = try_run(&preset, &session, "gpt-4o", &options()).expect("builds");
    let report = result.lorebook.expect("a report");
    let active: std::collections::HashSet<&str> = report
        .activated
        .iter()
        .map(|a| a.entry_id.as_str())
        .chain(report.cut.iter().map(|c| c.entry_id.as_str()))
        .collect();
    // Round 1: every third place; round 2: the next one; round 3: the one after.
    for i in (0..4_000).step_by(3) {
        for step in 0..3 {
            if i + step < 4_000 {
                assert!(
                    active.contains(format!("k{}", i + step).as_str()),
                    "k{}",
                    i + step
                );
            }
        }
    }
    assert_eq!(active.len(), 8_000);
}

mod combinations {
    //! Random presets mixing growing macros, multiplying rules and lorebooks with regex keys and
    //! recursion: whatever the mix, what a build sends and the memory it takes stay within the
    //! caps.

    use super::*;
    use promptloom_engine::limits::{
        MACRO_BUILD_BYTES, PATTERN_BUILD_BYTES, PATTERN_SEARCH_CACHE_BYTES, REGEX_BUILD_GROWTH,
    };
    use proptest::prelude::*;

    fn macro_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("{{setvar::x::abcdefgh}}"),
                Just("{{addvar::x::{{getvar::x}}}}"),
                Just("{{getvar::x}}{{getvar::x}}"),
                Just("{{description}}"),
                Just("{{random::{{description}}::y}}"),
                Just("plain text "),
            ],
            0..24,
        )
        .prop_map(|p| p.concat())
    }

    fn rule() -> impl Strategy<Value = Value> {
        (
            prop_oneof![Just(""), Just("."), Just("x*"), Just("(?:)"), Just("a|e|o"), Just("\\w+")],
            0usize..400,
            prop_oneof![Just("history"), Just("templates"), Just("both")],
        )
            .prop_map(|(pattern, n, scope)| {
                json!({ "id": format!("r{n}-{}", pattern.len()), "pattern": pattern,
                        "replacement": "r".repeat(n), "flags": "", "scope": scope, "enabled": true })
            })
    }

    fn entry() -> impl Strategy<Value = Value> {
        (
            prop_oneof![
                Just("a".to_string()),
                Just("aa".to_string()),
                Just("/\\w{6}/".to_string()),
                Just("/(a|e)+x/".to_string()),
                Just("text".to_string()),
            ],
            any::<bool>(),
            macro_text(),
        )
            .prop_map(|(key, constant, content)| {
                json!({ "keys": [key], "constant": constant, "content": format!("a text {content}") })
            })
    }

    proptest! {
        // Each case builds a whole preset under the counting allocator. The description is
        // words, not one 300,000-letter word: the counters' time on one huge word is
        // `a_huge_line_is_counted_in_bounded_parts_by_every_kind_of_counter`'s question, and
        // here it made each case seconds long in a debug build.
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn no_mix_of_macros_rules_and_lorebooks_exceeds_the_caps(
            template in macro_text(),
            rules in proptest::collection::vec(rule(), 0..8),
            entries in proptest::collection::vec(entry(), 0..40),
            history in proptest::collection::vec("[a-z ]{0,300}", 1..6),
        ) {
            let entries: Vec<Value> = entries
                .into_iter()
                .enumerate()
                .map(|(i, mut e)| {
                    e["id"] = json!(format!("e{i}"));
                    e
                })
                .collect();
            let preset = template_preset(
                &template,
                json!({ "character": { "name": "C", "description": "dd ".repeat(100_000) },
                        "regexRules": rules,
                        "lorebook": { "tokenBudget": 100, "matchWholeWords": false, "entries": entries } }),
            );
            let texts: Vec<String> = history.iter().map(|h| format!("u{h}")).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let session = session_of(&refs);
            let input: usize = template.len()
                + texts.iter().map(String::len).sum::<usize>()
                + preset.to_string().len();
            let (_, peak, sent) = build_measured(&preset, &session);
            prop_assert!(
                sent <= input + MACRO_BUILD_BYTES + REGEX_BUILD_GROWTH,
                "sent {sent} bytes from {input}"
            );
            prop_assert!(
                peak < 4 * (MACRO_BUILD_BYTES + REGEX_BUILD_GROWTH) + PATTERN_BUILD_BYTES + PATTERN_SEARCH_CACHE_BYTES,
                "peak {} MiB",
                peak / MIB
            );
        }
    }
}

/// Compares `left` and `right` (built with `preset` for gpt-4o) under the counting allocator:
/// the diff and the most memory the comparison held at once.
fn diff_measured(
    preset: &Value,
    left: &Session,
    right: &Session,
) -> (promptloom_engine::diff::BuildDiff, usize) {
    use promptloom_engine::assets::InlineAssets;
    use promptloom_engine::diff::{diff, Side};
    let preset = preset_from(preset.clone());
    let traced = promptloom_engine::BuildOptions {
        trace_macros: true,
        ..options()
    };
    let l = try_run(&preset, left, "gpt-4o", &traced).expect("builds");
    let r = try_run(&preset, right, "gpt-4o", &traced).expect("builds");
    let cache = promptloom_engine::cache::BuildCache::new();
    let before = NOW.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let d = diff(
        Side {
            result: &l,
            session: left,
            assets: &InlineAssets,
        },
        Side {
            result: &r,
            session: right,
            assets: &InlineAssets,
        },
        &cache,
    )
    .expect("compares");
    let peak = (PEAK.with(Cell::get) - before).max(0) as usize;
    eprintln!("diff peak {:.1} MiB", peak as f64 / MIB as f64);
    (d, peak)
}

#[test]
fn a_macro_trace_stops_at_its_cap() {
    use promptloom_engine::limits::MACRO_TRACE_ENTRIES;
    // Three templates of 10,000 macros each: 30,000 evaluations.
    let many = "{{char}}".repeat(10_000);
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "t", "name": "T",
        "messageTemplates": [
            { "id": "a", "role": "system", "content": many },
            { "id": "b", "role": "system", "content": many },
            { "id": "c", "role": "system", "content": many },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "a", "enabled": true },
            { "messageId": "b", "enabled": true },
            { "messageId": "c", "enabled": true },
        ]}],
    }));
    let session = session_of(&["u hi"]);
    let traced = promptloom_engine::BuildOptions {
        trace_macros: true,
        ..options()
    };
    let result = try_run(&preset, &session, "gpt-4o", &traced).expect("builds");
    let traced: usize = result.macro_traces.iter().map(|t| t.macros.len()).sum();
    assert_eq!(traced, MACRO_TRACE_ENTRIES);
    // Every text is still traced by its hash: the third template's edits are still seen.
    assert_eq!(result.macro_traces.len(), 3);
}

#[test]
fn long_histories_that_share_nothing_are_compared_past_the_table_without_it() {
    use promptloom_engine::diff::{RowKind, LCS_CELLS};
    // 3,000 messages a side, every text different: 9 million cells, past the table's cap.
    let texts = |tag: &str| -> Vec<String> {
        (0..3_000)
            .map(|i| format!("{} {tag} message {i}", if i % 2 == 0 { "u" } else { "a" }))
            .collect()
    };
    let (a, b) = (texts("left"), texts("right"));
    let left = session_of(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let right = session_of(&b.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(a.len() * b.len() > LCS_CELLS);
    let (d, peak) = diff_measured(&template_preset("main", json!({})), &left, &right);
    // Each stored position is its own source: the histories pair up as changed messages.
    assert_eq!(
        d.messages
            .iter()
            .filter(|r| r.kind == RowKind::Changed)
            .count(),
        3_000
    );
    assert_eq!(
        d.first_difference.as_ref().and_then(|f| f.message_index),
        Some(1)
    );
    assert!(peak < 32 * MIB, "peak {} MiB", peak / MIB);
}

#[test]
fn a_huge_changed_message_is_compared_by_its_head_and_tail() {
    use promptloom_engine::diff::{ChangeOp, WORD_DIFF_BYTES};
    let body = "word ".repeat(800_000); // 4 MB
    let (a, b) = (format!("u {body}A"), format!("u {body}B"));
    assert!(a.len() > WORD_DIFF_BYTES);
    let (d, peak) = diff_measured(
        &template_preset("main", json!({})),
        &session_of(&[&a]),
        &session_of(&[&b]),
    );
    let row = d
        .messages
        .iter()
        .find(|r| r.kind == promptloom_engine::diff::RowKind::Changed);
    let ops: Vec<ChangeOp> = row
        .expect("a changed row")
        .changes
        .iter()
        .map(|c| c.op)
        .collect();
    assert_eq!(ops, [ChangeOp::Equal, ChangeOp::Delete, ChangeOp::Insert]);
    // The two request bodies and the two texts, a few times over; not a word table.
    assert!(peak < 64 * MIB, "peak {} MiB", peak / MIB);
}

/// Builds `preset` with the macro tracer on, under the counting allocator: the trace and the
/// most memory the build held at once.
fn detail_traced(preset: &Value) -> (promptloom_engine::macros::MacroTrace, usize) {
    let preset = preset_from(preset.clone());
    let session = session_of(&["u hi"]);
    let traced = promptloom_engine::BuildOptions {
        trace_macros_in_detail: true,
        ..options()
    };
    try_run(&preset, &session, "gpt-4o", &options()).expect("warms up");
    let before = NOW.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let result = try_run(&preset, &session, "gpt-4o", &traced).expect("builds");
    let peak = (PEAK.with(Cell::get) - before).max(0) as usize;
    eprintln!("traced peak {:.1} MiB", peak as f64 / MIB as f64);
    (result.macro_trace.expect("traced"), peak)
}

#[test]
fn the_macro_tracer_stops_at_its_caps_with_a_note() {
    use promptloom_engine::limits::{MACRO_TRACE_BYTES, MACRO_TRACE_ENTRIES};
    // 30,000 macros in three templates: past the trace's count.
    let many = "{{char}}".repeat(10_000);
    let preset = json!({
        "formatVersion": 1, "id": "t", "name": "T",
        "messageTemplates": [
            { "id": "a", "role": "system", "content": many },
            { "id": "b", "role": "system", "content": many },
            { "id": "c", "role": "system", "content": many },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "a", "enabled": true },
            { "messageId": "b", "enabled": true },
            { "messageId": "c", "enabled": true },
        ]}],
    });
    let (trace, peak) = detail_traced(&preset);
    assert_eq!(trace.expansions.len(), MACRO_TRACE_ENTRIES);
    let note = trace.stopped.expect("a note").to_string();
    assert!(note.contains("20000 macros"), "{note}");
    assert!(peak < 48 * MIB, "peak {} MiB", peak / MIB);

    // Five templates of 1,000 outputs of 2 KB (each within its expansion's cap), each output
    // kept as 1 KiB: past the trace's bytes.
    let text = "{{description}}".repeat(1_000);
    let ids = ["a", "b", "c", "d", "e"];
    let preset = json!({
        "formatVersion": 1, "id": "t", "name": "T",
        "character": { "name": "N", "description": "d".repeat(2_000) },
        "messageTemplates": ids.map(|id| json!({ "id": id, "role": "system", "content": text })),
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"],
            "steps": ids.map(|id| json!({ "messageId": id, "enabled": true })) }],
    });
    let (trace, peak) = detail_traced(&preset);
    let kept: usize = trace.expansions.iter().map(|e| e.output.len()).sum();
    assert!(kept <= MACRO_TRACE_BYTES, "{kept} bytes kept");
    assert!(trace.expansions.len() < 5_000);
    assert!(trace.stopped.expect("a note").to_string().contains("4 MiB"));
    assert!(peak < 48 * MIB, "peak {} MiB", peak / MIB);
}
