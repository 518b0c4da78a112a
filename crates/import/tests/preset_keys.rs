//! The audit of SillyTavern's chat-completion preset format (docs/IMPORT.md, "Every SillyTavern
//! field at a glance"): every key SillyTavern's Default preset and its preset save write, and
//! those community presets add, is named in docs/IMPORT.md and either mapped or named in the
//! import report; a key the importer does not know is named too. One test per key that changes
//! the prompt where formats.rs and the captured cases of `tests/st-live` do not have one.

mod common;

use common::{build_for_gpt4o, card_v2};
use promptloom_engine::model::{parse_session, AgentPreset, Session};
use promptloom_import::{import_bytes, overlay_character, Imported, Reported};
use serde_json::{json, Value};

/// The top-level keys of SillyTavern's preset: its Default preset (1.12.6 and newer), what its
/// preset save writes, and what community presets carry.
const PRESET_KEYS: &[&str] = &[
    "prompts",
    "prompt_order",
    "temperature",
    "top_p",
    "top_k",
    "openai_max_tokens",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "top_a",
    "min_p",
    "repetition_penalty",
    "n",
    "openai_max_context",
    "max_context_unlocked",
    "wi_format",
    "scenario_format",
    "personality_format",
    "new_chat_prompt",
    "new_example_chat_prompt",
    "new_group_chat_prompt",
    "group_nudge_prompt",
    "continue_nudge_prompt",
    "impersonation_prompt",
    "assistant_impersonation",
    "continue_prefill",
    "continue_postfix",
    "send_if_empty",
    "wrap_in_quotes",
    "names_behavior",
    "squash_system_messages",
    "jailbreak_system",
    "jailbreak_prompt",
    "names_in_completion",
    "exclude_assistant",
    "use_ai21_tokenizer",
    "use_google_tokenizer",
    "assistant_prefill",
    "claude_use_sysprompt",
    "use_makersuite_sysprompt",
    "use_sysprompt",
    "human_sysprompt_message",
    "custom_prompt_post_processing",
    "image_inlining",
    "inline_image_quality",
    "media_inlining",
    "video_inlining",
    "audio_inlining",
    "function_calling",
    "tool_call_recurse_limit",
    "tool_reasoning_mode",
    "reasoning_effort",
    "verbosity",
    "show_thoughts",
    "enable_web_search",
    "websearch_cohere",
    "request_images",
    "request_image_resolution",
    "request_image_aspect_ratio",
    "bias_preset_selected",
    "stream_openai",
    "chat_completion_source",
    "openai_model",
    "claude_model",
    "google_model",
    "vertexai_model",
    "mistralai_model",
    "ai21_model",
    "cohere_model",
    "perplexity_model",
    "groq_model",
    "zerooneai_model",
    "blockentropy_model",
    "windowai_model",
    "xai_model",
    "custom_model",
    "custom_url",
    "custom_include_body",
    "custom_exclude_body",
    "custom_include_headers",
    "openrouter_model",
    "openrouter_use_fallback",
    "openrouter_group_models",
    "openrouter_sort_models",
    "openrouter_providers",
    "openrouter_allow_fallbacks",
    "openrouter_force_instruct",
    "openrouter_middleout",
    "vertexai_auth_mode",
    "reverse_proxy",
    "proxy_password",
    "api_url_scale",
    "use_alt_scale",
    "show_external_models",
    "bypass_status_check",
    "extensions",
];

/// The keys of a prompt, of an order list and of an order entry.
const PROMPT_KEYS: &[&str] = &[
    "identifier",
    "name",
    "role",
    "content",
    "enabled",
    "system_prompt",
    "marker",
    "injection_position",
    "injection_depth",
    "injection_order",
    "injection_trigger",
    "forbid_overrides",
    "extension",
    "character_id",
    "order",
];

/// The keys the importer maps (into templates, the recipe, settings or regex rules): the others
/// are reported when set.
const MAPPED: &[&str] = &[
    "prompts",
    "prompt_order",
    "temperature",
    "top_p",
    "top_k",
    "openai_max_tokens",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "wi_format",
    "scenario_format",
    "personality_format",
    "new_chat_prompt",
    "new_example_chat_prompt",
    "continue_nudge_prompt",
    "impersonation_prompt",
    "assistant_prefill",
    "assistant_impersonation",
    "continue_prefill",
    "continue_postfix",
    "names_behavior",
    "squash_system_messages",
    "extensions",
];

fn import(value: &Value) -> Reported<Imported> {
    import_bytes("p.json", value.to_string().as_bytes()).expect("imports")
}

fn preset_of(r: Reported<Imported>) -> AgentPreset {
    match r.value {
        Imported::Preset { preset } => *preset,
        other => panic!("expected a preset, got {}", other.kind()),
    }
}

