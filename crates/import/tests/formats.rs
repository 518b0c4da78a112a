//! Each importer against small files built here, one test per mapping rule of RULES 7 and
//! docs/IMPORT.md.

mod common;

use common::{b64, build_for_gpt4o, card_v2, png_with_text, zip_with};
use promptloom_engine::model::{AnchorPosition, RegexScope, Role, SelectiveLogic, TemplateType};
use promptloom_import::{import_bytes, Imported, Reported};
use serde_json::json;

fn import(file: &str, value: &serde_json::Value) -> Reported<Imported> {
    import_bytes(file, value.to_string().as_bytes()).expect("imports")
}

fn st_preset() -> serde_json::Value {
    json!({
        "temperature": 0.7,
        "top_p": 1,
        "openai_max_context": 8000,
        "prompts": [
            { "identifier": "main", "name": "Main Prompt", "system_prompt": true, "role": "system",
              "content": "Be {{char}}." },
            { "identifier": "chatHistory", "name": "Chat History", "system_prompt": true, "marker": true },
            { "identifier": "personaDescription", "name": "Persona", "system_prompt": true, "marker": true },
            { "identifier": "charDescription", "name": "Char Description", "marker": true },
            { "identifier": "note", "name": "Depth note", "role": "user", "content": "Remember.",
              "injection_position": 1, "injection_depth": 2, "injection_order": 150 },
            { "identifier": "relative", "name": "Relative", "role": "assistant", "content": "Ok.",
              "injection_position": 0, "injection_depth": 7, "injection_order": 3 },
            { "identifier": "spare", "name": "Not ordered", "role": "system", "content": "unused" },
            { "identifier": "summary", "name": "Summary", "marker": true }
        ],
        "prompt_order": [
            { "character_id": 100001, "order": [
                { "identifier": "main", "enabled": true },
                { "identifier": "charDescription", "enabled": true },
                { "identifier": "personaDescription", "enabled": false },
                { "identifier": "chatHistory", "enabled": true },
                { "identifier": "note", "enabled": true },
                { "identifier": "relative", "enabled": true },
                { "identifier": "ghost", "enabled": true }
            ]},
            { "character_id": 7, "order": [ { "identifier": "main", "enabled": false } ] }
        ]
    })
}

fn preset_of(r: &Reported<Imported>) -> &promptloom_engine::model::AgentPreset {
    match &r.value {
        Imported::Preset { preset } => preset,
        other => panic!("expected a preset, got {}", other.kind()),
    }
}

#[test]
fn preset_prompts_become_templates_and_the_global_order_the_steps() {
    let r = import("My Preset.json", &st_preset());
    let preset = preset_of(&r);
    assert_eq!(preset.id, "my-preset");
    assert_eq!(preset.name, "My Preset");
    // RULES 5.11: a SillyTavern preset comes in under SillyTavern compatibility.
    assert_eq!(
        preset.compatibility,
        promptloom_engine::model::Compatibility::Sillytavern
    );
    let steps: Vec<(&str, bool)> = preset.context_recipes[0]
        .steps
        .iter()
        .map(|s| (s.message_id.as_str(), s.enabled))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("main", true),
            ("charDescription", true),
            ("personaDescription", false),
            ("chatHistory", true),
            ("note", true),
            ("relative", true),
        ]
    );
    assert!(r.report.mentions("ghost"));
    // A card's own system prompt replaces `main` at build time under SillyTavern
    // compatibility (RULES 5.11.3): nothing to report.
    assert!(!r.report.items.iter().any(|i| i.item.contains("(main)")));
}

/// A SillyTavern preset with `forbid_overrides` on `main`, its own formats and openers.
fn st_preset_with_formats() -> serde_json::Value {
    json!({
        "scenario_format": "Where: {{scenario}}",
        "personality_format": "",
        "new_chat_prompt": "[New]",
        "new_example_chat_prompt": "[Ex]",
        "continue_nudge_prompt": "[Go on]",
        "wi_format": "{0}",
        "prompts": [
            { "identifier": "main", "name": "Main Prompt", "system_prompt": true, "role": "system",
              "content": "Preset main.", "forbid_overrides": true },
            { "identifier": "jailbreak", "name": "Post-History", "system_prompt": true,
              "role": "system", "content": "Preset jb.", "forbid_overrides": false },
            { "identifier": "charPersonality", "name": "Char Personality", "marker": true },
            { "identifier": "scenario", "name": "Scenario", "marker": true },
            { "identifier": "chatHistory", "name": "Chat History", "system_prompt": true, "marker": true }
        ],
        "prompt_order": [{ "character_id": 100001, "order": [
            { "identifier": "main", "enabled": true },
            { "identifier": "charPersonality", "enabled": true },
            { "identifier": "scenario", "enabled": true },
            { "identifier": "chatHistory", "enabled": true },
            { "identifier": "jailbreak", "enabled": true }
        ]}]
    })
}

// PromptManager.js, forbid_overrides, and openai.js, the *_format and *_prompt settings: they
// become the injection assembler's settings instead of being reported.
#[test]
fn preset_forbid_overrides_formats_and_openers_become_assembler_settings() {
    let r = import("p.json", &st_preset_with_formats());
    let preset = preset_of(&r);
    let processors = preset.processors.as_ref().expect("processor settings");
    assert_eq!(processors.len(), 1);
    assert_eq!(processors[0].id, "injection-assembler");
    assert_eq!(
        serde_json::Value::Object(processors[0].settings.clone()),
        json!({
            "systemPromptTemplate": "",
            "scenarioFormat": "Where: {{scenario}}",
            "personalityFormat": "",
            "newChatPrompt": "[New]",
            "newExampleChatPrompt": "[Ex]",
            "continueNudgePrompt": "[Go on]"
        })
    );
    // An empty personality format sends nothing in SillyTavern: the template is empty too.
    assert_eq!(
        preset
            .template("charPersonality")
            .unwrap()
            .content
            .as_deref(),
        Some("")
    );
    for key in [
        "forbid_overrides",
        "scenario_format",
        "personality_format",
        "new_chat_prompt",
        "new_example_chat_prompt",
        "continue_nudge_prompt",
        "wi_format",
    ] {
        assert!(!r.report.mentions(key), "{key} reported: {:?}", r.report);
    }
}

