//! `promptloom diff` end to end (RULES 8.6, 9.8): the real binary on a preset and sessions written
//! at test time: the JSON contract (stablePrefix, firstDifference with its cause, messages with
//! their token deltas), the text summary, and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};

const NOW: &str = "2026-11-25T10:00:00+00:00";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-cli-diff-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    fn write(&self, name: &str, value: &Value) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, value.to_string()).expect("write");
        path.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the promptloom binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A preset: a main prompt, the history, then a mood drawn at random.
fn preset(scratch: &Scratch) -> String {
    let moods: Vec<String> = (0..30).map(|i| format!("mood{i}")).collect();
    scratch.write(
        "preset.json",
        &json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "main", "role": "system", "content": "You are here." },
                { "id": "mood", "role": "system", "content": format!("Mood: {{{{random::{}}}}}", moods.join("::")) },
                { "id": "hist", "role": "system", "type": "chat_history" },
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "main", "enabled": true },
                { "messageId": "hist", "enabled": true },
                { "messageId": "mood", "enabled": true },
            ]}],
        }),
    )
}

fn session(scratch: &Scratch, name: &str, second_answer: &str) -> String {
    scratch.write(
        name,
        &json!({
            "formatVersion": 1, "id": name, "messages": [
                { "role": "user", "content": "hello" },
                { "role": "assistant", "content": "hi there" },
                { "role": "user", "content": "how are you?" },
                { "role": "assistant", "content": second_answer },
            ]
        }),
    )
}

/// `diff` of a session whose second answer is "very well" against one where it is "fine".
fn against(scratch: &Scratch, format: &str) -> Output {
    let p = preset(scratch);
    let (a, b) = (
        session(scratch, "a.json", "fine"),
        session(scratch, "b.json", "very well"),
    );
    run(&[
        "diff",
        "--preset",
        &p,
        "--session",
        &b,
        "--against",
        &a,
        "--model",
        "gpt-4o",
        "--format",
        format,
        "--now",
        NOW,
    ])
}

fn diff_json(args: &[&str]) -> Value {
    let output = run(args);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

#[test]
fn the_previous_turn_json_says_where_and_why_and_carries_the_rows() {
    let scratch = Scratch::new("turn");
    let (p, s) = (preset(&scratch), session(&scratch, "s.json", "fine"));
    let v = diff_json(&[
        "diff",
        "--preset",
        &p,
        "--session",
        &s,
        "--model",
        "gpt-4o",
        "--previous-turn",
        "--format",
        "json",
        "--now",
        NOW,
    ]);
    // The main prompt and the first exchange are stable; the mood after the history moved.
    assert_eq!(v["firstDifference"]["messageIndex"], json!(3));
    // The newest exchange stands where the mood stood.
    assert_eq!(v["firstDifference"]["cause"], "history");
    assert_eq!(v["firstDifference"]["source"]["kind"], "history");
    let tokens = v["stablePrefix"]["tokens"].as_u64().expect("tokens");
    let bytes = v["stablePrefix"]["bytes"].as_u64().expect("bytes");
    assert!(
        tokens > 0 && bytes > tokens,
        "{tokens} tokens, {bytes} bytes"
    );
    let rows = v["messages"].as_array().expect("rows");
    let delta: i64 = rows.iter().map(|r| r["tokenDelta"].as_i64().unwrap()).sum();
    let totals = v["rightTokens"].as_i64().unwrap() - v["leftTokens"].as_i64().unwrap();
    assert_eq!(delta, totals);
    assert_eq!(rows[0]["kind"], "same");
}

#[test]
fn another_session_is_the_left_side_and_an_edited_reply_is_history() {
    let scratch = Scratch::new("against");
    let output = against(&scratch, "json");
    assert!(output.status.success(), "{}", stderr(&output));
    let v: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(v["firstDifference"]["cause"], "history");
    assert_eq!(v["firstDifference"]["messageIndex"], json!(4));
    let row = &v["messages"][v["firstDifference"]["row"].as_u64().unwrap() as usize];
    assert_eq!(row["kind"], "changed");
    let pieces: Vec<(String, String)> = row["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["op"].as_str().unwrap().into(),
                c["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        pieces.contains(&("delete".into(), "fine".into())),
        "{pieces:?}"
    );
    assert!(
        pieces.contains(&("insert".into(), "very well".into())),
        "{pieces:?}"
    );
}

#[test]
fn the_text_summary_names_the_prefix_the_difference_and_folds_what_is_the_same() {
    let scratch = Scratch::new("text");
    let output = against(&scratch, "text");
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("Stable prefix:"), "{text}");
    assert!(
        text.contains("First difference: message 4 (history #3), byte 0 of its text: history"),
        "{text}"
    );
    assert!(text.contains("-[fine]"), "{text}");
    assert!(text.contains("... 3 same"), "{text}");
}

#[test]
fn bad_input_names_the_problem_and_exits_2() {
    let scratch = Scratch::new("bad");
    let p = preset(&scratch);
    let no_user = scratch.write(
        "greeting.json",
        &json!({ "formatVersion": 1, "id": "g", "messages": [{ "role": "assistant", "content": "Hi." }] }),
    );
    for (args, needle) in [
        (
            vec![
                "diff",
                "--preset",
                &p,
                "--session",
                &no_user,
                "--model",
                "gpt-4o",
                "--previous-turn",
            ],
            "session \"g\": it has no user message, so there is no earlier turn to compare with",
        ),
        (
            vec![
                "diff",
                "--preset",
                &p,
                "--model",
                "gpt-4o",
                "--previous-turn",
            ],
            "--previous-turn: compares a session's last two turns",
        ),
        (
            vec![
                "diff",
                "--preset",
                &p,
                "--session",
                &no_user,
                "--model",
                "gpt-4o",
                "--against",
                "/nonexistent/other.json",
            ],
            "/nonexistent/other.json: no such file",
        ),
    ] {
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(needle), "{}", stderr(&output));
        assert!(output.stdout.is_empty());
    }
    // Neither --previous-turn nor --against: clap's own usage error.
    let output = run(&["diff", "--preset", &p, "--model", "gpt-4o"]);
    assert_eq!(output.status.code(), Some(2));
}
