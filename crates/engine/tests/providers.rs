//! RULES 5.7: provider request bodies, checked against the shapes the providers document, for a
//! session with an image, audio, a PDF and a text file.

mod common;

use common::*;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::model::Session;
use promptloom_engine::profiles::{profile_for_model, ProviderFormat};
use promptloom_engine::providers::request_body;
use promptloom_engine::BuildResult;
use serde_json::{json, Value};

// A 1x1 PNG, and a few bytes standing for the other media.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const PDF: &str = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9G";
const TXT: &str = "bGluZSBvbmUKbGluZSB0d28K"; // "line one\nline two\n"

fn media_session(attachments: Value) -> Session {
    session_from(json!({
        "formatVersion": 1, "id": "s",
        "messages": [
            { "id": "m0", "role": "user", "content": "hello" },
            { "id": "m1", "role": "assistant", "content": "hi, what can I look at?" },
            { "id": "m2", "role": "user", "content": "What is in these?", "attachments": attachments },
        ]
    }))
}

fn image() -> Value {
    json!({ "id": "i", "kind": "image", "mime": "image/png", "name": "dot.png", "dataBase64": PNG })
}

fn chat_preset() -> promptloom_engine::model::AgentPreset {
    preset(
        json!([
            { "id": "main", "role": "system", "content": "You describe media." },
            { "id": "hist", "role": "system", "type": "chat_history" },
            { "id": "note", "role": "system", "content": "Be precise." },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
            { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 1 } },
        ])),
    )
}

fn body<'s>(model: &str, session: &'s Session) -> (BuildResult<'s>, Value) {
    let result = try_run(&chat_preset(), session, model, &options()).expect("builds");
    let format = profile_for_model(model, &[]).provider_format;
    let body = request_body(format, &result, session, &InlineAssets).expect("body");
    (result, body)
}

#[test]
fn openai_body_has_messages_with_an_image_url_data_uri() {
    let (_, b) = body("gpt-4o", &media_session(json!([image()])));
    assert_eq!(b["model"], "gpt-4o");
    assert!(b["max_completion_tokens"].is_u64());
    let messages = b["messages"].as_array().expect("messages");
    assert_eq!(
        messages[0],
        json!({ "role": "system", "content": "You describe media." })
    );
    let last = messages.last().expect("last");
    assert_eq!(last["role"], "user");
    let parts = last["content"].as_array().expect("parts");
    assert_eq!(
        parts[0],
        json!({ "type": "text", "text": "What is in these?" })
    );
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{PNG}")
    );
    // Depth-1 note sits before the newest message, as a system message.
    assert_eq!(messages[messages.len() - 2]["content"], "Be precise.");
}