// PromptManager.js, forbid_overrides, and openai.js, the *_format and *_prompt settings: a
// preset written back for SillyTavern carries them where it read them.
#[test]
fn preset_forbid_overrides_formats_and_openers_are_exported_back() {
    let r = import("p.json", &st_preset_with_formats());
    let exported = promptloom_import::export_sillytavern_preset(preset_of(&r));
    let v = &exported.value;
    for key in [
        "scenario_format",
        "personality_format",
        "new_chat_prompt",
        "new_example_chat_prompt",
        "continue_nudge_prompt",
    ] {
        assert_eq!(v[key], st_preset_with_formats()[key], "{key}");
    }
    let forbids = |id: &str| {
        v["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["identifier"] == id)
            .map(|p| p["forbid_overrides"].clone())
    };
    assert_eq!(forbids("main"), Some(json!(true)));
    assert_eq!(forbids("jailbreak"), Some(json!(false)));
    assert!(
        !exported.report.mentions("processors"),
        "{:?}",
        exported.report
    );
}

// openai.js, preparePromptsForChatCompletion() and populateChatHistory(): an imported preset
// with a card builds as SillyTavern does: the forbidden main stays, the card's post-history
// instructions replace jailbreak, the scenario goes through its format, the personality (its
// format empty) is not sent, the new chat opener opens the history and the card's depth prompt
// (depth 4, past the one message) comes after it.
#[test]
fn an_imported_preset_and_card_build_with_the_prompt_managers_rules() {
    let Imported::Preset { preset } = import("p.json", &st_preset_with_formats()).value else {
        panic!("a preset");
    };
    let mut card = card_v2("Keeper");
    card["data"]["system_prompt"] = json!("Card main.");
    card["data"]["post_history_instructions"] = json!("Card jb, then {{original}}");
    card["data"]["personality"] = json!("stern");
    card["data"]["scenario"] = json!("A lighthouse.");
    let Imported::Character(card) = import("keeper.json", &card).value else {
        panic!("a card");
    };
    let mut preset = promptloom_import::overlay_character(*preset, &card);
    preset.lorebook = None;
    let session = promptloom_engine::model::parse_session(
        r#"{ "formatVersion": 1, "id": "s", "messages": [{ "role": "user", "content": "Hi." }] }"#,
    )
    .expect("session");
    let result = build_for_gpt4o(&preset, &session, None);
    let texts: Vec<&str> = result.messages.iter().map(|m| m.content()).collect();
    assert_eq!(
        texts,
        [
            "Preset main.",
            "Where: A lighthouse.",
            "[New]",
            "note",
            "Hi.",
            "Card jb, then Preset jb."
        ]
    );
}

#[test]
fn preset_markers_become_slots_anchors_and_macro_templates() {
    let r = import("p.json", &st_preset());
    let preset = preset_of(&r);
    let t = |id: &str| preset.template(id).expect(id);
    assert_eq!(t("chatHistory").kind, TemplateType::ChatHistory);
    assert_eq!(t("personaDescription").kind, TemplateType::UserProfile);
    assert_eq!(t("charDescription").kind, TemplateType::Message);
    assert_eq!(
        t("charDescription").content.as_deref(),
        Some("{{description}}")
    );
    assert_eq!(t("charDescription").role, Role::System);
    // An unknown marker is kept as an anchor, and reported.
    assert_eq!(t("summary").kind, TemplateType::Placeholder);
    assert!(r.report.mentions("summary"));
}

#[test]
fn preset_in_chat_prompt_gets_depth_and_order_200_minus_order() {
    let r = import("p.json", &st_preset());
    let preset = preset_of(&r);
    let note = preset.template("note").unwrap();
    assert_eq!(note.role, Role::User);
    let strategy = note.default_injection_strategy.as_ref().unwrap();
    assert_eq!(strategy.depth, Some(2));
    assert_eq!(strategy.order, Some(50));
    assert_eq!(strategy.anchor_target, None);
}

#[test]
fn preset_relative_prompt_stays_in_list_order_whatever_its_depth() {
    let r = import("p.json", &st_preset());
    let relative = preset_of(&r).template("relative").unwrap();
    assert_eq!(relative.role, Role::Assistant);
    assert_eq!(relative.default_injection_strategy, None);
}

#[test]
fn preset_prompt_outside_the_order_list_is_kept_and_reported() {
    let r = import("p.json", &st_preset());
    assert!(preset_of(&r).template("spare").is_some());
    assert!(r
        .report
        .items
        .iter()
        .any(|i| i.item.contains("spare") && i.message.contains("not in the order list")));
}

#[test]
fn preset_squash_system_messages_switches_the_squash_processor_on() {
    let mut file = st_preset();
    file["squash_system_messages"] = json!(true);
    let r = import("p.json", &file);
    let configs = preset_of(&r).processors.clone().unwrap_or_default();
    let squash = configs
        .iter()
        .find(|c| c.id == "squash-system-messages")
        .expect("the squash processor's config");
    assert_eq!(squash.enabled, Some(true));
    // Off, it sets nothing: the processor is off by default.
    file["squash_system_messages"] = json!(false);
    let r = import("p.json", &file);
    assert!(preset_of(&r)
        .processors
        .iter()
        .flatten()
        .all(|c| c.id != "squash-system-messages"));
}

#[test]
fn preset_names_behavior_becomes_the_session_loaders_names() {
    let names = |value: serde_json::Value| {
        let mut file = st_preset();
        file["names_behavior"] = value;
        let r = import("p.json", &file);
        let name = preset_of(&r)
            .processors
            .iter()
            .flatten()
            .find(|c| c.id == "session-loader")
            .map(|c| c.settings["names"].as_str().unwrap().to_string());
        (name, r.report.mentions("names_behavior"))
    };
    // none (-1) and default (0) are what compatibility starts from: nothing to set.
    assert_eq!(names(json!(-1)), (None, false));
    assert_eq!(names(json!(0)), (None, false));
    assert_eq!(names(json!(1)), (Some("completion".into()), false));
    assert_eq!(names(json!(2)), (Some("content".into()), false));
    assert_eq!(names(json!(7)), (None, true));
}

#[test]
fn preset_custom_prompt_flagged_system_prompt_is_never_sent_and_reported() {
    let mut file = st_preset();
    file["prompts"].as_array_mut().unwrap().push(
        json!({ "identifier": "hidden", "name": "Hidden", "system_prompt": true,
                      "role": "system", "content": "SillyTavern never sends this." }),
    );
    file["prompt_order"][0]["order"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "identifier": "hidden", "enabled": true }));
    let r = import("p.json", &file);
    let step = preset_of(&r).context_recipes[0]
        .steps
        .iter()
        .find(|s| s.message_id == "hidden")
        .expect("its step");
    assert!(!step.enabled);
    assert!(r
        .report
        .items
        .iter()
        .any(|i| i.item.contains("hidden") && i.message.contains("never sends it")));
    // SillyTavern's own prompts flagged so are sent as ever.
    let main = preset_of(&r).context_recipes[0]
        .steps
        .iter()
        .find(|s| s.message_id == "main")
        .unwrap();
    assert!(main.enabled);
}