/// A preset of `main`, a user prompt `extra` and the chat history, all enabled, without a new
/// chat opener.
fn small_preset() -> Value {
    json!({
        "new_chat_prompt": "",
        "prompts": [
            { "identifier": "main", "name": "Main", "system_prompt": true, "role": "system",
              "content": "Main." },
            { "identifier": "extra", "name": "Extra", "role": "user", "content": "Extra." },
            { "identifier": "chatHistory", "name": "Chat History", "system_prompt": true,
              "marker": true }
        ],
        "prompt_order": [{ "character_id": 100001, "order": [
            { "identifier": "main", "enabled": true },
            { "identifier": "extra", "enabled": true },
            { "identifier": "chatHistory", "enabled": true }
        ]}]
    })
}

fn session(messages: &str) -> Session {
    parse_session(&format!(
        r#"{{ "formatVersion": 1, "id": "s", "messages": {messages} }}"#
    ))
    .expect("session")
}

/// What a build of `preset` over one user message sends, text by text.
fn sent(preset: &AgentPreset) -> Vec<String> {
    let session = session(r#"[{ "role": "user", "content": "Hi." }]"#);
    let result = build_for_gpt4o(preset, &session, None);
    result
        .messages
        .iter()
        .map(|m| m.content().to_string())
        .collect()
}

fn import_md() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/IMPORT.md");
    std::fs::read_to_string(path).expect("docs/IMPORT.md")
}

#[test]
fn every_sillytavern_preset_key_is_named_in_import_md() {
    let doc = import_md();
    let section = doc
        .split("## Every SillyTavern field at a glance")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the section");
    let missing: Vec<&&str> = PRESET_KEYS
        .iter()
        .chain(PROMPT_KEYS)
        .filter(|key| !section.contains(&format!("`{key}`")))
        .collect();
    assert!(missing.is_empty(), "not in docs/IMPORT.md: {missing:?}");
}

#[test]
fn every_sillytavern_preset_key_is_mapped_or_named_in_the_report() {
    for key in PRESET_KEYS.iter().filter(|k| !MAPPED.contains(k)) {
        let mut file = small_preset();
        file[*key] = json!("set");
        let r = import(&file);
        let line = r
            .report
            .items
            .iter()
            .find(|i| i.item.split(", ").any(|k| k == *key))
            .unwrap_or_else(|| panic!("{key} not named: {:?}", r.report));
        assert!(
            line.message.starts_with("not mapped"),
            "{key}: {}",
            line.message
        );
    }
}

#[test]
fn zzz_unknown_preset_key_is_named_whatever_its_value() {
    for value in [json!(false), json!(""), json!(0), json!({ "a": 1 })] {
        let mut file = small_preset();
        file["zzz_future_key"] = value.clone();
        // A known setting that is off says nothing.
        file["wrap_in_quotes"] = json!(false);
        let r = import(&file);
        let line = r
            .report
            .items
            .iter()
            .find(|i| i.item == "zzz_future_key")
            .unwrap_or_else(|| panic!("{value} not named: {:?}", r.report));
        assert!(line.message.contains("not read"), "{}", line.message);
        assert!(!r.report.mentions("wrap_in_quotes"), "{:?}", r.report);
    }
}

#[test]
fn unknown_prompt_and_order_keys_are_named_with_their_prompts() {
    let mut file = small_preset();
    file["prompts"][0]["tooltip"] = json!("Shown on hover");
    file["prompts"][1]["tooltip"] = json!("Another");
    file["prompts"][2]["zzz"] = json!(null);
    file["prompt_order"][0]["order"][1]["locked"] = json!(true);
    file["extensions"] = json!({ "SPreset": { "x": 1 } });
    let r = import(&file);
    let item = |name: &str| {
        r.report
            .items
            .iter()
            .find(|i| i.item == name)
            .unwrap_or_else(|| panic!("{name}: {:?}", r.report))
            .message
            .clone()
    };
    assert_eq!(
        item("prompts[].tooltip"),
        "a key Promptloom does not know, set on 2 (main, extra); not read"
    );
    assert!(item("prompt_order order[].locked").contains("(extra)"));
    assert!(item("extensions.SPreset").contains("not read"));
    // null is the same as absent.
    assert!(!r.report.mentions("zzz"), "{:?}", r.report);
}

// RULES 7.2: a prompt whose injection_trigger lists generation types is sent only for those; a
// build is an ordinary send ("normal").
#[test]
fn injection_trigger_without_normal_leaves_the_prompt_out() {
    let mut file = small_preset();
    file["prompts"][1]["injection_trigger"] = json!(["continue", "swipe"]);
    let r = import(&file);
    assert!(r
        .report
        .items
        .iter()
        .any(|i| i.item == "prompt extra" && i.message.contains("continue, swipe")));
    assert_eq!(sent(&preset_of(r)), ["Main.", "Hi."]);
    // With normal among them, or an empty list, it is sent.
    for triggers in [json!(["normal", "swipe"]), json!([])] {
        file["prompts"][1]["injection_trigger"] = triggers;
        let r = import(&file);
        assert!(!r.report.mentions("injection_trigger"), "{:?}", r.report);
        assert_eq!(sent(&preset_of(r)), ["Main.", "Extra.", "Hi."]);
    }
}

