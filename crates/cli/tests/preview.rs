//! `promptloom preview` end to end (RULES 8): the real binary on the presets in `presets/` and on
//! small bad files written at test time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const NOW: &str = "2026-11-22T10:00:00+01:00";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn multi_model() -> PathBuf {
    repo().join("presets/multi-model.json")
}

fn example_session() -> PathBuf {
    repo().join("presets/sessions/example.json")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the promptloom binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `preview` of the multi-model preset with the example session, for one model and format.
fn preview(model: &str, format: &str) -> Output {
    let preset = multi_model();
    let session = example_session();
    run(&[
        "preview",
        "--preset",
        preset.to_str().unwrap(),
        "--session",
        session.to_str().unwrap(),
        "--model",
        model,
        "--format",
        format,
        "--now",
        NOW,
    ])
}

fn preview_json(model: &str) -> Value {
    let output = preview(model, "json");
    assert!(output.status.success(), "{model}: {}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

/// The provenance of every part of the context in order: each message's source, then the
/// sources of the texts a formatter joined into it (Claude's profile merges adjacent turns).
fn parts(json: &Value) -> Vec<Value> {
    json["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| {
            let mut parts = vec![m["source"].clone()];
            parts.extend(m["merged"].as_array().cloned().unwrap_or_default());
            parts
        })
        .collect()
}

fn template_ids(json: &Value) -> Vec<String> {
    parts(json)
        .iter()
        .filter_map(|s| s["templateId"].as_str().map(String::from))
        .collect()
}

#[test]
fn claude_models_get_the_claude_recipe() {
    let json = preview_json("claude-3-5-sonnet");
    assert_eq!(json["recipe"], "claude");
    assert_eq!(json["model"], "claude-3-5-sonnet");
    let ids = template_ids(&json);
    assert!(ids.contains(&"main_claude".to_string()), "{ids:?}");
    assert!(ids.contains(&"authors_note".to_string()), "{ids:?}");
    assert!(!ids.contains(&"main_gpt".to_string()), "{ids:?}");
    assert_eq!(
        json["tokens"]["exact"], false,
        "Claude's tokenizer is estimated"
    );

    let text = stdout(&preview("claude-3-5-sonnet", "text"));
    assert!(text.contains("Recipe     claude  [claude-*"), "{text}");
    assert!(
        text.contains("Tokenizer  cl100k_base × 1.11 (estimate)"),
        "{text}"
    );
    assert!(text.contains("(~ marks an estimated count)"), "{text}");
    assert!(text.contains("template authors_note · depth 2"), "{text}");
    assert!(
        text.contains("template world_info · ⚓ before chat_history"),
        "{text}"
    );
}

#[test]
fn gpt_models_get_the_gpt_recipe() {
    let json = preview_json("gpt-4o");
    assert_eq!(json["recipe"], "gpt");
    let ids = template_ids(&json);
    assert!(ids.contains(&"main_gpt".to_string()), "{ids:?}");
    assert!(ids.contains(&"format_reminder".to_string()), "{ids:?}");
    assert!(!ids.contains(&"main_claude".to_string()), "{ids:?}");
    assert!(
        !ids.contains(&"authors_note".to_string()),
        "disabled in the GPT recipe"
    );
    assert_eq!(
        json["tokens"]["exact"], true,
        "gpt-4o is counted with o200k_base"
    );

    let text = stdout(&preview("gpt-4o", "text"));
    assert!(text.contains("Recipe     gpt  [gpt-*"), "{text}");
    assert!(text.contains("Tokenizer  o200k_base (exact)"), "{text}");
    assert!(
        text.contains("template world_info · ⚓ after lore"),
        "{text}"
    );
    assert!(
        text.contains("template format_reminder · depth 0"),
        "{text}"
    );
}

#[test]
fn other_models_get_the_fallback_recipe() {
    let json = preview_json("mistral-large-latest");
    assert_eq!(json["recipe"], "fallback");
    assert_eq!(template_ids(&json), ["main_minimal", "world_info"]);
}

#[test]
fn json_output_has_exactly_the_seven_keys_of_spec_8() {
    let json = preview_json("gpt-4o");
    let mut keys: Vec<&str> = json
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["dropped", "logs", "messages", "model", "recipe", "tokens", "warnings"]
    );
    for key in ["total", "budget", "exact"] {
        assert!(json["tokens"].get(key).is_some(), "tokens.{key}");
    }
    for message in json["messages"].as_array().expect("messages") {
        for key in ["role", "content", "tokens", "source"] {
            assert!(
                message.get(key).is_some(),
                "message without {key}: {message}"
            );
        }
    }
}

#[test]
fn the_depth_2_note_has_exactly_two_history_messages_after_it() {
    let json = preview_json("claude-3-5-sonnet");
    let parts = parts(&json);
    let at = parts
        .iter()
        .position(|s| s["templateId"] == "authors_note")
        .expect("the author's note is there");
    let after: Vec<&str> = parts[at + 1..]
        .iter()
        .map(|s| s["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(after, ["history", "history"]);
}

#[test]
fn a_fixed_timestamp_makes_the_output_reproducible() {
    let a = preview("claude-3-5-sonnet", "text");
    let b = preview("claude-3-5-sonnet", "text");
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn without_a_session_the_preview_is_of_a_new_chat_opening_with_the_greeting() {
    let preset = multi_model();
    let output = run(&[
        "preview",
        "--preset",
        preset.to_str().unwrap(),
        "--model",
        "gpt-4o",
        "--input",
        "Who lit the lantern?",
        "--format",
        "json",
        "--now",
        NOW,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let kinds: Vec<&str> = json["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["source"]["kind"].as_str().unwrap_or(""))
        .collect();
    // Only the character's greeting, as SillyTavern opens a chat, then the input.
    assert_eq!(kinds.iter().filter(|k| **k == "history").count(), 1);
    assert_eq!(kinds.iter().filter(|k| **k == "input").count(), 1);
    let greeting = json["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["source"]["kind"] == "history")
        .expect("greeting");
    assert_eq!(greeting["role"], "assistant");
    assert_eq!(greeting["source"]["messageId"], "greeting");
}

#[test]
fn context_window_and_reserve_set_the_budget() {
    let preset = multi_model();
    let session = example_session();
    let output = run(&[
        "preview",
        "--preset",
        preset.to_str().unwrap(),
        "--session",
        session.to_str().unwrap(),
        "--model",
        "gpt-4o",
        "--context-window",
        "700",
        "--reserve",
        "100",
        "--format",
        "json",
        "--now",
        NOW,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["tokens"]["budget"], 600);
    assert!(json["tokens"]["total"].as_u64().unwrap_or(u64::MAX) <= 600);
    assert!(!json["dropped"].as_array().expect("dropped").is_empty());

    let text = stdout(&run(&[
        "preview",
        "--preset",
        preset.to_str().unwrap(),
        "--session",
        session.to_str().unwrap(),
        "--model",
        "gpt-4o",
        "--context-window",
        "700",
        "--reserve",
        "100",
        "--now",
        NOW,
    ]));
    assert!(text.contains("of 600 tokens"), "{text}");
    assert!(text.contains("dropped history #0.."), "{text}");
}

/// Every preset and session in `presets/` parses and previews cleanly for several model
/// families: no errors, and no warnings (an unknown macro would be one).
#[test]
fn the_shipped_presets_preview_without_warnings() {
    let models = [
        "claude-3-5-sonnet",
        "gpt-4o",
        "gpt-4.1-mini",
        "gemini-2.5-pro",
        "deepseek-chat",
        "llama-3.3-70b",
    ];
    let presets = json_files(&repo().join("presets"));
    let sessions = json_files(&repo().join("presets/sessions"));
    assert!(presets.len() >= 2, "{presets:?}");
    assert!(!sessions.is_empty());
    for preset in &presets {
        let mut session_args: Vec<Option<&PathBuf>> = vec![None];
        session_args.extend(sessions.iter().map(Some));
        for session in session_args {
            for model in models {
                let mut args = vec![
                    "preview",
                    "--preset",
                    preset.to_str().unwrap(),
                    "--model",
                    model,
                    "--format",
                    "json",
                    "--now",
                    NOW,
                ];
                if let Some(session) = session {
                    args.extend(["--session", session.to_str().unwrap()]);
                }
                let output = run(&args);
                let what = format!("{} / {session:?} / {model}", preset.display());
                assert!(output.status.success(), "{what}: {}", stderr(&output));
                let json: Value = serde_json::from_slice(&output.stdout).expect("JSON");
                assert_eq!(json["warnings"], Value::Array(Vec::new()), "{what}");
                assert!(json["recipe"].is_string(), "{what}");
            }
        }
    }
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

// Bad input: status 2, nothing on stdout, one line on stderr that names the file.

/// A scratch directory of its own for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-cli-test-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("a scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a preview that must fail as bad input about `file`, and returns the one stderr line.
fn bad_input(args: &[&str], file: &Path, expected: &str) -> String {
    let output = run(args);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        output.stdout.is_empty(),
        "{args:?} printed {}",
        stdout(&output)
    );
    assert_eq!(err.lines().count(), 1, "one line on stderr: {err:?}");
    let line = err.trim_end();
    let prefix = format!("promptloom: {}: ", file.display());
    assert!(
        line.starts_with(&prefix),
        "{line:?} should start with {prefix:?}"
    );
    assert!(line.contains(expected), "{line:?} should say {expected:?}");
    line.to_string()
}

fn bad_preset(scratch: &Scratch, name: &str, text: &str, expected: &str) -> String {
    let path = scratch.file(name, text);
    let args = [
        "preview",
        "--preset",
        path.to_str().unwrap(),
        "--model",
        "gpt-4o",
        "--now",
        NOW,
    ];
    bad_input(&args, &path, expected)
}

/// A one-template preset whose only recipe has `steps` (JSON), for the recipe cases.
fn preset_with_steps(steps: &str) -> String {
    format!(
        r#"{{ "formatVersion": 1, "id": "p", "name": "P",
              "messageTemplates": [ {{ "id": "sys", "role": "system", "content": "Hi" }} ],
              "contextRecipes": [ {{ "id": "r", "modelFilter": ["*"], "steps": {steps} }} ] }}"#
    )
}

#[test]
fn a_missing_preset_file_is_named() {
    let scratch = Scratch::new("missing");
    let path = scratch.0.join("nowhere.json");
    let args = [
        "preview",
        "--preset",
        path.to_str().unwrap(),
        "--model",
        "gpt-4o",
    ];
    bad_input(&args, &path, "no such file");
}

#[test]
fn a_preset_that_is_not_json_is_refused() {
    let scratch = Scratch::new("not-json");
    bad_preset(&scratch, "x.json", "name: not json", "not valid JSON");
    bad_preset(&scratch, "empty.json", "", "not valid JSON");
}

#[test]
fn a_preset_of_the_wrong_shape_names_the_field() {
    let scratch = Scratch::new("shape");
    bad_preset(&scratch, "array.json", "[1, 2]", "expected a JSON object");
    bad_preset(
        &scratch,
        "templates.json",
        r#"{ "formatVersion": 1, "id": "p", "name": "P", "messageTemplates": "sys" }"#,
        "messageTemplates: invalid type",
    );
    bad_preset(
        &scratch,
        "enabled.json",
        &preset_with_steps(r#"[ { "messageId": "sys", "enabled": "yes" } ]"#),
        "contextRecipes[0].steps[0].enabled",
    );
}

#[test]
fn a_preset_from_a_newer_version_is_refused() {
    let scratch = Scratch::new("newer");
    bad_preset(
        &scratch,
        "newer.json",
        r#"{ "formatVersion": 2, "id": "p", "name": "P" }"#,
        "formatVersion 2",
    );
}

#[test]
fn duplicate_template_ids_are_refused() {
    let scratch = Scratch::new("duplicate");
    let text = r#"{ "formatVersion": 1, "id": "p", "name": "P", "messageTemplates": [
        { "id": "a", "role": "system", "content": "A" },
        { "id": "b", "role": "system", "content": "B" },
        { "id": "sys", "role": "system", "content": "one" },
        { "id": "sys", "role": "user", "content": "two" } ] }"#;
    bad_preset(
        &scratch,
        "dup.json",
        text,
        "messageTemplates[3].id: duplicate template id \"sys\"",
    );
}

#[test]
fn a_step_naming_an_unknown_template_is_refused() {
    let scratch = Scratch::new("unknown-template");
    bad_preset(
        &scratch,
        "ghost.json",
        &preset_with_steps(
            r#"[ { "messageId": "sys", "enabled": true }, { "messageId": "ghost", "enabled": true } ]"#,
        ),
        "contextRecipes[0].steps[1].messageId",
    );
}

#[test]
fn a_negative_depth_is_refused() {
    let scratch = Scratch::new("negative-depth");
    bad_preset(
        &scratch,
        "depth.json",
        &preset_with_steps(
            r#"[ { "messageId": "sys", "enabled": true, "injectionStrategy": { "depth": -1 } } ]"#,
        ),
        "contextRecipes[0].steps[0].injectionStrategy.depth",
    );
}

#[test]
fn an_unknown_role_is_refused() {
    let scratch = Scratch::new("unknown-role");
    let text = r#"{ "formatVersion": 1, "id": "p", "name": "P", "messageTemplates": [
        { "id": "sys", "role": "narrator", "content": "Hi" } ] }"#;
    bad_preset(&scratch, "role.json", text, "messageTemplates[0].role");
}

#[test]
fn a_model_no_recipe_matches_is_named_with_the_filters() {
    let scratch = Scratch::new("no-recipe");
    let text = r#"{ "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [ { "id": "sys", "role": "system", "content": "Hi" } ],
        "contextRecipes": [
          { "id": "claude", "modelFilter": ["claude-*"], "steps": [ { "messageId": "sys", "enabled": true } ] },
          { "id": "gemini", "modelFilter": ["gemini-*", "google/*"], "steps": [] } ] }"#;
    let line = bad_preset(&scratch, "narrow.json", text, "\"gpt-4o\"");
    assert!(line.contains("claude-*"), "{line}");
    assert!(line.contains("gemini-*, google/*"), "{line}");
}

#[test]
fn a_bad_session_file_is_named() {
    let scratch = Scratch::new("bad-session");
    let preset = multi_model();
    let missing = scratch.0.join("gone.json");
    let not_json = scratch.file("chat.json", "{ \"id\": ");
    let wrong_role = scratch.file(
        "role.json",
        r#"{ "formatVersion": 1, "id": "s", "messages": [ { "role": "narrator", "content": "Hi" } ] }"#,
    );
    let newer = scratch.file(
        "newer.json",
        r#"{ "formatVersion": 7, "id": "s", "messages": [] }"#,
    );
    for (file, expected) in [
        (&missing, "no such file"),
        (&not_json, "not valid JSON"),
        (&wrong_role, "messages[0].role"),
        (&newer, "formatVersion 7"),
    ] {
        let args = [
            "preview",
            "--preset",
            preset.to_str().unwrap(),
            "--session",
            file.to_str().unwrap(),
            "--model",
            "gpt-4o",
        ];
        bad_input(&args, file, expected);
    }
}

// RULES 5.8: --tokenizer counts with a shipped vocabulary or a tokenizer.json as the model's own;
// a name that is neither, or a file that is no tokenizer, is refused naming it.
#[test]
fn a_tokenizer_can_be_named_on_the_command_line() {
    let preset = multi_model();
    let session = example_session();
    let with = |tokenizer: &str| {
        run(&[
            "preview",
            "--preset",
            preset.to_str().unwrap(),
            "--session",
            session.to_str().unwrap(),
            "--model",
            "my-local-model",
            "--tokenizer",
            tokenizer,
            "--format",
            "json",
            "--now",
            NOW,
        ])
    };
    let out = with("qwen");
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["tokens"]["tokenizer"], "qwen");
    // The vocabulary is named, but not the model's chat template: what wraps each message is
    // Qwen's nearest, an estimate, and the build says why.
    assert_eq!(json["tokens"]["exact"], false);
    assert!(
        stdout(&out).contains("my-local-model's own chat template was not checked"),
        "{}",
        stdout(&out)
    );

    let dir = std::env::temp_dir().join(format!("promptloom-cli-tokenizer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokenizer.json");
    std::fs::write(
        &file,
        r#"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}"#,
    )
    .unwrap();
    let out = with(file.to_str().unwrap());
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["tokens"]["tokenizer"], "tokenizer.json");

    let bad = dir.join("bad.json");
    std::fs::write(&bad, "[1, 2, 3]").unwrap();
    let out = with(bad.to_str().unwrap());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("bad.json") && stderr(&out).contains("not a tokenizer.json"),
        "{}",
        stderr(&out)
    );
    let out = with("no-such-vocabulary");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no-such-vocabulary") && stderr(&out).contains("llama3"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
