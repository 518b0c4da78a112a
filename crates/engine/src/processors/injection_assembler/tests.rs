//! The assembler's phases seen from outside: the log lines one build writes, in order.

use chrono::DateTime;

use crate::cache::BuildCache;
use crate::model::{parse_preset, parse_session};
use crate::pipeline::{BuildOptions, BuildRequest, LogLevel};

/// The assembler's log lines of one build of `preset` over `session`, in order.
fn assembler_logs(preset: &str, session: &str) -> Vec<(LogLevel, String)> {
    let preset = parse_preset(preset).expect("preset");
    let session = parse_session(session).expect("session");
    let options =
        BuildOptions::at(DateTime::parse_from_rfc3339("2026-11-22T10:30:00+00:00").unwrap());
    let cache = BuildCache::new();
    let result = crate::build(&BuildRequest {
        preset: &preset,
        session: &session,
        model: "gpt-4o",
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &crate::assets::InlineAssets,
    })
    .expect("builds");
    result
        .logs
        .into_iter()
        .filter(|l| l.processor == super::ID)
        .map(|l| (l.level, l.message))
        .collect()
}

const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
    {"role": "user", "content": "Hello {{nope}}"},
    {"role": "assistant", "content": "Hi."}]}"#;

#[test]
fn every_phase_logs_in_order_and_the_lines_are_written_after_assembly() {
    let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "You are {{char}}. {{bogus}}"},
            {"id": "hist", "role": "system", "type": "chat_history"},
            {"id": "blank", "role": "system", "content": "  {{trim}}  "},
            {"id": "both", "role": "system", "content": "Both."},
            {"id": "lost", "role": "system", "content": "Lost."},
            {"id": "prof", "role": "system", "type": "user_profile"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true},
            {"messageId": "hist", "enabled": true, "injectionStrategy": {"depth": 1}},
            {"messageId": "hist", "enabled": true},
            {"messageId": "blank", "enabled": true},
            {"messageId": "both", "enabled": true,
                "injectionStrategy": {"depth": 1, "anchorTarget": "chat_history"}},
            {"messageId": "lost", "enabled": true,
                "injectionStrategy": {"anchorTarget": "nowhere"}},
            {"messageId": "prof", "enabled": true}]}],
        "lorebook": {"entries": [
            {"id": "quiet", "keys": [], "constant": true, "content": "{{setvar::x::1}}"},
            {"id": "lore", "keys": [], "constant": true, "content": "Lore {{getvar::x}}"}]},
        "processors": [{"id": "injection-assembler",
            "settings": {"macrosInHistory": true}}]}"#;
    let warn = |s: &str| (LogLevel::Warning, s.to_string());
    let info = |s: &str| (LogLevel::Info, s.to_string());
    assert_eq!(
        assembler_logs(preset, SESSION),
        [
            info("recipe \"r\" [*] applies to model \"gpt-4o\""),
            warn("history:0: unknown macro {{nope}}"),
            warn("template:sys#0: unknown macro {{bogus}}"),
            warn(
                "step 1 (\"hist\"): a slot is always placed in list order; its strategy is ignored"
            ),
            warn("step 2 (\"hist\"): a second chat_history slot is ignored"),
            info("step 3 (\"blank\"): empty after macros and rules; not sent"),
            warn("step 4 (\"both\"): has both depth and anchor; depth wins"),
            info("lorebook \"quiet\": empty after macros; not sent"),
            warn("step 5 (\"lost\"): anchor \"nowhere\" is not in the recipe; dropped"),
            info("no user profile content; the user_profile slot is empty"),
            info("5 messages: 3 skeleton parts, 1 depth and 1 anchor injections, 2 history"),
        ]
    );
}

#[test]
fn without_a_history_slot_depth_injections_and_the_history_are_dropped_with_warnings() {
    let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "System."},
            {"id": "deep", "role": "system", "content": "Deep."}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true},
            {"messageId": "deep", "enabled": true, "injectionStrategy": {"depth": 0}}]}]}"#;
    let warn = |s: &str| (LogLevel::Warning, s.to_string());
    let info = |s: &str| (LogLevel::Info, s.to_string());
    assert_eq!(
        assembler_logs(preset, SESSION),
        [
            info("recipe \"r\" [*] applies to model \"gpt-4o\""),
            warn("step 1 (\"deep\"): depth 0 injection dropped: the recipe has no enabled chat_history slot"),
            warn("the recipe has no enabled chat_history slot: 2 history messages not sent"),
            info("1 messages: 1 skeleton parts, 0 depth and 0 anchor injections, 0 history"),
        ]
    );
}