#[test]
fn preset_samplers_become_generation_settings_and_the_rest_is_reported_on_one_line() {
    let r = import("p.json", &st_preset());
    let lines: Vec<_> = r
        .report
        .items
        .iter()
        .filter(|i| i.message.starts_with("not mapped"))
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", r.report);
    assert_eq!(lines[0].item, "openai_max_context");
    let Imported::Preset { preset } = &r.value else {
        panic!("a preset");
    };
    let g = preset.generation.as_ref().expect("generation settings");
    assert_eq!(g.temperature, Some(0.7));
    assert_eq!(g.top_p, Some(1.0));
    assert_eq!(g.max_output_tokens, None);
}

#[test]
fn preset_samplers_map_by_sillytavern_key() {
    let mut value = st_preset();
    let root = value.as_object_mut().unwrap();
    for (key, v) in [
        ("temperature", json!(1.2)),
        ("top_p", json!("0.95")),
        ("top_k", json!(40)),
        ("openai_max_tokens", json!(300)),
        ("frequency_penalty", json!(0.4)),
        ("presence_penalty", json!(-0.3)),
        ("seed", json!(1234)),
        ("top_a", json!(0.5)),
        ("min_p", json!(0.1)),
        ("repetition_penalty", json!(1.1)),
    ] {
        root.insert(key.into(), v);
    }
    let r = import("p.json", &value);
    let Imported::Preset { preset } = &r.value else {
        panic!("a preset");
    };
    let g = preset.generation.as_ref().expect("generation settings");
    assert_eq!(g.temperature, Some(1.2));
    assert_eq!(g.top_p, Some(0.95));
    assert_eq!(g.top_k, Some(40));
    assert_eq!(g.max_output_tokens, Some(300));
    assert_eq!(g.frequency_penalty, Some(0.4));
    assert_eq!(g.presence_penalty, Some(-0.3));
    assert_eq!(g.seed, Some(1234));
    assert!(g.stop.is_empty() && g.extra.is_empty());
    // Samplers without a counterpart stay in the report.
    let line = r
        .report
        .items
        .iter()
        .find(|i| i.message.starts_with("not mapped"))
        .expect("the settings line");
    assert_eq!(
        line.item,
        "min_p, openai_max_context, repetition_penalty, top_a"
    );
}

#[test]
fn preset_sampler_off_values_read_as_unset() {
    let mut value = st_preset();
    let root = value.as_object_mut().unwrap();
    root.insert("top_k".into(), json!(0));
    root.insert("seed".into(), json!(-1));
    let r = import("p.json", &value);
    let Imported::Preset { preset } = &r.value else {
        panic!("a preset");
    };
    let g = preset.generation.as_ref().expect("temperature and top_p");
    assert_eq!((g.top_k, g.seed), (None, None));
    assert!(
        !r.report.mentions("top_k") && !r.report.mentions("seed"),
        "{:?}",
        r.report
    );
}

#[test]
fn preset_samplers_out_of_range_are_reported_and_left_out() {
    let mut value = st_preset();
    let root = value.as_object_mut().unwrap();
    root.insert("temperature".into(), json!(5));
    root.insert("top_p".into(), json!("high"));
    root.insert("top_k".into(), json!(-3));
    root.insert("openai_max_tokens".into(), json!(0));
    root.insert("seed".into(), json!(true));
    let r = import("p.json", &value);
    let Imported::Preset { preset } = &r.value else {
        panic!("a preset");
    };
    assert!(preset.generation.is_none(), "{:?}", preset.generation);
    for key in ["temperature", "top_p", "top_k", "openai_max_tokens", "seed"] {
        let item = r
            .report
            .items
            .iter()
            .find(|i| i.item == key)
            .unwrap_or_else(|| panic!("{key} reported: {:?}", r.report));
        assert!(
            item.message.contains("not a value this model takes"),
            "{}",
            item.message
        );
    }
    let temperature = r
        .report
        .items
        .iter()
        .find(|i| i.item == "temperature")
        .unwrap();
    assert!(
        temperature.message.starts_with("5 is not"),
        "{}",
        temperature.message
    );
    assert!(
        temperature.message.contains("(0..2)"),
        "{}",
        temperature.message
    );
}

#[test]
fn preset_without_the_global_list_uses_the_last() {
    let mut value = st_preset();
    value["prompt_order"][0]["character_id"] = json!(5);
    let r = import("p.json", &value);
    let steps = &preset_of(&r).context_recipes[0].steps;
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].message_id, "main");
    assert!(!steps[0].enabled);
    assert!(r.report.mentions("character_id 7"));
}

#[test]
fn card_v2_json_fills_the_character() {
    let r = import("keeper.json", &card_v2("Keeper"));
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    let c = &card.character;
    assert_eq!(c.name, "Keeper");
    // RULES 5.11: a card's preset is built under SillyTavern compatibility.
    assert_eq!(
        promptloom_import::card_preset(card).compatibility,
        promptloom_engine::model::Compatibility::Sillytavern
    );
    assert_eq!(c.description.as_deref(), Some("A lighthouse keeper."));
    assert_eq!(c.personality.as_deref(), Some("patient"));
    assert_eq!(c.scenario.as_deref(), Some("A storm night."));
    assert_eq!(
        c.greeting.as_deref(),
        Some("You made it in before the rain.")
    );
    assert_eq!(
        c.example_dialogue.as_deref(),
        Some("<START>\n{{char}}: Tea?")
    );
    assert_eq!(c.system_prompt.as_deref(), Some("Stay in character."));
    assert_eq!(
        c.post_history_instructions.as_deref(),
        Some("Keep replies short.")
    );
    assert_eq!(c.creator_notes.as_deref(), Some("Test card."));
    assert_eq!(
        c.tags.as_deref(),
        Some(&["sea".to_string(), "calm".to_string()][..])
    );
    // Alternate greetings are mapped: a new chat offers them as the greeting's swipes.
    assert_eq!(c.alternate_greetings, ["Hello again."]);
    assert!(!r.report.mentions("alternate_greetings"));
    // The depth prompt is the character's note now, not a reported field.
    assert!(!r.report.mentions("depth_prompt"));
    assert!(c.depth_prompt.is_some());
    assert!(r.report.mentions("token_budget"));
}

