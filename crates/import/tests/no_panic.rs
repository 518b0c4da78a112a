//! Property tests: no parser panics, whatever the bytes (RULES 7.3: bad input is an error, never a panic).

mod common;

use common::{b64, card_v2, png_with_text, zip_with};
use promptloom_import as import;
use proptest::prelude::*;
use serde_json::{json, Value};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z0-9_/ .{}()*+?]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("identifier".to_string()),
                    Just("name".to_string()),
                    Just("role".to_string()),
                    Just("content".to_string()),
                    Just("marker".to_string()),
                    Just("injection_position".to_string()),
                    Just("injection_depth".to_string()),
                    Just("injection_order".to_string()),
                    Just("character_id".to_string()),
                    Just("order".to_string()),
                    Just("enabled".to_string()),
                    Just("keys".to_string()),
                    Just("key".to_string()),
                    Just("position".to_string()),
                    Just("extensions".to_string()),
                    Just("findRegex".to_string()),
                    Just("placement".to_string()),
                    Just("mes".to_string()),
                    Just("is_user".to_string()),
                    Just("input_sequence".to_string()),
                    Just("output_sequence".to_string()),
                    Just("wrap".to_string()),
                    Just("names_behavior".to_string()),
                    Just("story_string".to_string()),
                    Just("chat_start".to_string()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A document of one of the shapes the sniffer knows, with arbitrary content under its keys.
fn arb_document() -> impl Strategy<Value = Value> {
    (arb_json(), arb_json(), 0..11usize).prop_map(|(a, b, shape)| match shape {
        0 => json!({ "prompts": a, "prompt_order": b }),
        1 => json!({ "spec": "chara_card_v2", "data": { "name": "x", "character_book": a, "extensions": b } }),
        2 => json!({ "entries": a }),
        3 => json!({ "findRegex": a, "placement": b }),
        4 => json!([{ "findRegex": "/x/g", "minDepth": a }, { "findRegex": b }]),
        5 => json!({ "formatVersion": 1, "id": "p", "name": "P", "messageTemplates": a, "contextRecipes": b }),
        6 => json!({ "input_sequence": a, "output_sequence": "x", "wrap": b, "name": "T" }),
        7 => json!({ "story_string": a, "chat_start": b }),
        8 => json!({ "instruct": a, "context": b }),
        9 => json!({ "instruct": { "input_sequence": "a", "output_sequence": "b" }, "context": { "story_string": a }, "sysprompt": b }),
        _ => json!({ "user_name": a, "chat_metadata": b }),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn import_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_bytes("fuzz", &bytes);
    }

    #[test]
    fn sillytavern_preset_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_sillytavern_preset("fuzz.json", &bytes);
    }

    #[test]
    fn card_json_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_card_json("fuzz.json", &bytes);
    }

    #[test]
    fn card_png_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_card_png("fuzz.png", &bytes);
        let mut signed = b"\x89PNG\r\n\x1a\n".to_vec();
        signed.extend_from_slice(&bytes);
        let _ = import::import_card_png("fuzz.png", &signed);
    }

    #[test]
    fn card_charx_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_card_charx("fuzz.charx", &bytes);
        let mut signed = b"PK\x03\x04".to_vec();
        signed.extend_from_slice(&bytes);
        let _ = import::import_card_charx("fuzz.charx", &signed);
    }

    #[test]
    fn world_info_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_world_info("fuzz.json", &bytes);
    }

    #[test]
    fn regex_scripts_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_regex_scripts("fuzz.json", &bytes);
    }

    #[test]
    fn instruct_template_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::instruct_template_bytes("fuzz.json", &bytes);
    }

    #[test]
    fn chat_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = import::import_chat("fuzz.jsonl", &bytes);
    }

    #[test]
    fn known_shapes_with_arbitrary_content_never_panic(doc in arb_document()) {
        let text = doc.to_string();
        let _ = import::import_bytes("fuzz.json", text.as_bytes());
        let _ = import::import_sillytavern_preset("fuzz.json", text.as_bytes());
        let _ = import::import_card_json("fuzz.json", text.as_bytes());
        let _ = import::import_world_info("fuzz.json", text.as_bytes());
        let _ = import::import_regex_scripts("fuzz.json", text.as_bytes());
        let _ = import::import_chat("fuzz.jsonl", text.as_bytes());
        let _ = import::instruct_template_bytes("fuzz.json", text.as_bytes());
    }

    #[test]
    fn damaged_png_cards_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut png = png_with_text(&[("chara", &b64(&card_v2("F").to_string()))], true);
        for (at, byte) in flips {
            let i = at.index(png.len());
            png[i] ^= byte;
        }
        let _ = import::import_card_png("fuzz.png", &png);
    }

    #[test]
    fn damaged_charx_never_panics(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let card = card_v2("F").to_string();
        let mut zip = zip_with(&[("card.json", card.as_bytes()), ("a.png", b"xyz")]);
        for (at, byte) in flips {
            let i = at.index(zip.len());
            zip[i] ^= byte;
        }
        let _ = import::import_card_charx("fuzz.charx", &zip);
    }
}
