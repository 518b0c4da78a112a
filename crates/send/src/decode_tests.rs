//! Tests of the per-dialect decoding.

use super::*;

fn ev(event: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: event.map(str::to_string),
        data: data.to_string(),
        id: None,
    }
}

fn decode(dialect: Dialect, events: &[SseEvent]) -> Vec<StreamEvent> {
    let mut d = Decoder::new(dialect);
    events
        .iter()
        .flat_map(|e| {
            d.event(e)
                .unwrap_or_else(|e| vec![StreamEvent::Error(e.to_string())])
        })
        .collect()
}

use StreamEvent::{Delta, Done, Error, Finish};

#[test]
fn openai_stream() {
    let got = decode(
        Dialect::Openai,
        &[
            ev(
                None,
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            ),
            ev(
                None,
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}"#,
            ),
            ev(
                None,
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            ),
            ev(
                None,
                r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#,
            ),
            ev(None, "[DONE]"),
        ],
    );
    assert_eq!(
        got,
        [
            Delta("Hi".into()),
            Finish("stop".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(9),
                completion_tokens: Some(2)
            },
            Done
        ]
    );
}

#[test]
fn anthropic_stream() {
    let got = decode(
        Dialect::Anthropic,
        &[
            ev(
                Some("message_start"),
                r#"{"type":"message_start","message":{"id":"m","content":[],"usage":{"input_tokens":25,"output_tokens":1}}}"#,
            ),
            ev(
                Some("content_block_start"),
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ev(Some("ping"), r#"{"type":"ping"}"#),
            ev(
                Some("content_block_delta"),
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
            ),
            ev(
                Some("content_block_delta"),
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
            ),
            ev(
                Some("content_block_stop"),
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            ev(
                Some("message_delta"),
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}"#,
            ),
            ev(Some("message_stop"), r#"{"type":"message_stop"}"#),
        ],
    );
    assert_eq!(
        got,
        [
            StreamEvent::Usage {
                prompt_tokens: Some(25),
                completion_tokens: None
            },
            Delta("Hello".into()),
            Finish("end_turn".into()),
            StreamEvent::Usage {
                prompt_tokens: None,
                completion_tokens: Some(15)
            },
            Done
        ]
    );
    let got = decode(
        Dialect::Anthropic,
        &[ev(
            Some("error"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )],
    );
    assert_eq!(got, [Error("Overloaded".into())]);
}

#[test]
fn gemini_stream() {
    let got = decode(
        Dialect::Gemini,
        &[
            ev(
                None,
                r#"{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"Hel"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}"#,
            ),
            ev(
                None,
                r#"{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"totalTokenCount":6}}"#,
            ),
        ],
    );
    assert_eq!(
        got,
        [
            Delta("Hel".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(4),
                completion_tokens: None
            },
            Delta("lo".into()),
            Finish("STOP".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(4),
                completion_tokens: Some(2)
            },
        ]
    );
}

#[test]
fn not_json_is_a_clear_error() {
    let mut d = Decoder::new(Dialect::Openai);
    let err = d
        .event(&ev(None, "<html>\u{1b}[31m"))
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.contains("not JSON") && err.contains("<html>\\e[31m"),
        "{err}"
    );
}

#[test]
fn whole_replies() {
    let openai = br#"{"choices":[{"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
    assert_eq!(
        decode_full(Dialect::Openai, openai).ok(),
        Some(vec![
            Delta("Hi there".into()),
            Finish("stop".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(5),
                completion_tokens: Some(2)
            }
        ])
    );
    let anthropic = br#"{"type":"message","content":[{"type":"text","text":"A"},{"type":"tool_use"},{"type":"text","text":"B"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":4}}"#;
    assert_eq!(
        decode_full(Dialect::Anthropic, anthropic).ok(),
        Some(vec![
            Delta("AB".into()),
            Finish("max_tokens".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(3),
                completion_tokens: Some(4)
            }
        ])
    );
    let gemini = br#"{"candidates":[{"content":{"parts":[{"text":"x"},{"text":"y"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}}"#;
    assert_eq!(
        decode_full(Dialect::Gemini, gemini).ok(),
        Some(vec![
            Delta("xy".into()),
            Finish("STOP".into()),
            StreamEvent::Usage {
                prompt_tokens: Some(1),
                completion_tokens: Some(2)
            }
        ])
    );
    assert_eq!(decode_full(Dialect::Gemini, b"{}").ok(), None);
    assert!(decode_full(Dialect::Openai, b"nope").is_err());
}

#[test]
fn error_texts() {
    assert_eq!(
        provider_error_text(
            br#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#
        ),
        "Incorrect API key"
    );
    assert_eq!(
        provider_error_text(br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
        "invalid x-api-key"
    );
    assert_eq!(
        provider_error_text(br#"[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}]"#),
        "API key not valid."
    );
    assert_eq!(
        provider_error_text(br#"{"error":"model not found"}"#),
        "model not found"
    );
    let long = format!("<html>{}</html>\x07", "a".repeat(600));
    let shown = provider_error_text(long.as_bytes());
    assert!(shown.starts_with("<html>aaa") && shown.ends_with('…') && shown.len() < 510);
    assert_eq!(provider_error_text(b"bad\nthing\x07"), "bad\\nthing\\x07");
    assert_eq!(provider_error_text(b""), "(the reply had no body)");
}

// RULES 5.12: the text-completion replies, streamed and whole.
#[test]
fn text_completion_replies() {
    let usage = |p, c| StreamEvent::Usage {
        prompt_tokens: Some(p),
        completion_tokens: Some(c),
    };
    // OpenAI Completions: `choices[0].text`.
    let got = decode(
        Dialect::OpenaiCompatible,
        &[
            ev(
                None,
                r#"{"choices":[{"text":"The la","finish_reason":null}]}"#,
            ),
            ev(
                None,
                r#"{"choices":[{"text":"mp.","finish_reason":"stop"}]}"#,
            ),
            ev(
                None,
                r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}"#,
            ),
            ev(None, "[DONE]"),
        ],
    );
    assert_eq!(
        got,
        vec![
            Delta("The la".into()),
            Delta("mp.".into()),
            Finish("stop".into()),
            usage(9, 3),
            Done
        ]
    );
    let whole = br#"{"choices":[{"text":"Lit.","finish_reason":"length"}]}"#;
    assert_eq!(
        decode_full(Dialect::Openai, whole).ok(),
        Some(vec![Delta("Lit.".into()), Finish("length".into())])
    );
    // llama.cpp: pieces of `content`, the last with `stop` and the counts.
    let got = decode(
        Dialect::Llamacpp,
        &[
            ev(None, r#"{"content":"It ","stop":false}"#),
            ev(None, r#"{"content":"is.","stop":false}"#),
            ev(
                None,
                r#"{"content":"","stop":true,"stop_type":"word","stopping_word":"<|im_end|>","tokens_evaluated":40,"tokens_predicted":2}"#,
            ),
        ],
    );
    assert_eq!(
        got,
        vec![
            Delta("It ".into()),
            Delta("is.".into()),
            Finish("word".into()),
            usage(40, 2)
        ]
    );
    // An older server's flags.
    let old = br#"{"content":"Yes.","stop":true,"stopped_eos":true,"tokens_evaluated":7,"tokens_predicted":1}"#;
    assert_eq!(
        decode_full(Dialect::Llamacpp, old).ok(),
        Some(vec![
            Delta("Yes.".into()),
            Finish("eos".into()),
            usage(7, 1)
        ])
    );
    // KoboldCpp: `token` events, a whole reply in `results`.
    let got = decode(
        Dialect::Koboldcpp,
        &[
            ev(Some("message"), r#"{"token":"Aye","finish_reason":null}"#),
            ev(Some("message"), r#"{"token":".","finish_reason":"stop"}"#),
        ],
    );
    assert_eq!(
        got,
        vec![
            Delta("Aye".into()),
            Delta(".".into()),
            Finish("stop".into())
        ]
    );
    let whole = br#"{"results":[{"text":"Aye.","finish_reason":"length","prompt_tokens":12,"completion_tokens":2}]}"#;
    assert_eq!(
        decode_full(Dialect::Koboldcpp, whole).ok(),
        Some(vec![
            Delta("Aye.".into()),
            Finish("length".into()),
            usage(12, 2)
        ])
    );
    // Not a reply of the dialect: a clear error.
    assert!(decode_full(Dialect::Koboldcpp, br#"{"content":"x"}"#).is_err());
    assert!(decode_full(Dialect::Llamacpp, br#"{"results":[]}"#).is_err());
}
