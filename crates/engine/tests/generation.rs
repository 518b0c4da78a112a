//! RULES 5.9 and 5.10: generation settings: validation, resolution (profile, then preset, per
//! field, with origins), each provider format's body with model, stream and settings under its
//! own names, and the warnings for settings a format does not take.

mod common;

use common::*;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{parse_preset, AgentPreset, GenerationSettings, Session};
use promptloom_engine::pipeline::{SettingOrigin, GENERATION_LOG};
use promptloom_engine::profiles::{profile_for_model, ModelProfile, ProviderFormat};
use promptloom_engine::providers::{request_body, request_body_with, BodyOptions};
use promptloom_engine::{build, BuildRequest, BuildResult, EngineError};
use serde_json::{json, Value};

fn preset_with(generation: Value) -> AgentPreset {
    preset_from(json!({
        "formatVersion": 1, "id": "g", "name": "G",
        "messageTemplates": [
            { "id": "sys", "role": "system", "content": "Be brief." },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": one_recipe(json!([
            { "messageId": "sys", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
        "generation": generation,
    }))
}

fn build_with<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    profiles: &[ModelProfile],
) -> BuildResult<'s> {
    build(&BuildRequest {
        preset,
        session,
        kept_rewrites: None,
        model,
        options: &options(),
        cache: &BuildCache::new(),
        profiles,
        assets: &InlineAssets,
    })
    .expect("builds")
}

fn all_settings() -> Value {
    json!({
        "temperature": 0.7, "topP": 0.9, "topK": 40, "maxOutputTokens": 512,
        "stop": ["\nUser:"], "frequencyPenalty": 0.5, "presencePenalty": -0.5, "seed": 42,
    })
}

fn body_for(model: &str, generation: Value, stream: bool) -> (Value, Vec<String>) {
    let preset = preset_with(generation);
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, model, &[]);
    let options = BodyOptions::new("the-model", stream);
    let body = request_body_with(
        result.provider_format(),
        &result,
        &session,
        &InlineAssets,
        &options,
    )
    .expect("body");
    (body, warnings(&result))
}

fn invalid(generation: Value) -> (String, String) {
    let text = json!({
        "formatVersion": 1, "id": "g", "name": "G", "generation": generation,
    })
    .to_string();
    match parse_preset(&text) {
        Err(EngineError::Invalid { path, message }) => (path, message),
        Err(other) => panic!("expected a validation error, got {other:?}"),
        Ok(_) => panic!("{generation} was accepted"),
    }
}

#[test]
fn validation_names_the_field_and_the_range() {
    let cases = [
        (
            json!({ "temperature": 2.5 }),
            "generation.temperature",
            "between 0 and 2",
        ),
        (
            json!({ "temperature": -0.1 }),
            "generation.temperature",
            "between 0 and 2",
        ),
        (json!({ "topP": 1.5 }), "generation.topP", "between 0 and 1"),
        (json!({ "topK": 0 }), "generation.topK", "at least 1"),
        (
            json!({ "maxOutputTokens": 0 }),
            "generation.maxOutputTokens",
            "at least 1",
        ),
        (
            json!({ "frequencyPenalty": 3 }),
            "generation.frequencyPenalty",
            "between -2 and 2",
        ),
        (
            json!({ "presencePenalty": -2.5 }),
            "generation.presencePenalty",
            "between -2 and 2",
        ),
        (
            json!({ "stop": vec!["x"; 17] }),
            "generation.stop",
            "at most 16",
        ),
        (json!({ "stop": ["a", ""] }), "generation.stop[1]", "empty"),
        (
            json!({ "extra": { "messages": [] } }),
            "generation.extra.messages",
            "written by the engine",
        ),
        (
            json!({ "extra": { "stream": true } }),
            "generation.extra.stream",
            "written by the engine",
        ),
        (
            json!({ "extra": { "generationConfig": {} } }),
            "generation.extra.generationConfig",
            "written by the engine",
        ),
    ];
    for (generation, path, words) in cases {
        let (got_path, message) = invalid(generation.clone());
        assert_eq!(got_path, path, "{generation}");
        assert!(message.contains(words), "{generation}: {message}");
    }
    // Shape errors name their path too: extra must be an object, topK a whole number.
    for generation in [json!({ "extra": [1] }), json!({ "topK": 1.5 })] {
        let text = json!({ "formatVersion": 1, "id": "g", "name": "G", "generation": generation })
            .to_string();
        let err = parse_preset(&text).expect_err("refused");
        assert!(err.to_string().contains("generation."), "{err}");
    }
    // The bounds themselves are taken, and 16 stop sequences.
    preset_with(json!({
        "temperature": 2, "topP": 0, "topK": 1, "maxOutputTokens": 1,
        "frequencyPenalty": -2, "presencePenalty": 2, "stop": vec!["s"; 16], "seed": -5,
        "extra": { "max_tokens": 100, "safetySettings": [] },
    }));
}