/// The messages of one build of `preset` over `session`, with `input`, as (role, text).
pub(crate) fn built_texts(
    preset: &crate::model::AgentPreset,
    session: &crate::model::Session,
    input: Option<&str>,
) -> Vec<(crate::model::Role, String)> {
    let mut options =
        BuildOptions::at(DateTime::parse_from_rfc3339("2026-11-22T10:30:00+00:00").unwrap());
    options.input = input.map(str::to_string);
    let cache = BuildCache::new();
    let result = crate::build(&BuildRequest {
        preset,
        session,
        model: "gpt-4o",
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &crate::assets::InlineAssets,
    })
    .expect("builds");
    result
        .messages
        .iter()
        .map(|m| (m.role, m.content().to_string()))
        .collect()
}

const ONE_TEMPLATE: &str = r#"{"formatVersion": 1, "id": "p", "name": "Bob",
    "messageTemplates": [
        {"id": "main", "role": "system", "content": "CONTENT"},
        {"id": "hist", "role": "system", "type": "chat_history"}],
    "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
        {"messageId": "main", "enabled": true}, {"messageId": "hist", "enabled": true}]}]}"#;

fn preset_saying(content: &str) -> crate::model::AgentPreset {
    parse_preset(&ONE_TEMPLATE.replace("CONTENT", content)).unwrap()
}

// macros.js, getLastMessageId(), getFirstIncludedMessageId() and getTimeSinceLastMessage(): the
// newest message's index (the input counts), the oldest sent one's, and the time since the user's
// message before the newest one, to the build's timestamp.
#[test]
fn message_macros_read_the_session_indexes_and_the_earlier_user_message_time() {
    let preset = preset_saying("{{lastMessageId}}|{{firstIncludedMessageId}}|{{idle_duration}}");
    let session = parse_session(
        r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "a", "createdAt": "2026-11-22T07:30:00Z"},
        {"role": "assistant", "content": "b", "createdAt": "2026-11-22T07:31:00Z"},
        {"role": "user", "content": "c", "createdAt": "2026-11-22T10:20:00Z"},
        {"role": "assistant", "content": "d", "createdAt": "2026-11-22T10:21:00Z"}]}"#,
    )
    .unwrap();
    // Newest stored is the assistant's: the user's message before it is "c", 10 minutes ago.
    assert_eq!(built_texts(&preset, &session, None)[0].1, "3|0|10 minutes");
    // With the input appended, it is the newest (index 4): the user's before it is still "c".
    assert_eq!(
        built_texts(&preset, &session, Some("e"))[0].1,
        "4|0|10 minutes"
    );
    // Nothing stored: no ids, and "just now".
    let empty = parse_session(r#"{"formatVersion": 1, "id": "s", "messages": []}"#).unwrap();
    assert_eq!(built_texts(&preset, &empty, None)[0].1, "||just now");
}

// macros.js, evaluateMacros(): `<USER>` and `<BOT>` are names only under SillyTavern
// compatibility (the assembler's `legacyNames`); natively they stay as written.
#[test]
fn legacy_names_follow_the_assembler_setting_sillytavern_switches_on() {
    let mut preset = preset_saying("<USER> and <BOT>");
    let session = parse_session(
        r#"{"formatVersion": 1, "id": "s", "userProfile": {"name": "Ann"}, "messages": []}"#,
    )
    .unwrap();
    assert_eq!(
        built_texts(&preset, &session, None)[0].1,
        "<USER> and <BOT>"
    );
    preset.compatibility = crate::model::Compatibility::Sillytavern;
    assert_eq!(built_texts(&preset, &session, None)[0].1, "Ann and Bob");
}

// variables.js, getLocalVariable(): `{{getvar}}` reads the chat's local variables, which win over
// the preset's of the same name; `{{setvar}}` in a build changes that build only.
#[test]
fn session_variables_are_read_before_the_preset_and_a_build_never_changes_them() {
    let mut preset =
        preset_saying("{{getvar::mood}}/{{getvar::hp}}{{setvar::mood::angry}}/{{getvar::mood}}");
    preset.variables = Some(
        [
            ("mood".to_string(), "preset".to_string()),
            ("hp".into(), "9".into()),
        ]
        .into(),
    );
    let mut session = parse_session(r#"{"formatVersion": 1, "id": "s", "messages": []}"#).unwrap();
    assert_eq!(built_texts(&preset, &session, None)[0].1, "preset/9/angry");
    session.variables = Some([("mood".to_string(), "calm".to_string())].into());
    assert_eq!(built_texts(&preset, &session, None)[0].1, "calm/9/angry");
    assert_eq!(built_texts(&preset, &session, None)[0].1, "calm/9/angry");
}
