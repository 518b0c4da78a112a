//! `promptloom send` against a provider double on 127.0.0.1 (a server this test starts): the body
//! that arrives is, byte for byte, what `preview --connection` prints; the reply streams to
//! standard output and, with `--save`, joins the session file with what came back with it; a
//! failed or refused send writes nothing.

#[path = "../../send/tests/double/mod.rs"]
mod double;

use std::path::PathBuf;
use std::process::{Command, Output};

use double::{json, openai_stream, sse_head, Double, Step};
use serde_json::Value;

const NOW: &str = "2026-11-24T10:00:00+01:00";

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-cli-send-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        let session = serde_json::json!({
            "formatVersion": 1, "id": "trip", "title": "Trip",
            "messages": [ { "role": "user", "content": "Where are we?" },
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
            .env_remove("PROMPTLOOM_TEST_NO_KEY")
            .output()
            .expect("the promptloom binary runs")
    })
    .await
    .expect("joined")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn turn(s: &Scratch, command: &str, extra: &[&str]) -> Vec<String> {
    let mut a = args(&[
        command,
        "--preset",
        &preset(),
        "--session",
        &s.path("trip.json"),
        "--model",
        "gpt-4o",
        "--input",
        "And now?",
        "--connection",
        "local",
        "--db",
        &s.path("p.db"),
        "--now",
        NOW,
    ]);
    a.extend(args(extra));
    a
}

async fn add_local(s: &Scratch, double: &Double, extra: &[&str]) {
    let mut a = args(&[
        "connection",
        "add",
        "local",
        "--dialect",
        "openai-compatible",
        "--base-url",
        &double.base("/v1"),
        "--db",
        &s.path("p.db"),
    ]);
    a.extend(args(extra));
    let out = run(a).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_body_sent_is_the_preview_byte_for_byte_and_the_turn_is_saved() {
    let s = Scratch::new("ok");
    // The double reports the prompt tokens as OpenAI counts them (its published recipe, with the
    // reference tokenizer): 3 per message plus the tokens of its fields, 3 for the reply.
    let double = Double::start(|_, request| {
        let mut reply = sse_head();
        let usage = openai_prompt_tokens(&request.body);
        let stream = String::from_utf8(openai_stream(&["Past the ", "light", "house."], "\n"))
            .expect("UTF-8")
            .replace(
                "\"prompt_tokens\":11",
                &format!("\"prompt_tokens\":{usage}"),
            );
        reply.extend(stream.into_bytes());
        vec![Step::Trickle(reply)]
    })
    .await;
    add_local(&s, &double, &[]).await;

    let preview = run(turn(&s, "preview", &[])).await;
    assert!(
        preview.status.success(),
        "{}",
        String::from_utf8_lossy(&preview.stderr)
    );
    let shown: Value = serde_json::from_slice(&preview.stdout).expect("the body is JSON");
    assert_eq!(shown["model"], "gpt-4o");
    assert_eq!(shown["stream"], true);
    let built = run(turn(&s, "preview", &["--format", "json"])
        .into_iter()
        .filter(|a| a != "--connection" && a != "local")
        .collect())
    .await;
    let counted =
        serde_json::from_slice::<Value>(&built.stdout).expect("JSON")["tokens"]["total"].clone();

    let sent = run(turn(&s, "send", &["--save"])).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&sent.stdout),
        "Past the lighthouse.\n"
    );
    assert!(
        // Calibration: for an OpenAI-dialect reply, the provider's count and ours line up.
        err.contains(&format!("prompt {counted} tokens (counted {counted})")),
        "{err}"
    );
    assert!(err.contains("finished: stop"), "{err}");

    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(
        recorded[0].body, preview.stdout,
        "what is shown is what is sent"
    );
    assert!(
        recorded[0].header("authorization").is_none(),
        "no key, no header"
    );

    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("trip.json")).unwrap()).unwrap();
    let messages = saved["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"], "And now?");
    assert_eq!(messages[3]["content"], "Past the lighthouse.");
    let reply = &messages[3]["reply"];
    assert_eq!(reply["connection"], "local");
    assert_eq!(reply["model"], "gpt-4o");
    assert_eq!(reply["finishReason"], "stop");
    // Calibration: the provider's count of the prompt beside ours for the build that was sent.
    assert_eq!(reply["promptTokens"], counted);
    assert_eq!(reply["completionTokens"], 3);
    assert_eq!(reply["countedPromptTokens"], counted);
    assert!(reply["totalMs"].as_u64().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_send_says_the_providers_words_and_writes_nothing() {
    let s = Scratch::new("401");
    let double = Double::start(|_, _| {
        vec![Step::Write(json(
            "401 Unauthorized",
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
            &[],
        ))]
    })
    .await;
    add_local(&s, &double, &[]).await;
    let before = std::fs::read(s.path("trip.json")).unwrap();
    let sent = run(turn(&s, "send", &["--save"])).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert_eq!(sent.status.code(), Some(3), "{err}");
    assert!(err.contains("connection local: HTTP 401"), "{err}");
    assert!(err.contains("Incorrect API key provided"), "{err}");
    assert_eq!(
        std::fs::read(s.path("trip.json")).unwrap(),
        before,
        "nothing written"
    );
}

// A server that drips a comment every 200 ms never runs out the idle timeout; the
// connection's own total deadline ends the send, and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dripping_server_is_given_up_on_at_the_connections_total_timeout() {
    let s = Scratch::new("drip");
    let double = Double::start(|_, _| {
        let mut steps = vec![Step::Write(sse_head())];
        for _ in 0..200 {
            steps.push(Step::Write(b": still here\n".to_vec()));
            steps.push(Step::Sleep(std::time::Duration::from_millis(200)));
        }
        steps
    })
    .await;
    add_local(&s, &double, &["--total-timeout", "2"]).await;
    let before = std::fs::read(s.path("trip.json")).unwrap();
    let started = std::time::Instant::now();
    let sent = run(turn(&s, "send", &["--save"])).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert_eq!(sent.status.code(), Some(3), "{err}");
    assert!(err.contains("2 s to send and answer in all"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(std::fs::read(s.path("trip.json")).unwrap(), before);
}

// Ctrl-C (SIGINT) ends a send to a server that never answers at once, and writes nothing.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_ends_a_send_within_a_second() {
    let s = Scratch::new("sigint");
    let double = Double::start(|_, _| vec![Step::Sleep(std::time::Duration::from_secs(60))]).await;
    add_local(&s, &double, &[]).await;
    let before = std::fs::read(s.path("trip.json")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(turn(&s, "send", &["--save"]))
        .env_remove("PROMPTLOOM_TEST_NO_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the promptloom binary runs");
    // Until the request is on the wire: the server has it.
    let waited = std::time::Instant::now();
    while double.recorded().is_empty() && waited.elapsed() < std::time::Duration::from_secs(20) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!double.recorded().is_empty(), "the request was sent");
    let interrupted = std::time::Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait().expect("waited"))
        .await
        .expect("joined");
    assert!(
        interrupted.elapsed() < std::time::Duration::from_secs(1),
        "ended {:?} after Ctrl-C",
        interrupted.elapsed()
    );
    assert!(!status.success());
    assert_eq!(std::fs::read(s.path("trip.json")).unwrap(), before);
}

