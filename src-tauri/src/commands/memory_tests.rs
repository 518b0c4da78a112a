//! The summary and memory commands against a double on 127.0.0.1: it answers `/embeddings` with
//! vectors made from the words of each text, and a chat request with a fixed summary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use promptloom_engine::model::{AgentPreset, ChatMessage, Role, Session};
use promptloom_engine::pipeline::SourceKind;
use promptloom_send::{Connection, Dialect};

use super::*;
use crate::commands::preview::{with_build, PreviewRequest};

const SUMMARY: &str = "Ann and Bo sailed to the lighthouse.";

/// Each word adds 1 at a place its hash picks: texts that share words point the same way.
fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 8];
    for word in text.split_whitespace() {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h % 8) as usize] += 1.0;
    }
    v
}

/// A server on 127.0.0.1 that answers each request on its own connection; its base URL.
fn double() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let base = format!("http://{}/v1", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let reply = if head.starts_with("POST /v1/embeddings") {
                let data: Vec<serde_json::Value> = body["input"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|t| t.as_str()).collect::<Vec<_>>())
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| serde_json::json!({"index": i, "embedding": vector(t)}))
                    .collect();
                serde_json::json!({ "data": data })
            } else {
                serde_json::json!({"choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": SUMMARY}}]})
            }
            .to_string();
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    base
}

const TOPICS: [&str; 4] = [
    "the red lighthouse on the cliff",
    "bread and cheese for supper",
    "the old mill by the river",
    "a letter from the captain",
];

/// An app state over a fresh database with session "trip" of `n` messages and connection
/// "local" at `base` (model "m").
fn app(name: &str, base: &str, n: usize) -> (AppState, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("promptloom-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let s = AppState::open(&dir.join("db.sqlite")).expect("opens");
    {
        let store = s.store().unwrap();
        let mut session = Session::empty("trip");
        for i in 0..n {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            let mut m = ChatMessage::new(role, TOPICS[i % 4]);
            m.id = Some(format!("m{i}").into());
            session.messages.push(m);
        }
        store.save_session(&session).expect("saved");
        let mut c = Connection::new("local", Dialect::OpenaiCompatible, base.to_string());
        c.default_model = Some("m".into());
        connections::add(&store, &c).expect("connection kept");
    }
    (s, dir)
}

/// A preset that writes the summary before the history; with `omit`, the history leaves out
/// what the summary covers (else every recalled message is in the context already, and the
/// token limiter drops it).
fn preset(omit: bool) -> Arc<AgentPreset> {
    Arc::new(
        serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "processors": [{ "id": "memory", "settings": { "omitSummarized": omit } }],
            "messageTemplates": [
                { "id": "sum", "role": "system", "content": "Story so far: {{summary}}" },
                { "id": "hist", "role": "system", "type": "chat_history" }
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "sum", "enabled": true },
                { "messageId": "hist", "enabled": true }
            ]}]
        }))
        .expect("preset"),
    )
}

fn request(input: &str, omit: bool) -> PreviewRequest {
    serde_json::from_value(serde_json::json!({
        "preset": preset(omit), "sessionId": "trip", "model": "gpt-4o", "input": input,
        "contextWindow": null, "reserve": null, "generationType": "normal", "prefill": null
    }))
    .expect("request")
}

