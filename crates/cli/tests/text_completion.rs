//! `promptloom preview --instruct` (RULES 5.12, 8.1, 8.2): the prompt string exactly, in JSON
//! with its stop sequences, and the text-completion request bodies; bad templates are clear
//! errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const NOW: &str = "2026-11-22T10:00:00+01:00";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the promptloom binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `preview` of the multi-model preset with the example session, with more arguments.
fn preview(more: &[&str]) -> Output {
    let preset = repo().join("presets/multi-model.json");
    let session = repo().join("presets/sessions/example.json");
    let mut args = vec![
        "preview",
        "--preset",
        preset.to_str().expect("utf-8"),
        "--session",
        session.to_str().expect("utf-8"),
        "--model",
        "gpt-4o",
        "--now",
        NOW,
    ];
    args.extend_from_slice(more);
    run(&args)
}

fn json_of(output: &Output) -> Value {
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("one JSON object on stdout")
}

// RULES 8.2: `--format prompt` prints the string and nothing else, byte for byte the JSON's
// `prompt`; the JSON has the stop sequences.
#[test]
fn text_completion_format_prompt_prints_the_string_exactly() {
    let raw = preview(&["--instruct", "chatml", "--format", "prompt"]);
    assert!(raw.status.success(), "{}", text(&raw.stderr));
    let json = json_of(&preview(&["--instruct", "chatml", "--format", "json"]));
    let prompt = json["prompt"].as_str().expect("a prompt string");
    assert_eq!(text(&raw.stdout), prompt);
    assert!(prompt.starts_with("<|im_start|>system\n"), "{prompt}");
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
    assert_eq!(json["stop"], serde_json::json!(["<|im_end|>"]));
    // The total is the string's count.
    assert!(json["tokens"]["total"].as_u64().expect("total") > 0);
    // A chat build has neither key.
    let chat = json_of(&preview(&["--format", "json"]));
    assert!(chat.get("prompt").is_none() && chat.get("stop").is_none());
}

#[test]
fn text_completion_bodies_carry_the_string() {
    let json = json_of(&preview(&["--instruct", "llama-3", "--format", "json"]));
    let prompt = json["prompt"].as_str().expect("prompt");
    for (format, key) in [
        ("openai-completions", "max_tokens"),
        ("llamacpp", "n_predict"),
        ("koboldcpp", "max_length"),
    ] {
        let body = json_of(&preview(&["--instruct", "llama-3", "--format", format]));
        assert_eq!(body["prompt"], prompt, "{format}");
        assert!(body.get(key).is_some(), "{format}: {body}");
    }
    // A text-completion body of a chat build is a clear error.
    let chat = preview(&["--format", "llamacpp"]);
    assert!(!chat.status.success());
    assert!(
        text(&chat.stderr).contains("instruct template"),
        "{}",
        text(&chat.stderr)
    );
    let prompt = preview(&["--format", "prompt"]);
    assert!(!prompt.status.success());
    assert!(
        text(&prompt.stderr).contains("--instruct"),
        "{}",
        text(&prompt.stderr)
    );
}

// A template file of one's own, and bad ones: an unknown name, an unknown field, a file that is
// not a template.
#[test]
fn text_completion_instruct_file_and_bad_templates() {
    let dir = std::env::temp_dir().join(format!("promptloom-instruct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let own = dir.join("plain.json");
    std::fs::write(
        &own,
        r#"{"id": "plain", "name": "Plain",
            "user": {"prefix": "Q: ", "suffix": "\n"},
            "assistant": {"prefix": "A: ", "suffix": "\n"},
            "system": {"prefix": "", "suffix": "\n\n"},
            "replyPrefix": "A:", "stop": ["\nQ:"]}"#,
    )
    .expect("write");
    let json = json_of(&preview(&[
        "--instruct",
        own.to_str().expect("utf-8"),
        "--format",
        "json",
    ]));
    let prompt = json["prompt"].as_str().expect("prompt");
    assert!(
        prompt.contains("\nQ: ") && prompt.ends_with("A:"),
        "{prompt}"
    );

    let unknown = preview(&["--instruct", "no-such-template"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown.stderr));
    let said = text(&unknown.stderr);
    assert!(
        said.contains("no-such-template") && said.contains("chatml"),
        "{said}"
    );

    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"id": "b", "name": "B", "userPrefix": "x"}"#).expect("write");
    let out = preview(&["--instruct", bad.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("bad.json") && said.contains("userPrefix"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// RULES 5.12, 7.2: `--instruct` takes a SillyTavern instruct template too; what it could not map
// is among the build's warnings, naming the file.
#[test]
fn text_completion_instruct_from_a_sillytavern_template() {
    let dir = std::env::temp_dir().join(format!("promptloom-st-instruct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("ChatML.json");
    std::fs::write(
        &file,
        serde_json::json!({
            "name": "ChatML", "input_sequence": "<|im_start|>user",
            "output_sequence": "<|im_start|>assistant", "system_sequence": "<|im_start|>system",
            "stop_sequence": "<|im_end|>", "wrap": true, "names_behavior": "always",
            "input_suffix": "<|im_end|>\n", "output_suffix": "<|im_end|>\n",
            "system_suffix": "<|im_end|>\n", "activation_regex": "chatml" })
        .to_string(),
    )
    .expect("write");
    let json = json_of(&preview(&[
        "--instruct",
        file.to_str().expect("utf-8"),
        "--format",
        "json",
    ]));
    let prompt = json["prompt"].as_str().expect("prompt");
    assert!(
        prompt.starts_with("<|im_start|>system\n") && prompt.ends_with("<|im_start|>assistant\n"),
        "{prompt}"
    );
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("ChatML.json") && warnings.contains("activation_regex"),
        "{warnings}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
