//! Everything that can go wrong, against the provider double: each failure is one clear error.

mod double;

use std::time::{Duration, Instant};

use double::{head, json, openai_stream, quick, run, sse_head, Double, Step};
use promptloom_send::{
    Connection, Dialect, SendError, SendOptions, StreamEvent, TimeoutPhase, MAX_EVENT_BYTES,
    MAX_STREAM_BYTES,
};

const BODY: &[u8] = br#"{"model":"m","stream":true,"messages":[]}"#;

fn openai(double: &Double) -> Connection {
    Connection::new("double", Dialect::Openai, double.base("/v1"))
}

fn expect_err(result: Result<promptloom_send::Reply, SendError>) -> SendError {
    match result {
        Ok(reply) => panic!("expected an error, got {reply:?}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn a_missing_key_is_refused_before_anything_is_sent() {
    for dialect in [Dialect::Openai, Dialect::Anthropic, Dialect::Gemini] {
        let double = Double::start(|_, _| vec![Step::Write(sse_head())]).await;
        let mut conn = Connection::new("mine", dialect, double.base(""));
        conn.key_env = Some("PROMPTLOOM_TEST_NO_SUCH_KEY".into());
        for key in [None, Some("")] {
            let (result, _) = run(&conn, key, Some("m"), BODY, true, &quick()).await;
            let err = expect_err(result);
            assert_eq!(err.code(), "missing_key");
            let text = err.to_string();
            assert!(
                text.contains("\"mine\"") && text.contains("PROMPTLOOM_TEST_NO_SUCH_KEY"),
                "{text}"
            );
        }
        assert!(
            double.recorded().is_empty(),
            "{dialect}: something was sent"
        );
    }
}

#[tokio::test]
async fn unauthorized_gives_the_status_and_the_providers_message() {
    let cases = [
        (
            Dialect::Openai,
            r#"{"error":{"message":"Incorrect API key provided: sk-te***ey.","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            "Incorrect API key provided",
        ),
        (
            Dialect::Anthropic,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            "invalid x-api-key",
        ),
        (
            Dialect::Gemini,
            r#"{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}"#,
            "API key not valid",
        ),
    ];
    for (dialect, body, said) in cases {
        let answer = json("401 Unauthorized", body, &[]);
        let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
        let conn = Connection::new("double", dialect, double.base(""));
        let (result, _) = run(&conn, Some("sk-test-key"), Some("m"), BODY, true, &quick()).await;
        let err = expect_err(result);
        assert_eq!(err.code(), "http_status");
        assert_eq!(err.status(), Some(401));
        let text = err.to_string();
        assert!(
            text.starts_with("HTTP 401 Unauthorized from http://127.0.0.1:"),
            "{text}"
        );
        assert!(text.contains(said), "{text}");
        assert!(!text.contains("sk-test-key"), "{text}");
        assert_eq!(double.recorded().len(), 1, "a 401 is not retried");
    }
}

#[tokio::test]
async fn an_unreadable_error_body_is_shown_escaped_and_cut() {
    let page = format!("<html>\x1b[31m{}</html>", "x".repeat(2000));
    let answer = head("502 Bad Gateway", "text/html", &[("retry-after", "9999")]);
    let double = Double::start(move |_, _| {
        vec![
            Step::Write(answer.clone()),
            Step::Write(page.clone().into_bytes()),
        ]
    })
    .await;
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    let text = expect_err(result).to_string();
    assert!(
        text.contains("HTTP 502 Bad Gateway") && text.contains("<html>\\e[31mxxx"),
        "{text}"
    );
    assert!(text.ends_with('…') && text.len() < 700, "{text}");
    // Retry-After past the cap: no retry.
    assert_eq!(double.recorded().len(), 1);
}

#[tokio::test]
async fn too_many_requests_waits_as_asked_then_succeeds() {
    let double = Double::start(|n, _| match n {
        0 => vec![Step::Write(json(
            "429 Too Many Requests",
            r#"{"error":{"message":"Rate limit reached"}}"#,
            &[("retry-after", "1")],
        ))],
        _ => vec![
            Step::Write(sse_head()),
            Step::Write(openai_stream(&["after the wait"], "\n")),
        ],
    })
    .await;
    let started = Instant::now();
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    let reply = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reply.text, "after the wait");
    assert_eq!(reply.attempts, 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    let recorded = double.recorded();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[1].body, BODY);
}

#[tokio::test]
async fn retries_stop_after_two() {
    for status in ["429 Too Many Requests", "503 Service Unavailable"] {
        let double = Double::start(move |_, _| {
            vec![Step::Write(json(
                status,
                r#"{"error":{"message":"busy"}}"#,
                &[("retry-after", "0")],
            ))]
        })
        .await;
        let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
        let err = expect_err(result);
        assert!(
            err.to_string().contains("(after 3 attempts): busy"),
            "{err}"
        );
        assert_eq!(double.recorded().len(), 3, "{status}");
    }
}

#[tokio::test]
async fn a_server_that_closes_early_is_cut_short() {
    let wire = openai_stream(&["one ", "two ", "three"], "\n");
    let cut = wire.len() / 2;
    let double =
        Double::start(move |_, _| vec![Step::Write(sse_head()), Step::Write(wire[..cut].to_vec())])
            .await;
    let (result, events) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert_eq!(err.code(), "reply_cut_short");
    // What arrived went to the callback before the error.
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Delta(_))));

    // Closing after the status line and before any body.
    let double = Double::start(|_, _| vec![Step::Write(b"HTTP/1.1 200 OK\r\n".to_vec())]).await;
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    assert_eq!(expect_err(result).code(), "network");
}