#[test]
fn a_summary_is_made_edited_and_restored_and_the_preview_reads_the_current_one() {
    let base = double();
    let (s, dir) = app("summary-commands", &base, 10);
    let made = summarize_in(&s, "trip", "local", None, None).expect("summarized");
    assert_eq!(made.text, SUMMARY);
    assert_eq!(
        (made.first_position, made.last_position),
        (0, 5),
        "the newest 4 stay"
    );
    assert_eq!(made.model.as_deref(), Some("m"));
    assert!(made.current && !made.edited);
    assert_eq!(
        s.session("trip").unwrap().summary.as_deref(),
        Some(SUMMARY),
        "the session read again has it"
    );

    let edited =
        summary::edit(&s.store().unwrap(), "trip", "They reached the lighthouse.").expect("edited");
    s.forget_session("trip").unwrap();
    assert!(edited.edited && edited.current);
    assert_eq!((edited.first_position, edited.last_position), (0, 5));
    let all = summaries_of(&s, "trip").expect("listed");
    assert_eq!(all.len(), 2);
    assert!(all[0].current && all[0].edited, "newest first");

    let preview = with_build(&s, &request("", false), |result, session| {
        Ok((
            result.messages[0].content().to_string(),
            summary_in_use(&s, session)?,
        ))
    })
    .expect("builds");
    assert_eq!(preview.0, "Story so far: They reached the lighthouse.");
    let shown = preview.1.expect("the summary the build reads");
    assert_eq!(i64::from(shown.id), edited.id);

    let restored = s
        .store()
        .unwrap()
        .restore_summary("trip", i64::from(all[1].id))
        .expect("restored");
    s.forget_session("trip").unwrap();
    assert!(restored.current && !restored.edited);
    assert_eq!(s.session("trip").unwrap().summary.as_deref(), Some(SUMMARY));

    // Bad input says what is wrong and changes nothing.
    let e = summarize_in(&s, "trip", "nowhere", None, None).expect_err("no such connection");
    assert_eq!(e.code, codes::NOT_FOUND);
    let e = summary::edit(&s.store().unwrap(), "trip", &"x".repeat(20_000)).expect_err("too long");
    assert!(e.to_string().contains("16384"), "{e}");
    let e = s
        .store()
        .unwrap()
        .restore_summary("trip", 999)
        .expect_err("no such summary");
    assert_eq!(AppError::from(e).code, codes::NOT_FOUND);
    assert_eq!(summaries_of(&s, "trip").unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_indexed_session_recalls_into_the_preview_and_a_dead_endpoint_says_so() {
    let base = double();
    let (s, dir) = app("memory-commands", &base, 12);
    let before = status_of(&s.store().unwrap(), "trip").expect("status");
    assert_eq!(
        (before.indexed, before.pending, before.model),
        (0, 12, None)
    );

    let mut heard = Vec::new();
    let done = index_in(&s, "trip", "local", None, |d, t| heard.push((d, t))).expect("indexed");
    assert_eq!((done.embedded, done.dim, done.model.as_str()), (12, 8, "m"));
    assert_eq!(heard.last(), Some(&(12, 12)));
    let after = status_of(&s.store().unwrap(), "trip").expect("status");
    assert_eq!(
        (after.indexed, after.pending, after.connection.as_deref()),
        (12, 0, Some("local"))
    );

    let recalled = |s: &AppState, input: &str, omit: bool| {
        with_build(s, &request(input, omit), |result, _| {
            let memory: Vec<_> = result
                .messages
                .iter()
                .filter(|m| m.source().kind == SourceKind::Memory)
                .map(|m| m.source().memory.clone().expect("its stored message"))
                .collect();
            let skipped = result
                .warnings
                .iter()
                .any(|w| w.said.code == "memory.skipped");
            Ok((memory, skipped))
        })
        .expect("builds")
    };
    // Every message is in the context: what memory recalls is dropped as sent already.
    let (memory, skipped) = recalled(&s, "the red lighthouse on the cliff", false);
    assert!(memory.is_empty() && !skipped);
    // The summary stands for #0 to #7, which the history leaves out: they are recalled.
    summarize_in(&s, "trip", "local", None, None).expect("summarized");
    let (memory, skipped) = recalled(&s, "the red lighthouse on the cliff", true);
    assert!(!skipped);
    assert!(!memory.is_empty(), "the lighthouse is recalled");
    assert_eq!(memory[0].score, 1000);
    assert_eq!(memory[0].index.map(|i| i % 4), Some(0));
    assert!(
        memory.iter().all(|m| m.index < Some(8)),
        "the newest 4 are in the context anyway"
    );

    // The endpoint gone: the preview is built without memory, and says so.
    {
        let store = s.store().unwrap();
        let mut c = connections::get(&store, "local").unwrap();
        c.base_url = "http://127.0.0.1:9/v1".into();
        connections::add(&store, &c).unwrap();
    }
    let (memory, skipped) = recalled(&s, "bread and cheese", true);
    assert!(memory.is_empty() && skipped);
    let _ = std::fs::remove_dir_all(dir);
}

/// A preset whose memory processor turns automatic summaries on or off, due after `every`.
fn auto_preset(auto: bool, every: u32) -> Arc<AgentPreset> {
    Arc::new(
        serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "auto", "name": "Auto",
            "processors": [{ "id": "memory",
                "settings": { "summaryAuto": auto, "summaryEvery": every } }],
            "messageTemplates": [], "contextRecipes": []
        }))
        .expect("preset"),
    )
}