// script.js, Generate(): a card's extensions.depth_prompt (prompt trimmed, depth 4 and role
// system when absent) is sent at its depth with its role; it is the character's note here,
// and a card written back carries it in the same place.
#[test]
fn card_depth_prompt_imports_as_the_character_note_and_exports_back() {
    use promptloom_engine::model::CharacterNote;
    let mut value = card_v2("Keeper");
    value["data"]["extensions"]["depth_prompt"] =
        json!({ "prompt": "  {{char}} keeps the light.  ", "depth": 2, "role": "assistant" });
    let r = import("keeper.json", &value);
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    let note = CharacterNote {
        prompt: "{{char}} keeps the light.".into(),
        depth: 2,
        role: Role::Assistant,
    };
    assert_eq!(card.character.depth_prompt.as_ref(), Some(&note));
    assert!(!r.report.mentions("depth_prompt"));
    let exported = promptloom_import::export_sillytavern_card(card).value;
    assert_eq!(
        exported["data"]["extensions"]["depth_prompt"],
        json!({ "prompt": "{{char}} keeps the light.", "depth": 2, "role": "assistant" })
    );

    // SillyTavern's defaults for what the card leaves out; an empty prompt is no note.
    value["data"]["extensions"]["depth_prompt"] = json!({ "prompt": "Mind the lamp." });
    let r = import("keeper.json", &value);
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    let note = card.character.depth_prompt.as_ref().expect("a note");
    assert_eq!((note.depth, note.role), (4, Role::System));
    value["data"]["extensions"]["depth_prompt"] = json!({ "prompt": " ", "depth": 1 });
    let r = import("keeper.json", &value);
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.depth_prompt, None);

    // A depth that is not one is reported, and 4 is used.
    value["data"]["extensions"]["depth_prompt"] =
        json!({ "prompt": "x", "depth": -3, "role": "narrator" });
    let r = import("keeper.json", &value);
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    let note = card.character.depth_prompt.as_ref().expect("a note");
    assert_eq!((note.depth, note.role), (4, Role::System));
    assert!(r.report.mentions("depth_prompt.depth"));
    assert!(r.report.mentions("depth_prompt.role"));
}

#[test]
fn card_book_positions_map_to_anchors_and_depth() {
    let r = import("keeper.json", &card_v2("Keeper"));
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    let book = card.lorebook.as_ref().unwrap();
    // The book's own scan_depth (3) and recursion (off) are not what SillyTavern scans with: 2
    // messages, recursively, its defaults.
    assert_eq!(book.scan_depth, 2);
    assert!(book.recursive);
    assert!(r.report.mentions("character_book.scan_depth"));
    assert!(r.report.mentions("character_book.recursive_scanning"));
    let e = &book.entries;
    assert_eq!(e.len(), 7);
    let anchor = |i: usize| {
        (
            e[i].strategy.anchor_target.as_deref(),
            e[i].strategy.anchor_position,
        )
    };
    assert_eq!(
        anchor(0),
        (Some("worldInfoBefore"), Some(AnchorPosition::After))
    );
    assert_eq!(
        anchor(1),
        (Some("worldInfoAfter"), Some(AnchorPosition::After))
    );
    assert_eq!(
        anchor(2),
        (Some("authorsNote"), Some(AnchorPosition::Before))
    );
    assert_eq!(
        anchor(3),
        (Some("authorsNote"), Some(AnchorPosition::After))
    );
    assert_eq!(
        anchor(5),
        (Some("dialogueExamples"), Some(AnchorPosition::Before))
    );
    assert_eq!(
        anchor(6),
        (Some("dialogueExamples"), Some(AnchorPosition::After))
    );
    assert_eq!(e[4].strategy.depth, Some(2));
    assert_eq!(e[4].strategy.anchor_target, None);
    assert_eq!(e[4].role, Role::User);
    assert_eq!(e[0].role, Role::System);
    // Orders: kept on the entry, 200 − order for placement.
    assert_eq!((e[1].order, e[1].strategy.order), (50, Some(150)));
    assert_eq!((e[4].order, e[4].strategy.order), (10, Some(190)));
    // Flags, keys, logic, probability.
    assert!(e[0].constant && !e[1].constant);
    assert!(!e[5].enabled && e[4].enabled);
    assert_eq!(e[0].keys, vec!["key0"]);
    assert_eq!(e[0].secondary_keys, vec!["second"]);
    assert_eq!(e[0].name.as_deref(), Some("entry 0"));
    assert_eq!(e[6].selective_logic, SelectiveLogic::AndAll);
    assert_eq!(e[6].probability, Some(40));
    assert_eq!(e[0].probability, None);
    // Sticky is mapped now, not reported.
    assert_eq!(e[6].sticky, Some(2));
    assert!(!r
        .report
        .items
        .iter()
        .any(|i| i.item.contains("entries[6]") && i.message.contains("sticky")));
}

/// SillyTavern writes `use_regex: true` on every book entry of a card it saves and never reads it
/// back (world-info.js reads a key as a regular expression only when it is `/pattern/flags`,
/// `parseRegexFromString`): the keys stay words, and a `/pattern/` key stays one.
#[test]
fn card_v3_json_and_use_regex_keys_stay_as_written() {
    let mut card = card_v2("Nova");
    card["spec"] = json!("chara_card_v3");
    card["spec_version"] = json!("3.0");
    card["data"]["character_book"]["entries"][0]["use_regex"] = json!(true);
    card["data"]["character_book"]["entries"][0]["keys"] = json!(["cat", "/ca+t/i"]);
    let r = import("nova.json", &card);
    assert!(r.report.format.contains("V3"));
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Nova");
    assert_eq!(
        card.lorebook.as_ref().unwrap().entries[0].keys,
        vec!["cat", "/ca+t/i"]
    );
    assert!(
        !r.report.mentions("use_regex"),
        "nothing to report: SillyTavern ignores it too"
    );
}

#[test]
fn card_v1_json_reads_the_top_level_fields() {
    let r = import(
        "old.json",
        &json!({ "name": "Old", "description": "d", "first_mes": "hi", "mes_example": "" }),
    );
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Old");
    assert_eq!(card.character.greeting.as_deref(), Some("hi"));
    assert_eq!(card.character.example_dialogue, None);
    assert!(card.lorebook.is_none());
}

#[test]
fn png_card_chunk_after_the_image_data_is_found() {
    let png = png_with_text(&[("chara", &b64(&card_v2("Late").to_string()))], true);
    let r = import_bytes("late.png", &png).expect("imports");
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Late");
    assert_eq!(card.lorebook.as_ref().unwrap().entries.len(), 7);
}

#[test]
fn png_ccv3_chunk_wins_over_chara() {
    let mut v3 = card_v2("Three");
    v3["spec"] = json!("chara_card_v3");
    let png = png_with_text(
        &[
            ("chara", &b64(&card_v2("Two").to_string())),
            ("ccv3", &b64(&v3.to_string())),
        ],
        false,
    );
    let r = import_bytes("both.png", &png).expect("imports");
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Three");
    assert!(r.report.format.contains("ccv3"));
}

#[test]
fn png_broken_ccv3_falls_back_to_chara_and_says_so() {
    let png = png_with_text(
        &[
            ("ccv3", "%%%"),
            ("chara", &b64(&card_v2("Two").to_string())),
        ],
        false,
    );
    let r = import_bytes("fallback.png", &png).expect("imports");
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Two");
    assert!(r.report.mentions("ccv3"));
}

