//! Asking the provider how many input tokens a request costs, for the dialects whose API has an
//! endpoint for it. Never called by a send: a front door calls it when the user asks.
//!
//! The shapes follow each provider's public API reference:
//!
//! - Anthropic, "Count Message tokens" (`POST /v1/messages/count_tokens`,
//!   <https://docs.anthropic.com/en/api/messages-count-tokens>): the same headers as the Messages
//!   API (`x-api-key`, `anthropic-version`), and a body with the Messages body's input fields only:
//!   `model` and `messages` (required), `system`, `tools`, `tool_choice`, `thinking`,
//!   `output_config` and `cache_control`, and the beta fields `mcp_servers` and
//!   `context_management` (sent only with an `anthropic-beta` header, which a connection's extra
//!   headers carry). What only generating takes (`max_tokens`, `stream`, `temperature`, `top_p`,
//!   `top_k`, `stop_sequences`, `metadata`, ...) is left out: the endpoint refuses fields it does
//!   not know. The reply is `{"input_tokens": N}`.
//! - Gemini, `models.countTokens` (`POST /v1beta/{model=models/*}:countTokens`,
//!   <https://ai.google.dev/api/tokens>): the key in `x-goog-api-key` as for `generateContent`,
//!   and the body `{"generateContentRequest": {"model": "models/{model}", ...}}`, the
//!   `generateContent` body whole (contents, system instruction, generation config, ...) with the
//!   model named, so that everything the request would send is counted. The reply is
//!   `{"totalTokens": N, ...}`.
//!
//! Errors are the sender's: an HTTP error status with the provider's own words, a network
//! failure, a timeout, a reply that cannot be read.

use serde_json::{Map, Value};

use crate::connection::Connection;
use crate::dialect::Dialect;
use crate::error::SendError;
use crate::http::exchange;
use crate::key::ApiKey;
use crate::options::SendOptions;
use crate::request::{anthropic_path, gemini_model, gemini_path};

/// The largest count reply read; a count is a few dozen bytes.
const MAX_COUNT_REPLY: usize = 64 * 1024;

/// The Messages body fields Anthropic's count_tokens endpoint takes.
const ANTHROPIC_COUNT_FIELDS: [&str; 10] = [
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "thinking",
    "output_config",
    "cache_control",
    "mcp_servers",
    "context_management",
];

/// A provider's token-counting endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CountEndpoint {
    /// Anthropic's `POST /v1/messages/count_tokens`.
    AnthropicCountTokens,
    /// Gemini's `models.countTokens`.
    GeminiCountTokens,
}

impl CountEndpoint {
    /// The endpoint of `dialect`, when its API has one.
    pub fn of(dialect: Dialect) -> Option<CountEndpoint> {
        match dialect {
            Dialect::Anthropic => Some(CountEndpoint::AnthropicCountTokens),
            Dialect::Gemini => Some(CountEndpoint::GeminiCountTokens),
            Dialect::Openai
            | Dialect::OpenaiCompatible
            | Dialect::Llamacpp
            | Dialect::Koboldcpp => None,
        }
    }

    /// The endpoint as people know it, for saying where a count came from.
    pub fn name(self) -> &'static str {
        match self {
            CountEndpoint::AnthropicCountTokens => "Anthropic count_tokens",
            CountEndpoint::GeminiCountTokens => "Gemini countTokens",
        }
    }
}

/// A count request, made and checked before anything is sent: where it goes, and the exact body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountRequest {
    pub endpoint: CountEndpoint,
    /// The URL the request goes to.
    pub url: String,
    /// The model counted for.
    pub model: String,
    /// The body, byte for byte what is sent (compact JSON).
    pub body: Vec<u8>,
}

