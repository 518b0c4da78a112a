//! The processors of RULES 5 inside whole builds: what they promise to the user.

mod common;

use std::sync::Arc;

use common::*;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{ChatMessage, RegexRule, RegexScope, Role};
use promptloom_engine::pipeline::{Ephemeral, EphemeralKind, SourceKind};
use serde_json::json;

fn chat_preset() -> promptloom_engine::model::AgentPreset {
    preset(
        json!([
            { "id": "main", "role": "system", "content": "You are {{char}}. Be brief." },
            { "id": "hist", "role": "system", "type": "chat_history" },
            { "id": "note", "role": "system", "content": "[Author's note: keep it short]" },
            { "id": "post", "role": "system", "content": "Reply as {{char}}." },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
            { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 2 } },
            { "messageId": "post", "enabled": true },
        ])),
    )
}

fn rule(id: &str, pattern: &str, replacement: &str, scope: RegexScope) -> RegexRule {
    RegexRule {
        id: id.into(),
        name: None,
        pattern: pattern.into(),
        replacement: replacement.into(),
        flags: String::new(),
        scope,
        roles: None,
        min_depth: None,
        max_depth: None,
        enabled: true,
    }
}

#[test]
fn regex_rules_rewrite_the_prompt_and_never_the_stored_session() {
    let mut p = chat_preset();
    p.regex_rules = Some(vec![
        rule("shout", "brief", "BRIEF", RegexScope::Templates),
        rule("names", r"\bBob\b", "Robert", RegexScope::History),
        rule("both", "short", "concise", RegexScope::Both),
    ]);
    let session = session_of(&["u1 Bob is short", "a1 hi Bob", "u2 short"]);
    let stored = serde_json::to_string(&session).expect("serializes");
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        [
            "You are Test. Be BRIEF.",
            "u1 Robert is concise",
            "[Author's note: keep it concise]",
            "a1 hi Robert",
            "u2 concise",
            "Reply as Test.",
        ]
    );
    assert_eq!(serde_json::to_string(&session).expect("serializes"), stored);
}

#[test]
fn regex_rules_honour_roles_and_depth() {
    let mut p = chat_preset();
    let mut r1 = rule("old-only", "x", "y", RegexScope::History);
    r1.min_depth = Some(2);
    let mut r2 = rule("assistant-only", "z", "w", RegexScope::History);
    r2.roles = Some(vec![Role::Assistant]);
    p.regex_rules = Some(vec![r1, r2]);
    let session = session_of(&["ux z", "ax z", "ux z"]);
    let r = run(&p, &session);
    let history: Vec<_> = r
        .messages
        .iter()
        .filter(|m| m.source().kind == SourceKind::History)
        .map(|m| m.content())
        .collect();
    assert_eq!(history, ["uy z", "ax w", "ux z"]);
}

/// A rebuild takes what the history rules made of each stored message from the build before
/// (`BuildCache`), so this checks that every change that could alter the outcome is seen: the
/// depths moving when a message arrives, a rule edited, a stored message edited.
#[test]
fn history_rules_give_the_same_prompt_on_a_rebuild_and_follow_every_change() {
    let mut p = chat_preset();
    let mut names = rule("names", r"\bBob\b", "Robert", RegexScope::History);
    names.roles = Some(vec![Role::User]);
    let mut shout = rule("shout", "^a", "A", RegexScope::History);
    shout.roles = Some(vec![Role::Assistant]);
    let mut newest = rule("newest", "^u", "U", RegexScope::History);
    newest.max_depth = Some(0);
    p.regex_rules = Some(vec![names, shout, newest]);
    let cache = BuildCache::new();
    let mut session = session_of(&["u1 Bob", "a1 Bob", "u2"]);
    let first = run_cached(&p, &session, &cache);
    assert_eq!(history_contents(&first), ["u1 Robert", "A1 Bob", "U2"]);
    assert!(first
        .logs
        .iter()
        .any(|l| l.message == "rule \"names\" changed 1 history messages"));
    let again = run_cached(&p, &session, &cache);
    assert_eq!(again.messages, first.messages);
    assert_eq!(again.logs, first.logs);
    drop((first, again));

    // A new message: "u2" is no longer the newest.
    session
        .messages
        .push(ChatMessage::new(Role::User, "u3 Bob"));
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        history_contents(&r),
        ["u1 Robert", "A1 Bob", "u2", "U3 Robert"]
    );
    drop(r);

    // Another replacement: nothing kept for the old rules applies.
    if let Some(rules) = p.regex_rules.as_mut() {
        rules[0].replacement = "Roberta".into();
    }
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        history_contents(&r),
        ["u1 Roberta", "A1 Bob", "u2", "U3 Roberta"]
    );
    drop(r);

    // An edited text is new text, and the same text under another role meets other rules.
    session.messages[0].content = Arc::from("u1 Bob and Bob");
    session.messages[1].role = Role::User;
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        history_contents(&r),
        ["u1 Roberta and Roberta", "a1 Roberta", "u2", "U3 Roberta"]
    );
}

