//! Summaries and long-term memory (RULES 5.15) against doubles on 127.0.0.1: an embeddings
//! endpoint whose vectors are deterministic (words hashed into 16 numbers) and a chat endpoint
//! that answers with a fixed summary.

#[path = "../../send/tests/double/mod.rs"]
mod double;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use double::{json, Double, Recorded, Step};
use promptloom_engine::model::{parse_preset, ChatMessage, Role, Session};
use promptloom_library::memory::{self, Embedder, MemoryCache, MemorySettings};
use promptloom_library::summary::{self, SummarySettings};
use promptloom_send::{Connection, Dialect};
use promptloom_store::Store;

/// Each word adds 1 at a place its hash picks: texts that share words point the same way.
fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 16];
    for word in text.split_whitespace() {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h % 16) as usize] += 1.0;
    }
    v
}

fn embeddings_reply(request: &Recorded) -> Vec<Step> {
    let body: serde_json::Value = serde_json::from_slice(&request.body).expect("JSON body");
    let data: Vec<serde_json::Value> = body["input"]
        .as_array()
        .expect("input list")
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"index": i, "embedding": vector(t.as_str().unwrap())}))
        .collect();
    vec![Step::Write(json(
        "200 OK",
        &serde_json::json!({ "data": data }).to_string(),
        &[],
    ))]
}

fn connection(double: &Double, model: &str) -> Connection {
    let mut c = Connection::new("local", Dialect::OpenaiCompatible, double.base("/v1"));
    c.default_model = Some(model.into());
    c
}

fn embedder(double: &Double, model: &str) -> Embedder {
    let mut e = Embedder::new(connection(double, model), None, None);
    e.options.max_retries = 0;
    e
}

const TOPICS: [&str; 4] = [
    "the red lighthouse on the cliff",
    "bread and cheese for supper",
    "the old mill by the river",
    "a letter from the captain",
];

fn chat_preset() -> promptloom_engine::model::AgentPreset {
    parse_preset(
        r#"{"formatVersion":1,"id":"c","name":"C","messageTemplates":[
            {"id":"hist","role":"system","type":"chat_history"}],
            "contextRecipes":[{"id":"r","modelFilter":["*"],"steps":[
            {"messageId":"hist","enabled":true}]}]}"#,
    )
    .unwrap()
}

