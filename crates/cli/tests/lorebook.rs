//! A character card's book in a preview (issue 7): an entry whose key the recent chat mentions is
//! sent at SillyTavern's position with the key that matched; without a mention, no entry.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const NOW: &str = "2026-11-22T10:00:00+01:00";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "promptloom-cli-lorebook-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    fn write(&self, file: &str, value: &Value) -> String {
        let path = self.0.join(file);
        std::fs::write(&path, value.to_string()).expect("write");
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A V2 card with a book: one entry before the character (SillyTavern's `before_char`, world
/// info position 0) and one at depth 1.
fn card() -> Value {
    json!({
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {
            "name": "Keeper",
            "description": "A lighthouse keeper on the Saltmere coast.",
            "first_mes": "You made it in before the rain.",
            "character_book": {
                "scan_depth": 2,
                "entries": [
                    { "id": 1, "keys": ["harbour"], "content": "[Saltmere harbour: six fishing boats]",
                      "enabled": true, "insertion_order": 100, "position": "before_char",
                      "extensions": { "position": 0 } },
                    { "id": 2, "keys": ["lantern"], "content": "[The lantern is a signal]",
                      "enabled": true, "insertion_order": 100, "position": "after_char",
                      "extensions": { "position": 4, "depth": 1, "role": 0 } }
                ]
            }
        }
    })
}

fn session(lines: &[&str]) -> Value {
    let messages: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, text)| json!({ "role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text }))
        .collect();
    json!({ "formatVersion": 1, "id": "s", "messages": messages })
}

fn preview(card: &str, session: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(["preview", "--preset", card, "--session", session])
        .args(["--model", "gpt-4o", "--format", "json", "--now", NOW])
        .output()
        .expect("the promptloom binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn labels(json: &Value) -> Vec<String> {
    json["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let s = &m["source"];
            let id = s["templateId"].as_str().or(s["entryId"].as_str());
            format!("{}:{}", s["kind"].as_str().unwrap_or(""), id.unwrap_or(""))
        })
        .collect()
}

#[test]
fn a_card_book_entry_fires_at_sillytaverns_position_with_the_matched_key() {
    let dir = Scratch::new("fires");
    let card = dir.write("keeper.json", &card());
    let chat = dir.write(
        "chat.json",
        &session(&[
            "Hello?",
            "Come in, you're soaked.",
            "Is that the harbour down there?",
        ]),
    );
    let json = preview(&card, &chat);
    let labels = labels(&json);
    let entry = labels
        .iter()
        .position(|l| l.starts_with("lorebook:"))
        .unwrap_or_else(|| panic!("no lorebook message in {labels:?}"));
    let description = labels
        .iter()
        .position(|l| l == "template:charDescription")
        .expect("the description");
    // World info "before the character": directly before the description (RULES 7.2).
    assert_eq!(entry + 1, description, "{labels:?}");
    let message = &json["messages"][entry];
    assert_eq!(message["content"], "[Saltmere harbour: six fishing boats]");
    assert_eq!(message["source"]["placement"]["target"], "worldInfoBefore");
    // The key that matched, and in which message, is in the logs.
    let logs = serde_json::to_string(&json["logs"]).expect("logs");
    assert!(logs.contains(r#"key \"harbour\" in history #2"#), "{logs}");
    assert_eq!(
        labels.iter().filter(|l| l.starts_with("lorebook:")).count(),
        1,
        "the lantern entry stays out: {labels:?}"
    );
}

#[test]
fn a_chat_that_mentions_no_key_gets_no_entry() {
    let dir = Scratch::new("silent");
    let card = dir.write("keeper.json", &card());
    let chat = dir.write(
        "chat.json",
        &session(&["Hello?", "Come in, you're soaked.", "Thank you."]),
    );
    let json = preview(&card, &chat);
    let labels = labels(&json);
    assert!(
        !labels.iter().any(|l| l.starts_with("lorebook:")),
        "{labels:?}"
    );
}

#[test]
fn a_depth_entry_of_the_book_goes_into_the_history() {
    let dir = Scratch::new("depth");
    let card = dir.write("keeper.json", &card());
    let chat = dir.write(
        "chat.json",
        &session(&["A light!", "The lantern again.", "What does it mean?"]),
    );
    let labels = labels(&preview(&card, &chat));
    let entry = labels
        .iter()
        .position(|l| l.starts_with("lorebook:"))
        .expect("the lantern entry");
    // Depth 1: before the newest message, after the rest of the history.
    assert_eq!(labels.len() - 2, entry, "{labels:?}");
    assert!(labels[entry - 1].starts_with("history"), "{labels:?}");
}

#[test]
fn the_seraphina_cards_book_works_the_same_way_when_the_fixtures_are_there() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/sillytavern");
    let card = dir.join("default_Seraphina.png");
    if !card.is_file() {
        println!("fixtures not found at ../shared/fixtures/sillytavern, skipping");
        return;
    }
    let scratch = Scratch::new("seraphina");
    // "Eldoria" is a key of the card's book.
    let chat = scratch.write(
        "chat.json",
        &session(&[
            "Where am I?",
            "You are safe.",
            "Is this forest part of Eldoria?",
        ]),
    );
    let fired = labels(&preview(card.to_str().expect("utf-8"), &chat));
    assert!(
        fired.iter().any(|l| l.starts_with("lorebook:")),
        "{fired:?}"
    );
    let silent = scratch.write(
        "silent.json",
        &session(&["Hello.", "Hello.", "How are you?"]),
    );
    let quiet = labels(&preview(card.to_str().expect("utf-8"), &silent));
    assert!(
        !quiet.iter().any(|l| l.starts_with("lorebook:")),
        "{quiet:?}"
    );
}