#[test]
fn without_generation_settings_nothing_changes() {
    let preset = preset_with(Value::Null);
    assert!(preset.generation.is_none());
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, "claude-3-5-sonnet", &[]);
    assert!(result.generation.is_empty());
    let json = serde_json::to_value(&result).unwrap();
    assert!(json.get("generation").is_none(), "nothing new on the wire");
    assert!(!result.logs.iter().any(|l| l.processor == GENERATION_LOG));
    // The preset document itself does not gain a key either.
    let written = serde_json::to_value(&preset).unwrap();
    assert!(written.get("generation").is_none());
}

#[test]
fn the_preset_wins_over_the_model_profile_per_field_with_origins() {
    let mut profile = profile_for_model("gpt-4o", &[]);
    profile.id = "mine".into();
    profile.builtin = false;
    profile.generation = Some(GenerationSettings {
        temperature: Some(0.2),
        top_p: Some(0.5),
        seed: Some(7),
        extra: json!({ "user": "profile", "service_tier": "flex" })
            .as_object()
            .cloned()
            .unwrap(),
        ..Default::default()
    });
    let preset = preset_with(json!({
        "temperature": 1.1, "maxOutputTokens": 300, "extra": { "user": "preset" },
    }));
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, "gpt-4o", &[profile]);
    let g = &result.generation;
    assert_eq!(g.settings.temperature, Some(1.1));
    assert_eq!(g.settings.top_p, Some(0.5));
    assert_eq!(g.settings.seed, Some(7));
    assert_eq!(g.settings.max_output_tokens, Some(300));
    assert_eq!(g.settings.top_k, None);
    use promptloom_engine::model::GenerationField as F;
    assert_eq!(g.origin(F::Temperature), SettingOrigin::Preset);
    assert_eq!(g.origin(F::TopP), SettingOrigin::Model);
    assert_eq!(g.origin(F::Seed), SettingOrigin::Model);
    assert_eq!(g.origin(F::MaxOutputTokens), SettingOrigin::Preset);
    assert_eq!(g.origin(F::TopK), SettingOrigin::Default);
    assert!(
        !g.origins.contains_key("topK"),
        "unset fields have no entry"
    );
    assert_eq!(g.settings.extra["user"], "preset");
    assert_eq!(g.settings.extra["service_tier"], "flex");
    assert_eq!(g.extra_origins["user"], SettingOrigin::Preset);
    assert_eq!(g.extra_origins["service_tier"], SettingOrigin::Model);
    // On the wire, with camelCase names.
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["generation"]["settings"]["topP"], 0.5);
    assert_eq!(json["generation"]["origins"]["temperature"], "preset");
    assert_eq!(json["generation"]["extraOrigins"]["service_tier"], "model");
    // The body carries the merged settings, extra last.
    let body = request_body(ProviderFormat::OpenaiChat, &result, &session, &InlineAssets).unwrap();
    assert_eq!(body["temperature"], 1.1);
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["seed"], 7);
    assert_eq!(body["max_completion_tokens"], 300);
    assert_eq!(body["user"], "preset");
    assert_eq!(body["service_tier"], "flex");
}

#[test]
fn an_empty_stop_list_in_the_preset_keeps_the_profiles() {
    let mut profile = profile_for_model("gpt-4o", &[]);
    profile.id = "mine".into();
    profile.generation = Some(GenerationSettings {
        stop: vec!["END".into()],
        ..Default::default()
    });
    let preset = preset_with(json!({ "stop": [] }));
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, "gpt-4o", &[profile]);
    assert_eq!(result.generation.settings.stop, ["END"]);
    assert_eq!(result.generation.origins["stop"], SettingOrigin::Model);
}

#[test]
fn openai_body_names_model_stream_and_settings_its_own_way() {
    let (body, warnings) = body_for("gpt-4o", all_settings(), true);
    assert_eq!(body["model"], "the-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({ "include_usage": true }));
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["max_completion_tokens"], 512);
    assert_eq!(body["stop"], json!(["\nUser:"]));
    assert_eq!(body["frequency_penalty"], 0.5);
    assert_eq!(body["presence_penalty"], -0.5);
    assert_eq!(body["seed"], 42);
    assert!(body.get("top_k").is_none() && body.get("max_tokens").is_none());
    assert_eq!(
        warnings,
        ["generation setting topK is not taken by the openai-chat format; it is left out of the request"]
    );
    // Not streamed: neither key.
    let (body, _) = body_for("gpt-4o", all_settings(), false);
    assert!(body.get("stream").is_none() && body.get("stream_options").is_none());
}