#[test]
fn openai_body_takes_wav_as_input_audio_and_pdf_as_a_file_part() {
    let session = media_session(json!([
        { "id": "a", "kind": "audio", "mime": "audio/wav", "name": "hi.wav", "dataBase64": WAV },
        { "id": "d", "kind": "document", "mime": "application/pdf", "name": "doc.pdf", "dataBase64": PDF },
    ]));
    let (_, b) = body("gpt-4o", &session);
    let parts = b["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("last")["content"]
        .clone();
    assert_eq!(
        parts[1],
        json!({ "type": "input_audio", "input_audio": { "data": WAV, "format": "wav" } })
    );
    assert_eq!(parts[2]["type"], "file");
    assert_eq!(parts[2]["file"]["filename"], "doc.pdf");
    assert_eq!(
        parts[2]["file"]["file_data"],
        format!("data:application/pdf;base64,{PDF}")
    );
}

#[test]
fn anthropic_body_has_one_top_level_system_and_alternating_turns_with_base64_blocks() {
    let session = media_session(json!([
        image(),
        { "id": "d", "kind": "document", "mime": "application/pdf", "name": "doc.pdf", "dataBase64": PDF },
    ]));
    let (_, b) = body("claude-3-5-sonnet", &session);
    assert_eq!(b["model"], "claude-3-5-sonnet");
    assert!(b["max_tokens"].is_u64());
    assert_eq!(b["system"], "You describe media.");
    let messages = b["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles[0], "user");
    assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
    assert!(roles.iter().all(|r| *r == "user" || *r == "assistant"));
    let last = messages.last().expect("last");
    let blocks = last["content"].as_array().expect("blocks");
    assert_eq!(
        blocks[0],
        json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": PNG } })
    );
    assert_eq!(
        blocks[1],
        json!({ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": PDF } })
    );
    let text = blocks[2]["text"].as_str().expect("text block");
    assert!(text.contains("What is in these?"));
    // The depth-injected note survives, folded into a user turn.
    let all = serde_json::to_string(&b).expect("json");
    assert!(all.contains("Be precise."));
}

#[test]
fn gemini_body_has_system_instruction_and_inline_data() {
    let (_, b) = body("gemini-2.5-pro", &media_session(json!([image()])));
    assert_eq!(
        b["systemInstruction"],
        json!({ "parts": [{ "text": "You describe media." }] })
    );
    assert!(b["generationConfig"]["maxOutputTokens"].is_u64());
    let contents = b["contents"].as_array().expect("contents");
    let roles: Vec<&str> = contents
        .iter()
        .map(|c| c["role"].as_str().expect("role"))
        .collect();
    assert!(
        roles.iter().all(|r| *r == "user" || *r == "model"),
        "{roles:?}"
    );
    let parts = contents.last().expect("last")["parts"]
        .as_array()
        .expect("parts")
        .clone();
    assert_eq!(
        parts.last().expect("image part"),
        &json!({ "inline_data": { "mime_type": "image/png", "data": PNG } })
    );
}

#[test]
fn an_attachment_the_model_cannot_take_becomes_a_note_and_a_warning() {
    let session = media_session(json!([image()]));
    let (r, b) = body("gpt-3.5-turbo", &session);
    let last = r.messages.last().expect("last");
    assert!(
        last.content()
            .contains("[Attachment \"dot.png\" (image/png) not sent"),
        "{}",
        last.content()
    );
    assert!(last.attachments().is_empty());
    assert!(any_warning(&r, "dot.png"));
    assert!(r.dropped.iter().any(|d| d.processor == "asset-resolver"));
    let content = &b["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("last")["content"];
    assert!(content.is_string(), "no parts left: {content}");
}

#[test]
fn text_attachments_are_inlined_and_transcripts_stand_in_for_missing_modalities() {
    let session = media_session(json!([
        { "id": "t", "kind": "text", "mime": "text/plain", "name": "notes.txt", "dataBase64": TXT },
        { "id": "a", "kind": "audio", "mime": "audio/mpeg", "name": "memo.mp3", "dataBase64": WAV,
          "transcript": "Buy milk." },
    ]));
    let (r, _) = body("claude-3-5-sonnet", &session);
    let last = &r.messages.last().expect("last").content();
    assert!(
        last.contains("[Attachment: notes.txt]\nline one\nline two"),
        "{last}"
    );
    assert!(
        last.contains("[Transcript of memo.mp3]\nBuy milk."),
        "{last}"
    );
    assert!(r.warnings.is_empty(), "{:?}", warnings(&r));
    // gpt-4o takes MP3 itself: no transcript, an input_audio part instead.
    let (r, b) = body("gpt-4o", &session);
    assert!(!r
        .messages
        .last()
        .expect("last")
        .content()
        .contains("Buy milk."));
    let parts = b["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("last")["content"]
        .clone();
    assert_eq!(parts[1]["input_audio"]["format"], "mp3");
}

#[test]
fn an_attachment_whose_data_does_not_decode_becomes_a_note_and_a_warning_naming_it() {
    let session = media_session(json!([
        { "id": "i", "kind": "image", "mime": "image/png", "name": "broken.png", "dataBase64": "%%%" },
    ]));
    let result = try_run(&chat_preset(), &session, "gpt-4o", &options()).expect("builds");
    assert!(
        result
            .warnings
            .iter()
            .any(|w| w.message.contains("broken.png") && w.message.contains("not valid base64")),
        "{:?}",
        result.warnings
    );
    let body = request_body(ProviderFormat::OpenaiChat, &result, &session, &InlineAssets)
        .expect("the request is made without it");
    let text = body.to_string();
    assert!(
        text.contains("[Attachment \\\"broken.png\\\" (image/png) not sent"),
        "{text}"
    );
    assert!(!text.contains("image_url"), "{text}");
}

/// A session without attachments skips the passes over attachments; one added to a stored
/// message between two builds through the same cache is seen by the second (inlined, noted).
#[test]
fn an_attachment_added_between_builds_is_seen() {
    let mut session = media_session(json!([]));
    let cache = promptloom_engine::cache::BuildCache::new();
    let first = try_run_cached(
        &chat_preset(),
        &session,
        "gpt-3.5-turbo",
        &options(),
        &cache,
    )
    .expect("builds");
    assert_eq!(
        first.messages.last().expect("last").content(),
        "What is in these?"
    );
    drop(first);
    let with = media_session(json!([
        image(),
        { "id": "t", "kind": "text", "mime": "text/plain", "name": "notes.txt", "dataBase64": TXT },
    ]));
    session.messages[2].attachments = with.messages[2].attachments.clone();
    let r = try_run_cached(
        &chat_preset(),
        &session,
        "gpt-3.5-turbo",
        &options(),
        &cache,
    )
    .expect("builds");
    let last = r.messages.last().expect("last").content();
    assert!(last.contains("[Attachment: notes.txt]\nline one"), "{last}");
    assert!(
        last.contains("[Attachment \"dot.png\" (image/png) not sent"),
        "{last}"
    );
    assert!(any_warning(&r, "dot.png"));
}
