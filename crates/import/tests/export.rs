//! RULES 7.5, export: native JSON round trip exact; SillyTavern preset export that keeps every
//! field this model holds (ST -> ours -> ST).

mod common;

use std::path::PathBuf;

use common::card_v2;
use promptloom_engine::model::{
    parse_preset, parse_session, AgentPreset, InjectionStrategy, MessageTemplate, Role,
    TemplateType,
};
use promptloom_import::native::{export_preset, export_session};
use promptloom_import::{export_sillytavern_preset, import_bytes, Imported};
use serde_json::{json, Value};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/sillytavern"
);

fn st_preset() -> Value {
    json!({
        "temperature": 0.9,
        "top_p": 0.8,
        "top_k": 30,
        "openai_max_tokens": 600,
        "frequency_penalty": 0.1,
        "presence_penalty": -0.2,
        "seed": 5,
        "min_p": 0.05,
        "squash_system_messages": true,
        "names_behavior": 2,
        "prompts": [
            { "identifier": "main", "name": "Main Prompt", "system_prompt": true, "role": "system",
              "content": "Be {{char}}." },
            { "identifier": "worldInfoBefore", "name": "World Info (before)", "system_prompt": true, "marker": true },
            { "identifier": "chatHistory", "name": "Chat History", "system_prompt": true, "marker": true },
            { "identifier": "personaDescription", "name": "Persona Description", "system_prompt": true, "marker": true },
            { "identifier": "charDescription", "name": "Char Description", "system_prompt": true, "marker": true },
            { "identifier": "scenario", "name": "Scenario", "system_prompt": true, "marker": true },
            { "identifier": "note", "name": "Depth note", "role": "user", "content": "Remember.",
              "injection_position": 1, "injection_depth": 2, "injection_order": 150 },
            { "identifier": "late", "name": "Late", "role": "assistant", "content": "Ok.",
              "injection_position": 1, "injection_depth": 0, "injection_order": 100 },
            { "identifier": "relative", "name": "Relative", "role": "assistant", "content": "Fine.",
              "injection_position": 0, "injection_depth": 4, "injection_order": 100 },
            { "identifier": "spare", "name": "Spare", "role": "user", "content": "unused" },
            { "identifier": "summary", "name": "Summary", "marker": true }
        ],
        "prompt_order": [
            { "character_id": 100001, "order": [
                { "identifier": "main", "enabled": true },
                { "identifier": "worldInfoBefore", "enabled": true },
                { "identifier": "personaDescription", "enabled": false },
                { "identifier": "charDescription", "enabled": true },
                { "identifier": "scenario", "enabled": false },
                { "identifier": "chatHistory", "enabled": true },
                { "identifier": "note", "enabled": true },
                { "identifier": "late", "enabled": false },
                { "identifier": "relative", "enabled": true },
                { "identifier": "summary", "enabled": true }
            ]}
        ]
    })
}

const MARKERS: &[&str] = &[
    "chatHistory",
    "personaDescription",
    "worldInfoBefore",
    "worldInfoAfter",
    "dialogueExamples",
    "charDescription",
    "charPersonality",
    "scenario",
];

/// The samplers this model holds, by SillyTavern key, with its "off" values (top_k 0, a negative
/// seed) left out.
fn samplers(st: &Value) -> Vec<(String, f64)> {
    [
        "temperature",
        "top_p",
        "top_k",
        "openai_max_tokens",
        "frequency_penalty",
        "presence_penalty",
        "seed",
    ]
    .iter()
    .filter_map(|&key| Some((key.to_string(), st.get(key)?.as_f64()?)))
    .filter(|(key, v)| {
        let off = (key == "top_k" && *v == 0.0) || (key == "seed" && *v < 0.0);
        !off
    })
    .collect()
}

/// Prompts, the order (identifier, enabled) and the samplers.
type Modelled = (Vec<Value>, Vec<(String, bool)>, Vec<(String, f64)>);