// A provider that echoes the key in its error, in JSON, plain text, or an event mid-stream: the
// key is in no output and no file the send leaves (the session, the database, anything beside).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_key_is_in_no_output_and_no_file() {
    const KEY: &str = "sk-live-Qw81PmX0bb55TT9v";
    let answers = [
        json(
            "401 Unauthorized",
            &format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}."}}}}"#),
            &[],
        ),
        [
            double::head("403 Forbidden", "text/plain", &[]),
            format!("key {} is not allowed", &KEY[..14]).into_bytes(),
        ]
        .concat(),
        [
            sse_head(),
            format!("data: {{\"error\":{{\"message\":\"bad key {KEY}\"}}}}\n\n").into_bytes(),
        ]
        .concat(),
    ];
    for (n, answer) in answers.into_iter().enumerate() {
        let s = Scratch::new(&format!("echo{n}"));
        let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
        add_local(&s, &double, &["--key-env", "PROMPTLOOM_TEST_ECHOED_KEY"]).await;
        let a = turn(&s, "send", &["--save"]);
        let sent = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_promptloom"))
                .args(&a)
                .env("PROMPTLOOM_TEST_ECHOED_KEY", KEY)
                .output()
                .expect("the promptloom binary runs")
        })
        .await
        .expect("joined");
        assert_eq!(sent.status.code(), Some(3), "{n}");
        let said = [sent.stdout, sent.stderr].concat();
        let mut everything = vec![said];
        for entry in std::fs::read_dir(&s.0).expect("scratch") {
            let path = entry.expect("entry").path();
            if path.is_file() {
                everything.push(std::fs::read(&path).expect("readable"));
            }
        }
        for bytes in everything {
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains("Qw81PmX0") && !text.contains("bb55TT9v"),
                "{n}: {text}"
            );
        }
        assert_eq!(
            double.recorded()[0].header("authorization"),
            Some(format!("Bearer {KEY}").as_str()),
            "the key was sent (so it could be echoed)"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_or_a_session_it_cannot_save_sends_nothing() {
    let s = Scratch::new("refused");
    let double = Double::start(|_, _| vec![Step::Write(json("200 OK", "{}", &[]))]).await;
    // An openai connection needs a key; this one reads it from a variable that is not set.
    let out = run(args(&[
        "connection",
        "add",
        "local",
        "--dialect",
        "openai",
        "--base-url",
        &double.base("/v1"),
        "--key-env",
        "PROMPTLOOM_TEST_NO_KEY",
        "--db",
        &s.path("p.db"),
    ]))
    .await;
    assert!(out.status.success());
    let sent = run(turn(&s, "send", &[])).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert_eq!(sent.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needs an API key") && err.contains("PROMPTLOOM_TEST_NO_KEY"),
        "{err}"
    );

    std::fs::write(s.path("chat.jsonl"), "{\"user_name\":\"A\",\"character_name\":\"B\"}\n{\"name\":\"A\",\"is_user\":true,\"mes\":\"hi\"}\n").unwrap();
    let mut save_jsonl = turn(&s, "send", &["--save"]);
    let at = save_jsonl.iter().position(|a| a == "--session").unwrap() + 1;
    save_jsonl[at] = s.path("chat.jsonl");
    let sent = run(save_jsonl).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert_eq!(sent.status.code(), Some(2), "{err}");
    assert!(err.contains("--save writes native sessions only"), "{err}");

    let unknown = run(turn(&s, "send", &[])
        .into_iter()
        .map(|a| if a == "local" { "nowhere".into() } else { a })
        .collect())
    .await;
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert_eq!(unknown.status.code(), Some(2), "{err}");
    assert!(err.contains("no connection with id \"nowhere\""), "{err}");
    assert!(double.recorded().is_empty(), "nothing was sent");
}

/// The prompt tokens of an OpenAI Chat Completions body, by OpenAI's published recipe.
fn openai_prompt_tokens(body: &[u8]) -> usize {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |text: &str| bpe.encode_ordinary(text).len();
    let body: Value = serde_json::from_slice(body).expect("a JSON body");
    let mut n = 3;
    for m in body["messages"].as_array().expect("messages") {
        n += 3 + count(m["role"].as_str().unwrap_or_default());
        n += count(m["content"].as_str().expect("text content"));
        if let Some(name) = m["name"].as_str() {
            n += 1 + count(name);
        }
    }
    n
}

// RULES 5.12: a text-completion build goes to llama.cpp's /completion as the prompt string the
// preview shows, and its streamed pieces are the reply; a chat build through that connection is
// refused before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_completion_is_sent_to_llamacpp_as_the_string_shown() {
    let s = Scratch::new("llamacpp");
    let double = Double::start(|_, _| {
        let mut reply = sse_head();
        for event in [
            r#"{"content":"Past the ","stop":false}"#,
            r#"{"content":"lighthouse.","stop":false}"#,
            r#"{"content":"","stop":true,"stop_type":"word","tokens_evaluated":42,"tokens_predicted":3}"#,
        ] {
            reply.extend(format!("data: {event}\n\n").into_bytes());
        }
        vec![Step::Trickle(reply)]
    })
    .await;
    let out = run(args(&[
        "connection",
        "add",
        "local",
        "--dialect",
        "llamacpp",
        "--base-url",
        &double.base(""),
        "--db",
        &s.path("p.db"),
    ]))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = ["--instruct", "chatml"];
    let preview = run(turn(&s, "preview", &text)).await;
    assert!(
        preview.status.success(),
        "{}",
        String::from_utf8_lossy(&preview.stderr)
    );
    let shown: Value = serde_json::from_slice(&preview.stdout).expect("the body is JSON");
    let prompt = shown["prompt"].as_str().expect("a prompt string");
    assert!(
        prompt.contains("<|im_start|>user\nAnd now?<|im_end|>\n"),
        "{prompt}"
    );
    assert!(
        prompt.ends_with("<|im_end|>\n<|im_start|>assistant\n"),
        "{prompt}"
    );
    assert_eq!(shown["stream"], true);
    assert_eq!(shown["stop"], serde_json::json!(["<|im_end|>"]));

    let sent = run(turn(&s, "send", &text)).await;
    let err = String::from_utf8_lossy(&sent.stderr);
    assert!(sent.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&sent.stdout),
        "Past the lighthouse.\n"
    );
    assert!(err.contains("finished: word"), "{err}");
    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/completion");
    assert_eq!(
        recorded[0].body, preview.stdout,
        "what is shown is what is sent"
    );

    // Without an instruct template the build is a chat, which llama.cpp's own API does not take.
    let chat = run(turn(&s, "send", &[])).await;
    assert!(!chat.status.success());
    let said = String::from_utf8_lossy(&chat.stderr);
    assert!(said.contains("instruct template"), "{said}");
    assert_eq!(double.recorded().len(), 1, "nothing more was sent");
}

