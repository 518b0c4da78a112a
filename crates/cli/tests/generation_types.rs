//! RULES 5.14 and 8.5: for every kind of generation and every dialect, `preview --type T
//! --connection C` prints exactly the body `send --type T` sends to a provider double on
//! 127.0.0.1 (a server this test starts); `send --save` continues the last reply in place,
//! appends an ordinary turn with its prefill, and stores an impersonation or a quiet answer
//! nowhere.

#[path = "../../send/tests/double/mod.rs"]
mod double;

use std::path::PathBuf;
use std::process::{Command, Output};

use double::{anthropic_stream, gemini_stream, openai_stream, sse_head, Double, Step};
use serde_json::{json, Value};

const NOW: &str = "2026-11-24T10:00:00+01:00";
const KEY_VAR: &str = "PROMPTLOOM_TYPES_TEST_KEY";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "promptloom-cli-types-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
    /// A fresh copy of the session, ending with the model's reply.
    fn reset_session(&self) {
        let session = json!({
            "formatVersion": 1, "id": "trip", "title": "Trip",
            "messages": [ { "role": "user", "content": "Where are we?" },
                          { "role": "assistant", "content": "On the coast road" } ]
        });
        std::fs::write(self.path("trip.json"), session.to_string()).expect("session");
    }
    fn session(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("trip.json")).unwrap()).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn run(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_promptloom"))
            .args(&args)
            .env(KEY_VAR, "sk-test-types")
            .output()
            .expect("the promptloom binary runs")
    })
    .await
    .expect("joined")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// One dialect: its connection, a model, the reply stream it answers with, and the options that
/// make the build (text completion for llama.cpp).
struct Dialect {
    name: &'static str,
    model: &'static str,
    extra: &'static [&'static str],
}

const DIALECTS: &[Dialect] = &[
    Dialect {
        name: "openai-compatible",
        model: "gpt-4o",
        extra: &[],
    },
    Dialect {
        name: "anthropic",
        model: "claude-3-5-sonnet",
        extra: &[],
    },
    Dialect {
        name: "gemini",
        model: "gemini-2.5-flash",
        extra: &[],
    },
    Dialect {
        name: "llamacpp",
        model: "local-model",
        extra: &["--instruct", "chatml"],
    },
];

fn reply_for(dialect: &str) -> Vec<Step> {
    let parts = [" and", " on."];
    let mut reply = sse_head();
    reply.extend(match dialect {
        "anthropic" => anthropic_stream(&parts, "\n"),
        "gemini" => gemini_stream(&parts, "\n"),
        "llamacpp" => {
            let mut events = Vec::new();
            for p in parts {
                events.extend(
                    format!("data: {}\n\n", json!({ "content": p, "stop": false })).into_bytes(),
                );
            }
            events.extend(
                b"data: {\"content\":\"\",\"stop\":true,\"stop_type\":\"eos\"}\n\n".to_vec(),
            );
            events
        }
        _ => openai_stream(&parts, "\n"),
    });
    vec![Step::Write(reply)]
}

/// The build options of one kind of generation.
fn kind_args(kind: &str) -> Vec<&'static str> {
    match kind {
        "normal" => vec!["--input", "And now?", "--prefill", "Well,"],
        "impersonate" => vec!["--prefill", "I say"],
        "quiet" => vec!["--input", "Name the road."],
        _ => vec![],
    }
}

fn command(s: &Scratch, d: &Dialect, verb: &str, kind: &str, extra: &[&str]) -> Vec<String> {
    let preset = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../presets/general-assistant.json")
        .to_string_lossy()
        .into_owned();
    let mut a = args(&[
        verb,
        "--preset",
        &preset,
        "--session",
        &s.path("trip.json"),
        "--model",
        d.model,
        "--type",
        kind,
        "--connection",
        d.name,
        "--db",
        &s.path("p.db"),
        "--now",
        NOW,
        // The smallest shipped vocabulary reads fastest; counting changes nothing in a body.
        "--tokenizer",
        "cl100k_base",
    ]);
    a.extend(args(d.extra));
    a.extend(args(&kind_args(kind)));
    a.extend(args(extra));
    a
}

