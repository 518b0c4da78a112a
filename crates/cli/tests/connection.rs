//! `promptloom connection`: connections kept by name in the database, bad input refused with
//! nothing written, and keys read from standard input into the OS keychain only (that part runs
//! under `scripts/with-test-keychain`, as `./dev test` does).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-cli-conn-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }
    fn db(&self) -> String {
        self.0.join("p.db").to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the promptloom binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("written");
    child.wait_with_output().expect("finished")
}

fn ok(args: &[&str]) -> String {
    let out = run(args, "");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn refused(args: &[&str], why: &str) {
    let out = run(args, "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(why), "{args:?}: {err}");
}

#[test]
fn connections_are_added_listed_replaced_and_removed() {
    let s = Scratch::new("crud");
    let db = s.db();
    let added = ok(&[
        "connection",
        "add",
        "work",
        "--dialect",
        "openai",
        "--model",
        "gpt-4o",
        "--db",
        &db,
    ]);
    assert!(
        added.starts_with("Added connection \"work\" (openai, https://api.openai.com/v1)"),
        "{added}"
    );
    ok(&[
        "connection",
        "add",
        "local",
        "--dialect",
        "openai-compatible",
        "--base-url",
        "http://127.0.0.1:8080/v1",
        "--header",
        "X-Team: blue",
        "--extra-body",
        r#"{"cache_prompt": true}"#,
        "--key-env",
        "LOCAL_KEY",
        "--first-byte-timeout",
        "300",
        "--total-timeout",
        "1800",
        "--db",
        &db,
    ]);
    let listed = ok(&["connection", "list", "--db", &db]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert_eq!(
        lines[0],
        "local  openai-compatible  http://127.0.0.1:8080/v1  -  key from $LOCAL_KEY  timeouts: first byte 300 s, total 1800 s",
    );
    assert!(
        lines[1].starts_with("work  openai  https://api.openai.com/v1  gpt-4o  "),
        "{listed}"
    );

    let replaced = ok(&[
        "connection",
        "add",
        "work",
        "--dialect",
        "anthropic",
        "--db",
        &db,
    ]);
    assert!(
        replaced.starts_with("Replaced connection \"work\" (anthropic, https://api.anthropic.com)"),
        "{replaced}"
    );
    let removed = ok(&["connection", "remove", "local", "--db", &db]);
    assert!(
        removed.starts_with("Removed connection \"local\""),
        "{removed}"
    );
    refused(
        &["connection", "remove", "local", "--db", &db],
        "no connection with id \"local\"",
    );
}

#[test]
fn bad_connections_are_refused_and_nothing_is_written() {
    let s = Scratch::new("bad");
    let db = s.db();
    for (args, why) in [
        (vec!["--dialect", "nope"], "unknown dialect \"nope\""),
        (vec!["--dialect", "openai-compatible"], "needs --base-url"),
        (
            vec!["--dialect", "openai", "--base-url", "file:///etc/passwd"],
            "http",
        ),
        (
            vec!["--dialect", "openai", "--extra-body", "[1]"],
            "must be a JSON object",
        ),
        (vec!["--dialect", "openai", "--extra-body", "{"], "not JSON"),
        (
            vec!["--dialect", "openai", "--header", "no colon"],
            "is not `Name: value`",
        ),
        (
            vec!["--dialect", "openai", "--total-timeout", "0"],
            "timeout totalSecs is 0 s",
        ),
        (
            vec!["--dialect", "openai", "--connect-timeout", "86401"],
            "timeout connectSecs is 86401 s",
        ),
    ] {
        let mut full = vec!["connection", "add", "x"];
        full.extend(args);
        full.extend(["--db", &db]);
        refused(&full, why);
    }
    assert!(
        !Path::new(&db).exists(),
        "a refused connection opened no database"
    );
    ok(&["connection", "list", "--db", &db]);
    refused(
        &["connection", "set-key", "x", "--db", &db],
        "no connection with id \"x\"",
    );
}

#[test]
fn a_key_is_read_from_standard_input_into_the_keychain_only() {
    if std::env::var_os("PROMPTLOOM_TEST_KEYCHAIN").is_none() {
        println!(
            "skipped: no test keychain (run under scripts/with-test-keychain, as ./dev test does)"
        );
        return;
    }
    let s = Scratch::new("key");
    let db = s.db();
    let name = format!("cli-key-{}", std::process::id());
    ok(&[
        "connection",
        "add",
        &name,
        "--dialect",
        "openai",
        "--db",
        &db,
    ]);
    refused(
        &["connection", "set-key", "nobody", "--db", &db],
        "no connection with id \"nobody\"",
    );
    refused(
        &["connection", "set-key", &name, "--db", &db],
        "no key: give it on standard input",
    );
    let secret = format!("sk-cli-canary-{}", std::process::id());
    let out = run(
        &["connection", "set-key", &name, "--db", &db],
        &format!("{secret}\n"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = ok(&["connection", "list", "--db", &db]);
    assert!(listed.contains("key in the keychain"), "{listed}");
    assert!(!listed.contains(&secret));
    let bytes = std::fs::read(&db).expect("database");
    assert!(
        !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the key is in the database"
    );
    let removed = ok(&["connection", "remove", &name, "--db", &db]);
    assert!(removed.contains("and its key"), "{removed}");
}

#[path = "../../send/tests/double/mod.rs"]
mod double;

/// RULES 5.15 and 8.8: a stored session indexed, searched and summarized through a double that
/// serves embeddings (deterministic vectors) and chat, then previewed with its summary and what
/// memory recalls; bad input is refused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_is_indexed_searched_summarized_and_previewed() {
    use double::{json, Double, Step};
    let s = Scratch::new("memory");
    let vector = |text: &str| -> Vec<f32> {
        let mut v = vec![0f32; 8];
        for w in text.split_whitespace() {
            let h = w
                .bytes()
                .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
            v[(h % 8) as usize] += 1.0;
        }
        v
    };
    let double = Double::start(move |_, r| {
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let reply = if r.path.ends_with("/embeddings") {
            let data: Vec<serde_json::Value> = body["input"].as_array().unwrap().iter().enumerate()
                .map(|(i, t)| serde_json::json!({"index": i, "embedding": vector(t.as_str().unwrap())}))
                .collect();
            serde_json::json!({ "data": data })
        } else {
            serde_json::json!({"choices": [{"message": {"role": "assistant",
                "content": "They walked to the lighthouse."}, "finish_reason": "stop"}]})
        };
        vec![Step::Write(json("200 OK", &reply.to_string(), &[]))]
    })
    .await;
    let topics = [
        "the red lighthouse on the cliff",
        "bread and cheese",
        "the mill",
        "a letter",
    ];
    let messages: Vec<serde_json::Value> = (0..24)
        .map(|i| {
            serde_json::json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                                    "content": format!("{} {i}", topics[i % 4])})
        })
        .collect();
    let file = |name: &str, value: serde_json::Value| {
        let path = s.0.join(name);
        std::fs::write(&path, value.to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let session = file(
        "trip.json",
        serde_json::json!({"formatVersion": 1, "id": "trip", "messages": messages}),
    );
    let preset = file(
        "p.json",
        serde_json::json!({"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [{"id": "main", "role": "system", "content": "Summary: {{summary}}"},
                             {"id": "hist", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "main", "enabled": true}, {"messageId": "hist", "enabled": true}]}],
        "processors": [{"id": "memory", "settings": {"omitSummarized": true}}]}),
    );
    let db = s.db();
    let base = double.base("/v1");
    let go = |args: Vec<String>| async move {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&args, "")
        })
        .await
        .unwrap()
    };
    let a = |list: &[&str]| list.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for args in [
        a(&["import", &session, "--db", &db]),
        a(&[
            "connection",
            "add",
            "local",
            "--dialect",
            "openai-compatible",
            "--base-url",
            &base,
            "--model",
            "tiny",
            "--db",
            &db,
        ]),
    ] {
        let out = go(args).await;
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = go(a(&[
        "memory",
        "index",
        "--session",
        "trip",
        "--connection",
        "local",
        "--db",
        &db,
    ]))
    .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("24 embedded, 0 unchanged, 0 removed with model \"tiny\" (8 numbers)"),
        "{text}"
    );
    let out = go(a(&[
        "memory",
        "search",
        "--session",
        "trip",
        "--text",
        "the red lighthouse",
        "--format",
        "json",
        "--db",
        &db,
    ]))
    .await;
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 4);
    assert!(
        hits.iter().all(|h| h["text"]
            .as_str()
            .unwrap()
            .starts_with("the red lighthouse")),
        "{found}"
    );
    let out = go(a(&[
        "summarize",
        "--session",
        "trip",
        "--connection",
        "local",
        "--save",
        "--db",
        &db,
    ]))
    .await;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "They walked to the lighthouse.\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("covers stored messages 0 to 19; kept"));
    let out = go(a(&[
        "preview",
        "--preset",
        &preset,
        "--stored-session",
        "trip",
        "--memory",
        "local",
        "--model",
        "gpt-4o",
        "--input",
        "the red lighthouse",
        "--db",
        &db,
        "--format",
        "json",
    ]))
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let messages = built["messages"].as_array().unwrap();
    assert_eq!(
        messages[0]["content"],
        "Summary: They walked to the lighthouse."
    );
    let recalled: Vec<&serde_json::Value> = messages
        .iter()
        .filter(|m| m["source"]["kind"] == "memory")
        .collect();
    assert!(!recalled.is_empty(), "{built}");
    assert!(recalled
        .iter()
        .all(|m| m["source"]["memory"]["score"].as_u64().unwrap() >= 500));
    // The summary covers 0..=19: the history starts at 20, and what memory recalls is older.
    assert_eq!(
        messages
            .iter()
            .filter(|m| m["source"]["kind"] == "history")
            .count(),
        4
    );
    // Bad input: an unknown session, a search without an index, an unknown connection.
    refused(
        &[
            "memory",
            "index",
            "--session",
            "nope",
            "--connection",
            "local",
            "--db",
            &db,
        ],
        "no session with id \"nope\"",
    );
    refused(
        &[
            "memory",
            "search",
            "--session",
            "nope",
            "--text",
            "x",
            "--db",
            &db,
        ],
        "no session with id \"nope\"",
    );
    refused(
        &[
            "summarize",
            "--session",
            "trip",
            "--connection",
            "gone",
            "--db",
            &db,
        ],
        "gone",
    );
    let out = go(a(&[
        "memory",
        "search",
        "--session",
        "trip",
        "--text",
        "x",
        "--model",
        "other",
        "--db",
        &db,
    ]))
    .await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("indexed with \"tiny\", not \"other\""),
        "{err}"
    );
}
