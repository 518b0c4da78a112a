//! RULES 9.8 and 5.13: the turn-to-turn diff (rows, token deltas, changed words, the stable
//! prefix, the first difference and its cause by name) and Anthropic's cache breakpoints.

mod common;

use chrono::DateTime;
use common::*;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::diff::{
    diff, previous_turn, prompt_bytes, text_changes, BuildDiff, ChangeOp, RowKind, Side,
};
use promptloom_engine::model::{AgentPreset, Session};
use promptloom_engine::providers::request_body;
use promptloom_engine::{BuildOptions, BuildResult};
use serde_json::{json, Value};

fn build_on<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    options: &BuildOptions,
    cache: &BuildCache,
) -> BuildResult<'s> {
    try_run_cached(preset, session, model, options, cache).expect("builds")
}

/// `left` against `right`, both built with `preset` for `model`.
fn compare(
    preset: &AgentPreset,
    left: (&Session, &BuildOptions),
    right: (&Session, &BuildOptions),
    model: &str,
) -> BuildDiff {
    let cache = BuildCache::new();
    let traced = |o: &BuildOptions| BuildOptions {
        trace_macros: true,
        ..o.clone()
    };
    let l = build_on(preset, left.0, model, &traced(left.1), &cache);
    let r = build_on(preset, right.0, model, &traced(right.1), &cache);
    diff(
        Side {
            result: &l,
            session: left.0,
            assets: &InlineAssets,
        },
        Side {
            result: &r,
            session: right.0,
            assets: &InlineAssets,
        },
        &cache,
    )
    .expect("diffs")
}

/// This turn (the whole session) against the previous one (RULES 9.8).
fn against_previous_turn(preset: &AgentPreset, session: &Session, model: &str) -> BuildDiff {
    let now = options();
    let earlier = previous_turn(session, &now.timestamp).expect("has a turn");
    let mut then = options();
    if let Some(t) = earlier.timestamp {
        then.timestamp = t;
    }
    compare(preset, (&earlier.session, &then), (session, &now), model)
}

fn cause(d: &BuildDiff) -> String {
    d.first_difference
        .as_ref()
        .map(|f| f.cause.clone())
        .unwrap_or_else(|| "none".into())
}

/// A preset whose first step is `main` (with `content`), then the history, then `extra`'s
/// templates and steps.
fn preset_with(
    content: &str,
    extra_templates: Value,
    extra_steps: Value,
    more: Value,
) -> AgentPreset {
    let mut templates = vec![
        json!({ "id": "main", "role": "system", "content": content }),
        json!({ "id": "hist", "role": "system", "type": "chat_history" }),
    ];
    templates.extend(extra_templates.as_array().cloned().unwrap_or_default());
    let mut steps = vec![
        json!({ "messageId": "main", "enabled": true }),
        json!({ "messageId": "hist", "enabled": true }),
    ];
    steps.extend(extra_steps.as_array().cloned().unwrap_or_default());
    let mut v = json!({
        "formatVersion": 1, "id": "d", "name": "D",
        "messageTemplates": templates,
        "contextRecipes": one_recipe(json!(steps)),
    });
    if let (Some(o), Some(m)) = (v.as_object_mut(), more.as_object()) {
        o.extend(m.clone());
    }
    preset_from(v)
}

/// A preset whose main prompt draws a mood out of 40 at random, with `more` at its top level.
fn random_mood_preset(more: Value) -> AgentPreset {
    let moods: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    preset_with(
        &format!("Mood {{{{random::{}}}}}", moods.join("::")),
        json!([]),
        json!([]),
        more,
    )
}

fn chat(turns: usize) -> Session {
    let contents: Vec<String> = (0..turns)
        .flat_map(|i| [format!("u question {i}"), format!("a answer {i}")])
        .collect();
    let refs: Vec<&str> = contents.iter().map(String::as_str).collect();
    session_of(&refs)
}

#[test]
fn a_random_macro_near_the_top_is_named_as_the_cause() {
    let choices: Vec<String> = (0..40).map(|i| format!("c{i}")).collect();
    let preset = preset_with(
        &format!(
            "You are here. Mood: {{{{random::{}}}}}.",
            choices.join("::")
        ),
        json!([]),
        json!([]),
        json!({}),
    );
    let d = against_previous_turn(&preset, &chat(3), "gpt-4o");
    let first = d.first_difference.as_ref().expect("a difference");
    assert_eq!(first.cause, "macro:random");
    assert_eq!(first.message_index, Some(0));
    assert_eq!(first.row, Some(0));
    // The two part inside the macro's output, after the text before it.
    assert_eq!(first.offset as usize, "You are here. Mood: c".len());
    assert_eq!(d.messages[0].kind, RowKind::Changed);
    assert!(d.messages[0]
        .changes
        .iter()
        .any(|c| c.op == ChangeOp::Insert));
}