#[test]
fn charx_reads_card_json_and_reports_the_assets() {
    let card = card_v2("Zipped").to_string();
    let zip = zip_with(&[
        ("card.json", card.as_bytes()),
        ("assets/icon/main.png", &[1, 2, 3]),
    ]);
    let r = import_bytes("zipped.charx", &zip).expect("imports");
    let Imported::Character(card) = &r.value else {
        panic!("expected a character");
    };
    assert_eq!(card.character.name, "Zipped");
    assert!(r.report.format.contains("CHARX"));
    assert!(r.report.mentions("1 other file"));
}

#[test]
fn world_info_file_maps_every_field() {
    let wi = json!({ "entries": {
        "3": { "uid": 3, "key": ["harbor", "/do(ck|cks)/i"], "keysecondary": ["night"],
               "comment": "Harbor", "content": "The harbor is closed at night.",
               "constant": false, "selective": true, "selectiveLogic": 2, "order": 120,
               "position": 4, "depth": 1, "role": 2, "disable": false,
               "probability": 75, "useProbability": true, "group": "places", "groupWeight": 100 },
        "4": { "uid": 4, "key": ["lamp"], "keysecondary": ["oil"], "content": "Lamp.",
               "selective": false, "order": 100, "position": 1, "disable": true,
               "probability": 30, "useProbability": false, "depth": 4, "role": null }
    }});
    let r = import("coast.json", &wi);
    let Imported::Lorebook { lorebook } = &r.value else {
        panic!("expected a lorebook");
    };
    let e = &lorebook.entries;
    assert_eq!(e[0].id, "3");
    assert_eq!(e[0].name.as_deref(), Some("Harbor"));
    assert_eq!(e[0].keys, vec!["harbor", "/do(ck|cks)/i"]);
    assert_eq!(e[0].secondary_keys, vec!["night"]);
    assert_eq!(e[0].selective_logic, SelectiveLogic::NotAny);
    assert_eq!(e[0].order, 120);
    assert_eq!(e[0].strategy.depth, Some(1));
    assert_eq!(e[0].strategy.order, Some(80));
    assert_eq!(e[0].role, Role::Assistant);
    assert_eq!(e[0].probability, Some(75));
    assert!(e[0].enabled);
    // Entry 4: disabled, not selective (secondary keys dropped), probability off.
    assert!(!e[1].enabled);
    assert!(e[1].secondary_keys.is_empty());
    assert_eq!(e[1].probability, None);
    assert_eq!(
        e[1].strategy.anchor_target.as_deref(),
        Some("worldInfoAfter")
    );
    assert_eq!(e[0].group.as_deref(), Some("places"));
    assert_eq!(e[0].group_weight, None);
    // Reports: the dropped secondary keys of entry 4; not the default group weight, nor the
    // depth of a non-depth entry.
    let items: Vec<String> = r
        .report
        .items
        .iter()
        .map(|i| format!("{}: {}", i.item, i.message))
        .collect();
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("entries.4: secondary keys")),
        "{items:?}"
    );
    assert_eq!(items.len(), 1, "{items:?}");
}

// world-info.js, the entry template (`newWorldInfoEntryTemplate`): the per-entry scan,
// recursion, timing and group fields as a world info file writes them.
#[test]
fn world_info_file_imports_sillytavern_entry_settings() {
    let wi = json!({ "entries": {
        "0": { "uid": 0, "key": ["a"], "content": "A", "position": 0,
               "scanDepth": 5, "caseSensitive": true, "matchWholeWords": false,
               "excludeRecursion": true, "preventRecursion": true, "delayUntilRecursion": 3,
               "sticky": 2, "cooldown": 4, "delay": 6, "group": "weather, mood",
               "groupOverride": true, "groupWeight": 30, "useGroupScoring": true },
        "1": { "uid": 1, "key": ["b"], "content": "B", "position": 0,
               "scanDepth": null, "caseSensitive": null, "matchWholeWords": null,
               "excludeRecursion": false, "preventRecursion": false,
               "delayUntilRecursion": true, "sticky": 0, "cooldown": null, "delay": 0,
               "group": "", "groupOverride": false, "groupWeight": 100, "useGroupScoring": null }
    }});
    let r = import("timed.json", &wi);
    let Imported::Lorebook { lorebook } = &r.value else {
        panic!("expected a lorebook");
    };
    let (a, b) = (&lorebook.entries[0], &lorebook.entries[1]);
    assert_eq!(a.scan_depth, Some(5));
    assert_eq!(a.case_sensitive, Some(true));
    assert_eq!(a.match_whole_words, Some(false));
    assert!(a.exclude_recursion && a.prevent_recursion);
    assert_eq!(a.delay_until_recursion, Some(3));
    assert_eq!((a.sticky, a.cooldown, a.delay), (Some(2), Some(4), Some(6)));
    assert_eq!(a.group.as_deref(), Some("weather, mood"));
    assert_eq!(a.groups().collect::<Vec<_>>(), ["weather", "mood"]);
    assert!(a.group_override);
    assert_eq!(a.group_weight, Some(30));
    assert_eq!(a.use_group_scoring, Some(true));
    // Unset values read as "follow the book"; `true` is recursion level 1.
    assert_eq!(
        (b.scan_depth, b.case_sensitive, b.match_whole_words),
        (None, None, None)
    );
    assert!(!b.exclude_recursion && !b.prevent_recursion && !b.group_override);
    assert_eq!(b.delay_until_recursion, Some(1));
    assert_eq!((b.sticky, b.cooldown, b.delay), (None, None, None));
    assert_eq!((b.group.as_deref(), b.group_weight), (None, None));
    assert!(r.report.items.is_empty(), "{:?}", r.report.items);
}

// src/endpoints/characters.js, convertWorldInfoToCharacterBook(): the same settings under a
// card entry's `extensions`, snake_case.
#[test]
fn card_book_imports_sillytavern_entry_settings_from_extensions() {
    let mut card = card_v2("Booked");
    card["data"]["character_book"] = json!({ "entries": [{
        "id": 7, "keys": ["storm"], "secondary_keys": [], "content": "Storm.", "constant": false,
        "selective": true, "insertion_order": 100, "enabled": true, "position": "before_char",
        "use_regex": true,
        "extensions": { "position": 0, "exclude_recursion": true, "display_index": 0,
            "probability": 100, "useProbability": true, "depth": 4, "selectiveLogic": 0,
            "group": "sky", "group_override": true, "group_weight": 5,
            "prevent_recursion": true, "delay_until_recursion": 2, "scan_depth": 9,
            "match_whole_words": true, "use_group_scoring": false, "case_sensitive": false,
            "automation_id": "", "role": 0, "vectorized": false,
            "sticky": 3, "cooldown": 1, "delay": 2 }
    }]});
    let r = import("booked.json", &card);
    let Imported::Character(c) = &r.value else {
        panic!("expected a character");
    };
    let e = &c.lorebook.as_ref().expect("a book").entries[0];
    assert!(e.exclude_recursion && e.prevent_recursion && e.group_override);
    assert_eq!(e.group.as_deref(), Some("sky"));
    assert_eq!(e.group_weight, Some(5));
    assert_eq!(e.delay_until_recursion, Some(2));
    assert_eq!(e.scan_depth, Some(9));
    assert_eq!(e.match_whole_words, Some(true));
    assert_eq!(e.case_sensitive, Some(false));
    assert_eq!(e.use_group_scoring, Some(false));
    assert_eq!((e.sticky, e.cooldown, e.delay), (Some(3), Some(1), Some(2)));
    let items: Vec<&str> = r.report.items.iter().map(|i| i.item.as_str()).collect();
    assert!(!items.iter().any(|i| i.contains("entries")), "{items:?}");
}

