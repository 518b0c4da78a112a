//! The live preview with a community-sized SillyTavern preset (issue: the largest community
//! presets carry about 100,000 characters of prompts in 150-plus prompts): the preset, a card
//! with an embedded lorebook, a depth prompt and example dialogue, and a chat of 1,000 messages,
//! each imported from SillyTavern's own formats (written here, shaped like the real ones), then
//! built under SillyTavern compatibility as the preview builds them.
//!
//! - `warm_edit_large_preset/1000`: the cache filled by one earlier build; each iteration gives
//!   one prompt a new text and rebuilds (the preview while a user types in that prompt).
//!
//! Beside it in the same run, `warm_edit/1000` of the engine's `build` bench is the plain
//! preset's figure (docs/PERFORMANCE.md).

use std::hint::black_box;

use chrono::DateTime;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{AgentPreset, Session};
use promptloom_engine::{BuildOptions, BuildRequest, BuildResult, Pipeline};
use serde_json::{json, Value};

const MODEL: &str = "gpt-4o";
const MESSAGES: usize = 1_000;

/// Words for generated prose; the rest of the bench does not depend on which.
const WORDS: &[&str] = &[
    "lantern", "river", "quiet", "harbour", "stone", "wind", "promise", "letter", "market",
    "shadow", "bridge", "garden", "winter", "careful", "bright", "ledger", "salt", "orchard",
    "whisper", "tower", "north", "kettle", "thread", "mirror",
];

/// `n` words of prose, the same for the same `seed`.
fn prose(seed: usize, n: usize) -> String {
    let mut out = String::with_capacity(n * 8);
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if i > 0 {
            if i % 14 == 0 {
                out.push('.');
            }
            out.push(' ');
        }
        out.push_str(WORDS[x % WORDS.len()]);
    }
    out.push('.');
    out
}

/// A preset the size of the largest community ones: 160 prompts, 20 of them section headers,
/// about 100,000 characters in all; author comments at the top of each prompt, variables set
/// in some and read in others, half of the prompts off, a few sent inside the chat at a depth.
fn preset_json() -> Value {
    let mut prompts = vec![];
    let mut order = vec![];
    for (id, marker) in [
        ("worldInfoBefore", true),
        ("charDescription", true),
        ("charPersonality", true),
        ("scenario", true),
        ("personaDescription", true),
        ("worldInfoAfter", true),
        ("dialogueExamples", true),
        ("chatHistory", true),
    ] {
        prompts
            .push(json!({ "identifier": id, "name": id, "system_prompt": true, "marker": marker }));
    }
    let mut length = 0;
    for i in 0..160 {
        let id = format!("p{i:03}");
        let header = i % 8 == 0;
        let (name, content) = if header {
            (format!("━━━ Section {} ━━━", i / 8), String::new())
        } else {
            let body = prose(i, 100);
            let macros = match i % 5 {
                0 => format!("{{{{setvar::mode{i}::on}}}}"),
                1 => format!("{{{{getvar::mode{}}}}}", i - 1),
                2 => "{{char}} and {{user}}".to_string(),
                3 => "{{trim}}".to_string(),
                _ => String::new(),
            };
            (
                format!("🧩 Rule {i}"),
                format!(
                    "{{{{// @tooltip What rule {i} does }}}}\n{{{{// @category Core }}}}\n\n<rule_{i}>\n{body}\n{macros}\n</rule_{i}>"
                ),
            )
        };
        length += content.len();
        let mut prompt = json!({
            "identifier": id, "name": name, "role": "system", "content": content,
            "system_prompt": false, "marker": false,
        });
        if i % 23 == 5 {
            prompt["injection_position"] = json!(1);
            prompt["injection_depth"] = json!(i % 5);
        }
        prompts.push(prompt);
        order.push(json!({ "identifier": id, "enabled": header || i % 2 == 1 }));
        if i == 40 {
            for marker in [
                "worldInfoBefore",
                "charDescription",
                "charPersonality",
                "scenario",
                "personaDescription",
                "worldInfoAfter",
                "dialogueExamples",
            ] {
                order.push(json!({ "identifier": marker, "enabled": true }));
            }
        }
        if i == 150 {
            order.push(json!({ "identifier": "chatHistory", "enabled": true }));
        }
    }
    assert!(
        length > 95_000,
        "about 100,000 characters of prompts: {length}"
    );
    json!({
        "prompts": prompts,
        "prompt_order": [{ "character_id": 100001, "order": order }],
        "squash_system_messages": true,
        "names_behavior": 2,
        "wi_format": "{0}",
        "scenario_format": "{{scenario}}",
        "personality_format": "{{personality}}",
        "new_chat_prompt": "[Start a new Chat]",
        "new_example_chat_prompt": "[Example Chat]",
        "temperature": 1.0,
    })
}

