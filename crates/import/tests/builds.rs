//! What the importers make builds with the engine: a SillyTavern preset, a card laid over it and a
//! chat give the context a SillyTavern user would expect.

mod common;

use chrono::DateTime;
use common::card_v2;
use promptloom_engine::model::AgentPreset;
use promptloom_engine::tokens::TokenCache;
use promptloom_engine::{build, BuildOptions, BuildRequest};
use promptloom_import::{import_bytes, Imported};
use serde_json::json;

#[test]
fn imported_preset_card_and_chat_build() {
    let st = json!({
        "prompts": [
            { "identifier": "main", "name": "Main", "role": "system", "content": "You are {{char}}." },
            { "identifier": "worldInfoBefore", "marker": true },
            { "identifier": "charDescription", "marker": true },
            { "identifier": "chatHistory", "marker": true },
            { "identifier": "note", "role": "system", "content": "Stay calm.",
              "injection_position": 1, "injection_depth": 1, "injection_order": 100 }
        ],
        "prompt_order": [ { "character_id": 100001, "order": [
            { "identifier": "main", "enabled": true },
            { "identifier": "worldInfoBefore", "enabled": true },
            { "identifier": "charDescription", "enabled": true },
            { "identifier": "chatHistory", "enabled": true },
            { "identifier": "note", "enabled": true }
        ] } ]
    });
    let mut preset: AgentPreset = match import_bytes("st.json", st.to_string().as_bytes())
        .unwrap()
        .value
    {
        Imported::Preset { preset } => *preset,
        other => panic!("expected a preset, got {}", other.kind()),
    };
    let Imported::Character(card) =
        import_bytes("c.json", card_v2("Keeper").to_string().as_bytes())
            .unwrap()
            .value
    else {
        panic!("expected a character");
    };
    preset.character = Some(card.character);
    let chat = [
        json!({ "user_name": "Ana", "character_name": "Keeper" }),
        json!({ "name": "Keeper", "is_user": false, "mes": "Hello." }),
        json!({ "name": "Ana", "is_user": true, "mes": "Hi." }),
    ]
    .iter()
    .map(|l| l.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let Imported::Session { session } = import_bytes("chat.jsonl", chat.as_bytes()).unwrap().value
    else {
        panic!("expected a session");
    };
    let options = BuildOptions::at(DateTime::parse_from_rfc3339("2024-09-28T10:00:00Z").unwrap());
    let tokens = TokenCache::new();
    let result = build(&BuildRequest {
        preset: &preset,
        session: &session,
        model: "gpt-4o",
        options: &options,
        tokens: &tokens,
        profiles: &[],
    })
    .expect("builds");
    let contents: Vec<&str> = result.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        vec![
            "You are Keeper.",
            "A lighthouse keeper.",
            "Hello.",
            "Stay calm.",
            "Hi."
        ]
    );
}