#[test]
fn world_info_entries_come_in_uid_order() {
    let entry = |uid: u32| json!({ "uid": uid, "key": ["k"], "content": "c", "position": 0 });
    let wi = json!({ "entries": { "10": entry(10), "2": entry(2), "1": entry(1) } });
    let r = import("order.json", &wi);
    let Imported::Lorebook { lorebook } = &r.value else {
        panic!("expected a lorebook");
    };
    let ids: Vec<&str> = lorebook.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, vec!["1", "2", "10"]);
}

// A world info file written in the card book's shape keeps its `position` as "before_char" (a real
// community lorebook); SillyTavern places an entry only at one of its numbered positions, so it
// never sends such an entry (RULES 7.2).
#[test]
fn world_info_entries_at_a_position_sillytavern_does_not_place_come_in_switched_off() {
    let entry = |uid: u32, position: serde_json::Value| json!({ "uid": uid, "key": ["k"], "content": "c", "position": position });
    let wi = json!({ "entries": [
        entry(0, json!("before_char")),
        entry(1, json!(9)),
        entry(2, json!(1)),
        { "uid": 3, "key": ["k"], "content": "c" },
    ] });
    let r = import("book.json", &wi);
    let Imported::Lorebook { lorebook } = &r.value else {
        panic!("expected a lorebook");
    };
    let enabled: Vec<bool> = lorebook.entries.iter().map(|e| e.enabled).collect();
    assert_eq!(enabled, [false, false, true, true]);
    let said: Vec<String> = r.report.items.iter().map(|i| i.to_string()).collect();
    assert_eq!(
        said.iter()
            .filter(|s| s.contains("never sends the entry"))
            .count(),
        2,
        "{said:?}"
    );
    assert!(
        said.iter().any(|s| s.contains("\"before_char\"")),
        "{said:?}"
    );
}

#[test]
fn regex_script_maps_to_a_rule() {
    let script = json!({
        "id": "b1", "scriptName": "Strip notes", "findRegex": "/\\[note:(.*?)\\]/gis",
        "replaceString": "($1) $&", "trimStrings": [], "placement": [2],
        "disabled": false, "markdownOnly": false, "promptOnly": true, "runOnEdit": true,
        "substituteRegex": 0, "minDepth": null, "maxDepth": 3
    });
    let r = import("strip.json", &script);
    let Imported::RegexRules { rules } = &r.value else {
        panic!("expected rules");
    };
    let rule = &rules[0];
    assert_eq!(rule.id, "b1");
    assert_eq!(rule.name.as_deref(), Some("Strip notes"));
    assert_eq!(rule.pattern, "\\[note:(.*?)\\]");
    assert_eq!(rule.flags, "is");
    assert_eq!(rule.replacement, "($1) {{match}}");
    assert_eq!(rule.scope, RegexScope::History);
    assert_eq!(rule.roles, Some(vec![Role::Assistant]));
    assert_eq!((rule.min_depth, rule.max_depth), (None, Some(3)));
    assert!(rule.enabled);
    assert!(r.report.is_empty(), "{:?}", r.report);
}

#[test]
fn regex_scripts_list_reports_what_does_not_fit() {
    let scripts = json!([
        { "scriptName": "both", "findRegex": "a", "replaceString": "b", "placement": [1, 2] },
        { "scriptName": "display", "findRegex": "a", "placement": [2], "markdownOnly": true },
        { "scriptName": "wi", "findRegex": "a", "placement": [5], "trimStrings": ["x"] },
        { "scriptName": "lookahead", "findRegex": "/a(?=b)/", "placement": [1] }
    ]);
    let r = import("list.json", &scripts);
    let Imported::RegexRules { rules } = &r.value else {
        panic!("expected rules");
    };
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[0].id, "regex-1");
    assert_eq!(rules[0].roles, None);
    assert!(rules[0].enabled);
    assert!(!rules[1].enabled);
    assert!(!rules[2].enabled);
    assert!(r.report.mentions("markdownOnly"));
    assert!(r.report.mentions("placement 5"));
    assert!(r.report.mentions("trimStrings"));
    assert!(r
        .report
        .items
        .iter()
        .any(|i| i.item == "script lookahead" && i.message.contains("skipped")));
}

