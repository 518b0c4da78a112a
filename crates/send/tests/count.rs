//! Counting a request's input tokens through the provider's endpoint, against the provider
//! double: the URL, the headers, the exact body, the reply read, and each failure one clear error.

mod double;

use std::time::Duration;

use double::{head, json, quick, Double, Step};
use promptloom_send::{
    count_request, count_tokens, ApiKey, Connection, CountEndpoint, Dialect, SendError,
    SendOptions, TimeoutPhase,
};

const KEY: &str = "sk-count-secret-7";

/// A Messages body as the engine writes it, with what only generating takes.
const ANTHROPIC_BODY: &str = r#"{
  "max_tokens": 1024,
  "messages": [
    {
      "content": "Bonjour, ça va ? 😀",
      "role": "user"
    }
  ],
  "model": "claude-sonnet-4-5",
  "stream": true,
  "system": "You are brief.",
  "temperature": 0.7,
  "top_k": 40
}
"#;

/// A generateContent body as the engine writes it.
const GEMINI_BODY: &str = r#"{
  "contents": [
    {
      "parts": [
        {
          "text": "你好"
        }
      ],
      "role": "user"
    }
  ],
  "generationConfig": {
    "maxOutputTokens": 256,
    "temperature": 0.2
  },
  "systemInstruction": {
    "parts": [
      {
        "text": "You are brief."
      }
    ]
  }
}
"#;

async fn count(
    connection: &Connection,
    key: Option<&str>,
    model: Option<&str>,
    body: &str,
    options: &SendOptions,
) -> Result<u64, SendError> {
    let request = count_request(connection, model, body.as_bytes())?;
    count_tokens(connection, key.map(ApiKey::new), &request, options).await
}

fn expect_err(result: Result<u64, SendError>) -> SendError {
    match result {
        Ok(n) => panic!("expected an error, got a count of {n}"),
        Err(e) => e,
    }
}

/// No header but the dialect's auth header carries the key, and no error text ever does.
fn key_only_in(request: &double::Recorded, header: &str) {
    let carrying: Vec<_> = request
        .headers
        .iter()
        .filter(|(_, v)| v.contains(KEY))
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(carrying, [header]);
    assert!(!String::from_utf8_lossy(&request.body).contains(KEY));
}