// RULES 7.2: only an order entry that is enabled is sent.
#[test]
fn prompt_order_entry_without_enabled_is_not_sent() {
    let mut file = small_preset();
    file["prompt_order"][0]["order"][1]
        .as_object_mut()
        .unwrap()
        .remove("enabled");
    let r = import(&file);
    assert!(r.report.mentions("no enabled flag"), "{:?}", r.report);
    assert_eq!(sent(&preset_of(r)), ["Main.", "Hi."]);
}

// The regex extension's preset scripts (`extensions.regex_scripts`) come in switched off, as
// SillyTavern runs them only once they are allowed; switched on, they act on the prompt as the
// scripts of a regex file do (RULES 5.2).
#[test]
fn extensions_regex_scripts_come_in_off_and_rewrite_the_history_once_on() {
    let mut file = small_preset();
    file["extensions"] = json!({ "regex_scripts": [{
        "id": "shout", "scriptName": "Shout", "findRegex": "/Hi/g", "replaceString": "HELLO",
        "placement": [1], "disabled": false, "markdownOnly": false, "promptOnly": true,
        "runOnEdit": false, "trimStrings": [], "substituteRegex": 0,
        "minDepth": null, "maxDepth": null
    }]});
    let r = import(&file);
    assert!(
        r.report.mentions("regex rules (1), switched off") && r.report.mentions("has on (Shout)"),
        "{:?}",
        r.report
    );
    let mut preset = preset_of(r);
    assert_eq!(sent(&preset), ["Main.", "Extra.", "Hi."]);
    let rules = preset.regex_rules.as_mut().expect("the rules");
    assert_eq!(rules.len(), 1);
    rules[0].enabled = true;
    assert_eq!(sent(&preset), ["Main.", "Extra.", "HELLO."]);
}

// RULES 5.11.1: wi_format wraps the world info texts sent at a marker.
#[test]
fn wi_format_wraps_the_world_info_before_the_character() {
    let mut file = small_preset();
    file["wi_format"] = json!("[World: {0}]");
    file["prompts"].as_array_mut().unwrap().push(
        json!({ "identifier": "worldInfoBefore", "name": "World Info (before)",
                      "system_prompt": true, "marker": true }),
    );
    file["prompt_order"][0]["order"]
        .as_array_mut()
        .unwrap()
        .insert(
            1,
            json!({ "identifier": "worldInfoBefore", "enabled": true }),
        );
    let preset = preset_of(import(&file));
    let Imported::Character(card) =
        import_bytes("keeper.json", card_v2("Keeper").to_string().as_bytes())
            .expect("a card")
            .value
    else {
        panic!("a card");
    };
    let preset = overlay_character(preset, &card);
    let texts = sent(&preset);
    // The card's constant entry 0 sits before the character.
    assert_eq!(texts[1], "[World: content 0]", "{texts:?}");
}

// RULES 5.11.7: squash_system_messages joins consecutive system messages with a line break.
#[test]
fn squash_system_messages_joins_system_messages() {
    let mut file = small_preset();
    file["prompts"][1]["role"] = json!("system");
    assert_eq!(sent(&preset_of(import(&file))), ["Main.", "Extra.", "Hi."]);
    file["squash_system_messages"] = json!(true);
    assert_eq!(sent(&preset_of(import(&file))), ["Main.\nExtra.", "Hi."]);
}

// RULES 5.11.6: names_behavior 2 (content) writes the speaker's name before each history text.
#[test]
fn names_behavior_content_writes_the_names_before_the_texts() {
    let mut file = small_preset();
    file["names_behavior"] = json!(2);
    assert_eq!(
        sent(&preset_of(import(&file))),
        ["Main.", "Extra.", "User: Hi."]
    );
}

// RULES 7.2: injection_position 1 puts a prompt in the history, injection_depth messages from
// its end.
#[test]
fn injection_position_puts_the_prompt_at_its_depth_in_the_history() {
    let mut file = small_preset();
    file["prompts"][1]["injection_position"] = json!(1);
    file["prompts"][1]["injection_depth"] = json!(1);
    let preset = preset_of(import(&file));
    let session = session(
        r#"[{ "role": "user", "content": "One." }, { "role": "assistant", "content": "Two." },
            { "role": "user", "content": "Three." }]"#,
    );
    let result = build_for_gpt4o(&preset, &session, None);
    let texts: Vec<&str> = result.messages.iter().map(|m| m.content()).collect();
    assert_eq!(texts, ["Main.", "One.", "Two.", "Extra.", "Three."]);
}