#[test]
fn a_time_macro_is_named_when_the_turns_were_built_at_different_times() {
    let preset = preset_with("It is {{time}}.", json!([]), json!([]), json!({}));
    let mut session = chat(2);
    // The newest exchange began two hours before the build.
    session.messages[2].created_at = Some("2026-11-22T08:30:00+00:00".into());
    let d = against_previous_turn(&preset, &session, "gpt-4o");
    assert_eq!(cause(&d), "macro:time");

    // Without a readable time both turns are built at one time: the time macro agrees, and what
    // differs first is the history the newest exchange added.
    session.messages[2].created_at = None;
    let d = against_previous_turn(&preset, &session, "gpt-4o");
    assert_eq!(cause(&d), "history");
}

#[test]
fn a_lorebook_entry_that_fires_this_turn_only_is_named() {
    let preset = preset_with(
        "You are here.",
        json!([{ "id": "worldInfoBefore", "role": "system", "type": "placeholder" }]),
        json!([]),
        json!({ "lorebook": { "entries": [
            { "id": "dragon-lore", "keys": ["dragon"], "content": "Dragons nest in the north." }
        ] } }),
    );
    // The placeholder goes before the history.
    let mut preset = preset;
    let steps = &mut preset.context_recipes[0].steps;
    let wi = steps.pop().expect("the placeholder step");
    steps.insert(1, wi);
    let session = session_of(&[
        "u hello",
        "a hi",
        "u tell me about the dragon",
        "a it sleeps",
    ]);
    let d = against_previous_turn(&preset, &session, "gpt-4o");
    assert_eq!(cause(&d), "lorebook:dragon-lore");
    let first = d.first_difference.as_ref().expect("a difference");
    assert_eq!(first.message_index, Some(1), "right after the main prompt");
}