/// The fields of a SillyTavern preset that this model holds, with SillyTavern's defaults filled in.
fn modelled(st: &Value) -> Modelled {
    let prompts = st["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["identifier"].as_str().unwrap();
            let name = p["name"].clone();
            if p["marker"].as_bool().unwrap_or(false) || MARKERS.contains(&id) {
                return json!({ "identifier": id, "name": name, "marker": true });
            }
            let position = p["injection_position"].as_i64().unwrap_or(0);
            let mut v = json!({
                "identifier": id,
                "name": name,
                "role": p["role"].as_str().unwrap_or("system"),
                "content": p["content"].as_str().unwrap_or(""),
                "injection_position": position,
            });
            if position == 1 {
                v["injection_depth"] = json!(p["injection_depth"].as_i64().unwrap_or(4));
                v["injection_order"] = json!(p["injection_order"].as_i64().unwrap_or(100));
            }
            v
        })
        .collect();
    let lists = st["prompt_order"].as_array().unwrap();
    let list = lists
        .iter()
        .find(|l| l["character_id"] == 100001)
        .unwrap_or_else(|| lists.last().unwrap());
    let order = list["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["identifier"].as_str().unwrap().to_string(),
                o["enabled"].as_bool().unwrap_or(true),
            )
        })
        .collect();
    (prompts, order, samplers(st))
}

fn import_preset(file: &str, bytes: &[u8]) -> AgentPreset {
    match import_bytes(file, bytes).expect("imports").value {
        Imported::Preset { preset } => *preset,
        other => panic!("expected a preset, got {}", other.kind()),
    }
}

#[test]
fn sillytavern_round_trip_keeps_every_modelled_field() {
    let original = st_preset();
    let preset = import_preset("rt.json", original.to_string().as_bytes());
    let exported = export_sillytavern_preset(&preset);
    assert_eq!(modelled(&exported.value), modelled(&original));
    // The unknown marker is reported on the way out as on the way in.
    assert!(exported.report.mentions("summary"));
    assert_eq!(exported.value["temperature"], 0.9);
    assert_eq!(exported.value["openai_max_tokens"], 600);
    assert!(
        exported.value.get("min_p").is_none(),
        "not held, not written"
    );
    // And what comes out imports again to the same preset.
    let again = import_preset("rt.json", exported.value.to_string().as_bytes());
    assert_eq!(again, preset);
}

#[test]
fn sillytavern_round_trip_of_the_default_preset() {
    let path = PathBuf::from(FIXTURES).join("Default.json");
    if !path.exists() {
        println!("fixtures not found, skipping");
        return;
    }
    let text = std::fs::read(&path).unwrap();
    let original: Value = serde_json::from_slice(&text).unwrap();
    let preset = import_preset("Default.json", &text);
    let exported = export_sillytavern_preset(&preset);
    assert_eq!(modelled(&exported.value), modelled(&original));
    assert!(exported.report.is_empty(), "{:?}", exported.report);
}

#[test]
fn sillytavern_export_reports_what_it_cannot_hold() {
    let mut preset = import_preset("p.json", st_preset().to_string().as_bytes());
    preset.message_templates.push(MessageTemplate {
        id: "anchored".into(),
        name: None,
        role: Role::System,
        kind: TemplateType::Message,
        content: Some("x".into()),
        unwrapped: false,
        default_injection_strategy: Some(InjectionStrategy {
            anchor_target: Some("chat_history".into()),
            ..InjectionStrategy::default()
        }),
    });
    let mut second = preset.context_recipes[0].clone();
    second.id = "claude".into();
    second.model_filter = vec!["claude-*".into()];
    preset.context_recipes.push(second);
    preset.context_recipes[0].steps[0].overrides = Some(Default::default());
    let generation = preset.generation.as_mut().expect("imported samplers");
    generation.stop = vec!["END".into()];
    generation
        .extra
        .insert("service_tier".into(), json!("flex"));
    let exported = export_sillytavern_preset(&preset);
    assert!(exported.report.mentions("generation.stop"));
    assert!(exported.report.mentions("generation.extra (service_tier)"));
    assert!(exported.report.mentions("anchored"));
    assert!(exported.report.mentions("recipe claude"));
    assert!(exported.report.mentions("overrides"));
    let anchored = exported.value["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["identifier"] == "anchored")
        .unwrap();
    assert_eq!(anchored["injection_position"], 0);
}

#[test]
fn sillytavern_export_names_slots_by_their_marker() {
    let preset = parse_preset(
        &json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "sys", "role": "system", "content": "S" },
                { "id": "hist", "role": "system", "type": "chat_history" },
                { "id": "me", "role": "user", "type": "user_profile" }
            ],
            "contextRecipes": [ { "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "sys", "enabled": true },
                { "messageId": "me", "enabled": true },
                { "messageId": "hist", "enabled": true }
            ] } ]
        })
        .to_string(),
    )
    .unwrap();
    let exported = export_sillytavern_preset(&preset).value;
    let order: Vec<&str> = exported["prompt_order"][0]["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["identifier"].as_str().unwrap())
        .collect();
    assert_eq!(order, vec!["sys", "personaDescription", "chatHistory"]);
}