#[tokio::test]
async fn anthropic_count_tokens_gets_the_input_fields_with_the_messages_headers() {
    let answer = json("200 OK", r#"{"input_tokens":1234}"#, &[]);
    let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
    let mut conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    conn.extra_headers
        .insert("anthropic-beta".into(), "some-beta".into());
    let n = count(&conn, Some(KEY), None, ANTHROPIC_BODY, &quick()).await;
    assert_eq!(n.ok(), Some(1234));

    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    let request = &recorded[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/messages/count_tokens");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("anthropic-beta"), Some("some-beta"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    key_only_in(request, "x-api-key");
    assert_eq!(
        String::from_utf8_lossy(&request.body),
        r#"{"messages":[{"content":"Bonjour, ça va ? 😀","role":"user"}],"model":"claude-sonnet-4-5","system":"You are brief."}"#
    );
}

#[tokio::test]
async fn gemini_count_tokens_gets_the_whole_request_with_its_model() {
    let answer = json(
        "200 OK",
        r#"{"totalTokens":31,"promptTokensDetails":[{"modality":"TEXT","tokenCount":31}]}"#,
        &[],
    );
    let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
    let conn = Connection::new("gemini", Dialect::Gemini, double.base(""));
    let n = count(
        &conn,
        Some(KEY),
        Some("gemini-2.5-flash"),
        GEMINI_BODY,
        &quick(),
    )
    .await;
    assert_eq!(n.ok(), Some(31));

    let recorded = double.recorded();
    assert_eq!(recorded.len(), 1);
    let request = &recorded[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1beta/models/gemini-2.5-flash:countTokens");
    assert_eq!(request.header("x-goog-api-key"), Some(KEY));
    key_only_in(request, "x-goog-api-key");
    assert_eq!(
        String::from_utf8_lossy(&request.body),
        r#"{"generateContentRequest":{"contents":[{"parts":[{"text":"你好"}],"role":"user"}],"generationConfig":{"maxOutputTokens":256,"temperature":0.2},"model":"models/gemini-2.5-flash","systemInstruction":{"parts":[{"text":"You are brief."}]}}}"#
    );
}

#[test]
fn the_endpoint_is_named_for_saying_where_a_count_came_from() {
    let a = Connection::new("a", Dialect::Anthropic, "https://h");
    let r = count_request(&a, None, ANTHROPIC_BODY.as_bytes()).expect("a request");
    assert_eq!(r.endpoint, CountEndpoint::AnthropicCountTokens);
    assert_eq!(r.endpoint.name(), "Anthropic count_tokens");
    assert_eq!(
        CountEndpoint::of(Dialect::Gemini).map(CountEndpoint::name),
        Some("Gemini countTokens")
    );
    assert_eq!(CountEndpoint::of(Dialect::OpenaiCompatible), None);
}

#[tokio::test]
async fn a_missing_key_is_refused_before_anything_is_sent() {
    let double = Double::start(|_, _| vec![Step::Write(json("200 OK", "{}", &[]))]).await;
    let conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    for key in [None, Some("")] {
        let err = expect_err(count(&conn, key, None, ANTHROPIC_BODY, &quick()).await);
        assert_eq!(err.code(), "missing_key");
    }
    assert!(double.recorded().is_empty());
}

#[tokio::test]
async fn an_error_status_gives_the_providers_words_and_never_the_key() {
    let answer = json(
        "401 Unauthorized",
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        &[],
    );
    let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
    let conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    let err = expect_err(count(&conn, Some(KEY), None, ANTHROPIC_BODY, &quick()).await);
    assert_eq!(err.code(), "http_status");
    let text = err.to_string();
    assert!(
        text.starts_with("HTTP 401 Unauthorized from http://127.0.0.1:")
            && text.ends_with("/v1/messages/count_tokens: invalid x-api-key"),
        "{text}"
    );
    assert!(!text.contains(KEY) && !format!("{err:?}").contains(KEY));
}

#[tokio::test]
async fn a_429_is_retried_as_a_send_is() {
    let busy = json(
        "429 Too Many Requests",
        r#"{"error":{"message":"slow down"}}"#,
        &[("retry-after", "0")],
    );
    let ok = json("200 OK", r#"{"totalTokens":5}"#, &[]);
    let double = Double::start(move |n, _| {
        vec![Step::Write(if n == 0 { busy.clone() } else { ok.clone() })]
    })
    .await;
    let conn = Connection::new("gemini", Dialect::Gemini, double.base(""));
    let n = count(&conn, Some(KEY), Some("g"), GEMINI_BODY, &quick()).await;
    assert_eq!(n.ok(), Some(5));
    assert_eq!(double.recorded().len(), 2);
}

#[tokio::test]
async fn bad_replies_are_clear_errors() {
    let cases: [(&str, &str); 4] = [
        ("<html>gateway</html>", "is not JSON: <html>gateway</html>"),
        (r#"{"tokens":3}"#, "has no \"totalTokens\""),
        (r#"{"totalTokens":-3}"#, "is not a whole number: -3"),
        (r#"{"totalTokens":2.5}"#, "is not a whole number: 2.5"),
    ];
    for (reply, said) in cases {
        let answer = json("200 OK", reply, &[]);
        let double = Double::start(move |_, _| vec![Step::Write(answer.clone())]).await;
        let conn = Connection::new("gemini", Dialect::Gemini, double.base(""));
        let err = expect_err(count(&conn, Some(KEY), Some("g"), GEMINI_BODY, &quick()).await);
        assert_eq!(err.code(), "bad_reply", "{reply}");
        let text = err.to_string();
        assert!(
            text.starts_with("the reply cannot be read: the Gemini countTokens reply")
                && text.contains(said),
            "{reply}: {text}"
        );
    }
}

#[tokio::test]
async fn an_oversized_reply_is_refused() {
    let mut big = head("200 OK", "application/json", &[]);
    big.extend_from_slice(
        format!("{{\"input_tokens\":1,\"x\":\"{}\"}}", "a".repeat(70_000)).as_bytes(),
    );
    let double = Double::start(move |_, _| vec![Step::Write(big.clone())]).await;
    let conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    let err = expect_err(count(&conn, Some(KEY), None, ANTHROPIC_BODY, &quick()).await);
    assert_eq!(err.code(), "reply_too_large");
}

#[tokio::test]
async fn a_silent_provider_times_out() {
    let double = Double::start(|_, _| vec![Step::Sleep(Duration::from_secs(3))]).await;
    let conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    let options = SendOptions {
        first_byte_timeout: Duration::from_millis(300),
        ..quick()
    };
    let err = expect_err(count(&conn, Some(KEY), None, ANTHROPIC_BODY, &options).await);
    match err {
        SendError::Timeout { phase, .. } => assert_eq!(phase, TimeoutPhase::FirstByte),
        other => panic!("expected a timeout, got {other}"),
    }
    // A reply that starts and then stalls.
    let mut started = head("200 OK", "application/json", &[]);
    started.extend_from_slice(b"{\"input_tokens\":");
    let double = Double::start(move |_, _| {
        vec![
            Step::Write(started.clone()),
            Step::Sleep(Duration::from_secs(3)),
        ]
    })
    .await;
    let conn = Connection::new("claude", Dialect::Anthropic, double.base(""));
    let options = SendOptions {
        idle_timeout: Duration::from_millis(300),
        ..quick()
    };
    let err = expect_err(count(&conn, Some(KEY), None, ANTHROPIC_BODY, &options).await);
    assert_eq!(err.code(), "timeout");
    assert!(
        err.to_string().contains("between two parts of the reply"),
        "{err}"
    );
}
