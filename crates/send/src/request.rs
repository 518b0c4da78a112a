//! The request per dialect: its URL and its headers. The body is never looked at here.
//!
//! URLs, from the connection's base URL (its path; a query in it is kept):
//!
//! | dialect | URL |
//! |---|---|
//! | `openai`, `openai-compatible` | `{base}/chat/completions`; text completion: `{base}/completions` |
//! | `llamacpp` (text completion only) | `{base}/completion` |
//! | `koboldcpp` (text completion only) | `{base}/api/v1/generate`; streaming: `{base}/api/extra/generate/stream` |
//! | `anthropic` | `{base}/messages` when the base path ends in `/v1`, else `{base}/v1/messages` |
//! | `gemini` | `{base}/v1beta/models/{model}:streamGenerateContent?alt=sse` when streaming, `...:generateContent` otherwise; when the base path already ends in a version (`/v1`, `/v1beta`, `/v1alpha`), `{base}/models/...` |
//!
//! Counting input tokens ([`crate::count_tokens`]): `anthropic` at `{base}/v1/messages/count_tokens`
//! (`{base}/messages/count_tokens` after `/v1`), `gemini` at `{base}/v1beta/models/{model}:countTokens`
//! (the same version rule); the other dialects have no such endpoint.
//!
//! Headers: `content-type: application/json`, then the key (`authorization: Bearer KEY` for the
//! OpenAI dialects and the local servers', `x-api-key: KEY` with `anthropic-version: 2023-06-01` for Anthropic,
//! `x-goog-api-key: KEY` for Gemini), then the connection's extra headers, which replace a
//! built-in header of the same name.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use reqwest::Url;

use crate::connection::Connection;
use crate::dialect::Dialect;
use crate::error::SendError;
use crate::key::{ApiKey, REDACTED};

/// The Anthropic API version this crate's decoding follows.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// What one request asks of its endpoint: a streamed reply or not, and a chat or a text
/// completion (a prompt string, RULES 5.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Call {
    pub stream: bool,
    pub completion: bool,
}

impl Call {
    /// A chat request.
    pub fn chat(stream: bool) -> Self {
        Call {
            stream,
            completion: false,
        }
    }
}

/// The URL a request goes to. `model` is needed by Gemini only (it is part of the path); the
/// other dialects carry it in the body. A text completion through a dialect without one, or a
/// chat through a dialect of text completion only, is an error that says so.
pub fn request_url(
    connection: &Connection,
    model: Option<&str>,
    call: Call,
) -> Result<Url, SendError> {
    let mut url = connection.parsed_base_url()?;
    let base = url.path().trim_end_matches('/').to_string();
    let stream = call.stream;
    match (connection.dialect, call.completion) {
        (Dialect::Anthropic | Dialect::Gemini, true) => {
            return Err(connection.invalid(format!(
                "the {} API has no text completion; send this preset through an OpenAI-style, \
                 llama.cpp or KoboldCpp connection, or turn text completion off",
                connection.dialect
            )));
        }
        (Dialect::Llamacpp | Dialect::Koboldcpp, false) => {
            return Err(connection.invalid(format!(
                "{} takes text completion only; give the preset an instruct template",
                connection.dialect
            )));
        }
        _ => {}
    }
    match connection.dialect {
        Dialect::Openai | Dialect::OpenaiCompatible if call.completion => {
            url.set_path(&format!("{base}/completions"));
        }
        Dialect::Openai | Dialect::OpenaiCompatible => {
            url.set_path(&format!("{base}/chat/completions"));
        }
        Dialect::Llamacpp => url.set_path(&format!("{base}/completion")),
        Dialect::Koboldcpp if stream => {
            url.set_path(&format!("{base}/api/extra/generate/stream"));
        }
        Dialect::Koboldcpp => url.set_path(&format!("{base}/api/v1/generate")),
        Dialect::Anthropic => url.set_path(&anthropic_path(&base, "messages")),
        Dialect::Gemini => {
            let model = gemini_model(connection, model)?;
            let method = if stream {
                "streamGenerateContent"
            } else {
                "generateContent"
            };
            url.set_path(&gemini_path(&base, model, method));
            if stream {
                url.query_pairs_mut().append_pair("alt", "sse");
            }
        }
    }
    Ok(url)
}

/// An Anthropic endpoint's path under the base path: `{base}/{endpoint}` when the base path ends
/// in `/v1`, else `{base}/v1/{endpoint}`.
pub(crate) fn anthropic_path(base: &str, endpoint: &str) -> String {
    if base.ends_with("/v1") {
        format!("{base}/{endpoint}")
    } else {
        format!("{base}/v1/{endpoint}")
    }
}