#[test]
fn a_depth_injection_that_moves_with_the_history_is_named() {
    let preset = preset_with(
        "You are here.",
        json!([{ "id": "note", "role": "system", "content": "Stay in character." }]),
        json!([{ "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 2 } }]),
        json!({}),
    );
    let d = against_previous_turn(&preset, &chat(4), "gpt-4o");
    assert_eq!(cause(&d), "depth-injection:note");
    // Everything before the injection's old place is stable: the main prompt and four
    // messages; the fifth now stands where the note stood.
    let first = d.first_difference.as_ref().expect("a difference");
    assert_eq!(first.message_index, Some(5));
    let stable: u32 = d.messages[..first.row.unwrap() as usize]
        .iter()
        .map(|r| r.right_tokens)
        .sum();
    assert_eq!(d.stable_prefix.tokens, stable);
    assert!(d.stable_prefix.bytes > 0);
}

#[test]
fn the_limiter_cutting_the_oldest_history_is_named() {
    let preset = preset_with("You are here.", json!([]), json!([]), json!({}));
    let mut options = options();
    // Room for the main prompt and about four messages.
    options.context_window = Some(60);
    options.reserve = Some(0);
    let session = chat(4);
    let earlier = previous_turn(&session, &options.timestamp).expect("a turn");
    let d = compare(
        &preset,
        (&earlier.session, &options),
        (&session, &options),
        "gpt-4o",
    );
    assert_eq!(cause(&d), "limiter");
    let first = d.first_difference.as_ref().expect("a difference");
    assert_eq!(
        first.message_index,
        Some(1),
        "the oldest history went first"
    );
}

#[test]
fn an_edited_history_message_is_named_history() {
    let preset = preset_with("You are here.", json!([]), json!([]), json!({}));
    let a = chat(3);
    let mut b = a.clone();
    b.messages[1].content = "a a different answer 0".into();
    let now = options();
    let d = compare(&preset, (&a, &now), (&b, &now), "gpt-4o");
    assert_eq!(cause(&d), "history");
    let first = d.first_difference.expect("a difference");
    assert_eq!(first.message_index, Some(2));
    assert_eq!(first.offset as usize, "a a".len());
}

#[test]
fn an_edited_template_is_named_template() {
    let before = preset_with("You are here.", json!([]), json!([]), json!({}));
    let after = preset_with("You are there.", json!([]), json!([]), json!({}));
    let session = chat(2);
    let now = BuildOptions {
        trace_macros: true,
        ..options()
    };
    let cache = BuildCache::new();
    let l = build_on(&before, &session, "gpt-4o", &now, &cache);
    let r = build_on(&after, &session, "gpt-4o", &now, &cache);
    let side = |result| Side {
        result,
        session: &session,
        assets: &InlineAssets,
    };
    let d = diff(side(&l), side(&r), &cache).expect("diffs");
    assert_eq!(cause(&d), "template");
    // "You are " is shared: a few tokens, fewer than the message.
    assert!(d.stable_prefix.tokens > 0 && d.stable_prefix.tokens < r.messages[0].tokens);
    // The changed word is marked, the rest kept.
    let changes = &d.messages[0].changes;
    let ops: Vec<(ChangeOp, &str)> = changes.iter().map(|c| (c.op, c.text.as_str())).collect();
    assert_eq!(
        ops,
        [
            (ChangeOp::Equal, "You are "),
            (ChangeOp::Delete, "here"),
            (ChangeOp::Insert, "there"),
            (ChangeOp::Equal, "."),
        ]
    );
}

#[test]
fn a_changed_authors_note_is_other() {
    let preset = preset_with(
        "You are here.",
        json!([]),
        json!([]),
        json!({ "processors": [{ "id": "authors-note", "enabled": true }] }),
    );
    let mut a = chat(3);
    a.authors_note = serde_json::from_value(json!({ "content": "Rain.", "depth": 2 })).ok();
    let mut b = a.clone();
    b.authors_note = serde_json::from_value(json!({ "content": "Snow.", "depth": 2 })).ok();
    let now = options();
    let d = compare(&preset, (&a, &now), (&b, &now), "gpt-4o");
    assert!(a.authors_note.is_some(), "the note parses");
    assert_eq!(cause(&d), "other");
}

#[test]
fn identical_builds_have_no_difference_and_share_the_whole_prompt() {
    let preset = preset_with("You are here.", json!([]), json!([]), json!({}));
    let session = chat(3);
    let now = options();
    let d = compare(&preset, (&session, &now), (&session, &now), "gpt-4o");
    assert_eq!(d.first_difference, None);
    assert!(d
        .messages
        .iter()
        .all(|r| r.kind == RowKind::Same && r.token_delta == 0));
    let cache = BuildCache::new();
    let r = build_on(&preset, &session, "gpt-4o", &now, &cache);
    let all: u32 = r.messages.iter().map(|m| m.tokens).sum();
    assert_eq!(d.stable_prefix.tokens, all);
    let body = request_body(r.provider_format(), &r, &session, &InlineAssets).expect("body");
    assert_eq!(d.stable_prefix.bytes as usize, prompt_bytes(&body).len());
}

#[test]
fn token_deltas_are_per_row_and_sum_to_the_totals_difference() {
    let preset = preset_with("You are here.", json!([]), json!([]), json!({}));
    let d = against_previous_turn(&preset, &chat(3), "gpt-4o");
    let sum: i64 = d.messages.iter().map(|r| r.token_delta).sum();
    assert_eq!(sum, i64::from(d.right_tokens) - i64::from(d.left_tokens));
    let added: Vec<RowKind> = d.messages.iter().map(|r| r.kind).collect();
    assert_eq!(added.iter().filter(|k| **k == RowKind::Right).count(), 2);
}

#[test]
fn a_session_without_a_user_message_has_no_previous_turn() {
    let session = session_of(&["a hello there"]);
    let err = previous_turn(&session, &options().timestamp).expect_err("no turn");
    let text = err.to_string();
    assert!(
        text.contains("session \"s1\"") && text.contains("no user message"),
        "{text}"
    );
}

#[test]
fn a_long_changed_message_is_marked_by_its_head_and_tail() {
    let old = format!("{}A{}", "x".repeat(300_000), "y".repeat(10));
    let new = format!("{}B{}", "x".repeat(300_000), "y".repeat(10));
    let changes = text_changes(&old, &new);
    let ops: Vec<ChangeOp> = changes.iter().map(|c| c.op).collect();
    assert_eq!(
        ops,
        [
            ChangeOp::Equal,
            ChangeOp::Delete,
            ChangeOp::Insert,
            ChangeOp::Equal
        ]
    );
    assert_eq!(changes[1].text, "A");
    assert_eq!(changes[2].text, "B");
}

#[test]
fn chinese_text_is_marked_character_by_character() {
    let changes = text_changes("今天下雨。", "今天下雪。");
    let deleted: Vec<&str> = changes
        .iter()
        .filter(|c| c.op == ChangeOp::Delete)
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(deleted, ["雨"]);
}

// RULES 5.13: cache breakpoints.

fn claude_preset(breakpoints: Value) -> AgentPreset {
    preset_with(
        "You are here.",
        json!([]),
        json!([]),
        json!({ "generation": { "cacheBreakpoints": breakpoints } }),
    )
}

#[test]
fn the_anthropic_body_carries_breakpoints_in_the_documented_shape() {
    let preset = claude_preset(json!({ "system": true, "depths": [0, 2] }));
    let session = chat(3);
    let r = build_on(
        &preset,
        &session,
        "claude-sonnet-4-5",
        &options(),
        &BuildCache::new(),
    );
    let body = request_body(r.provider_format(), &r, &session, &InlineAssets).expect("body");
    // The system part: one text block with cache_control.
    assert_eq!(
        body["system"],
        json!([{ "type": "text", "text": "You are here.", "cache_control": { "type": "ephemeral" } }])
    );
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 6);
    // Depth 0 is the newest turn, depth 2 the one two before it: their text becomes a block.
    for (at, text) in [(5, "a answer 2"), (3, "a answer 1")] {
        assert_eq!(
            messages[at]["content"],
            json!([{ "type": "text", "text": text, "cache_control": { "type": "ephemeral" } }]),
            "turn {at}"
        );
    }
    // The others stay plain strings.
    assert_eq!(messages[4]["content"], json!("u question 2"));
    let marked = body.to_string().matches("cache_control").count();
    assert_eq!(marked, 3);
    // The preview's marks: after message 0 (the system part), 4 and 6.
    let at: Vec<(u32, Option<u32>)> = r
        .cache_breakpoints
        .iter()
        .map(|b| (b.message_index, b.depth))
        .collect();
    assert_eq!(at, [(0, None), (4, Some(2)), (6, Some(0))]);
}

#[test]
fn breakpoints_are_for_anthropic_only_and_say_so_elsewhere() {
    let preset = claude_preset(json!({ "system": true }));
    let session = chat(1);
    let r = build_on(&preset, &session, "gpt-4o", &options(), &BuildCache::new());
    assert!(r.cache_breakpoints.is_empty());
    assert!(any_warning(&r, "cacheBreakpoints"), "{:?}", warnings(&r));
    let body = request_body(r.provider_format(), &r, &session, &InlineAssets).expect("body");
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn more_than_four_breakpoints_or_a_depth_twice_is_refused() {
    for (breakpoints, needle) in [
        (
            json!({ "system": true, "depths": [0, 1, 2, 3] }),
            "5 cache breakpoints; a request takes at most 4",
        ),
        (json!({ "depths": [2, 2] }), "depth 2 is named twice"),
    ] {
        let value = json!({
            "formatVersion": 1, "id": "d", "name": "D",
            "messageTemplates": [{ "id": "main", "role": "system", "content": "x" }],
            "contextRecipes": one_recipe(json!([{ "messageId": "main", "enabled": true }])),
            "generation": { "cacheBreakpoints": breakpoints },
        });
        let err = promptloom_engine::model::parse_preset(&value.to_string()).expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains("generation.cacheBreakpoints") && text.contains(needle),
            "{text}"
        );
    }
}

#[test]
fn a_breakpoint_before_the_first_difference_is_stable_and_one_after_it_is_not() {
    let preset = claude_preset(json!({ "system": true, "depths": [0, 2] }));
    let d = against_previous_turn(&preset, &chat(3), "claude-sonnet-4-5");
    let marks: Vec<(Option<u32>, bool)> =
        d.breakpoints.iter().map(|b| (b.depth, b.stable)).collect();
    // The system part and depth 2 (the previous turn's end) cache what the previous turn had;
    // depth 0 is this turn's new message.
    assert_eq!(marks, [(None, true), (Some(2), true), (Some(0), false)]);

    // A random macro in the system part makes every breakpoint unstable.
    let preset =
        random_mood_preset(json!({ "generation": { "cacheBreakpoints": { "system": true } } }));
    let d = against_previous_turn(&preset, &chat(3), "claude-sonnet-4-5");
    assert_eq!(cause(&d), "macro:random");
    assert!(d.breakpoints.iter().all(|b| !b.stable));
}

#[test]
fn the_previous_turn_is_built_at_its_own_time() {
    let mut session = chat(2);
    session.messages[2].created_at = Some("2026-11-22T08:30:00+00:00".into());
    let now = DateTime::parse_from_rfc3339(NOW).expect("now");
    let earlier = previous_turn(&session, &now).expect("a turn");
    assert_eq!(earlier.session.messages.len(), 2);
    assert_eq!(
        earlier.timestamp.map(|t| t.to_rfc3339()),
        Some("2026-11-22T08:30:00+00:00".into())
    );
}

#[test]
fn without_traced_macros_a_macro_cannot_be_named() {
    // The live preview keeps no traces; a diff of such builds says `other` rather than guess.
    let preset = random_mood_preset(json!({}));
    let session = chat(3);
    let now = options();
    let earlier = previous_turn(&session, &now.timestamp).expect("a turn");
    let cache = BuildCache::new();
    let l = build_on(&preset, &earlier.session, "gpt-4o", &now, &cache);
    let r = build_on(&preset, &session, "gpt-4o", &now, &cache);
    assert!(l.macro_traces.is_empty() && r.macro_traces.is_empty());
    let side = |result, session| Side {
        result,
        session,
        assets: &InlineAssets,
    };
    let d = diff(side(&l, &earlier.session), side(&r, &session), &cache).expect("diffs");
    assert_eq!(cause(&d), "other");
}