#[test]
fn chat_jsonl_becomes_a_session() {
    let lines = [
        json!({ "user_name": "Ana", "character_name": "Keeper", "create_date": "2024-09-28@10h00m00s",
                "chat_metadata": {} }),
        json!({ "name": "Keeper", "is_user": false, "is_system": false, "send_date": "September 28, 2024 10:00am",
                "mes": "You made it.", "swipes": ["You made it.", "Welcome."] }),
        json!({ "name": "Ana", "is_user": true, "is_system": false, "send_date": 1727517600000u64,
                "mes": "Barely." }),
        json!({ "name": "Keeper", "is_user": false, "mes": "Sit.", "swipe_id": 2,
                "swipes": ["Sit down.", "Sit.", "Sit."] }),
        json!({ "name": "Ana", "is_user": false, "is_system": true, "mes": "hidden note" }),
        // Hidden with /hide: is_user stays, is_system is set (script.js, hideMessages).
        json!({ "name": "Ana", "is_user": true, "is_system": true, "mes": "hidden by the user" }),
        // A narrator's message is not is_system, and goes as a system message.
        json!({ "name": "Narrator", "is_user": false, "is_system": false, "mes": "Thunder.",
                "extra": { "type": "narrator" } }),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let r = import_bytes("Keeper - 2024-09-28.jsonl", text.join("\n").as_bytes()).expect("imports");
    let Imported::Session { session } = &r.value else {
        panic!("expected a session");
    };
    assert_eq!(session.id, "keeper-2024-09-28");
    assert_eq!(session.title.as_deref(), Some("Keeper - 2024-09-28"));
    assert_eq!(session.user_profile.as_ref().unwrap().name, "Ana");
    let m = &session.messages;
    assert_eq!(m.len(), 4);
    assert_eq!(
        (m[0].role, &*m[0].content),
        (Role::Assistant, "You made it.")
    );
    assert_eq!(m[0].name.as_deref(), Some("Keeper"));
    assert_eq!(
        m[0].created_at.as_deref(),
        Some("September 28, 2024 10:00am")
    );
    assert_eq!((m[1].role, &*m[1].content), (Role::User, "Barely."));
    assert_eq!(m[1].created_at.as_deref(), Some("1727517600000"));
    // The other swipes are kept, in order, without the one shown (`swipe_id`'s).
    let swipes =
        |i: usize| -> Vec<&str> { m[i].swipes.iter().map(|s| s.content.as_str()).collect() };
    assert_eq!(swipes(0), ["Welcome."]);
    assert_eq!(&*m[2].content, "Sit.");
    assert_eq!(swipes(2), ["Sit down.", "Sit."]);
    // The shown one was the last of three (swipe_id 2); the first was the first of two.
    assert_eq!((m[0].swipe_at, m[2].swipe_at), (Some(0), None));
    assert!(swipes(1).is_empty());
    assert_eq!((m[3].role, &*m[3].content), (Role::System, "Thunder."));
    assert!(!r.report.mentions("swipes"), "swipes are mapped now");
    assert!(r.report.mentions("is_system"));
}

// openai.js, setOpenAIMessages(): SillyTavern sends no carriage return of a chat message.
#[test]
fn chat_messages_lose_their_carriage_returns() {
    let lines = [
        json!({ "user_name": "Ana", "character_name": "Keeper", "chat_metadata": {} }),
        json!({ "name": "Keeper", "is_user": false, "mes": "One.\r\nTwo.\r" }),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let r = import_bytes("Keeper.jsonl", text.join("\n").as_bytes()).expect("imports");
    let Imported::Session { session } = &r.value else {
        panic!("expected a session");
    };
    assert_eq!(&*session.messages[0].content, "One.\nTwo.");
}

fn chat_with_metadata(meta: serde_json::Value) -> Reported<Imported> {
    let lines = [
        json!({ "user_name": "Ana", "character_name": "Keeper", "chat_metadata": meta }),
        json!({ "name": "Ana", "is_user": true, "mes": "Hi." }),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    import_bytes("Keeper.jsonl", text.join("\n").as_bytes()).expect("imports")
}

fn session_of(r: &Reported<Imported>) -> &promptloom_engine::model::Session {
    match &r.value {
        Imported::Session { session } => session,
        _ => panic!("expected a session"),
    }
}

// variables.js, getLocalVariable(): a chat's local variables live in `chat_metadata.variables`;
// strings and numbers come in as text, objects as their JSON text (reported), nulls are left out.
#[test]
fn chat_local_variables_become_the_session_variables() {
    let r = chat_with_metadata(json!({
        "variables": { "mood": "calm", "hp": 12, "flag": true, "inv": ["a", "b"], "gone": null }
    }));
    let vars = session_of(&r).variables.clone().expect("variables");
    assert_eq!(vars["mood"], "calm");
    assert_eq!(vars["hp"], "12");
    assert_eq!(vars["flag"], "true");
    assert_eq!(vars["inv"], r#"["a","b"]"#);
    assert!(!vars.contains_key("gone"));
    assert!(r.report.mentions("chat_metadata.variables.inv"));
    assert!(r.report.mentions("chat_metadata.variables.gone"));
    assert!(!r.report.mentions("chat_metadata: variables"));
    // None without them.
    assert!(session_of(&chat_with_metadata(json!({})))
        .variables
        .is_none());
}

// authors-note.js, metadata_keys and loadSettings(): the note's text, interval, position
// (0 in the prompt, 1 in the chat, 2 before the prompt), depth and role (0 system, 1 user,
// 2 assistant); an unknown value takes SillyTavern's default and is reported.
#[test]
fn chat_authors_note_metadata_becomes_the_session_note() {
    use promptloom_engine::model::NotePosition;
    let r = chat_with_metadata(json!({
        "note_prompt": "Keep it short.", "note_interval": 3, "note_position": 2,
        "note_depth": 6, "note_role": 1
    }));
    let note = session_of(&r).authors_note.clone().expect("a note");
    assert_eq!(note.content, "Keep it short.");
    assert_eq!(note.interval, 3);
    assert_eq!(note.position, NotePosition::BeforePrompt);
    assert_eq!(note.depth, 6);
    assert_eq!(note.role, Role::User);
    assert!(!r.report.mentions("note_"), "all mapped");

    let r = chat_with_metadata(
        json!({ "note_prompt": "x", "note_position": 0, "note_role": 7,
                                       "note_interval": -2 }),
    );
    let note = session_of(&r).authors_note.clone().expect("a note");
    assert_eq!(note.position, NotePosition::InPrompt);
    assert_eq!(note.role, Role::System);
    assert_eq!(note.interval, 0, "below 0 is never, as 0");
    assert_eq!((note.depth, note.interval), (4, 0));
    assert!(r.report.mentions("chat_metadata.note_role"));
    // Absent keys are SillyTavern's defaults, without a report.
    assert!(!r.report.mentions("chat_metadata.note_depth"));
    assert!(session_of(&chat_with_metadata(json!({ "integrity": "x" })))
        .authors_note
        .is_none());
}

#[test]
fn native_preset_and_session_go_through_the_engine() {
    let preset = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "presetMessages": [ { "role": "system", "content": "Hi" } ]
    });
    let r = import("p.json", &preset);
    assert_eq!(preset_of(&r).context_recipes.len(), 1);
    let session = json!({ "formatVersion": 1, "id": "s", "messages": [ { "role": "user", "content": "x" } ] });
    let r = import("s.json", &session);
    assert!(matches!(r.value, Imported::Session { .. }));
    let newer = json!({ "formatVersion": 9, "id": "p", "name": "P" });
    let err = import_bytes("new.json", newer.to_string().as_bytes()).unwrap_err();
    assert_eq!(err.code(), "newer_format");
    assert!(err.to_string().starts_with("new.json: "));
}

#[test]
fn imported_results_serialise_with_their_kind() {
    let r = import("keeper.json", &card_v2("Keeper"));
    let value = serde_json::to_value(&r).unwrap();
    assert_eq!(value["value"]["kind"], "character");
    assert_eq!(value["value"]["character"]["name"], "Keeper");
    assert!(value["report"]["items"].as_array().is_some());
}

#[test]
fn card_png_in_a_compressed_chunk_is_read_and_other_compressed_chunks_are_not() {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, 1, 1);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .add_ztxt_chunk("chara".into(), b64(&card_v2("Zed").to_string()))
            .unwrap();
        // Not valid base64 or JSON: it would fail the import if it were read as a card.
        encoder
            .add_itxt_chunk("Comment".into(), "{ not a card".repeat(1_000))
            .unwrap();
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0x80]).unwrap();
        writer.finish().unwrap();
    }
    let r = import_bytes("zed.png", &out).expect("imports");
    let Imported::Character(card) = &r.value else {
        panic!("a character: {:?}", r.value.kind());
    };
    assert_eq!(card.character.name, "Zed");
}