/// The count request for `body`, a request body in the connection's dialect (what
/// [`crate::send`] would send). `model` names the model for Gemini, whose body does not carry it
/// (the connection's default model when `None`); Anthropic's is read from the body.
///
/// A dialect without a token-counting endpoint is [`SendError::NoTokenCount`]; a body that is not
/// a JSON object, or an Anthropic body without a model, is [`SendError::CountBody`].
pub fn count_request(
    connection: &Connection,
    model: Option<&str>,
    body: &[u8],
) -> Result<CountRequest, SendError> {
    connection.validate()?;
    let endpoint =
        CountEndpoint::of(connection.dialect).ok_or_else(|| SendError::NoTokenCount {
            connection: connection.name.clone(),
            dialect: connection.dialect.to_string(),
        })?;
    let fields = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return Err(SendError::count_body("it is not a JSON object")),
        Err(e) => return Err(SendError::count_body(format!("it is not JSON: {e}"))),
    };
    let mut url = connection.parsed_base_url()?;
    let base = url.path().trim_end_matches('/').to_string();
    let (model, counted) = match endpoint {
        CountEndpoint::AnthropicCountTokens => {
            let model = match fields.get("model") {
                Some(Value::String(m)) if !m.trim().is_empty() => m.clone(),
                _ => return Err(SendError::count_body("it names no model")),
            };
            let counted: Map<String, Value> = fields
                .into_iter()
                .filter(|(k, _)| ANTHROPIC_COUNT_FIELDS.contains(&k.as_str()))
                .collect();
            url.set_path(&anthropic_path(&base, "messages/count_tokens"));
            (model, counted)
        }
        CountEndpoint::GeminiCountTokens => {
            let model = gemini_model(connection, model)?.to_string();
            let mut request = fields;
            request.insert("model".into(), Value::String(format!("models/{model}")));
            url.set_path(&gemini_path(&base, &model, "countTokens"));
            let mut counted = Map::new();
            counted.insert("generateContentRequest".into(), Value::Object(request));
            (model, counted)
        }
    };
    let body = serde_json::to_vec(&Value::Object(counted))
        .map_err(|e| SendError::count_body(e.to_string()))?;
    Ok(CountRequest {
        endpoint,
        url: url.to_string(),
        model,
        body,
    })
}

/// Asks the provider for the input tokens of `request` (made by [`count_request`] for the same
/// connection): posts its body with the connection's headers and key, retries a 429 or 5xx as a
/// send does, and reads the count from the reply. The key is required, as for sending.
pub async fn count_tokens(
    connection: &Connection,
    key: Option<ApiKey>,
    request: &CountRequest,
    options: &SendOptions,
) -> Result<u64, SendError> {
    let reply = exchange(
        connection,
        key,
        true,
        &request.url,
        "count",
        &request.body,
        options,
        "the count reply",
        MAX_COUNT_REPLY,
    )
    .await?;
    read_count(request.endpoint, &reply)
}

/// The count in a reply of `endpoint`.
pub fn read_count(endpoint: CountEndpoint, reply: &[u8]) -> Result<u64, SendError> {
    let field = match endpoint {
        CountEndpoint::AnthropicCountTokens => "input_tokens",
        CountEndpoint::GeminiCountTokens => "totalTokens",
    };
    let value: Value = crate::pruned::from_slice(reply).map_err(|_| {
        SendError::bad_reply(format!(
            "the {} reply is not JSON: {}",
            endpoint.name(),
            crate::decode::provider_error_text(reply)
        ))
    })?;
    match value.get(field) {
        Some(n) => n.as_u64().ok_or_else(|| {
            SendError::bad_reply(format!(
                "the {} reply's \"{field}\" is not a whole number: {}",
                endpoint.name(),
                crate::text::escape_control(&shorten(&n.to_string()))
            ))
        }),
        None => Err(SendError::bad_reply(format!(
            "the {} reply has no \"{field}\": {}",
            endpoint.name(),
            crate::text::escape_control(&shorten(&String::from_utf8_lossy(reply)))
        ))),
    }
}