#[tokio::test]
async fn garbage_is_a_bad_reply_or_a_network_error() {
    let cases: [(Vec<u8>, &str); 4] = [
        (
            [sse_head(), b"data: <html>oops</html>\n\n".to_vec()].concat(),
            "bad_reply",
        ),
        (
            [sse_head(), b"\x00\xff\xfe random \x01 bytes".to_vec()].concat(),
            "bad_reply",
        ),
        (json("200 OK", "not json at all", &[]), "bad_reply"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\nwhat".to_vec(), "network"),
    ];
    for (answer, code) in cases {
        let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
        let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
        let err = expect_err(result);
        assert_eq!(err.code(), code, "{err}");
        assert!(!err.to_string().chars().any(|c| c.is_control()), "{err}");
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_is_the_providers_error() {
    let wire = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n".to_vec();
    let double =
        Double::start(move |_, _| vec![Step::Write(sse_head()), Step::Write(wire.clone())]).await;
    let conn = Connection::new("double", Dialect::Anthropic, double.base(""));
    let (result, _) = run(&conn, Some("k"), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert_eq!(err.code(), "provider_error");
    assert!(err.to_string().contains("Overloaded"));
}

/// `err` is a timeout of `phase`.
#[track_caller]
fn assert_timeout(err: &SendError, phase: TimeoutPhase) {
    assert!(
        matches!(err, SendError::Timeout { phase: p, .. } if *p == phase),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let double = Double::start(|_, _| vec![Step::Sleep(Duration::from_secs(30))]).await;
    let options = SendOptions {
        first_byte_timeout: Duration::from_millis(300),
        ..quick()
    };
    let started = Instant::now();
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &options).await;
    let err = expect_err(result);
    assert_timeout(&err, TimeoutPhase::FirstByte);
    assert!(
        err.to_string().contains("0.3 s to start answering"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // A stream that stops half way.
    let wire = openai_stream(&["a"], "\n");
    let double = Double::start(move |_, _| {
        vec![
            Step::Write(sse_head()),
            Step::Write(wire[..40].to_vec()),
            Step::Sleep(Duration::from_secs(30)),
        ]
    })
    .await;
    let options = SendOptions {
        idle_timeout: Duration::from_millis(300),
        ..quick()
    };
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &options).await;
    let err = expect_err(result);
    assert_timeout(&err, TimeoutPhase::Idle);
}

#[tokio::test]
async fn nobody_listening_is_a_network_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let conn = Connection::new(
        "gone",
        Dialect::Openai,
        format!("http://127.0.0.1:{port}/v1"),
    );
    let (result, _) = run(&conn, Some("k"), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert_eq!(err.code(), "network", "{err}");
    assert!(
        err.to_string()
            .starts_with("could not reach http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn replies_over_the_caps_are_refused() {
    // One event over 1 MiB.
    let big = [
        sse_head(),
        b"data: ".to_vec(),
        vec![b'x'; MAX_EVENT_BYTES + 10],
        b"\n\n".to_vec(),
    ]
    .concat();
    let double = Double::start(move |_, _| vec![Step::Write(big.clone())]).await;
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert_eq!(err.code(), "reply_too_large");
    assert!(
        err.to_string().contains("one event is over 1048576 bytes"),
        "{err}"
    );

    // Many small events past 16 MiB in all.
    let event = format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "y".repeat(60_000)
    );
    let count = MAX_STREAM_BYTES / event.len() + 2;
    let stream = [sse_head(), event.repeat(count).into_bytes()].concat();
    let double = Double::start(move |_, _| vec![Step::Write(stream.clone())]).await;
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert!(
        err.to_string()
            .contains("the whole reply is over 16777216 bytes"),
        "{err}"
    );

    // A reply that is not streamed, past 16 MiB.
    let huge = [
        head("200 OK", "application/json", &[]),
        vec![b' '; MAX_STREAM_BYTES + 1],
    ]
    .concat();
    let double = Double::start(move |_, _| vec![Step::Write(huge.clone())]).await;
    let (result, _) = run(&openai(&double), Some("k"), None, BODY, false, &quick()).await;
    assert_eq!(expect_err(result).code(), "reply_too_large");
}

// A provider that echoes the key it was sent (whole, or its start, or cut with stars) in an
// error status's JSON or plain text, or in an error event mid-stream: the error shows none of
// it.
#[tokio::test]
async fn a_provider_that_echoes_the_key_never_gets_it_shown() {
    let key = "sk-live-Zq81PmX0aa55TT9v";
    let echoed = [
        json(
            "401 Unauthorized",
            &format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}."}}}}"#),
            &[],
        ),
        {
            let mut page = head("403 Forbidden", "text/plain", &[]);
            page.extend_from_slice(b"key sk-live-Zq8****aa55TT9v is not allowed");
            page
        },
    ];
    for answer in echoed {
        let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
        let conn = Connection::new("double", Dialect::Openai, double.base(""));
        let (result, _) = run(&conn, Some(key), Some("m"), BODY, true, &quick()).await;
        let text = expect_err(result).to_string();
        assert!(
            !text.contains("Zq81PmX0") && !text.contains("aa55TT9v"),
            "{text}"
        );
        assert!(text.contains("••••"), "{text}");
    }
    let wire = format!("event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"x\",\"message\":\"bad key {key}\"}}}}\n\n").into_bytes();
    let double =
        Double::start(move |_, _| vec![Step::Write(sse_head()), Step::Write(wire.clone())]).await;
    let conn = Connection::new("double", Dialect::Anthropic, double.base(""));
    let (result, _) = run(&conn, Some(key), None, BODY, true, &quick()).await;
    let err = expect_err(result);
    assert_eq!(err.code(), "provider_error");
    assert!(!err.to_string().contains("Zq81PmX0"), "{err}");
}

// A server that drips a byte every 200 ms never runs out the idle timeout, in the headers, a
// stream or an error body: the whole send is given up on at `total_timeout`.
#[tokio::test]
async fn a_dripping_server_is_given_up_on_at_the_total_deadline() {
    let drip = |bytes: Vec<u8>| {
        let mut steps = Vec::new();
        for b in bytes.into_iter().cycle().take(400) {
            steps.push(Step::Write(vec![b]));
            steps.push(Step::Sleep(Duration::from_millis(200)));
        }
        steps
    };
    let stream = [sse_head(), b": keep-alive\n".repeat(40)].concat();
    let error = [
        head("429 Too Many Requests", "application/json", &[]),
        b"{\"error\": {\"message\": \"slow".to_vec(),
    ]
    .concat();
    for wire in [stream, error] {
        let double = Double::start(move |_, _| drip(wire.clone())).await;
        let options = SendOptions {
            idle_timeout: Duration::from_secs(2),
            total_timeout: Duration::from_millis(1500),
            ..quick()
        };
        let started = Instant::now();
        let (result, _) = run(&openai(&double), Some("k"), None, BODY, true, &options).await;
        let err = expect_err(result);
        assert_timeout(&err, TimeoutPhase::Total);
        assert!(
            err.to_string().contains("1.5 s to send and answer in all"),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(4));
    }
}

// A connection's own total deadline is the one a send goes by.
#[tokio::test]
async fn a_connections_total_timeout_ends_a_dripping_send() {
    let double = Double::start(|_, _| {
        let mut steps = vec![Step::Write(sse_head())];
        for _ in 0..100 {
            steps.push(Step::Write(b": still here\n".to_vec()));
            steps.push(Step::Sleep(Duration::from_millis(200)));
        }
        steps
    })
    .await;
    let mut conn = openai(&double);
    conn.timeouts.total_secs = Some(1);
    let options = SendOptions::for_connection(&conn);
    let started = Instant::now();
    let (result, _) = run(&conn, Some("k"), None, BODY, true, &options).await;
    let err = expect_err(result);
    assert_timeout(&err, TimeoutPhase::Total);
    assert!(
        err.to_string().contains("1 s to send and answer in all"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}