/// A session's claim for the automatic summary is one at a time, and given back when its holder
/// is done, also when the summary's task panics.
#[test]
fn a_claim_on_a_session_is_given_back_even_when_its_task_panics() {
    let claims = std::sync::Mutex::new(std::collections::HashSet::new());
    let claim = Claim::take(&claims, "trip").expect("free");
    assert!(Claim::take(&claims, "trip").is_none(), "held");
    assert!(Claim::take(&claims, "other").is_some());
    drop(claim);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _claim = Claim::take(&claims, "trip").expect("given back");
        panic!("the summary's task");
    }));
    assert!(panicked.is_err());
    assert!(claims.lock().unwrap().is_empty());
    assert!(Claim::take(&claims, "trip").is_some());
}

#[test]
fn a_stored_reply_starts_the_automatic_summary_only_when_it_is_on_and_due() {
    let base = double();
    let (s, dir) = app("summary-auto", &base, 10);
    let connection = connections::get(&s.store().unwrap(), "local").expect("connection");
    let after = |preset: Arc<AgentPreset>, dropped: bool, connection: &Connection| AutoSummary {
        session: s.store().unwrap().get_session("trip").expect("session"),
        preset,
        connection: connection.clone(),
        key: None,
        model: "m".into(),
        limiter_dropped: dropped,
    };
    let mut heard = Vec::new();
    // Off (the default): nothing, however due.
    assert!(!summary::SummarySettings::of(&preset(false)).auto);
    let off = after(auto_preset(false, 1), true, &connection);
    assert!(!auto_summary(&s, off, |u| heard.push(u)));
    // On, six messages not covered (the newest four aside) of twenty: not due.
    let early = after(auto_preset(true, 20), false, &connection);
    assert!(!auto_summary(&s, early, |u| heard.push(u)));
    // Due, but one is being made for the session already: no second.
    s.summarizing.lock().unwrap().insert("trip".into());
    let busy = after(auto_preset(true, 20), true, &connection);
    assert!(!auto_summary(&s, busy, |u| heard.push(u)));
    s.summarizing.lock().unwrap().clear();
    assert!(heard.is_empty());
    assert!(s.store().unwrap().summaries("trip").unwrap().is_empty());

    // The limiter dropped history: due; made through the double, heard running and then done.
    let due = after(auto_preset(true, 20), true, &connection);
    assert!(auto_summary(&s, due, |u| heard.push(u)));
    assert_eq!(heard.len(), 2);
    assert!(heard[0].running && heard[0].summary.is_none() && heard[0].session_id == "trip");
    let made = heard[1].summary.clone().expect("a summary");
    assert!(!heard[1].running && heard[1].error.is_none());
    assert_eq!((made.text.as_str(), made.last_position), (SUMMARY, 5));
    assert_eq!(made.model.as_deref(), Some("m"));
    assert!(s.summarizing.lock().unwrap().is_empty());
    assert_eq!(s.session("trip").unwrap().summary.as_deref(), Some(SUMMARY));
    // Covered now: not due again.
    let covered = after(auto_preset(true, 1), true, &connection);
    assert!(!auto_summary(&s, covered, |u| heard.push(u)));
    assert_eq!(heard.len(), 2);

    // A connection that does not answer: the error is heard with its code; nothing is kept.
    {
        let store = s.store().unwrap();
        let mut session = store.get_session("trip").unwrap();
        for _ in 0..2 {
            session.messages.push(ChatMessage::new(Role::User, "more"));
        }
        store.save_session(&session).unwrap();
    }
    s.forget_session("trip").unwrap();
    let dead = Connection::new(
        "dead",
        Dialect::OpenaiCompatible,
        "http://127.0.0.1:1/v1".to_string(),
    );
    let failing = after(auto_preset(true, 1), false, &dead);
    assert!(auto_summary(&s, failing, |u| heard.push(u)));
    let error = heard[3].error.clone().expect("an error");
    assert!(
        !error.code.is_empty() && heard[3].summary.is_none(),
        "{error:?}"
    );
    assert_eq!(s.store().unwrap().summaries("trip").unwrap().len(), 1);
    assert!(s.summarizing.lock().unwrap().is_empty());
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}