/// The last message of a body, in any of the dialects: its role and its text.
fn last_turn(body: &Value) -> (String, String) {
    if let Some(prompt) = body["prompt"].as_str() {
        return ("prompt".into(), prompt.to_string());
    }
    let last = body["messages"]
        .as_array()
        .or_else(|| body["contents"].as_array())
        .and_then(|l| l.last())
        .expect("a last turn")
        .clone();
    let text = last["content"]
        .as_str()
        .map(str::to_string)
        .or_else(|| last["parts"][0]["text"].as_str().map(str::to_string))
        .unwrap_or_default();
    (last["role"].as_str().unwrap_or_default().to_string(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_sends_the_body_its_preview_prints_in_every_dialect() {
    for d in DIALECTS {
        let s = Scratch::new(d.name);
        let dialect = d.name;
        let double = Double::start(move |_, _| reply_for(dialect)).await;
        let mut add = args(&[
            "connection",
            "add",
            d.name,
            "--dialect",
            d.name,
            "--base-url",
            &double.base(if d.name == "openai-compatible" {
                "/v1"
            } else {
                ""
            }),
            "--db",
            &s.path("p.db"),
        ]);
        if matches!(d.name, "anthropic" | "gemini") {
            add.extend(args(&["--key-env", KEY_VAR]));
        }
        let out = run(add).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );

        for (n, kind) in ["normal", "continue", "impersonate", "quiet"]
            .iter()
            .enumerate()
        {
            s.reset_session();
            let preview = run(command(&s, d, "preview", kind, &[])).await;
            let said = String::from_utf8_lossy(&preview.stderr);
            assert!(preview.status.success(), "{} {kind}: {said}", d.name);
            let shown: Value = serde_json::from_slice(&preview.stdout).expect("JSON");
            let (role, text) = last_turn(&shown);
            match (*kind, d.name) {
                ("normal", "llamacpp") => {
                    assert!(text.ends_with("<|im_start|>assistant\nWell,"), "{text}")
                }
                ("normal", _) => assert_eq!(text, "Well,", "{} prefill", d.name),
                ("continue", "llamacpp") => assert!(
                    text.ends_with("<|im_start|>assistant\nOn the coast road"),
                    "{text}"
                ),
                ("continue", _) => assert_eq!(text, "On the coast road", "{}", d.name),
                ("impersonate", "llamacpp") => {
                    assert!(text.ends_with("<|im_start|>user\nI say"), "{text}")
                }
                ("impersonate", _) => assert_eq!(text, "I say"),
                ("quiet", "llamacpp") => assert!(text.contains("Name the road."), "{text}"),
                ("quiet", _) => assert!(text.contains("Name the road."), "{} {text}", d.name),
                _ => unreachable!(),
            }
            if matches!(*kind, "normal" | "continue" | "impersonate") && d.name != "llamacpp" {
                assert_eq!(
                    role,
                    if d.name == "gemini" {
                        "model"
                    } else {
                        "assistant"
                    }
                );
            }

            let sent = run(command(&s, d, "send", kind, &["--save"])).await;
            let err = String::from_utf8_lossy(&sent.stderr);
            assert!(sent.status.success(), "{} {kind}: {err}", d.name);
            let recorded = double.recorded();
            assert_eq!(recorded.len(), n + 1);
            assert_eq!(
                recorded[n].body, preview.stdout,
                "{} {kind}: what is shown is what is sent",
                d.name
            );
            let printed = String::from_utf8_lossy(&sent.stdout);
            let messages = s.session()["messages"].clone();
            let contents: Vec<&str> = messages
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().unwrap())
                .collect();
            match *kind {
                "normal" => {
                    assert_eq!(printed, "Well, and on.\n");
                    assert_eq!(
                        contents,
                        [
                            "Where are we?",
                            "On the coast road",
                            "And now?",
                            "Well, and on."
                        ]
                    );
                }
                "continue" => {
                    assert_eq!(printed, " and on.\n");
                    assert_eq!(contents, ["Where are we?", "On the coast road and on."]);
                    assert_eq!(messages[1]["reply"]["connection"], d.name);
                }
                _ => {
                    assert!(err.contains("not stored"), "{err}");
                    assert_eq!(contents, ["Where are we?", "On the coast road"]);
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_a_type_does_not_take_and_a_continuation_without_a_reply_send_nothing() {
    let s = Scratch::new("refused");
    let double = Double::start(|_, _| reply_for("openai")).await;
    let out = run(args(&[
        "connection",
        "add",
        "openai-compatible",
        "--dialect",
        "openai-compatible",
        "--base-url",
        &double.base("/v1"),
        "--db",
        &s.path("p.db"),
    ]))
    .await;
    assert!(out.status.success());
    s.reset_session();
    let d = &DIALECTS[0];
    for (kind, extra, said) in [
        ("continue", &["--input", "x"][..], "takes no --input"),
        ("impersonate", &["--input", "x"][..], "takes no --input"),
        ("continue", &["--prefill", "x"][..], "takes no --prefill"),
        ("quiet", &["--prefill", "x"][..], "takes no --prefill"),
    ] {
        let out = run(command(&s, d, "send", kind, extra)).await;
        assert_eq!(out.status.code(), Some(2), "{kind} {extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(said));
    }
    // A session that ends with the user's message has no reply to continue.
    let session = json!({ "formatVersion": 1, "id": "q",
        "messages": [ { "role": "user", "content": "Hello?" } ] });
    std::fs::write(s.path("trip.json"), session.to_string()).unwrap();
    let out = run(command(&s, d, "send", "continue", &["--save"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to continue"));
    assert!(double.recorded().is_empty(), "nothing was sent");
}