fn stored(n: usize) -> (Store, Session) {
    let store = Store::open_in_memory().expect("store");
    let mut s = Session::empty("trip");
    for i in 0..n {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        let mut m = ChatMessage::new(role, &format!("{} number {i}", TOPICS[i % 4]));
        if i % 3 == 0 {
            m.id = Some(format!("m{i}").into());
        }
        s.messages.push(m);
    }
    store.save_session(&s).expect("saved");
    (store, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexing_resumes_after_a_failure_and_another_model_indexes_again() {
    let (store, mut session) = stored(80);
    // The second request fails: the first batch of 32 is kept, the rest is not.
    let fail_second = Arc::new(AtomicUsize::new(1));
    let gate = fail_second.clone();
    let double = Double::start(move |n, r| {
        if n == gate.load(Ordering::SeqCst) {
            vec![Step::Write(json(
                "400 Bad Request",
                r#"{"error":{"message":"no"}}"#,
                &[],
            ))]
        } else {
            embeddings_reply(r)
        }
    })
    .await;
    let e = embedder(&double, "tiny");
    let err = memory::index_session(&store, "trip", &e, |_, _| {})
        .await
        .expect_err("the second batch fails");
    assert_eq!(err.code(), "http_status");
    let status = memory::index_status(&store, "trip").expect("status");
    assert_eq!(
        (status.messages, status.pending),
        (80, 48),
        "one batch kept"
    );

    fail_second.store(usize::MAX, Ordering::SeqCst);
    let report = memory::index_session(&store, "trip", &e, |_, _| {})
        .await
        .expect("resumes");
    assert_eq!(
        (report.embedded, report.unchanged, report.dim),
        (48, 32, 16)
    );
    assert_eq!(memory::index_status(&store, "trip").unwrap().pending, 0);

    // An edited message is embedded again; nothing else is.
    session.messages[5].content = "something else entirely".into();
    session.messages.pop();
    store.save_session(&session).expect("saved");
    let report = memory::index_session(&store, "trip", &e, |_, _| {})
        .await
        .expect("indexes");
    assert_eq!((report.embedded, report.removed), (1, 1));

    // Another model: the old vectors go and everything is embedded with the new one.
    let other = embedder(&double, "bigger");
    let report = memory::index_session(&store, "trip", &other, |_, _| {})
        .await
        .expect("indexes again");
    assert_eq!(
        (report.stale, report.embedded, report.unchanged),
        (79, 79, 0)
    );
    let state = store.memory_state("trip").unwrap().expect("indexed");
    assert_eq!(
        (state.model.as_str(), state.connection.as_deref()),
        ("bigger", Some("local"))
    );
    // Every request carried the model it was indexed with.
    let models: Vec<String> = double
        .recorded()
        .iter()
        .map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).unwrap()["model"].to_string())
        .collect();
    assert!(models.ends_with(&[
        "\"bigger\"".to_string(),
        "\"bigger\"".into(),
        "\"bigger\"".into()
    ]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_finds_the_closest_messages_and_a_slow_search_is_skipped() {
    let (store, session) = stored(40);
    let slow = Arc::new(AtomicUsize::new(0));
    let is_slow = slow.clone();
    let double = Double::start(move |_, r| {
        let mut steps = Vec::new();
        if is_slow.load(Ordering::SeqCst) == 1 {
            steps.push(Step::Sleep(Duration::from_millis(800)));
        }
        steps.extend(embeddings_reply(r));
        steps
    })
    .await;
    let e = embedder(&double, "tiny");
    memory::index_session(&store, "trip", &e, |_, _| {})
        .await
        .expect("indexes");
    let cache = MemoryCache::new();
    let settings = MemorySettings {
        top_k: 3,
        threshold: 0.6,
        ..MemorySettings::default()
    };
    let found = memory::recall(&store, &cache, &session, &e, "a red lighthouse", &settings).await;
    assert_eq!(found.skipped, None);
    assert_eq!(found.hits.len(), 3);
    for h in &found.hits {
        assert!(h.text.starts_with("the red lighthouse"), "{h:?}");
        assert!(h.score >= 0.6 && h.index.unwrap() < 36, "{h:?}");
    }
    assert!(found.hits.windows(2).all(|w| w[0].score >= w[1].score));
    // A hit with an id carries it.
    assert!(
        found.hits.iter().any(|h| h.message_id.is_some())
            || found.hits.iter().all(|h| h.index.unwrap() % 3 != 0)
    );

    slow.store(1, Ordering::SeqCst);
    let limited = MemorySettings {
        time_limit: Duration::from_millis(150),
        ..settings.clone()
    };
    let skipped = memory::recall(&store, &cache, &session, &e, "a red lighthouse", &limited).await;
    assert!(skipped.hits.is_empty());
    let said = skipped.skipped.expect("the search is said to be skipped");
    assert_eq!(said.code, "memory.skip-time");
    assert_eq!(said.to_string(), "the memory search took more than 150 ms");
    slow.store(0, Ordering::SeqCst);

    // A query of another length, and a stored vector of the wrong size, are clear errors.
    let index = memory::MemoryIndex::load(&store, "trip").unwrap().unwrap();
    let err = index.search(&[1.0; 8], 3, 0.0, |_| false).unwrap_err();
    assert!(
        err.to_string()
            .contains("has 8 numbers and the index's have 16"),
        "{err}"
    );
    store
        .debug_execute("UPDATE memory_vectors SET vector = x'0000' WHERE message_key = 'm0'")
        .unwrap();
    let err = memory::MemoryIndex::load(&store, "trip").unwrap_err();
    assert!(
        err.to_string()
            .contains("message \"m0\" has 2 bytes, not 64"),
        "{err}"
    );
    let found = memory::recall(
        &store,
        &MemoryCache::new(),
        &session,
        &e,
        "lighthouse",
        &settings,
    )
    .await;
    let said = found.skipped.expect("a broken index is said");
    assert_eq!(said.code, "memory.skip-index");
    assert!(said.to_string().contains("has 2 bytes"), "{said}");
    // Unknown session, and an endpoint that answers with vectors of two lengths.
    assert_eq!(
        memory::index_status(&store, "nope").unwrap_err().code(),
        "not_found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_session_is_summarized_with_its_range_and_kept_with_its_history() {
    let (store, mut session) = stored(500);
    let double = Double::start(|_, _| {
        vec![Step::Write(json(
            "200 OK",
            r#"{"choices":[{"message":{"role":"assistant","content":"  They crossed the coast.  "},"finish_reason":"stop"}]}"#,
            &[],
        ))]
    })
    .await;
    let preset = parse_preset(
        r#"{"formatVersion":1,"id":"p","name":"P","messageTemplates":[],"contextRecipes":[],
            "processors":[{"id":"memory","settings":{"summaryPrompt":"Summarize, please.",
            "summaryEvery":10,"summaryKeepRecent":4}}]}"#,
    )
    .unwrap();
    let settings = SummarySettings::of(&preset);
    assert_eq!((settings.every, settings.keep_recent), (10, 4));
    assert!(summary::is_due(&session, None, &settings, false));
    let made = summary::summarize(
        &store,
        "trip",
        &preset,
        &connection(&double, "m"),
        None,
        "m",
        true,
    )
    .await
    .expect("summarized");
    assert_eq!(made.text, "They crossed the coast.");
    assert_eq!((made.first_position, made.last_position), (0, 495));
    assert_eq!(made.last_message_id.as_deref(), Some("m495"));
    assert_eq!(made.first_message_id.as_deref(), Some("m0"));
    let sent: serde_json::Value = serde_json::from_slice(&double.recorded()[0].body).unwrap();
    assert_eq!(sent["messages"][0]["content"], "Summarize, please.");
    let transcript = sent["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("user: the red lighthouse on the cliff number 0\n"));
    assert!(transcript.contains("number 495\n") && !transcript.contains("number 496"));

    let session_now = store.get_session("trip").unwrap();
    assert_eq!(
        session_now.summary.as_deref(),
        Some("They crossed the coast.")
    );
    let current = store.current_summary("trip").unwrap();
    assert_eq!(
        summary::summarized_through(&session_now, current.as_ref()),
        Some(495)
    );
    assert!(!summary::is_due(
        &session_now,
        current.as_ref(),
        &settings,
        false
    ));
    assert!(!summary::is_due(
        &session_now,
        current.as_ref(),
        &settings,
        true
    ));
    // The preview of the 500 messages: the summary where the preset puts it ({{summary}} in
    // its first template), the messages it covers left out (omitSummarized), the newest four
    // after it, and within a small window the limiter keeps it within the summary's share.
    let placed = parse_preset(
        r#"{"formatVersion":1,"id":"s","name":"S","messageTemplates":[
            {"id":"story","role":"system","content":"Story so far: {{summary}}"},
            {"id":"hist","role":"system","type":"chat_history"}],
            "contextRecipes":[{"id":"r","modelFilter":["*"],"steps":[
            {"messageId":"story","enabled":true},{"messageId":"hist","enabled":true}]}],
            "processors":[{"id":"memory","enabled":true,"settings":{"omitSummarized":true}}]}"#,
    )
    .unwrap();
    let mut shown = promptloom_engine::BuildOptions::at(chrono::Utc::now().fixed_offset());
    shown.summarized_through = summary::summarized_through(&session_now, current.as_ref());
    let cache = promptloom_engine::cache::BuildCache::new();
    for window in [None, Some(400)] {
        shown.context_window = window;
        let r = promptloom_engine::build(&promptloom_engine::BuildRequest {
            assets: &promptloom_engine::assets::InlineAssets,
            preset: &placed,
            session: &session_now,
            kept_rewrites: None,
            model: "gpt-4o",
            options: &shown,
            cache: &cache,
            profiles: &[],
        })
        .expect("builds");
        assert_eq!(
            r.messages[0].content(),
            "Story so far: They crossed the coast.",
            "{window:?}"
        );
        let history: Vec<Option<u32>> = r.messages[1..]
            .iter()
            .map(|m| m.source().history_index)
            .collect();
        let after: Vec<Option<u32>> = (496..500).map(Some).collect();
        match window {
            None => assert_eq!(history, after),
            // The limiter drops history and keeps the summary.
            Some(_) => assert!(
                !history.is_empty()
                    && history.len() < after.len()
                    && history.iter().all(|h| after.contains(h)),
                "{history:?}"
            ),
        }
    }

    // The app learns whether the limiter dropped history from the last build.
    let mut options = promptloom_engine::BuildOptions::at(chrono::Utc::now().fixed_offset());
    options.context_window = Some(40);
    let mut short = Session::empty("short");
    for text in [
        "one two three four five six",
        "seven eight nine ten",
        "eleven",
    ] {
        short.messages.push(ChatMessage::new(Role::User, text));
    }
    let cache = promptloom_engine::cache::BuildCache::new();
    let chat = chat_preset();
    // The memory processor is on by default: the app embeds the input only then.
    assert!(memory::processor_on(&chat, "gpt-4o", &[]));
    let mut off = chat.clone();
    off.processors = Some(vec![promptloom_engine::model::ProcessorConfig {
        id: "memory".into(),
        enabled: Some(false),
        priority: None,
        settings: Default::default(),
    }]);
    assert!(!memory::processor_on(&off, "gpt-4o", &[]));
    let build = |options: &promptloom_engine::BuildOptions| {
        let r = promptloom_engine::build(&promptloom_engine::BuildRequest {
            assets: &promptloom_engine::assets::InlineAssets,
            preset: &chat,
            session: &short,
            kept_rewrites: None,
            model: "gpt-4o",
            options,
            cache: &cache,
            profiles: &[],
        })
        .expect("builds");
        summary::limiter_dropped(&r)
    };
    assert!(build(&options));
    options.context_window = Some(1_000_000);
    assert!(!build(&options));
    // Ten new messages make the next update due; it covers only what is new.
    session = session_now;
    for i in 0..10 {
        session
            .messages
            .push(ChatMessage::new(Role::User, &format!("new {i}")));
    }
    store.save_session(&session).unwrap();
    assert!(summary::is_due(
        &session,
        current.as_ref(),
        &settings,
        false
    ));
    let plan = summary::plan(&session, current.as_ref(), &settings).expect("a plan");
    assert_eq!(plan.last, 505);
    assert!(plan
        .text
        .starts_with("Summary so far:\nThey crossed the coast.\n\nNew messages:\nuser: the"));

    // Edited by hand: a new current summary over the same range, marked; the old one restores.
    let edited = summary::edit(&store, "trip", "They crossed the coast at night.").unwrap();
    assert!(edited.edited && edited.current && edited.last_position == 495);
    let all = store.summaries("trip").unwrap();
    assert_eq!(all.len(), 2);
    let restored = store.restore_summary("trip", made.id).unwrap();
    assert!(restored.current && !restored.edited);
    assert_eq!(
        store.get_session("trip").unwrap().summary.as_deref(),
        Some("They crossed the coast.")
    );
    // Bad input: an unknown session, a restore of another session's summary, a failing server.
    assert_eq!(store.summaries("nope").unwrap_err().code(), "not_found");
    assert_eq!(
        store.restore_summary("nope", made.id).unwrap_err().code(),
        "not_found"
    );
    let failing = Double::start(|_, _| {
        vec![Step::Write(json(
            "400 Bad Request",
            r#"{"error":{"message":"down"}}"#,
            &[],
        ))]
    })
    .await;
    let c = connection(&failing, "m");
    let err = summary::summarize(&store, "trip", &preset, &c, None, "m", true)
        .await
        .expect_err("the server fails");
    assert!(err.to_string().contains("down"), "{err}");
    assert_eq!(store.summaries("trip").unwrap().len(), 2, "nothing kept");
}