/// What the rules made of a message is kept with one bit per rule that changed it; past 64
/// rules nothing is kept, and every rule still counts its changes.
#[test]
fn more_history_rules_than_a_rebuild_keeps_still_count_every_change() {
    let mut p = chat_preset();
    p.regex_rules = Some(
        (0..70)
            .map(|k| {
                rule(
                    &format!("r{k}"),
                    &format!(r"\bw{k}\b"),
                    "x",
                    RegexScope::History,
                )
            })
            .collect(),
    );
    let cache = BuildCache::new();
    let session = session_of(&["w0 w63", "w64 w69 w69"]);
    for _ in 0..2 {
        let r = run_cached(&p, &session, &cache);
        assert_eq!(history_contents(&r), ["x x", "x x x"]);
        for id in ["r0", "r63", "r64", "r69"] {
            let line = format!("rule \"{id}\" changed 1 history messages");
            assert!(r.logs.iter().any(|l| l.message == line), "{line}");
        }
        assert!(!r.logs.iter().any(|l| l.message.starts_with("rule \"r1\"")));
    }
}

#[test]
fn an_invalid_rule_built_in_code_is_skipped_with_a_warning_and_the_build_goes_on() {
    let mut p = chat_preset();
    p.regex_rules = Some(vec![rule("broken", "(open", "", RegexScope::Both)]);
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert!(any_warning(&r, "broken"), "{:?}", warnings(&r));
    assert_eq!(r.messages.len(), 4);
}

#[test]
fn legacy_note_blocks_are_stripped_from_history_by_default() {
    let p = chat_preset();
    let old = "—————当前笔记————\nold note\n—————当前笔记如上————\n\nwhat now?";
    let session = session_from(json!({ "formatVersion": 1, "id": "s", "messages": [
        { "role": "user", "content": "u1" },
        { "role": "assistant", "content": "a1" },
        { "role": "user", "content": old },
    ]}));
    let r = run(&p, &session);
    assert!(
        contents(&r).contains(&"what now?".to_string()),
        "{:?}",
        contents(&r)
    );
}

#[test]
fn ephemeral_content_reaches_the_prompt_counts_against_the_budget_and_is_never_stored() {
    let p = chat_preset();
    let session = session_of(&["u1", "a1", "u2"]);
    let stored = serde_json::to_string(&session).expect("serializes");
    let plain = run(&p, &session);
    let mut options = options();
    options.ephemeral = Some(Ephemeral {
        kind: EphemeralKind::Quote,
        label: None,
        content: "a quoted passage".into(),
    });
    let r = try_run(&p, &session, "gpt-4o", &options).expect("builds");
    let last_user = r
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .expect("user message");
    assert!(last_user.content().contains("a quoted passage"));
    assert!(last_user.content().ends_with("u2"));
    assert_eq!(last_user.source().ephemeral, Some(EphemeralKind::Quote));
    assert!(r.tokens.total > plain.tokens.total);
    assert_eq!(serde_json::to_string(&session).expect("serializes"), stored);
    // The next build without the option is back to the plain prompt.
    assert_eq!(contents(&run(&p, &session)), contents(&plain));
}