/// The model a Gemini request names in its URL: the one given, else the connection's default,
/// without a `models/` prefix.
pub(crate) fn gemini_model<'m>(
    connection: &'m Connection,
    model: Option<&'m str>,
) -> Result<&'m str, SendError> {
    let model = model
        .or(connection.default_model.as_deref())
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            connection.invalid("Gemini needs a model name in the URL and none was given")
        })?;
    Ok(model.strip_prefix("models/").unwrap_or(model))
}

/// A Gemini model method's path under the base path: `{base}/v1beta/models/{model}:{method}`, or
/// `{base}/models/...` when the base path already ends in a version.
pub(crate) fn gemini_path(base: &str, model: &str, method: &str) -> String {
    let version = ["/v1", "/v1beta", "/v1alpha"]
        .iter()
        .any(|v| base.ends_with(v));
    let prefix = if version {
        base.to_string()
    } else {
        format!("{base}/v1beta")
    };
    format!("{prefix}/models/{}:{method}", encode_segment(model))
}

/// Percent-encodes everything but unreserved characters, so a model name stays one path segment.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The built-in headers as (name, value) pairs, with `key` as the key's text (the real key, or
/// the redaction for display).
fn builtin(dialect: Dialect, key: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![("content-type", "application/json".to_string())];
    match (dialect, key) {
        (
            Dialect::Openai | Dialect::OpenaiCompatible | Dialect::Llamacpp | Dialect::Koboldcpp,
            Some(k),
        ) => {
            headers.push(("authorization", format!("Bearer {k}")));
        }
        (Dialect::Anthropic, k) => {
            if let Some(k) = k {
                headers.push(("x-api-key", k.to_string()));
            }
            headers.push(("anthropic-version", ANTHROPIC_VERSION.to_string()));
        }
        (Dialect::Gemini, Some(k)) => headers.push(("x-goog-api-key", k.to_string())),
        _ => {}
    }
    headers
}

/// The headers that go on the wire, key included. An empty key counts as none.
pub(crate) fn request_headers(
    connection: &Connection,
    key: Option<&ApiKey>,
) -> Result<HeaderMap, SendError> {
    let key = key.filter(|k| !k.is_empty());
    let mut map = HeaderMap::new();
    for (name, value) in builtin(connection.dialect, key.map(ApiKey::expose)) {
        // A key with characters HTTP does not allow; the message must not show it.
        let value = HeaderValue::from_str(&value).map_err(|_| {
            connection.invalid("the API key has characters that cannot go in an HTTP header")
        })?;
        let mut value = value;
        if name != "content-type" && name != "anthropic-version" {
            value.set_sensitive(true);
        }
        map.insert(HeaderName::from_static(name), value);
    }
    for (name, value) in &connection.extra_headers {
        let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            // validate() names the header; run it for the message.
            connection.validate()?;
            continue;
        };
        if is_secret_header(name.as_str()) {
            value.set_sensitive(true);
        }
        map.insert(name, value);
    }
    if !map.contains_key(CONTENT_TYPE) {
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    Ok(map)
}

/// Whether a header's value should be hidden when shown (and kept out of anything stored): the
/// ones that carry credentials, by name.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "authorization" | "proxy-authorization" | "cookie" | "x-api-key" | "x-goog-api-key"
    ) || ["key", "token", "secret", "auth", "password"]
        .iter()
        .any(|w| name.contains(w))
}

