//! Shared helpers for the engine's integration tests: presets and sessions written as JSON, one
//! build with a fixed timestamp, and short views of the result.

#![allow(dead_code)]

use chrono::DateTime;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{
    parse_preset, parse_session, AgentPreset, RegexRule, RegexScope, Session,
};
use promptloom_engine::pipeline::{BuildResult, LogEntry};
use promptloom_engine::{build, BuildOptions, BuildRequest, EngineError};
use serde_json::{json, Value};

pub const NOW: &str = "2026-11-22T10:30:00+00:00";

pub fn options() -> BuildOptions {
    BuildOptions::at(DateTime::parse_from_rfc3339(NOW).expect("fixed timestamp"))
}

/// A preset from its templates and recipes (the rest defaulted).
pub fn preset(templates: Value, recipes: Value) -> AgentPreset {
    preset_from(json!({
        "formatVersion": 1,
        "id": "test",
        "name": "Test",
        "messageTemplates": templates,
        "contextRecipes": recipes,
    }))
}

pub fn preset_from(value: Value) -> AgentPreset {
    parse_preset(&value.to_string()).expect("test preset is valid")
}

/// One recipe for every model with these steps.
pub fn one_recipe(steps: Value) -> Value {
    json!([{ "id": "main", "modelFilter": ["*"], "steps": steps }])
}

/// A session whose messages alternate user/assistant, with content `u1, a1, u2, ...`.
pub fn session_of(contents: &[&str]) -> Session {
    let messages: Vec<Value> = contents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let role = if c.starts_with('u') {
                "user"
            } else if c.starts_with('s') {
                "system"
            } else {
                "assistant"
            };
            json!({ "id": format!("m{i}"), "role": role, "content": c })
        })
        .collect();
    session_from(json!({
        "formatVersion": 1,
        "id": "s1",
        "messages": messages,
    }))
}

pub fn session_from(value: Value) -> Session {
    parse_session(&value.to_string()).expect("test session is valid")
}

pub fn try_run<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    options: &BuildOptions,
) -> Result<BuildResult<'s>, EngineError> {
    try_run_cached(preset, session, model, options, &BuildCache::new())
}

/// One build through `cache`, which earlier builds may have filled, borrowing the history
/// rules' rewrites from the session's store in `cache` as the app does. The store is held for
/// the rest of the test run (a test's result may outlive the call).
pub fn try_run_cached<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    options: &BuildOptions,
    cache: &BuildCache,
) -> Result<BuildResult<'s>, EngineError> {
    let kept: &'static promptloom_engine::pipeline::KeptRewrites = Box::leak(Box::new(
        promptloom_engine::pipeline::KeptRewrites::of_session(cache, session),
    ));
    build(&BuildRequest {
        preset,
        session,
        kept_rewrites: Some(kept),
        model,
        options,
        cache,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    })
}

/// One build for gpt-4o through `cache`, which earlier builds may have filled.
pub fn run_cached<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    cache: &BuildCache,
) -> BuildResult<'s> {
    try_run_cached(preset, session, "gpt-4o", &options(), cache).expect("build succeeds")
}

/// The contents of the history messages of a result, in order.
pub fn history_contents(result: &BuildResult) -> Vec<String> {
    result
        .messages
        .iter()
        .filter(|m| m.kind() == promptloom_engine::pipeline::SourceKind::History)
        .map(|m| m.content().to_string())
        .collect()
}

pub fn run<'s>(preset: &AgentPreset, session: &'s Session) -> BuildResult<'s> {
    try_run(preset, session, "gpt-4o", &options()).expect("build succeeds")
}

/// The contents of the built messages, in order.
pub fn contents(result: &BuildResult) -> Vec<String> {
    result
        .messages
        .iter()
        .map(|m| m.content().to_string())
        .collect()
}

pub fn warnings(result: &BuildResult) -> Vec<String> {
    result.warnings.iter().map(text).collect()
}

pub fn text(entry: &LogEntry) -> String {
    entry.message.clone()
}

pub fn any_warning(result: &BuildResult, needle: &str) -> bool {
    result.warnings.iter().any(|w| w.message.contains(needle))
}

/// A one-pixel PNG, attached inline.
pub fn dot_png() -> promptloom_engine::model::Attachment {
    promptloom_engine::model::Attachment {
        id: "a".into(),
        kind: promptloom_engine::model::AttachmentKind::Image,
        mime: "image/png".into(),
        name: "dot.png".into(),
        path: None,
        data_base64: Some(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
                .into(),
        ),
        transcript: None,
    }
}

/// A system prompt and the chat history.
pub fn chat_preset() -> AgentPreset {
    preset(
        json!([
            { "id": "main", "role": "system", "content": "You are {{char}}." },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    )
}

/// A history regex rule `id` replacing `pattern` with `replacement`, for every role and depth.
pub fn history_rule(id: &str, pattern: &str, replacement: &str) -> RegexRule {
    RegexRule {
        id: id.into(),
        name: None,
        pattern: pattern.into(),
        replacement: replacement.into(),
        flags: String::new(),
        scope: RegexScope::History,
        roles: None,
        min_depth: None,
        max_depth: None,
        enabled: true,
    }
}
