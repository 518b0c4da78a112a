//! What goes on the wire and how replies are put back together, against the provider double.

mod double;

use double::{
    anthropic_stream, gemini_stream, json, kobold_stream, llamacpp_stream, openai_stream, quick,
    run, sse_head, Double, Step,
};
use promptloom_send::{Connection, Dialect, StreamEvent, Usage};

/// A body no serializer would write: odd spacing, escapes, a raw multi-byte character, no
/// trailing newline. It must arrive exactly as given.
const BODY: &[u8] = b"{ \"model\" :\"m-1\",\"stream\":true,  \"messages\":[{\"role\":\"user\",\"content\":\"caf\xc3\xa9 \\u0000 \\\"q\\\"\"}] }\t";

fn connection(dialect: Dialect, double: &Double) -> Connection {
    let path = match dialect {
        Dialect::Openai | Dialect::OpenaiCompatible => "/v1",
        Dialect::Anthropic | Dialect::Gemini | Dialect::Llamacpp | Dialect::Koboldcpp => "",
    };
    Connection::new("double", dialect, double.base(path))
}

fn stream_for(dialect: Dialect, parts: &[&str], eol: &str) -> Vec<u8> {
    match dialect {
        Dialect::Openai | Dialect::OpenaiCompatible => openai_stream(parts, eol),
        Dialect::Anthropic => anthropic_stream(parts, eol),
        Dialect::Gemini => gemini_stream(parts, eol),
        Dialect::Llamacpp => llamacpp_stream(parts, eol),
        Dialect::Koboldcpp => kobold_stream(parts, eol),
    }
}

#[tokio::test]
async fn the_body_goes_byte_for_byte_with_each_dialects_auth() {
    for dialect in Dialect::ALL {
        let double = Double::start(move |_, _| {
            vec![
                Step::Write(sse_head()),
                Step::Write(stream_for(dialect, &["ok"], "\n")),
            ]
        })
        .await;
        let mut conn = connection(dialect, &double);
        conn.extra_headers.insert("X-Trace".into(), "t-1".into());
        let (result, _) = run(
            &conn,
            Some("sk-test-key"),
            Some("gem-1"),
            BODY,
            true,
            &quick(),
        )
        .await;
        let reply = result.unwrap_or_else(|e| panic!("{dialect}: {e}"));
        assert_eq!(reply.text, "ok", "{dialect}");

        let recorded = double.recorded();
        assert_eq!(recorded.len(), 1, "{dialect}");
        let request = &recorded[0];
        assert_eq!(request.method, "POST");
        assert_eq!(request.body, BODY, "{dialect}: the body changed on the way");
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(request.header("x-trace"), Some("t-1"));
        let (path, auth) = match dialect {
            Dialect::Openai | Dialect::OpenaiCompatible => (
                "/v1/chat/completions",
                ("authorization", "Bearer sk-test-key"),
            ),
            Dialect::Anthropic => ("/v1/messages", ("x-api-key", "sk-test-key")),
            Dialect::Gemini => (
                "/v1beta/models/gem-1:streamGenerateContent?alt=sse",
                ("x-goog-api-key", "sk-test-key"),
            ),
            // Text completion (RULES 5.12): the local servers take the key as a bearer token.
            Dialect::Llamacpp => ("/completion", ("authorization", "Bearer sk-test-key")),
            Dialect::Koboldcpp => (
                "/api/extra/generate/stream",
                ("authorization", "Bearer sk-test-key"),
            ),
        };
        assert_eq!(request.path, path, "{dialect}");
        assert_eq!(request.header(auth.0), Some(auth.1), "{dialect}");
        assert_eq!(
            request.header("anthropic-version"),
            (dialect == Dialect::Anthropic).then_some("2023-06-01"),
        );
        // Only the dialect's own auth header carries the key.
        let carrying: Vec<_> = request
            .headers
            .iter()
            .filter(|(_, v)| v.contains("sk-test-key"))
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(carrying, [auth.0], "{dialect}");
    }
}

#[tokio::test]
async fn openai_compatible_goes_without_a_key() {
    let double = Double::start(|_, _| {
        vec![
            Step::Write(sse_head()),
            Step::Write(openai_stream(&["local"], "\n")),
        ]
    })
    .await;
    let conn = connection(Dialect::OpenaiCompatible, &double);
    let (result, _) = run(&conn, None, None, BODY, true, &quick()).await;
    assert_eq!(result.map(|r| r.text).ok().as_deref(), Some("local"));
    assert_eq!(double.recorded()[0].header("authorization"), None);
}

#[tokio::test]
async fn streams_trickled_one_byte_at_a_time_come_back_whole() {
    // The cases run side by side: each trickles a few kilobytes.
    let mut cases = tokio::task::JoinSet::new();
    for dialect in [
        Dialect::Openai,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Llamacpp,
        Dialect::Koboldcpp,
    ] {
        for eol in ["\n", "\r\n", "\r"] {
            cases.spawn(trickled(dialect, eol));
        }
    }
    while let Some(done) = cases.join_next().await {
        done.unwrap_or_else(|e| panic!("{e}"));
    }
}