/// A V2 card with an embedded book of 40 entries (keyword and constant ones), a depth prompt
/// and example dialogue.
fn card_json() -> Value {
    let entries: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                "id": i, "keys": [WORDS[i % WORDS.len()]], "content": prose(1000 + i, 40),
                "enabled": true, "insertion_order": 100 + i, "constant": i % 10 == 0,
                "position": if i % 2 == 0 { "before_char" } else { "after_char" },
                "extensions": { "position": i % 2, "depth": 4 }
            })
        })
        .collect();
    json!({
        "spec": "chara_card_v2", "spec_version": "2.0",
        "data": {
            "name": "Mira", "description": prose(7, 250), "personality": prose(8, 40),
            "scenario": prose(9, 60), "first_mes": "Welcome to the harbour.",
            "mes_example": format!("<START>\n{{{{user}}}}: {}\n{{{{char}}}}: {}", prose(10, 20), prose(11, 40)),
            "system_prompt": "", "post_history_instructions": "",
            "extensions": { "depth_prompt": { "prompt": "Mira keeps her promises.", "depth": 4, "role": "system" } },
            "character_book": { "name": "Harbour", "scan_depth": 2, "entries": entries }
        }
    })
}

/// A SillyTavern chat of `n` messages, JSON lines.
fn chat_jsonl(n: usize) -> String {
    let mut out = json!({ "user_name": "Traveler", "character_name": "Mira", "chat_metadata": {} })
        .to_string();
    for i in 0..n {
        let user = i % 2 == 0;
        let line = json!({
            "name": if user { "Traveler" } else { "Mira" }, "is_user": user,
            "mes": prose(20_000 + i, if user { 25 } else { 60 }),
            "send_date": "2026-03-01T18:30:00.000Z",
        });
        out.push('\n');
        out.push_str(&line.to_string());
    }
    out
}

fn inputs() -> (AgentPreset, Session) {
    let preset = promptloom_import::import_sillytavern_preset(
        "large.json",
        preset_json().to_string().as_bytes(),
    )
    .expect("the preset imports")
    .value;
    let card = promptloom_import::import_card_json("card.json", card_json().to_string().as_bytes())
        .expect("the card imports")
        .value;
    let preset = promptloom_import::overlay_character(preset, &card);
    let session = promptloom_import::import_chat("chat.jsonl", chat_jsonl(MESSAGES).as_bytes())
        .expect("the chat imports")
        .value;
    (preset, session)
}

fn run<'s>(
    pipeline: &Pipeline,
    preset: &AgentPreset,
    session: &'s Session,
    options: &BuildOptions,
    cache: &BuildCache,
) -> BuildResult<'s> {
    let request = BuildRequest {
        preset,
        session,
        kept_rewrites: None,
        model: MODEL,
        options,
        cache,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    };
    pipeline.run(&request).expect("the large preset builds")
}

fn large_preset(c: &mut Criterion) {
    let (mut preset, session) = inputs();
    let pipeline = Pipeline::builtin();
    let timestamp =
        DateTime::parse_from_rfc3339("2026-03-01T18:30:00+00:00").expect("a fixed timestamp");
    let options = BuildOptions {
        context_window: Some(100_000_000),
        ..BuildOptions::at(timestamp)
    };
    let cache = BuildCache::new();
    let first = run(&pipeline, &preset, &session, &options, &cache);
    // It measures what it says: the whole chat sent, squashed system prompts, the book's
    // constant entries, nothing over the budget.
    assert!(first.dropped.is_empty(), "{:?}", first.dropped.first());
    assert!(first.messages.len() > MESSAGES, "{}", first.messages.len());
    drop(first);
    let edited = preset
        .message_templates
        .iter()
        .position(|t| t.id == "p001")
        .expect("the edited prompt");
    let base = preset.message_templates[edited]
        .content
        .clone()
        .unwrap_or_default();
    let mut edit = 0u64;
    let mut group = c.benchmark_group("warm_edit_large_preset");
    group.bench_with_input(
        BenchmarkId::from_parameter(MESSAGES),
        &session,
        |b, session| {
            b.iter(|| {
                edit += 1;
                preset.message_templates[edited].content = Some(format!("{base} (draft {edit})"));
                black_box(run(&pipeline, &preset, session, &options, &cache))
            });
        },
    );
    group.finish();
}

criterion_group!(benches, large_preset);
criterion_main!(benches);