#[test]
fn native_preset_round_trip_is_exact() {
    let mut preset = import_preset("p.json", st_preset().to_string().as_bytes());
    let Imported::Character(card) =
        import_bytes("c.json", card_v2("Keeper").to_string().as_bytes())
            .unwrap()
            .value
    else {
        panic!("expected a character");
    };
    preset.character = Some(card.character);
    preset.lorebook = card.lorebook;
    let text = export_preset(&preset);
    let back = parse_preset(&text).expect("reads back");
    assert_eq!(back, preset);
    assert_eq!(export_preset(&back), text);
    // And through the sniffer.
    assert_eq!(import_preset("p.json", text.as_bytes()), preset);
}

#[test]
fn native_session_round_trip_is_exact() {
    let lines = [
        json!({ "user_name": "Ana", "character_name": "Keeper" }),
        json!({ "name": "Keeper", "is_user": false, "mes": "Hello.", "send_date": "today" }),
        json!({ "name": "Ana", "is_user": true, "mes": "Hi." }),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let Imported::Session { session } = import_bytes("chat.jsonl", text.join("\n").as_bytes())
        .unwrap()
        .value
    else {
        panic!("expected a session");
    };
    let native = export_session(&session);
    let back = parse_session(&native).expect("reads back");
    assert_eq!(back, session);
    assert_eq!(export_session(&back), native);
}

fn import_card(file: &str, bytes: &[u8]) -> promptloom_import::CharacterCard {
    match import_bytes(file, bytes).expect("imports").value {
        Imported::Character(card) => card,
        other => panic!("expected a card, got {}", other.kind()),
    }
}

/// ST card -> ours -> ST card -> ours: the second import equals the first, so the export keeps
/// every field this model holds (positions, depths, roles, orders, logic, probability included).
#[test]
fn sillytavern_card_round_trip_keeps_every_modelled_field() {
    let original = serde_json::to_vec(&card_v2("Mara")).expect("json");
    let ours = import_card("mara.json", &original);
    let exported = promptloom_import::export_sillytavern_card(&ours);
    assert_eq!(exported.value["spec"], "chara_card_v2");
    let again = import_card(
        "mara-export.json",
        &serde_json::to_vec(&exported.value).expect("json"),
    );
    assert_eq!(again.character, ours.character);
    let (a, b) = (again.lorebook.expect("book"), ours.lorebook.expect("book"));
    assert_eq!(a.scan_depth, b.scan_depth);
    assert_eq!(a.recursive, b.recursive);
    assert_eq!(a.entries, b.entries);
}

#[test]
fn sillytavern_card_round_trip_of_the_seraphina_card() {
    let path = PathBuf::from(FIXTURES).join("default_Seraphina.png");
    if !path.exists() {
        println!("fixtures not found, skipping");
        return;
    }
    let ours = import_card(
        "default_Seraphina.png",
        &std::fs::read(&path).expect("reads"),
    );
    let exported = promptloom_import::export_sillytavern_card(&ours);
    let again = import_card(
        "seraphina.json",
        &serde_json::to_vec(&exported.value).expect("json"),
    );
    assert_eq!(again.character, ours.character);
    assert_eq!(
        again.lorebook.map(|b| b.entries),
        ours.lorebook.map(|b| b.entries)
    );
}

/// A card's book -> SillyTavern world info -> ours: every entry comes back as it was, but for
/// its id, which becomes the world info uid.
#[test]
fn sillytavern_world_info_round_trip_keeps_every_modelled_field() {
    let card = import_card(
        "mara.json",
        &serde_json::to_vec(&card_v2("Mara")).expect("json"),
    );
    let book = card.lorebook.expect("book");
    let exported = promptloom_import::export_sillytavern_world_info(&book);
    // The card's book scans as SillyTavern's defaults do, which a world info file leaves to
    // the settings: nothing to report.
    let reported: Vec<&str> = exported
        .report
        .items
        .iter()
        .map(|i| i.item.as_str())
        .collect();
    assert!(
        !reported.contains(&"lorebook.scanDepth") && !reported.contains(&"lorebook.recursive"),
        "{reported:?}"
    );
    let bytes = serde_json::to_vec(&exported.value).expect("json");
    let Imported::Lorebook { lorebook } =
        import_bytes("coast.json", &bytes).expect("imports").value
    else {
        panic!("expected world info");
    };
    assert_eq!(lorebook.entries.len(), book.entries.len());
    for (i, (back, original)) in lorebook.entries.iter().zip(&book.entries).enumerate() {
        assert_eq!(back.id, i.to_string());
        let mut original = original.clone();
        original.id = back.id.clone();
        assert_eq!(back, &original, "entry {i}");
    }
}

/// The SillyTavern per-entry settings survive ours -> card -> ours and ours -> world info -> ours.
#[test]
fn sillytavern_entry_settings_round_trip_through_card_and_world_info() {
    let card = import_card(
        "mara.json",
        &serde_json::to_vec(&card_v2("Mara")).expect("json"),
    );
    let mut book = card.lorebook.clone().expect("book");
    let full = serde_json::json!({
        "scanDepth": 6, "caseSensitive": true, "matchWholeWords": false,
        "excludeRecursion": true, "preventRecursion": true, "delayUntilRecursion": 2,
        "sticky": 3, "cooldown": 2, "delay": 4, "group": "a, b", "groupOverride": true,
        "groupWeight": 40, "useGroupScoring": true
    });
    for (i, entry) in book.entries.iter_mut().enumerate() {
        let mut v = serde_json::to_value(&*entry).expect("json");
        let extra = if i == 0 {
            full.clone()
        } else {
            serde_json::json!({ "delayUntilRecursion": 1, "useGroupScoring": false })
        };
        for (k, x) in extra.as_object().expect("object") {
            v[k] = x.clone();
        }
        *entry = serde_json::from_value(v).expect("entry");
    }
    assert_eq!(book.entries[0].delay_until_recursion, Some(2));
    // Through a world info file.
    let wi = promptloom_import::export_sillytavern_world_info(&book);
    let bytes = serde_json::to_vec(&wi.value).expect("json");
    let Imported::Lorebook { lorebook } = import_bytes("back.json", &bytes).expect("imports").value
    else {
        panic!("expected world info");
    };
    for (back, original) in lorebook.entries.iter().zip(&book.entries) {
        let mut original = original.clone();
        original.id = back.id.clone();
        assert_eq!(back, &original);
    }
    // Through a card.
    let mut with_book = card.clone();
    with_book.lorebook = Some(book.clone());
    let exported = promptloom_import::export_sillytavern_card(&with_book);
    let again = import_card(
        "again.json",
        &serde_json::to_vec(&exported.value).expect("json"),
    );
    assert_eq!(again.lorebook.map(|b| b.entries), Some(book.entries));
}

#[test]
fn export_in_a_format_the_preset_has_nothing_for_is_refused() {
    use promptloom_import::{export_preset_as, ExportError, ExportFormat};
    let preset = import_preset(
        "default.json",
        &serde_json::to_vec(&st_preset()).expect("json"),
    );
    assert!(preset.character.is_none() && preset.lorebook.is_none());
    assert!(matches!(
        export_preset_as(&preset, ExportFormat::SillyTavernCard),
        Err(ExportError::NoCharacter { .. })
    ));
    let e = export_preset_as(&preset, ExportFormat::SillyTavernWorldInfo).unwrap_err();
    assert!(e.to_string().contains(&preset.id) && e.to_string().contains("no lorebook"));
    let native = export_preset_as(&preset, ExportFormat::Native).expect("native");
    assert_eq!(parse_preset(&native.value).expect("parses"), preset);
    let st = export_preset_as(&preset, ExportFormat::SillyTavernPreset).expect("st");
    assert!(st.value.ends_with("}\n") && st.value.contains("prompt_order"));
}