async fn trickled(dialect: Dialect, eol: &'static str) {
    let parts = ["Hé", "llo ", "wörld ", "😀", "\r\n", "!"];
    let want: String = parts.concat();
    let wire = stream_for(dialect, &parts, eol);
    let double =
        Double::start(move |_, _| vec![Step::Write(sse_head()), Step::Trickle(wire.clone())]).await;
    let conn = connection(dialect, &double);
    let (result, events) = run(&conn, Some("k"), Some("m"), BODY, true, &quick()).await;
    let reply = result.unwrap_or_else(|e| panic!("{dialect} {eol:?}: {e}"));
    assert_eq!(reply.text, want, "{dialect} {eol:?}");
    assert!(!reply.incomplete);
    assert!(reply.time_to_first_token.is_some());
    assert!(reply.time_to_first_token <= Some(reply.total_time));
    let deltas: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Delta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, parts, "{dialect} {eol:?}");
    let (finish, usage) = match dialect {
        Dialect::Anthropic => ("end_turn", Some((21, 6))),
        Dialect::Gemini => ("STOP", Some((7, 6))),
        Dialect::Llamacpp => ("eos", Some((13, 6))),
        // KoboldCpp's stream does not count.
        Dialect::Koboldcpp => ("stop", None),
        _ => ("stop", Some((11, 6))),
    };
    assert_eq!(reply.finish_reason.as_deref(), Some(finish), "{dialect}");
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: usage.map(|u| u.0),
            completion_tokens: usage.map(|u| u.1)
        },
        "{dialect}"
    );
}

#[tokio::test]
async fn cuts_inside_a_character_and_inside_crlf() {
    let wire = openai_stream(&["añ😀b"], "\r\n");
    let emoji = wire
        .windows(4)
        .position(|w| w == "😀".as_bytes())
        .expect("the emoji is in the stream");
    let crlf = wire
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a line end");
    let mut cuts = vec![emoji + 1, emoji + 3, crlf + 1, wire.len() - 1];
    cuts.sort_unstable();
    let mut steps = vec![Step::Write(sse_head())];
    let mut from = 0;
    for cut in cuts.into_iter().chain([wire.len()]) {
        steps.push(Step::Write(wire[from..cut].to_vec()));
        steps.push(Step::Sleep(std::time::Duration::from_millis(20)));
        from = cut;
    }
    let double = Double::start(move |_, _| steps.clone()).await;
    let conn = connection(Dialect::Openai, &double);
    let (result, _) = run(&conn, Some("k"), None, BODY, true, &quick()).await;
    assert_eq!(result.map(|r| r.text).ok().as_deref(), Some("añ😀b"));
}

#[tokio::test]
async fn a_reply_that_is_not_streamed_gives_one_delta_finish_and_usage() {
    let cases = [
        (
            Dialect::Openai,
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Whole reply"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
            "length",
        ),
        (
            Dialect::Anthropic,
            r#"{"id":"m","type":"message","content":[{"type":"text","text":"Whole reply"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}"#,
            "end_turn",
        ),
        (
            Dialect::Gemini,
            r#"{"candidates":[{"content":{"parts":[{"text":"Whole "},{"text":"reply"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}"#,
            "STOP",
        ),
    ];
    for (dialect, body, finish) in cases {
        let reply_bytes = json("200 OK", body, &[]);
        let double = Double::start(move |_, _| vec![Step::Write(reply_bytes.clone())]).await;
        let conn = connection(dialect, &double);
        let (result, events) = run(&conn, Some("k"), Some("m"), b"{}", false, &quick()).await;
        let reply = result.unwrap_or_else(|e| panic!("{dialect}: {e}"));
        assert_eq!(reply.text, "Whole reply");
        assert_eq!(reply.finish_reason.as_deref(), Some(finish));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: Some(3),
                completion_tokens: Some(2)
            }
        );
        assert_eq!(
            events,
            [
                StreamEvent::Delta("Whole reply".into()),
                StreamEvent::Finish(finish.into()),
                StreamEvent::Usage {
                    prompt_tokens: Some(3),
                    completion_tokens: Some(2)
                },
            ]
        );
        if dialect == Dialect::Gemini {
            assert_eq!(
                double.recorded()[0].path,
                "/v1beta/models/m:generateContent"
            );
        }
    }
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_what_arrived() {
    let first = openai_stream(&["partial "], "\n");
    // Everything up to the end of the first content event, then nothing for a long time.
    let cut = first
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .nth(1)
        .map(|(i, _)| i + 2)
        .expect("two events");
    let head = first[..cut].to_vec();
    let double = Double::start(move |_, _| {
        vec![
            Step::Write(sse_head()),
            Step::Write(head.clone()),
            Step::Sleep(std::time::Duration::from_secs(30)),
        ]
    })
    .await;
    let conn = connection(Dialect::Openai, &double);
    let cancel = promptloom_send::CancellationToken::new();
    let stopper = cancel.clone();
    let started = std::time::Instant::now();
    let result = promptloom_send::send(
        &conn,
        Some(promptloom_send::ApiKey::new("k")),
        None,
        BODY.to_vec(),
        promptloom_send::Call::chat(true),
        &quick(),
        &cancel,
        move |e| {
            if matches!(e, StreamEvent::Delta(_)) {
                stopper.cancel();
            }
        },
    )
    .await;
    let reply = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "partial ");
    assert!(reply.incomplete);
    assert_eq!(reply.finish_reason, None);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