#[test]
fn anthropic_profile_gives_one_leading_system_and_alternating_turns_keeping_depth_notes() {
    let p = chat_preset();
    let session = session_of(&["a0 greeting", "u1", "a1", "u2", "a2", "u3"]);
    let r = try_run(&p, &session, "claude-3-5-sonnet", &options()).expect("builds");
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles[0], Role::System);
    assert!(roles[1..].iter().all(|r| *r != Role::System), "{roles:?}");
    assert_eq!(roles[1], Role::User, "the first turn is a user turn");
    assert!(
        roles[1..].windows(2).all(|w| w[0] != w[1]),
        "turns alternate: {roles:?}"
    );
    let all = contents(&r).join("\n");
    assert!(
        all.contains("[Author's note: keep it short]"),
        "depth note kept"
    );
    assert!(
        all.contains("Reply as Test."),
        "post-history instruction kept"
    );
    // For gpt-4o nothing is reshaped: the assembly as it is.
    let gpt = run(&p, &session);
    assert!(
        gpt.messages
            .iter()
            .filter(|m| m.role == Role::System)
            .count()
            >= 3
    );
}

#[test]
fn a_lorebook_entry_without_a_place_goes_before_the_history_when_there_is_no_world_info_anchor() {
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "main" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    p.lorebook = Some(
        serde_json::from_value(json!({ "entries": [
            { "id": "town", "keys": ["Saltmere"], "content": "[Saltmere: a harbour town]" },
        ]}))
        .expect("lorebook"),
    );
    let session = session_of(&["u1 to Saltmere", "a1 the harbour"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        [
            "main",
            "[Saltmere: a harbour town]",
            "u1 to Saltmere",
            "a1 the harbour"
        ]
    );
    assert!(r.warnings.is_empty(), "{:?}", warnings(&r));

    // With a worldInfoBefore placeholder, the entry goes after it, as SillyTavern does.
    p.message_templates.push(
        serde_json::from_value(
            json!({ "id": "worldInfoBefore", "role": "system", "type": "placeholder" }),
        )
        .expect("template"),
    );
    p.context_recipes[0].steps.insert(
        0,
        serde_json::from_value(json!({ "messageId": "worldInfoBefore", "enabled": true }))
            .expect("step"),
    );
    let session = session_of(&["u1 to Saltmere", "a1 the harbour"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r)[0], "[Saltmere: a harbour town]");
}

#[test]
fn lorebook_entries_are_placed_by_their_strategies_like_recipe_steps() {
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "main" },
            { "id": "worldInfoBefore", "role": "system", "type": "placeholder" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "worldInfoBefore", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    p.lorebook = Some(
        serde_json::from_value(json!({ "scanDepth": 3, "entries": [
            { "id": "town", "keys": ["Saltmere"], "content": "[Saltmere: a harbour town]",
              "strategy": { "anchorTarget": "worldInfoBefore", "order": 100 } },
            { "id": "always", "constant": true, "content": "[It is 1926]",
              "strategy": { "anchorTarget": "worldInfoBefore", "order": 200 } },
            { "id": "deep", "keys": ["lantern"], "content": "[The lantern is a signal]",
              "role": "user", "strategy": { "depth": 1 } },
            { "id": "asleep", "keys": ["zeppelin"], "content": "[never]" },
        ]}))
        .expect("lorebook"),
    );
    let session = session_of(&["u1 to Saltmere", "a1 a lantern flickers", "u2 what now?"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        [
            "main",
            "[It is 1926]",
            "[Saltmere: a harbour town]",
            "u1 to Saltmere",
            "a1 a lantern flickers",
            "[The lantern is a signal]",
            "u2 what now?",
        ]
    );
    let deep = &r.messages[5];
    assert_eq!(deep.role, Role::User);
    assert_eq!(deep.source().kind, SourceKind::Lorebook);
    assert_eq!(deep.source().entry_id.as_deref(), Some("deep"));
    let report = r.lorebook.clone().expect("a lorebook report");
    let activated: Vec<&str> = report
        .activated
        .iter()
        .map(|a| a.entry_id.as_str())
        .collect();
    // Budgeted by the entries' own order (all 100 here), ties in book order.
    assert_eq!(activated, ["town", "always", "deep"]);
    assert!(r.warnings.is_empty(), "{:?}", warnings(&r));
}

/// A message a history rule rewrote is shared between builds as the same parts (RULES 5.2);
/// they are the stored message's only while it is: a new name or id with the same text shows.
#[test]
fn a_rewritten_message_kept_between_builds_follows_its_stored_name_and_id() {
    let mut p = chat_preset();
    p.regex_rules = Some(vec![rule(
        "names",
        r"\bBob\b",
        "Robert",
        RegexScope::History,
    )]);
    let cache = BuildCache::new();
    let mut session = session_of(&["u1 Bob", "a1 hi"]);
    let first = run_cached(&p, &session, &cache);
    let cold = run(&p, &session);
    assert_eq!(first.messages, cold.messages);
    let rewritten = |r: &promptloom_engine::BuildResult<'_>| {
        let m = r
            .messages
            .iter()
            .find(|m| m.content() == "u1 Robert")
            .expect("the rewritten message");
        (
            m.name().map(str::to_string),
            m.source().message_id.as_deref().map(str::to_string),
        )
    };
    assert_eq!(rewritten(&first), (None, Some("m0".to_string())));
    let again = run_cached(&p, &session, &cache);
    assert_eq!(again.messages, first.messages);
    drop((first, cold, again));

    // The same text (the same shared string), another name and id.
    session.messages[0].name = Some("Ann".into());
    session.messages[0].id = Some("renamed".into());
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        rewritten(&r),
        (Some("Ann".to_string()), Some("renamed".to_string()))
    );
    assert_eq!(r.messages, run(&p, &session).messages);
    drop(r);

    // The same name and id as new strings (other pointers, equal texts): still the same
    // message; then another name only.
    session.messages[0].name = Some("Ann".into());
    session.messages[0].id = Some("renamed".into());
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        rewritten(&r),
        (Some("Ann".to_string()), Some("renamed".to_string()))
    );
    drop(r);
    session.messages[0].name = Some("Bea".into());
    let r = run_cached(&p, &session, &cache);
    assert_eq!(
        rewritten(&r),
        (Some("Bea".to_string()), Some("renamed".to_string()))
    );
    assert_eq!(r.messages, run(&p, &session).messages);
    drop(r);

    // A message the rule no longer changes, one it now changes, a third added, then the
    // session made shorter: through the cache, each build is the cold one.
    session.messages[0].content = "u1 Carol".into();
    session.messages[1].content = "a1 Bob waves".into();
    session
        .messages
        .push(ChatMessage::new(Role::User, "u2 Bob again"));
    let r = run_cached(&p, &session, &cache);
    let texts: Vec<&str> = r.messages.iter().map(|m| m.content()).collect();
    assert!(texts.contains(&"u1 Carol") && texts.contains(&"a1 Robert waves"));
    assert!(texts.contains(&"u2 Robert again"), "{texts:?}");
    let waves = r.messages.iter().find(|m| m.content() == "a1 Robert waves");
    assert_eq!(waves.and_then(|m| m.source().history_index), Some(1));
    assert_eq!(r.messages, run(&p, &session).messages);
    drop(r);
    session.messages.truncate(2);
    let r = run_cached(&p, &session, &cache);
    assert_eq!(r.messages, run(&p, &session).messages);
    drop(r);
    session.messages[1].content = "a1 hi".into();
    let r = run_cached(&p, &session, &cache);
    assert_eq!(r.messages, run(&p, &session).messages);
    assert!(!r.messages.iter().any(|m| m.content().contains("Robert")));
}