/// The headers a request would carry, for showing to the user: the key is never included. With
/// `has_key` the auth header appears redacted (`authorization: Bearer ••••`); extra headers whose
/// names suggest credentials (`*key*`, `*token*`, `*auth*`, ...) are redacted as well.
pub fn display_headers(connection: &Connection, has_key: bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = builtin(connection.dialect, has_key.then_some(REDACTED))
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
    for (name, value) in &connection.extra_headers {
        let lower = name.to_ascii_lowercase();
        let shown = if is_secret_header(&lower) {
            REDACTED.to_string()
        } else {
            crate::text::escape_control(value)
        };
        match out.iter_mut().find(|(n, _)| *n == lower) {
            Some(slot) => slot.1 = shown,
            None => out.push((lower, shown)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn(dialect: Dialect, base: &str) -> Connection {
        Connection::new("t", dialect, base)
    }

    fn url(c: &Connection, model: Option<&str>, stream: bool) -> String {
        request_url(c, model, Call::chat(stream))
            .map(|u| u.to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn urls_per_dialect() {
        let o = conn(Dialect::Openai, "https://api.openai.com/v1/");
        assert_eq!(
            url(&o, None, true),
            "https://api.openai.com/v1/chat/completions"
        );
        let a = conn(Dialect::Anthropic, "https://api.anthropic.com");
        assert_eq!(url(&a, None, true), "https://api.anthropic.com/v1/messages");
        let a = conn(Dialect::Anthropic, "https://gw.example/anthropic/v1");
        assert_eq!(
            url(&a, None, true),
            "https://gw.example/anthropic/v1/messages"
        );
        let g = conn(Dialect::Gemini, "https://generativelanguage.googleapis.com");
        assert_eq!(
            url(&g, Some("gemini-2.5-flash"), true),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&g, Some("models/gemini-2.5-flash"), false),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
        );
        let g = conn(Dialect::Gemini, "https://gw.example/v1");
        assert_eq!(
            url(&g, Some("a/b"), false),
            "https://gw.example/v1/models/a%2Fb:generateContent"
        );
        assert!(url(&g, None, false).contains("needs a model"));
        let q = conn(
            Dialect::OpenaiCompatible,
            "https://az.example/x?api-version=1",
        );
        assert_eq!(
            url(&q, None, true),
            "https://az.example/x/chat/completions?api-version=1"
        );
    }

    // RULES 5.12: a text completion goes to the dialect's completion endpoint.
    #[test]
    fn text_completion_urls_per_dialect() {
        let text = |c: &Connection, stream: bool| {
            request_url(
                c,
                None,
                Call {
                    stream,
                    completion: true,
                },
            )
            .map(|u| u.to_string())
            .unwrap_or_else(|e| e.to_string())
        };
        let o = conn(Dialect::OpenaiCompatible, "http://127.0.0.1:8080/v1/");
        assert_eq!(text(&o, true), "http://127.0.0.1:8080/v1/completions");
        let l = conn(Dialect::Llamacpp, "http://127.0.0.1:8080");
        assert_eq!(text(&l, true), "http://127.0.0.1:8080/completion");
        let k = conn(Dialect::Koboldcpp, "http://127.0.0.1:5001/");
        assert_eq!(text(&k, false), "http://127.0.0.1:5001/api/v1/generate");
        assert_eq!(
            text(&k, true),
            "http://127.0.0.1:5001/api/extra/generate/stream"
        );
        // Anthropic has no text completion; llama.cpp's own API has no chat.
        let a = conn(Dialect::Anthropic, "https://api.anthropic.com");
        assert!(text(&a, true).contains("no text completion"));
        assert!(url(&l, None, true).contains("instruct template"));
        // The local servers take a key as a bearer token.
        let h = request_headers(&l, Some(&ApiKey::new("pw"))).unwrap_or_default();
        assert_eq!(
            h.get("authorization").map(|v| v.as_bytes()),
            Some(&b"Bearer pw"[..])
        );
    }

    #[test]
    fn headers_per_dialect_and_redacted_display() {
        let key = ApiKey::new("sk-1");
        let h = request_headers(&conn(Dialect::Openai, "https://h"), Some(&key)).ok();
        let h = h.unwrap_or_default();
        assert_eq!(
            h.get("authorization").map(|v| v.as_bytes()),
            Some(&b"Bearer sk-1"[..])
        );
        let h = request_headers(&conn(Dialect::Anthropic, "https://h"), Some(&key)).ok();
        let h = h.unwrap_or_default();
        assert_eq!(h.get("x-api-key").map(|v| v.as_bytes()), Some(&b"sk-1"[..]));
        assert_eq!(
            h.get("anthropic-version").map(|v| v.as_bytes()),
            Some(&b"2023-06-01"[..])
        );
        let mut g = conn(Dialect::Gemini, "https://h");
        g.extra_headers.insert("X-Trace".into(), "1".into());
        g.extra_headers
            .insert("X-Custom-Token".into(), "secret".into());
        let shown = display_headers(&g, true);
        assert!(shown.contains(&("x-goog-api-key".into(), REDACTED.into())));
        assert!(shown.contains(&("x-trace".into(), "1".into())));
        assert!(shown.contains(&("x-custom-token".into(), REDACTED.into())));
        let shown = display_headers(&conn(Dialect::Openai, "https://h"), true);
        assert!(shown.contains(&("authorization".into(), format!("Bearer {REDACTED}"))));
        let none = display_headers(&conn(Dialect::OpenaiCompatible, "https://h"), false);
        assert_eq!(
            none,
            vec![("content-type".into(), "application/json".into())]
        );
    }

    #[test]
    fn extra_headers_replace_builtin_ones() {
        let mut c = conn(Dialect::Openai, "https://h");
        c.extra_headers
            .insert("Authorization".into(), "Token x".into());
        let h = request_headers(&c, Some(&ApiKey::new("k"))).unwrap_or_default();
        assert_eq!(h.get_all("authorization").iter().count(), 1);
        assert_eq!(
            h.get("authorization").map(|v| v.as_bytes()),
            Some(&b"Token x"[..])
        );
    }
}
