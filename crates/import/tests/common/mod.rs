//! Small files built in the tests: a 1×1 PNG with text chunks, a CHARX zip, card JSON.

#![allow(dead_code)]

use std::io::{Cursor, Write};

use base64::Engine as _;
use serde_json::{json, Value};

pub fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A 1×1 grey PNG carrying `chunks` as tEXt chunks, before the image data or after it.
pub fn png_with_text(chunks: &[(&str, &str)], after_image: bool) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, 1, 1);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        if !after_image {
            for (k, v) in chunks {
                encoder
                    .add_text_chunk(k.to_string(), v.to_string())
                    .unwrap();
            }
        }
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0x80]).unwrap();
        if after_image {
            for (k, v) in chunks {
                writer
                    .write_text_chunk(&png::text_metadata::TEXtChunk::new(*k, *v))
                    .unwrap();
            }
        }
        writer.finish().unwrap();
    }
    out
}

/// A zip holding `files` (name, content), deflated.
pub fn zip_with(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in files {
        writer.start_file(*name, options).unwrap();
        writer.write_all(content).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A V2 card with a book whose entries cover every SillyTavern position.
pub fn card_v2(name: &str) -> Value {
    json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": name,
            "description": "A lighthouse keeper.",
            "personality": "patient",
            "scenario": "A storm night.",
            "first_mes": "You made it in before the rain.",
            "mes_example": "<START>\n{{char}}: Tea?",
            "system_prompt": "Stay in character.",
            "post_history_instructions": "Keep replies short.",
            "creator_notes": "Test card.",
            "tags": ["sea", "calm"],
            "alternate_greetings": ["Hello again."],
            "creator": "tests",
            "character_version": "1",
            "extensions": { "talkativeness": "0.5", "depth_prompt": { "prompt": "note", "depth": 4, "role": "system" } },
            "character_book": {
                "name": "Coast",
                "scan_depth": 3,
                "token_budget": 512,
                "recursive_scanning": false,
                "extensions": {},
                "entries": [
                    entry(0, 0, 100, json!({})),
                    entry(1, 1, 50, json!({})),
                    entry(2, 2, 100, json!({})),
                    entry(3, 3, 100, json!({})),
                    entry(4, 4, 10, json!({ "depth": 2, "role": 1 })),
                    entry(5, 5, 100, json!({})),
                    entry(6, 6, 100, json!({ "selectiveLogic": 3, "probability": 40, "useProbability": true, "sticky": 2 })),
                ]
            }
        }
    })
}

fn entry(id: i64, position: i64, order: i64, mut ext: Value) -> Value {
    ext["position"] = json!(position);
    json!({
        "id": id,
        "keys": [format!("key{id}")],
        "secondary_keys": ["second"],
        "comment": format!("entry {id}"),
        "content": format!("content {id}"),
        "constant": id == 0,
        "selective": true,
        "insertion_order": order,
        "enabled": id != 5,
        "position": "before_char",
        "extensions": ext,
    })
}

/// One build of `preset` over `session` for gpt-4o, with `input` as the pending message, at a
/// fixed time, through the engine's own build.
pub fn build_for_gpt4o<'s>(
    preset: &promptloom_engine::model::AgentPreset,
    session: &'s promptloom_engine::model::Session,
    input: Option<&str>,
) -> promptloom_engine::pipeline::BuildResult<'s> {
    let mut options = promptloom_engine::BuildOptions::at(
        chrono::DateTime::parse_from_rfc3339("2026-11-24T10:00:00+00:00").expect("time"),
    );
    options.input = input.map(str::to_string);
    let cache = promptloom_engine::cache::BuildCache::new();
    promptloom_engine::build(&promptloom_engine::BuildRequest {
        preset,
        session,
        kept_rewrites: None,
        model: "gpt-4o",
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    })
    .expect("builds")
}