/// Whether a stored message passes the history filter is kept between builds (RULES 5.3); an
/// edited message or other filter texts are looked at again.
#[test]
fn the_history_filter_gives_the_same_prompt_on_a_rebuild_and_follows_every_change() {
    let mut p = chat_preset();
    let filter = |excludes: &str| {
        serde_json::from_value(json!([{
            "id": "history-operations",
            "enabled": true,
            "settings": { "operation": "filter", "contentExcludes": excludes }
        }]))
        .expect("config")
    };
    p.processors = Some(filter("secret"));
    let cache = BuildCache::new();
    let mut session = session_of(&["u1 secret", "a1 hi", "u2 hello"]);
    let first = run_cached(&p, &session, &cache);
    assert_eq!(history_contents(&first), ["a1 hi", "u2 hello"]);
    let again = run_cached(&p, &session, &cache);
    assert_eq!(again.messages, first.messages);
    drop((first, again));

    session.messages[1].content = Arc::from("a1 a secret");
    let r = run_cached(&p, &session, &cache);
    assert_eq!(history_contents(&r), ["u2 hello"]);
    drop(r);

    p.processors = Some(filter("hello"));
    let r = run_cached(&p, &session, &cache);
    assert_eq!(history_contents(&r), ["u1 secret", "a1 a secret"]);
}

