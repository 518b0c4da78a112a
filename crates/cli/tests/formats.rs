//! `promptloom preview` with the inputs and outputs beyond native JSON: provider request bodies,
//! attachments read beside the session, ephemeral content, and SillyTavern files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const NOW: &str = "2026-11-22T10:00:00+01:00";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn path(rel: &str) -> String {
    repo().join(rel).to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .args(["--now", NOW])
        .output()
        .expect("the promptloom binary runs")
}

fn ok_json(args: &[&str]) -> Value {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

fn image_body(model: &str, format: &str) -> Value {
    ok_json(&[
        "preview",
        "--preset",
        &path("presets/multi-model.json"),
        "--session",
        &path("examples/image-session.json"),
        "--model",
        model,
        "--format",
        format,
    ])
}

const DOT: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[test]
fn openai_body_carries_the_image_read_beside_the_session() {
    let body = image_body("gpt-4o", "openai");
    assert_eq!(body["model"], "gpt-4o");
    let messages = body["messages"].as_array().expect("messages");
    let with_image = messages
        .iter()
        .find(|m| m["content"].is_array())
        .expect("a message with parts");
    assert_eq!(with_image["role"], "user");
    assert_eq!(
        with_image["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{DOT}")
    );
}

#[test]
fn anthropic_body_has_top_level_system_and_user_first() {
    let body = image_body("claude-3-5-sonnet", "anthropic");
    assert!(body["system"].as_str().is_some_and(|s| !s.is_empty()));
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "user");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert!(roles.windows(2).all(|w| w[0] != w[1]), "{roles:?}");
    let blocks = messages.last().expect("last")["content"]
        .as_array()
        .expect("blocks")
        .clone();
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[0]["source"]["data"], DOT);
}

#[test]
fn gemini_body_has_system_instruction_and_inline_data() {
    let body = image_body("gemini-2.5-pro", "gemini");
    assert!(body["systemInstruction"]["parts"][0]["text"].is_string());
    let last = body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .expect("contents")
        .clone();
    assert_eq!(last["parts"][1]["inline_data"]["mime_type"], "image/png");
}

#[test]
fn a_model_without_vision_reads_the_stored_transcript_instead() {
    let json = image_body("gpt-3.5-turbo", "json");
    let text = serde_json::to_string(&json["messages"]).expect("json");
    assert!(text.contains("[Transcript of dot.png]"), "{text}");
    assert!(
        text.contains("A single dark dot on a white card."),
        "{text}"
    );
    assert_eq!(json["warnings"], Value::Array(Vec::new()));
}

#[test]
fn a_missing_attachment_file_becomes_a_note_and_a_warning_naming_it() {
    let dir = std::env::temp_dir().join(format!("promptloom-cli-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let session = dir.join("s.json");
    std::fs::write(
        &session,
        r#"{ "formatVersion": 1, "id": "s", "messages": [ { "role": "user", "content": "see",
            "attachments": [ { "id": "a", "kind": "image", "mime": "image/png", "name": "gone.png", "path": "gone.png" } ] } ] }"#,
    )
    .expect("write");
    let output = run(&[
        "preview",
        "--preset",
        &path("presets/multi-model.json"),
        "--session",
        session.to_str().expect("utf-8"),
        "--model",
        "gpt-4o",
        "--format",
        "openai",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.status.code(), Some(0));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("gone.png") && err.contains("no such file"),
        "{err}"
    );
    let body = String::from_utf8_lossy(&output.stdout);
    assert!(
        body.contains(
            r#"[Attachment \"gone.png\" (image/png) not sent: \"gone.png\": no such file]"#
        ),
        "{body}"
    );
}

#[test]
fn ephemeral_content_reaches_the_prompt_and_never_the_session_file() {
    let session = path("presets/sessions/example.json");
    let before = std::fs::read(&session).expect("read");
    let json = ok_json(&[
        "preview",
        "--preset",
        &path("presets/multi-model.json"),
        "--session",
        &session,
        "--model",
        "gpt-4o",
        "--format",
        "json",
        "--ephemeral-kind",
        "document",
        "--ephemeral",
        "Tom's last letter mentions a lantern.",
    ]);
    let last_user = json["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message")
        .clone();
    let content = last_user["content"].as_str().expect("text");
    assert!(
        content.contains("Tom's last letter mentions a lantern."),
        "{content}"
    );
    assert_eq!(last_user["source"]["ephemeral"], "document");
    assert_eq!(
        std::fs::read(&session).expect("read"),
        before,
        "the session file is untouched"
    );
}

fn fixtures() -> Option<PathBuf> {
    let dir = repo().join("../shared/fixtures/sillytavern");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("fixtures not found at ../shared/fixtures/sillytavern, skipping");
        None
    }
}

#[test]
fn sillytavern_preset_with_a_card_previews_as_sillytavern_builds_it() {
    let Some(dir) = fixtures() else { return };
    let json = ok_json(&[
        "preview",
        "--preset",
        dir.join("Default.json").to_str().expect("utf-8"),
        "--character",
        dir.join("default_Seraphina.png").to_str().expect("utf-8"),
        "--session",
        &path("presets/sessions/example.json"),
        "--model",
        "gpt-4o",
        "--format",
        "json",
    ]);
    let messages = json["messages"].as_array().expect("messages");
    let first = messages[0]["content"].as_str().expect("text");
    assert_eq!(messages[0]["source"]["templateId"], "main");
    assert!(!first.is_empty());
    // Main prompt, then the character description, then the chat.
    let ids: Vec<&str> = messages
        .iter()
        .map(|m| {
            m["source"]["templateId"]
                .as_str()
                .unwrap_or(m["source"]["kind"].as_str().unwrap_or(""))
        })
        .collect();
    let description = ids
        .iter()
        .position(|i| *i == "charDescription")
        .expect("description");
    let history = ids.iter().position(|i| *i == "history").expect("history");
    assert!(description < history, "{ids:?}");
    let text = messages[description]["content"].as_str().expect("text");
    assert!(text.contains("Seraphina"), "{text}");
}

#[test]
fn a_character_card_alone_is_a_preset_and_opens_with_its_greeting() {
    let Some(dir) = fixtures() else { return };
    let json = ok_json(&[
        "preview",
        "--preset",
        dir.join("default_Seraphina.png").to_str().expect("utf-8"),
        "--model",
        "claude-3-5-sonnet",
        "--format",
        "json",
    ]);
    assert_eq!(json["recipe"], "default");
    let text = serde_json::to_string(&json["messages"]).expect("json");
    assert!(text.contains("Seraphina"), "{text}");
}

#[test]
fn a_world_info_file_is_not_a_preset() {
    let Some(dir) = fixtures() else { return };
    let file = dir.join("Eldoria.json");
    let output = run(&[
        "preview",
        "--preset",
        file.to_str().expect("utf-8"),
        "--model",
        "gpt-4o",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("Eldoria.json") && err.contains("world info"),
        "{err}"
    );
}
