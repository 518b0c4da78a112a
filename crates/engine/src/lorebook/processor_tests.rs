//! The lorebook processor's native activation (RULES 6) and its placement, on books built in the
//! test.

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
