//! `promptloom preview --count-exactly NAME` against a provider double on 127.0.0.1 (a server this
//! test starts): the count request is the body `preview --connection` prints, reduced to what the
//! endpoint takes; the provider's count is printed beside ours; the same content asked again is
//! answered from the database without a request; the key goes nowhere but its header.

#[path = "../../send/tests/double/mod.rs"]
mod double;

use std::path::PathBuf;
use std::process::{Command, Output};

use double::{json, Double, Step};
use serde_json::{Map, Value};

const NOW: &str = "2026-11-24T10:00:00+01:00";
const KEY_VAR: &str = "PROMPTLOOM_TEST_COUNT_KEY";
const KEY: &str = "sk-ant-count-secret-42";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "promptloom-cli-count-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let session = serde_json::json!({
            "formatVersion": 1, "id": "trip", "title": "Trip",
            "messages": [ { "role": "user", "content": "Where are we? 我们在哪里?" },
                          { "role": "assistant", "content": "On the coast road." } ]
        });
        std::fs::write(
            dir.join("trip.json"),
            serde_json::to_string_pretty(&session).unwrap(),
        )
        .expect("session");
        Scratch(dir)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn preset() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../presets/general-assistant.json")
        .to_string_lossy()
        .into_owned()
}

async fn run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_promptloom"))
            .args(&args)
            .env(KEY_VAR, KEY)
            .output()
            .expect("the promptloom binary runs")
    })
    .await
    .expect("joined")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

async fn add(s: &Scratch, name: &str, dialect: &str, base: &str) {
    let out = run(args(&[
        "connection",
        "add",
        name,
        "--dialect",
        dialect,
        "--base-url",
        base,
        "--key-env",
        KEY_VAR,
        "--db",
        &s.path("p.db"),
    ]))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn preview(s: &Scratch, model: &str, extra: &[&str]) -> Vec<String> {
    let mut a = args(&[
        "preview",
        "--preset",
        &preset(),
        "--session",
        &s.path("trip.json"),
        "--model",
        model,
        "--input",
        "And now?",
        "--db",
        &s.path("p.db"),
        "--now",
        NOW,
    ]);
    a.extend(args(extra));
    a
}

fn ok(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    (stdout, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_counts_the_request_send_would_send_once_per_content() {
    let s = Scratch::new("anthropic");
    let double =
        Double::start(|_, _| vec![Step::Write(json("200 OK", r#"{"input_tokens":1234}"#, &[]))])
            .await;
    add(&s, "claude", "anthropic", &double.base("")).await;
    let model = "claude-sonnet-4-5";

    // What send would send, as preview --connection prints it.
    let (sent, _) = ok(&run(preview(&s, model, &["--connection", "claude"])).await);
    let sent: Value = serde_json::from_str(&sent).expect("the body is JSON");
    assert!(sent.get("max_tokens").is_some() && sent.get("stream").is_some());

    let (out, _) = ok(&run(preview(
        &s,
        model,
        &["--count-exactly", "claude", "--format", "json"],
    ))
    .await);
    let shown: Value = serde_json::from_str(&out).expect("JSON");
    let ours = shown["tokens"]["total"].as_i64().expect("our total");
    assert_eq!(shown["tokens"]["exact"], Value::Bool(false));
    assert_eq!(
        shown["exactCount"],
        serde_json::json!({
            "tokens": 1234, "counted": ours, "provider": "Anthropic count_tokens",
            "connection": "claude", "cached": false, "difference": 1234 - ours
        })
    );

    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    let request = &recorded[0];
    assert_eq!(request.path, "/v1/messages/count_tokens");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    // The body is send's, without what only generating takes, written compact.
    let mut reduced: Map<String, Value> = sent.as_object().cloned().unwrap_or_default();
    reduced.retain(|k, _| matches!(k.as_str(), "model" | "messages" | "system"));
    assert_eq!(
        request.body,
        serde_json::to_vec(&Value::Object(reduced)).unwrap()
    );

    // The same content again: kept, no request.
    let (text, _) = ok(&run(preview(&s, model, &["--count-exactly", "claude"])).await);
    let line = text
        .lines()
        .find(|l| l.starts_with("Exact"))
        .unwrap_or_default();
    assert!(
        line.contains("1,234 tokens (Anthropic count_tokens through claude)")
            && line.ends_with("kept from an earlier count"),
        "{text}"
    );
    assert_eq!(double.recorded().len(), 1, "a second request arrived");

    // What only generating takes is not counted: another reply reserve is the same content.
    let (_, _) = ok(&run(preview(
        &s,
        model,
        &["--count-exactly", "claude", "--reserve", "99"],
    ))
    .await);
    assert_eq!(
        double.recorded().len(),
        1,
        "max_tokens is no part of the count"
    );
    // Other content is counted again.
    let (_, _) = ok(&run(preview(
        &s,
        model,
        &[
            "--count-exactly",
            "claude",
            "--ephemeral-kind",
            "quote",
            "--ephemeral",
            "Look!",
        ],
    ))
    .await);
    assert_eq!(double.recorded().len(), 2);

    // The key is in no file the command wrote.
    for entry in std::fs::read_dir(&s.0).expect("scratch") {
        let bytes = std::fs::read(entry.expect("entry").path()).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&bytes).contains(KEY));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_counts_the_whole_request_with_its_model() {
    let s = Scratch::new("gemini");
    let double =
        Double::start(|_, _| vec![Step::Write(json("200 OK", r#"{"totalTokens":31}"#, &[]))]).await;
    add(&s, "google", "gemini", &double.base("")).await;
    let model = "gemini-2.5-flash";
    let (sent, _) = ok(&run(preview(&s, model, &["--connection", "google"])).await);
    let sent: Value = serde_json::from_str(&sent).expect("the body is JSON");
    let (text, _) = ok(&run(preview(&s, model, &["--count-exactly", "google"])).await);
    assert!(
        text.contains("31 tokens (Gemini countTokens through google)"),
        "{text}"
    );
    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        recorded[0].path,
        "/v1beta/models/gemini-2.5-flash:countTokens"
    );
    assert_eq!(recorded[0].header("x-goog-api-key"), Some(KEY));
    let mut inner = sent.as_object().cloned().unwrap_or_default();
    inner.insert("model".into(), Value::from("models/gemini-2.5-flash"));
    let want = serde_json::json!({ "generateContentRequest": inner });
    assert_eq!(recorded[0].body, serde_json::to_vec(&want).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_count_says_so() {
    let s = Scratch::new("refused");
    let refusing = Double::start(|_, _| {
        vec![Step::Write(json(
            "400 Bad Request",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"model: not found"}}"#,
            &[],
        ))]
    })
    .await;
    add(&s, "claude", "anthropic", &refusing.base("")).await;
    add(&s, "local", "openai-compatible", "http://127.0.0.1:9/v1").await;

    let out = run(preview(&s, "claude-x", &["--count-exactly", "local"])).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("connection \"local\" (openai-compatible) has no token-counting endpoint"),
        "{err}"
    );

    let out = run(preview(&s, "claude-x", &["--count-exactly", "claude"])).await;
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("connection claude: HTTP 400 Bad Request from http://127.0.0.1:")
            && err.contains("model: not found"),
        "{err}"
    );
    assert!(!err.contains(KEY));

    let out = run(preview(
        &s,
        "claude-x",
        &["--count-exactly", "claude", "--format", "anthropic"],
    ))
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format text or --format json"));
    assert_eq!(refusing.recorded().len(), 1, "only the one count was asked");
}