#[test]
fn anthropic_body_names_model_stream_and_settings_its_own_way() {
    let (body, warnings) = body_for("claude-3-5-sonnet", all_settings(), true);
    assert_eq!(body["model"], "the-model");
    assert_eq!(body["stream"], true);
    assert!(body.get("stream_options").is_none());
    assert_eq!(body["max_tokens"], 512);
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["top_k"], 40);
    assert_eq!(body["stop_sequences"], json!(["\nUser:"]));
    for absent in ["stop", "seed", "frequency_penalty", "presence_penalty"] {
        assert!(body.get(absent).is_none(), "{absent}");
    }
    let left_out: Vec<&str> = warnings
        .iter()
        .filter(|w| w.contains("not taken by the anthropic-messages format"))
        .map(|w| w.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(left_out, ["frequencyPenalty", "presencePenalty", "seed"]);
}

#[test]
fn anthropic_max_tokens_falls_back_to_the_reply_reserve() {
    let (body, warnings) = body_for("claude-3-5-sonnet", json!({ "temperature": 0.3 }), false);
    let reserve = profile_for_model("claude-3-5-sonnet", &[]).reserved_reply;
    assert_eq!(body["max_tokens"], reserve);
    assert!(body.get("stream").is_none());
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn anthropic_temperature_over_one_is_sent_with_a_warning() {
    let (body, warnings) = body_for("claude-3-5-sonnet", json!({ "temperature": 1.5 }), false);
    assert_eq!(body["temperature"], 1.5);
    assert!(
        warnings.iter().any(|w| w.contains("temperature = 1.5")
            && w.contains("anthropic-messages format's maximum of 1")),
        "{warnings:?}"
    );
}

#[test]
fn gemini_body_puts_settings_in_generation_config_and_no_model_or_stream() {
    let (body, warnings) = body_for("gemini-2.5-pro", all_settings(), true);
    assert!(body.get("model").is_none() && body.get("stream").is_none());
    assert_eq!(
        body["generationConfig"],
        json!({
            "maxOutputTokens": 512, "temperature": 0.7, "topP": 0.9, "topK": 40,
            "stopSequences": ["\nUser:"], "presencePenalty": -0.5, "frequencyPenalty": 0.5,
            "seed": 42,
        })
    );
    assert!(
        warnings.is_empty(),
        "Gemini takes every setting: {warnings:?}"
    );
}

#[test]
fn extra_fields_are_merged_last_at_the_top_level() {
    let generation = json!({
        "temperature": 0.5,
        "extra": { "temperature": 0.25, "max_tokens": 99, "safetySettings": [{ "x": 1 }] },
    });
    for model in ["gpt-4o", "claude-3-5-sonnet", "gemini-2.5-pro"] {
        let (body, _) = body_for(model, generation.clone(), false);
        assert_eq!(body["max_tokens"], 99, "{model}");
        assert_eq!(body["temperature"], 0.25, "{model}: extra wins");
        assert_eq!(body["safetySettings"], json!([{ "x": 1 }]), "{model}");
    }
}

#[test]
fn a_reply_limit_above_the_reserve_is_warned_about() {
    let (body, warnings) = body_for("gpt-4o", json!({ "maxOutputTokens": 100000 }), false);
    assert_eq!(body["max_completion_tokens"], 100000);
    let reserve = profile_for_model("gpt-4o", &[]).reserved_reply;
    assert_eq!(
        warnings,
        [format!("maxOutputTokens 100000 is more than the reply reserve of {reserve} tokens; a reply that long may not fit the context window")]
    );
}

#[test]
fn warnings_carry_codes_for_the_app() {
    let preset = preset_with(json!({ "topK": 5 }));
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, "gpt-4o", &[]);
    let w = &result.warnings[0];
    assert_eq!(w.processor, GENERATION_LOG);
    assert_eq!(w.said.code, "generation.not-taken");
    assert_eq!(w.said.params["setting"], "topK");
    assert_eq!(w.said.params["format"], "openai-chat");
}

#[test]
fn request_body_keeps_its_old_shape_for_existing_callers() {
    let preset = preset_with(Value::Null);
    let session = session_of(&["u1"]);
    let result = build_with(&preset, &session, "gpt-4o", &[]);
    let body = request_body(ProviderFormat::OpenaiChat, &result, &session, &InlineAssets).unwrap();
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["max_completion_tokens", "messages", "model"]);
    assert_eq!(body["model"], "gpt-4o");
}