/// At most 200 characters of `text`, for a message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(dialect: Dialect, base: &str) -> Connection {
        Connection::new("c", dialect, base)
    }

    #[test]
    fn anthropic_keeps_the_input_fields_only() {
        let body = br#"{"model":"claude-x","max_tokens":512,"stream":true,"temperature":0.5,
            "top_p":0.9,"top_k":4,"stop_sequences":["x"],"metadata":{"user_id":"u"},
            "system":"Be brief.","messages":[{"role":"user","content":"Hi"}],
            "tools":[],"thinking":{"type":"enabled","budget_tokens":1024}}"#;
        let r =
            count_request(&conn(Dialect::Anthropic, "https://h"), None, body).expect("a request");
        assert_eq!(r.url, "https://h/v1/messages/count_tokens");
        assert_eq!(r.model, "claude-x");
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            r#"{"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","system":"Be brief.","thinking":{"budget_tokens":1024,"type":"enabled"},"tools":[]}"#
        );
        let r = count_request(&conn(Dialect::Anthropic, "https://gw/x/v1/"), None, body)
            .expect("a request");
        assert_eq!(r.url, "https://gw/x/v1/messages/count_tokens");
    }

    #[test]
    fn gemini_wraps_the_whole_body_with_the_model() {
        let body = br#"{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],
            "systemInstruction":{"parts":[{"text":"Be brief."}]},
            "generationConfig":{"maxOutputTokens":64}}"#;
        let g = conn(Dialect::Gemini, "https://g");
        let r = count_request(&g, Some("models/gemini-2.5-flash"), body).expect("a request");
        assert_eq!(
            r.url,
            "https://g/v1beta/models/gemini-2.5-flash:countTokens"
        );
        assert_eq!(r.model, "gemini-2.5-flash");
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            r#"{"generateContentRequest":{"contents":[{"parts":[{"text":"Hi"}],"role":"user"}],"generationConfig":{"maxOutputTokens":64},"model":"models/gemini-2.5-flash","systemInstruction":{"parts":[{"text":"Be brief."}]}}}"#
        );
        let g = conn(Dialect::Gemini, "https://g/v1");
        let r = count_request(&g, Some("a/b"), body).expect("a request");
        assert_eq!(r.url, "https://g/v1/models/a%2Fb:countTokens");
        let err = count_request(&g, None, body).err().map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("needs a model"));
    }

    #[test]
    fn dialects_without_an_endpoint_and_bad_bodies_are_named() {
        for dialect in [
            Dialect::Openai,
            Dialect::OpenaiCompatible,
            Dialect::Llamacpp,
            Dialect::Koboldcpp,
        ] {
            let c = Connection::new("local", dialect, "http://127.0.0.1:1");
            let err = count_request(&c, Some("m"), b"{}").err();
            let text = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
            assert_eq!(
                text,
                format!("connection \"local\" ({dialect}) has no token-counting endpoint")
            );
            assert_eq!(
                err.map(|e| e.code()),
                Some(promptloom_engine::codes::INVALID_CONNECTION)
            );
        }
        let a = conn(Dialect::Anthropic, "https://h");
        for (body, why) in [
            (&b"[1]"[..], "not a JSON object"),
            (b"{nope", "not JSON"),
            (b"{\"messages\":[]}", "names no model"),
        ] {
            let err = count_request(&a, None, body).err().map(|e| e.to_string());
            let err = err.unwrap_or_default();
            assert!(
                err.starts_with("the request body cannot be counted"),
                "{err}"
            );
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn replies_are_read_or_refused_clearly() {
        use CountEndpoint::*;
        assert_eq!(
            read_count(AnthropicCountTokens, br#"{"input_tokens":42}"#),
            Ok(42)
        );
        assert_eq!(
            read_count(
                GeminiCountTokens,
                br#"{"totalTokens":7,"promptTokensDetails":[{"modality":"TEXT","tokenCount":7}]}"#
            ),
            Ok(7)
        );
        let err = |e: CountEndpoint, r: &[u8]| {
            read_count(e, r)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            err(AnthropicCountTokens, b"{\"tokens\":1}"),
            "the reply cannot be read: the Anthropic count_tokens reply has no \"input_tokens\": {\"tokens\":1}"
        );
        assert!(err(GeminiCountTokens, br#"{"totalTokens":-1}"#).contains("not a whole number"));
        assert!(err(GeminiCountTokens, br#"{"totalTokens":"7"}"#).contains("not a whole number"));
        assert!(
            err(GeminiCountTokens, b"<html>oops</html>").contains("is not JSON: <html>oops</html>")
        );
    }
}
