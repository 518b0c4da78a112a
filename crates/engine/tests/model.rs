//! RULES 2: the data model on load. Bad documents are refused with an error that names the field
//! or the id; the simple form becomes the canonical one; anchors are discovered.

mod common;

use common::*;
use promptloom_engine::model::{
    available_anchors, parse_preset, parse_session, TemplateType, SIMPLE_RECIPE_ID,
};
use promptloom_engine::EngineError;
use serde_json::json;

fn base() -> serde_json::Value {
    json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            { "id": "sys", "role": "system", "content": "hello" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "sys", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
    })
}

fn refused(value: serde_json::Value) -> (EngineError, String) {
    let err = parse_preset(&value.to_string()).expect_err("the document is refused");
    let text = err.to_string();
    (err, text)
}

#[test]
fn valid_preset_round_trips_through_json() {
    let preset = parse_preset(&base().to_string()).expect("valid");
    let again = serde_json::to_value(&preset).expect("serializes");
    assert_eq!(again["formatVersion"], 1);
    assert_eq!(again["messageTemplates"][1]["type"], "chat_history");
    let back = parse_preset(&again.to_string()).expect("still valid");
    assert_eq!(back, preset);
}

#[test]
fn duplicate_template_id_is_named() {
    let mut v = base();
    v["messageTemplates"][1]["id"] = json!("sys");
    let (err, text) = refused(v);
    assert_eq!(err.code(), "invalid_document");
    assert!(
        text.contains("messageTemplates[1].id") && text.contains("\"sys\""),
        "{text}"
    );
}

#[test]
fn step_naming_an_unknown_template_is_named() {
    let mut v = base();
    v["contextRecipes"][0]["steps"][1]["messageId"] = json!("nope");
    let (_, text) = refused(v);
    assert!(
        text.contains("contextRecipes[0].steps[1].messageId"),
        "{text}"
    );
    assert!(text.contains("\"nope\""), "{text}");
}

#[test]
fn negative_depth_is_refused_with_its_path() {
    let mut v = base();
    v["contextRecipes"][0]["steps"][0]["injectionStrategy"] = json!({ "depth": -1 });
    let (err, text) = refused(v);
    assert_eq!(err.code(), "bad_shape");
    assert!(
        text.contains("contextRecipes[0].steps[0].injectionStrategy.depth"),
        "{text}"
    );
}

#[test]
fn unknown_role_is_refused_with_its_path() {
    let mut v = base();
    v["messageTemplates"][0]["role"] = json!("narrator");
    let (_, text) = refused(v);
    assert!(text.contains("messageTemplates[0].role"), "{text}");
    assert!(text.contains("narrator"), "{text}");
}

#[test]
fn tool_is_no_template_role() {
    let mut v = base();
    v["messageTemplates"][0]["role"] = json!("tool");
    let (_, text) = refused(v);
    assert!(text.contains("messageTemplates[0].role"), "{text}");
}

#[test]
fn unknown_anchor_position_and_template_type_are_refused() {
    let mut v = base();
    v["contextRecipes"][0]["steps"][0]["injectionStrategy"] =
        json!({ "anchorTarget": "chat_history", "anchorPosition": "inside" });
    let (_, text) = refused(v);
    assert!(text.contains("anchorPosition"), "{text}");
    let mut v = base();
    v["messageTemplates"][0]["type"] = json!("lorebook");
    let (_, text) = refused(v);
    assert!(text.contains("messageTemplates[0].type"), "{text}");
}

#[test]
fn not_json_is_refused() {
    let err = parse_preset("{ not json").unwrap_err();
    assert_eq!(err.code(), "not_json");
    assert!(err.to_string().contains("line 1"), "{err}");
    assert_eq!(parse_preset("[1, 2]").unwrap_err().code(), "bad_shape");
}

#[test]
fn newer_format_version_is_refused() {
    let mut v = base();
    v["formatVersion"] = json!(2);
    let (err, text) = refused(v);
    assert_eq!(err.code(), "newer_format");
    assert!(text.contains('2'), "{text}");
}

#[test]
fn missing_required_field_is_named() {
    let mut v = base();
    v["contextRecipes"][0]
        .as_object_mut()
        .expect("object")
        .remove("modelFilter");
    let (_, text) = refused(v);
    assert!(text.contains("modelFilter"), "{text}");
}

#[test]
fn invalid_regex_rule_is_refused_with_the_regex_error() {
    let mut v = base();
    v["regexRules"] = json!([{ "id": "bad", "name": "Bad", "pattern": "(unclosed",
                               "replacement": "", "scope": "both", "enabled": true }]);
    let (_, text) = refused(v);
    assert!(
        text.contains("regexRules[0].pattern") && text.contains("bad"),
        "{text}"
    );
}

#[test]
fn session_errors_name_the_field() {
    let err = parse_session(
        &json!({ "formatVersion": 1, "id": "s", "messages": [
            { "id": "a", "role": "user", "content": "x" },
            { "id": "a", "role": "assistant", "content": "y" },
        ]})
        .to_string(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("messages[1].id"), "{err}");
    let err = parse_session(
        &json!({ "formatVersion": 1, "id": "s", "messages": [{ "role": "robot", "content": "x" }]})
            .to_string(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("messages[0].role"), "{err}");
}

#[test]
fn simple_form_becomes_templates_and_one_catch_all_recipe() {
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [],
        "contextRecipes": [],
        "presetMessages": [
            { "role": "system", "content": "main" },
            { "id": "hist", "role": "system", "type": "chat_history" },
            { "role": "system", "content": "off", "isEnabled": false },
            { "id": "note", "role": "user", "content": "n", "injectionStrategy": { "depth": 2 } },
        ],
    }));
    assert!(preset.preset_messages.is_none());
    let ids: Vec<_> = preset
        .message_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(ids, ["message-1", "hist", "message-3", "note"]);
    assert_eq!(preset.message_templates[1].kind, TemplateType::ChatHistory);
    assert_eq!(preset.context_recipes.len(), 1);
    let recipe = &preset.context_recipes[0];
    assert_eq!(recipe.id, SIMPLE_RECIPE_ID);
    assert_eq!(recipe.model_filter, ["*"]);
    let enabled: Vec<_> = recipe.steps.iter().map(|s| s.enabled).collect();
    assert_eq!(enabled, [true, true, false, true]);
    assert_eq!(
        recipe.steps[3]
            .injection_strategy
            .as_ref()
            .and_then(|s| s.depth),
        Some(2)
    );
    // And it assembles like any other preset.
    let session = session_of(&["u1", "a1", "u2"]);
    let r = run(&preset, &session);
    assert_eq!(contents(&r), ["main", "u1", "n", "a1", "u2"]);
}

#[test]
fn simple_form_generated_ids_never_collide() {
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [], "contextRecipes": [],
        "presetMessages": [
            { "role": "system", "content": "a" },
            { "id": "message-1", "role": "system", "content": "b" },
        ],
    }));
    let ids: Vec<_> = preset
        .message_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
}

#[test]
fn available_anchors_lists_the_two_slots_then_placeholders_in_template_order() {
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            { "id": "wiAfter", "role": "system", "type": "placeholder" },
            { "id": "sys", "role": "system", "content": "x" },
            { "id": "wiBefore", "role": "system", "type": "placeholder" },
            { "id": "h", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [],
    }));
    assert_eq!(
        available_anchors(&preset),
        ["chat_history", "user_profile", "wiAfter", "wiBefore"]
    );
}