// Two `send --save` on one session at once, and an edit made to the session while they wait:
// each appends its turn to the session as it is when its reply ends, under the lock beside the
// file, so nothing another writer wrote is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sends_and_an_edit_on_one_session_lose_nothing() {
    let s = Scratch::new("together");
    let double = Double::start(|_, _| {
        let mut reply = sse_head();
        reply.extend(openai_stream(&["Further ", "on."], "\n"));
        vec![
            Step::Sleep(std::time::Duration::from_millis(1500)),
            Step::Write(reply),
        ]
    })
    .await;
    add_local(&s, &double, &[]).await;
    let first = tokio::spawn(run(turn(&s, "send", &["--save"])));
    let second = tokio::spawn(run(turn(&s, "send", &["--save"])));
    // While both wait for their replies, the session is edited: a message added.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let path = s.path("trip.json");
    let mut session: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    session["messages"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({ "role": "user", "content": "An edit." }));
    std::fs::write(&path, serde_json::to_string_pretty(&session).unwrap()).unwrap();
    for out in [first.await.unwrap(), second.await.unwrap()] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let contents: Vec<&str> = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        contents,
        [
            "Where are we?",
            "On the coast road.",
            "An edit.",
            "And now?",
            "Further on.",
            "And now?",
            "Further on."
        ]
    );
}

// A session file that stops being a native session while the reply comes: nothing is appended,
// the error says so and where the reply was kept, and the reply is in that file whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_cannot_be_appended_is_kept_beside_the_session() {
    let s = Scratch::new("kept");
    let double = Double::start(|_, _| {
        let mut reply = sse_head();
        reply.extend(openai_stream(&["Kept ", "safe."], "\n"));
        vec![
            Step::Sleep(std::time::Duration::from_millis(1200)),
            Step::Write(reply),
        ]
    })
    .await;
    add_local(&s, &double, &[]).await;
    let sending = tokio::spawn(run(turn(&s, "send", &["--save"])));
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    std::fs::write(s.path("trip.json"), "not a session any more").unwrap();
    let out = sending.await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("no longer a native session"), "{err}");
    assert!(err.contains("the reply is kept in"), "{err}");
    let kept: Vec<_> = std::fs::read_dir(&s.0)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("trip.json.reply-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "one recovery file");
    assert_eq!(
        std::fs::read_to_string(kept[0].path()).unwrap(),
        "Kept safe."
    );
    assert_eq!(
        std::fs::read_to_string(s.path("trip.json")).unwrap(),
        "not a session any more",
        "the file is left as the other writer left it"
    );
}