// openai.js, formatWorldInfo(): a preset's `wi_format` wraps the world info blocks; it becomes
// the lorebook processor's `wiFormat`, and goes back to `wi_format` on export.
#[test]
fn preset_wi_format_becomes_the_lorebook_setting_and_goes_back() {
    let mut p = st_preset();
    p["wi_format"] = json!("[Details of the world: {0}]");
    let r = import("Default.json", &p);
    let preset = preset_of(&r);
    let lorebook = preset
        .processors
        .iter()
        .flatten()
        .find(|c| c.id == "lorebook")
        .expect("a lorebook config");
    assert_eq!(
        lorebook.settings.get("wiFormat"),
        Some(&json!("[Details of the world: {0}]"))
    );
    assert!(!r.report.mentions("wi_format"));
    let exported = promptloom_import::export_sillytavern_preset(preset);
    assert_eq!(
        exported.value["wi_format"],
        json!("[Details of the world: {0}]")
    );
    assert!(!exported.report.mentions("processors"));
    // The default `{0}` sets nothing.
    let mut p = st_preset();
    p["wi_format"] = json!("{0}");
    assert!(preset_of(&import("Default.json", &p)).processors.is_none());
}

// world-info.js, setWorldInfoSettings() and getWorldInfoSettings(): SillyTavern's global world
// info settings, as `settings.json` keeps them under `world_info_settings`.
#[test]
fn world_info_settings_become_the_books_settings_and_include_names() {
    use promptloom_import::{looks_like_world_info_settings, world_info_settings_from_value};
    let settings = json!({
        "username": "Ana",
        "world_info_settings": {
            "world_info": { "globalSelect": ["Eldoria"] },
            "world_info_depth": 4, "world_info_min_activations": 2,
            "world_info_min_activations_depth_max": 10, "world_info_budget": 40,
            "world_info_include_names": false, "world_info_recursive": false,
            "world_info_overflow_alert": false, "world_info_case_sensitive": true,
            "world_info_match_whole_words": false, "world_info_character_strategy": 1,
            "world_info_budget_cap": 900, "world_info_use_group_scoring": true,
            "world_info_max_recursion_steps": 3
        }
    });
    let root = settings.as_object().expect("object");
    assert!(looks_like_world_info_settings(root));
    let r = world_info_settings_from_value(root).expect("reads");
    let book = &r.value.lorebook;
    assert_eq!(book.scan_depth, 4);
    assert_eq!(book.min_activations, 2);
    assert_eq!(book.min_activations_depth_max, 10);
    assert_eq!(book.token_budget, 40);
    assert_eq!(book.budget_cap, 900);
    assert_eq!(book.max_recursion_steps, 3);
    assert!(!book.recursive && book.case_sensitive && !book.match_whole_words);
    assert!(book.use_group_scoring);
    assert_eq!(r.value.include_names, Some(false));
    let items: Vec<&str> = r.report.items.iter().map(|i| i.item.as_str()).collect();
    assert_eq!(
        items,
        [
            "world_info_settings.world_info",
            "world_info_settings.world_info_character_strategy"
        ]
    );
    // Onto a preset: the book keeps its entries, the processor gets includeNames.
    let mut preset = preset_of(&import("Default.json", &st_preset())).clone();
    preset.lorebook = Some(promptloom_engine::model::Lorebook {
        entries: serde_json::from_value(json!([{ "id": "a", "keys": ["x"], "content": "A" }]))
            .expect("entries"),
        ..Default::default()
    });
    r.value.apply_to(&mut preset);
    let applied = preset.lorebook.as_ref().expect("a book");
    assert_eq!(applied.entries.len(), 1);
    assert_eq!(applied.scan_depth, 4);
    let config = preset
        .processors
        .iter()
        .flatten()
        .find(|c| c.id == "lorebook")
        .expect("lorebook config");
    assert_eq!(config.settings.get("includeNames"), Some(&json!(false)));
}

// script.js, loadSettings(): older settings files keep the keys at the top level; a share over
// 100 % reads as 25; a bad number is reported and left out.
#[test]
fn world_info_settings_at_the_top_level_and_bad_values() {
    use promptloom_import::world_info_settings_from_value;
    let settings = json!({ "world_info_depth": "x", "world_info_budget": 150,
                           "world_info_include_names": true });
    let r = world_info_settings_from_value(settings.as_object().expect("object")).expect("reads");
    assert_eq!(r.value.lorebook.scan_depth, 2);
    assert_eq!(r.value.lorebook.token_budget, 25);
    assert_eq!(r.value.include_names, Some(true));
    assert!(r.report.mentions("world_info_depth"));
    let bad = json!({ "world_info_settings": 3 });
    let e = world_info_settings_from_value(bad.as_object().expect("object")).unwrap_err();
    assert!(e.to_string().contains("world_info_settings"));
}

// openai.js, the settings of the other generations (RULES 5.14): the impersonation prompt, the
// prefills and the continuation's settings become the injection assembler's, and go back out.
#[test]
fn preset_generation_type_prompts_become_assembler_settings_and_are_exported_back() {
    let mut file = st_preset_with_formats();
    file["impersonation_prompt"] = json!("[Be {{user}}]");
    file["assistant_prefill"] = json!("Sure,");
    file["continue_prefill"] = json!(true);
    file["continue_postfix"] = json!("\n\n");
    let r = import("p.json", &file);
    let preset = preset_of(&r);
    let settings = &preset.processors.as_ref().expect("settings")[0].settings;
    assert_eq!(settings["impersonationPrompt"], "[Be {{user}}]");
    assert_eq!(settings["assistantPrefill"], "Sure,");
    // SillyTavern prefills an impersonation with the reply's prefill when it has no other.
    assert_eq!(settings["assistantImpersonation"], "Sure,");
    assert_eq!(settings["continuePrefill"], true);
    assert_eq!(settings["continuePostfix"], "doubleNewline");
    for key in [
        "impersonation_prompt",
        "assistant_prefill",
        "continue_prefill",
        "continue_postfix",
    ] {
        assert!(!r.report.mentions(key), "{key} reported: {:?}", r.report);
    }
    let exported = promptloom_import::export_sillytavern_preset(preset);
    for key in [
        "impersonation_prompt",
        "assistant_prefill",
        "continue_prefill",
        "continue_postfix",
    ] {
        assert_eq!(exported.value[key], file[key], "{key}");
    }
    assert_eq!(exported.value["assistant_impersonation"], "Sure,");

    // A join SillyTavern does not have, and a switch that is not one, are reported.
    file["continue_postfix"] = json!("--");
    file["continue_prefill"] = json!("yes");
    let r = import("p.json", &file);
    assert!(r.report.mentions("continue_postfix") && r.report.mentions("continue_prefill"));
}
