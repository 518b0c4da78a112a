//! What a rebuild takes from the build before it without reading the session again (RULES 5.3):
//! while the session loader finds every stored message with the text and role it had, the
//! history filter reuses what it removed, and counts and rewrites kept by stored text are read
//! without their texts. Each change below must show, and each build equal a cold one.

mod common;

use std::sync::Arc;

use common::*;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{AgentPreset, RegexRule, Role, Session};
use serde_json::json;

/// A filter that keeps user and assistant messages without `secret`.
fn filtered(p: &mut AgentPreset) {
    p.processors = Some(
        serde_json::from_value(json!([{
            "id": "history-operations",
            "enabled": true,
            "settings": { "operation": "filter", "roles": "user,assistant", "contentExcludes": "secret" }
        }]))
        .expect("config"),
    );
}

/// A history rule that makes each "hi" a "hello".
fn greet() -> RegexRule {
    history_rule("greet", r"\bhi\b", "hello")
}

/// Through `cache`, and cold: the same messages and counts.
fn same_as_cold(p: &AgentPreset, session: &Session, cache: &BuildCache) -> Vec<String> {
    let warm = run_cached(p, session, cache);
    let cold = run(p, session);
    assert_eq!(warm.messages, cold.messages);
    assert_eq!(warm.tokens, cold.tokens);
    history_contents(&warm)
}

#[test]
fn a_reused_filter_follows_a_text_changed_in_place_a_changed_role_and_the_input() {
    let mut p = chat_preset();
    filtered(&mut p);
    let cache = BuildCache::new();
    let mut session = session_of(&["u1 secret", "a1 secret too", "u2 hello", "a2 hi"]);
    for _ in 0..3 {
        assert_eq!(same_as_cold(&p, &session, &cache), ["u2 hello", "a2 hi"]);
    }
    // Another text in the same place: a new shared string.
    session.messages[2].content = Arc::from("u2 a secret");
    assert_eq!(same_as_cold(&p, &session, &cache), ["a2 hi"]);
    // The same text (the same shared string) under a role the filter does not keep.
    session.messages[3].role = Role::System;
    assert_eq!(same_as_cold(&p, &session, &cache), Vec::<String>::new());
    session.messages[3].role = Role::Assistant;
    assert_eq!(same_as_cold(&p, &session, &cache), ["a2 hi"]);
    // The pending input goes after the history, and the filter never takes it.
    let mut options = options();
    options.input = Some("u3 a secret question".into());
    let with_input = |cache: &BuildCache| {
        let request = promptloom_engine::pipeline::BuildRequest {
            preset: &p,
            session: &session,
            kept_rewrites: None,
            model: "gpt-4o",
            options: &options,
            cache,
            profiles: &[],
            assets: &promptloom_engine::assets::InlineAssets,
        };
        let r = promptloom_engine::pipeline::Pipeline::builtin()
            .run(&request)
            .expect("builds");
        r.messages
            .iter()
            .skip(1)
            .map(|m| m.content().to_string())
            .collect::<Vec<_>>()
    };
    let warm = with_input(&cache);
    assert_eq!(warm, with_input(&BuildCache::new()));
    assert_eq!(
        warm.last().map(String::as_str),
        Some("u3 a secret question")
    );
    // A session made longer, then shorter.
    session
        .messages
        .push(promptloom_engine::model::ChatMessage::new(
            Role::User,
            "u3 fine",
        ));
    assert_eq!(same_as_cold(&p, &session, &cache), ["a2 hi", "u3 fine"]);
    session.messages.truncate(4);
    assert_eq!(same_as_cold(&p, &session, &cache), ["a2 hi"]);
}

#[test]
fn two_sessions_of_one_id_built_in_turn_through_one_cache_are_each_built_as_they_are() {
    let mut p = chat_preset();
    filtered(&mut p);
    p.regex_rules = Some(vec![greet()]);
    let cache = BuildCache::new();
    let one = session_of(&["u1 hi", "a1 hi there", "u2 secret"]);
    let other = session_of(&["u1 secret", "a1 oh hi", "u2 hi again", "a2 bye", "u3 hi"]);
    // Said alike whether the rewrites were made in this build or kept from the last.
    let said = |session: &Session| {
        let r = run_cached(&p, session, &cache);
        r.logs
            .iter()
            .filter(|l| l.message.starts_with("rule \"greet\""))
            .map(|l| l.message.clone())
            .collect::<Vec<_>>()
    };
    for _ in 0..2 {
        assert_eq!(said(&one), ["rule \"greet\" changed 2 history messages"]);
        assert_eq!(said(&other), ["rule \"greet\" changed 3 history messages"]);
    }
    for _ in 0..2 {
        assert_eq!(
            same_as_cold(&p, &one, &cache),
            ["u1 hello", "a1 hello there"]
        );
        assert_eq!(
            same_as_cold(&p, &other, &cache),
            ["a1 oh hello", "u2 hello again", "a2 bye", "u3 hello"]
        );
    }
}

/// A rewritten message keeps its stored attachments, and its count is then not exact; the
/// others are, and a rebuild says the same.
#[test]
fn a_rewritten_message_keeps_its_attachments_and_says_its_count_is_not_exact() {
    let mut p = chat_preset();
    p.regex_rules = Some(vec![greet()]);
    let mut session = session_of(&["u1 hi, see this", "a1 hi"]);
    session.messages[0].attachments.push(dot_png());
    let cache = BuildCache::new();
    for _ in 0..2 {
        let r = run_cached(&p, &session, &cache);
        let seen: Vec<(String, usize, bool)> = r
            .messages
            .iter()
            .skip(1)
            .map(|m| (m.content().to_string(), m.attachments().len(), m.exact))
            .collect();
        assert_eq!(
            seen,
            [
                ("u1 hello, see this".to_string(), 1, false),
                ("a1 hello".to_string(), 0, true)
            ]
        );
        assert!(!r.tokens.exact);
        assert_eq!(r.messages, run(&p, &session).messages);
    }
}
