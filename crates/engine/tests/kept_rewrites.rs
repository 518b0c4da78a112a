//! The history rules' rewrites that builds borrow from a store the caller holds beside the
//! session, and the rebuild that replays what the last build over the same stored texts
//! rewrote (RULES 5.2): whatever store a build is given, and whatever the last build did, each
//! build equals a cold one, its counts and what it says included.

mod common;

use common::*;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{AgentPreset, RegexRule, Session};
use promptloom_engine::pipeline::{BuildResult, KeptRewrites, Pipeline};
use promptloom_engine::BuildRequest;
use serde_json::json;

fn rule(pattern: &str, replacement: &str) -> RegexRule {
    history_rule(&format!("{pattern}->"), pattern, replacement)
}

fn chat_preset_with(rules: Vec<RegexRule>) -> AgentPreset {
    let mut p = chat_preset();
    p.regex_rules = Some(rules);
    p
}

/// One build through `cache` borrowing from `kept`, with `input` pending.
fn build_with<'s>(
    p: &AgentPreset,
    session: &'s Session,
    cache: &BuildCache,
    kept: Option<&'s KeptRewrites>,
    input: Option<&str>,
) -> BuildResult<'s> {
    let mut options = options();
    options.input = input.map(str::to_string);
    let request = BuildRequest {
        preset: p,
        session,
        kept_rewrites: kept,
        model: "gpt-4o",
        options: &options,
        cache,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    };
    Pipeline::builtin().run(&request).expect("builds")
}

/// What a reader of the build sees: its messages, its counts and its log.
fn seen(r: &BuildResult<'_>) -> (serde_json::Value, Vec<String>) {
    let logs = r.logs.iter().map(|l| l.message.clone()).collect();
    (
        json!({ "messages": serde_json::to_value(&r.messages).expect("serialises"),
                "tokens": serde_json::to_value(&r.tokens).expect("serialises") }),
        logs,
    )
}

fn cold(
    p: &AgentPreset,
    session: &Session,
    input: Option<&str>,
) -> (serde_json::Value, Vec<String>) {
    seen(&build_with(p, session, &BuildCache::new(), None, input))
}

#[test]
fn a_rebuild_replays_the_last_builds_rewrites_and_says_the_same() {
    let p = chat_preset_with(vec![rule(r"\bhi\b", "hello")]);
    let session = session_of(&["u1 hi", "a1 oh hi", "u2 bye", "a2 hi hi"]);
    let cache = BuildCache::new();
    let kept = KeptRewrites::of_session(&cache, &session);
    for input in [None, None, Some("u3 hi"), Some("u3 hi"), None] {
        let warm = build_with(&p, &session, &cache, Some(&kept), input);
        assert_eq!(seen(&warm), cold(&p, &session, input));
        assert!(warm.logs.iter().any(|l| l.message
            == "rule \"\\bhi\\b->\" changed 3 history messages"
            || l.message == "rule \"\\bhi\\b->\" changed 4 history messages"));
    }
    assert_eq!(
        kept.len(),
        3,
        "each rewrite kept once, however often replayed"
    );
}

#[test]
fn a_build_given_another_store_puts_the_rewrites_in_it_and_builds_the_same() {
    let p = chat_preset_with(vec![rule(r"\bhi\b", "hello")]);
    let session = session_of(&["u1 hi", "a1 oh hi", "u2 bye"]);
    let cache = BuildCache::new();
    let first = KeptRewrites::new();
    let second = KeptRewrites::new();
    let want = cold(&p, &session, None);
    for kept in [&first, &first, &second, &second, &first] {
        assert_eq!(
            seen(&build_with(&p, &session, &cache, Some(kept), None)),
            want
        );
    }
    // Without a store: texts of the build's own.
    assert_eq!(seen(&build_with(&p, &session, &cache, None, None)), want);
    assert_eq!(
        seen(&build_with(&p, &session, &cache, Some(&first), None)),
        want
    );
    // Where a rewrite was put is known for the last store it went into: going back to the
    // first store puts both in again.
    assert_eq!((first.len(), second.len()), (4, 2));
}

#[test]
fn a_replayed_rewrite_follows_a_name_an_id_and_an_attachment_changed_in_place() {
    let p = chat_preset_with(vec![rule(r"\bhi\b", "hello")]);
    let mut session = session_of(&["u1 hi", "a1 oh hi", "u2 bye"]);
    let cache = BuildCache::new();
    let kept = KeptRewrites::of_session(&cache, &session);
    let warm = |session: &Session| seen(&build_with(&p, session, &cache, Some(&kept), None));
    assert_eq!(warm(&session), cold(&p, &session, None));
    // The same texts and roles: the stored texts' generation holds.
    session.messages[1].name = Some("Ann".into());
    assert_eq!(warm(&session), cold(&p, &session, None));
    session.messages[0].id = Some("another".into());
    assert_eq!(warm(&session), cold(&p, &session, None));
    session.messages[1].attachments.push(dot_png());
    assert_eq!(warm(&session), cold(&p, &session, None));
    assert_eq!(warm(&session), cold(&p, &session, None));
}

#[test]
fn a_pass_stopped_by_the_cap_on_growth_is_not_replayed() {
    // Each message grows by nearly a rule's cap, so the build's cap stops the pass partway.
    let grown = "y".repeat(1_000);
    let p = chat_preset_with(vec![rule("x", &grown)]);
    let text = format!("u {}", "x".repeat(1_000));
    let texts: Vec<&str> = std::iter::repeat_n(text.as_str(), 40).collect();
    let session = session_of(&texts);
    let cache = BuildCache::new();
    let kept = KeptRewrites::of_session(&cache, &session);
    let want = cold(&p, &session, None);
    assert!(
        want.1.iter().any(|l| l.contains("MiB")),
        "the cap was reached: {:?}",
        want.1
    );
    for _ in 0..3 {
        assert_eq!(
            seen(&build_with(&p, &session, &cache, Some(&kept), None)),
            want
        );
    }
}

#[test]
fn a_rebuild_follows_the_speakers_names_sent_or_not_over_the_same_stored_texts() {
    let mut session = session_of(&["u1 hi", "a1 oh hi", "u2 bye"]);
    session.messages[0].name = Some("Ash".into());
    session.messages[1].name = Some("Mira".into());
    let cache = BuildCache::new();
    let kept = KeptRewrites::of_session(&cache, &session);
    for names in ["keep", "keep", "none", "none", "keep", "none"] {
        let mut p = chat_preset_with(vec![rule(r"\bhi\b", "hello")]);
        p.processors = Some(
            serde_json::from_value(json!([
                { "id": "session-loader", "settings": { "names": names } }
            ]))
            .expect("config"),
        );
        let warm = build_with(&p, &session, &cache, Some(&kept), None);
        assert_eq!(seen(&warm), cold(&p, &session, None), "names {names}");
        let sent: Vec<Option<&str>> = warm.messages.iter().skip(1).map(|m| m.name()).collect();
        match names {
            "keep" => assert_eq!(sent, [Some("Ash"), Some("Mira"), None]),
            _ => assert_eq!(sent, [None, None, None]),
        }
    }
    // Kept with names sent and without: each change of the setting makes them again, once.
    assert_eq!(kept.len(), 2 * 4);
}