/// The settings each processor runs with are kept from the build before while the configs are
/// the same (the shared pipeline); a changed setting applies on the next build.
#[test]
fn a_changed_processor_setting_applies_on_the_next_build() {
    let mut p = chat_preset();
    let keep_last = |count: u32| {
        serde_json::from_value(json!([{
            "id": "history-operations",
            "enabled": true,
            "settings": { "operation": "truncate", "truncateMode": "keepLast", "count": count }
        }]))
        .expect("config")
    };
    let session = session_of(&["u1", "a1", "u2", "a2"]);
    p.processors = Some(keep_last(1));
    assert_eq!(history_contents(&run(&p, &session)), ["a2"]);
    p.processors = Some(keep_last(3));
    assert_eq!(history_contents(&run(&p, &session)), ["a1", "u2", "a2"]);
    p.processors = None;
    assert_eq!(history_contents(&run(&p, &session)).len(), 4);
}

/// A template whose macros read only the environment is kept between builds (RULES 4.5); one
/// that reads the clock, a variable or the random stream is expanded every build, and a kept
/// one follows the environment.
#[test]
fn kept_expansions_follow_the_environment_and_never_keep_the_clock_variables_or_random() {
    let p = preset(
        json!([
            { "id": "pure", "role": "system", "content": "I am {{char}}, talking to {{user}}." },
            { "id": "set", "role": "system", "content": "{{setvar::mood::calm}}Mood set." },
            { "id": "clock", "role": "system",
              "content": "At {{time}} the mood is {{getvar::mood}}, {{random::a::b::c::d::e::f::g::h}}." },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "pure", "enabled": true },
            { "messageId": "set", "enabled": true },
            { "messageId": "clock", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    let cache = BuildCache::new();
    let mut session = session_of(&["u1 hi"]);
    let at = |time: &str| {
        let mut o = options();
        o.timestamp = chrono::DateTime::parse_from_rfc3339(time).expect("time");
        o
    };
    let build = |session: &promptloom_engine::model::Session, time: &str| {
        let r = try_run_cached(&p, session, "gpt-4o", &at(time), &cache).expect("builds");
        contents(&r)
    };
    let first = build(&session, "2026-03-01T18:30:00+00:00");
    assert_eq!(first[0], "I am Test, talking to User.");
    assert!(
        first[2].starts_with("At 6:30 PM the mood is calm, "),
        "{}",
        first[2]
    );
    assert!(!cache.macros().is_empty(), "the pure template is kept");
    // Only the clock moved: the kept template is the same, the clock's is new.
    let later = build(&session, "2026-03-01T19:45:00+00:00");
    assert_eq!(later[0], first[0]);
    assert!(
        later[2].starts_with("At 7:45 PM the mood is calm, "),
        "{}",
        later[2]
    );
    // Another random draw with another session: the random macro is not kept.
    let draws: std::collections::HashSet<String> = (0..8)
        .map(|i| {
            session.id = format!("s{i}");
            build(&session, "2026-03-01T19:45:00+00:00")[2].clone()
        })
        .collect();
    assert!(draws.len() > 1, "random draws differ: {draws:?}");
    // Another user name: the kept template follows.
    session.user_profile = Some(promptloom_engine::model::UserProfile {
        name: "Ash".into(),
        content: None,
    });
    assert_eq!(
        build(&session, "2026-03-01T19:45:00+00:00")[0],
        "I am Test, talking to Ash."
    );
}

/// RULES 5.15: the hits the library found become `memory` messages before the history, each
/// with its score and the stored message it recalls; the limiter drops a hit whose message is
/// still in the context; what the summary covers leaves the history with `omitSummarized`.
#[test]
fn memory_hits_are_placed_with_their_scores_and_the_summary_stands_for_what_it_covers() {
    use promptloom_engine::MemoryHit;
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "Summary: {{summary}}" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    let mut session = session_of(&["u0 {{char}} lighthouse", "a0", "u1", "a1", "u2", "a2", "u3"]);
    session.summary = Some("They met at the lighthouse.".into());
    let hit = |index: u32, score: f32| MemoryHit {
        role: session.messages[index as usize].role,
        text: session.messages[index as usize].content.to_string(),
        score,
        index: Some(index),
        message_id: Some(format!("m{index}")),
    };
    let mut o = options();
    // A hit of a message the library knows by id only (no position) stays; hit 4 is in the
    // history the budget kept, so it goes.
    let mut by_id = hit(0, 0.8123);
    by_id.index = None;
    o.memory = vec![by_id, hit(4, 0.7)];
    o.summarized_through = Some(1);
    let r = try_run(&p, &session, "gpt-4o", &o).expect("builds");
    // The recalled text keeps its macros as written.
    assert_eq!(
        contents(&r).join("|"),
        "Summary: They met at the lighthouse.|[Earlier, user] u0 {{char}} lighthouse|u0 {{char}} lighthouse|a0|u1|a1|u2|a2|u3"
    );
    let recalled = r.messages[1].source();
    assert_eq!(recalled.kind, SourceKind::Memory);
    let memory = recalled.memory.clone().expect("the recalled message");
    assert_eq!((memory.index, memory.score), (None, 812));
    assert_eq!(memory.message_id.as_deref(), Some("m0"));
    assert!(
        recalled.badge().contains("score 0.812"),
        "{}",
        recalled.badge()
    );
    let in_context = r
        .dropped
        .iter()
        .find(|d| d.source.kind == SourceKind::Memory)
        .expect("the hit already in the context is listed");
    assert_eq!(in_context.reason, "its message is in the context already");

    // omitSummarized: messages 0 and 1 leave the history; a hit of message 0 now stays.
    p.processors = Some(vec![serde_json::from_value(json!({
        "id": "memory", "settings": { "omitSummarized": true, "position": "in-chat", "depth": 1,
                                   "format": "<{text}>" }
    }))
    .expect("config")]);
    o.memory = vec![hit(0, 0.8123), hit(4, 0.7)];
    let r = try_run(&p, &session, "gpt-4o", &o).expect("builds");
    assert_eq!(
        contents(&r).join("|"),
        "Summary: They met at the lighthouse.|u1|a1|u2|a2|<u0 {{char}} lighthouse>|u3"
    );
    let covered = r
        .dropped
        .iter()
        .find(|d| d.processor == "memory")
        .expect("the covered run is listed");
    assert_eq!((covered.count, covered.last_history_index), (2, Some(1)));

    // Without an answer the build goes on and says why; too many hits are capped.
    o.memory = (0..20).map(|_| hit(0, 0.9)).collect();
    o.memory_skipped = Some(promptloom_engine::texts::MEMORY_SKIP_TIME.with("ms", 1500));
    let r = try_run(&p, &session, "gpt-4o", &o).expect("builds");
    assert!(any_warning(
        &r,
        "built without long-term memory: the memory search took"
    ));
    assert!(any_warning(&r, "only the first 16 are placed"));
    assert_eq!(
        r.messages
            .iter()
            .filter(|m| m.kind() == SourceKind::Memory)
            .count(),
        16
    );

    // RULES 5.6: under `proportional` the summary (step 0 writes it) and the recalled messages
    // each stay within their share: 10 of 100 of a 1,000-token budget.
    p.processors = Some(vec![serde_json::from_value(json!({
        "id": "token-limiter", "settings": { "strategy": "proportional" }
    }))
    .expect("config")]);
    let long = "word ".repeat(400);
    session.summary = Some(long.clone());
    o.memory = (0..3)
        .map(|_| MemoryHit {
            text: long.clone(),
            index: None,
            ..hit(0, 0.9)
        })
        .collect();
    (o.context_window, o.reserve, o.summarized_through) = (Some(1000), Some(0), None);
    let r = try_run(&p, &session, "gpt-4o", &o).expect("builds");
    let tokens = |kind: SourceKind| -> u32 {
        let of = r.messages.iter().filter(|m| m.kind() == kind);
        of.filter(|m| kind != SourceKind::Template || m.source().step_index == Some(0))
            .map(|m| m.tokens)
            .sum()
    };
    let (summary, memory) = (tokens(SourceKind::Template), tokens(SourceKind::Memory));
    assert!(summary > 50 && summary <= 100, "summary {summary}");
    assert!(memory > 50 && memory <= 100, "memory {memory}");
}
