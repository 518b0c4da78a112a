//! A connection: where to send, in which dialect, with which extra headers.

use std::collections::BTreeMap;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::dialect::Dialect;
use crate::error::SendError;
use crate::key::ApiKey;

/// One provider endpoint the user can send to. The API key is not part of it: `key_env` names
/// the environment variable that holds it, or the caller keeps it elsewhere (a keychain) and
/// passes it to [`crate::send`] on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// What the user calls it; not empty.
    pub name: String,
    pub dialect: Dialect,
    /// The API's base URL, `http` or `https`, e.g. `https://api.openai.com/v1`. A query in it is
    /// kept (some gateways want `?api-version=...`); a fragment is refused.
    pub base_url: String,
    /// The model used when a send names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// Headers sent with every request, after the built-in ones; one with the same name as a
    /// built-in header (`authorization`, say) replaces it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_headers: BTreeMap<String, String>,
    /// Fields for whoever builds the body to merge into it (see [`Connection::apply_extra_body`]).
    /// The sender itself never changes a body.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
    /// The environment variable that holds the API key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    /// Timeouts in place of the defaults (see [`crate::SendOptions::for_connection`]).
    #[serde(default, skip_serializing_if = "Timeouts::is_unset")]
    pub timeouts: Timeouts,
}

impl Connection {
    /// A connection with only the required parts.
    pub fn new(name: impl Into<String>, dialect: Dialect, base_url: impl Into<String>) -> Self {
        Connection {
            name: name.into(),
            dialect,
            base_url: base_url.into(),
            default_model: None,
            extra_headers: BTreeMap::new(),
            extra_body: Map::new(),
            key_env: None,
            timeouts: Timeouts::default(),
        }
    }

    /// Checks everything that can be checked without the network: a name, a base URL that
    /// parses and is `http` or `https` with a host and no fragment, and extra headers whose
    /// names and values are valid HTTP, and timeouts from 1 s to a day.
    pub fn validate(&self) -> Result<(), SendError> {
        if self.name.trim().is_empty() {
            return Err(self.invalid("the name is empty"));
        }
        self.parsed_base_url()?;
        for (name, secs) in self.timeouts.named() {
            if let Some(secs) = secs.filter(|s| !(1..=Timeouts::MAX_SECS).contains(s)) {
                return Err(self.invalid(format!(
                    "timeout {name} is {secs} s; it must be from 1 to {} s (a day)",
                    Timeouts::MAX_SECS
                )));
            }
        }
        for (name, value) in &self.extra_headers {
            if HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(self.invalid(format!(
                    "extra header name \"{}\" is not a valid HTTP header name",
                    crate::text::escape_control(name)
                )));
            }
            if HeaderValue::from_str(value).is_err() {
                return Err(self.invalid(format!(
                    "extra header \"{name}\" has a value that is not valid in HTTP (line breaks or control characters)"
                )));
            }
        }
        Ok(())
    }

    /// The base URL, parsed and checked.
    pub(crate) fn parsed_base_url(&self) -> Result<Url, SendError> {
        let url = Url::parse(self.base_url.trim()).map_err(|e| {
            self.invalid(format!(
                "base URL \"{}\" does not parse: {e}",
                crate::text::escape_control(&self.base_url)
            ))
        })?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(self.invalid(format!(
                "base URL \"{}\" must start with http:// or https://",
                crate::text::escape_control(&self.base_url)
            )));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(self.invalid(format!("base URL \"{}\" has no host", self.base_url)));
        }
        if url.fragment().is_some() {
            return Err(self.invalid(format!(
                "base URL \"{}\" has a #fragment, which a request cannot use",
                self.base_url
            )));
        }
        Ok(url)
    }

    /// The key from `key_env`, when it names a variable that is set and not empty.
    pub fn key_from_env(&self) -> Option<ApiKey> {
        self.key_env.as_deref().and_then(ApiKey::from_env)
    }

    /// Merges `extra_body` into a body object (top-level fields; a field of the same name is
    /// replaced). For the code that builds bodies; a body that is not an object is left alone.
    pub fn apply_extra_body(&self, body: &mut Value) {
        if let Value::Object(fields) = body {
            for (k, v) in &self.extra_body {
                fields.insert(k.clone(), v.clone());
            }
        }
    }

    pub(crate) fn invalid(&self, message: impl Into<String>) -> SendError {
        SendError::InvalidConnection {
            name: self.name.clone(),
            message: message.into(),
        }
    }
}

/// The timeouts a user set on one connection, in whole seconds; an unset one keeps the default
/// of [`crate::SendOptions`]. A slow local model may need a longer total, a flaky proxy a
/// shorter one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Timeouts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_secs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_secs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_secs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_secs: Option<u32>,
}

impl Timeouts {
    /// The longest timeout a connection may set: one day.
    pub const MAX_SECS: u32 = 86_400;

    /// Nothing set: every timeout is the default.
    pub fn is_unset(&self) -> bool {
        *self == Timeouts::default()
    }

    /// Each one set, by its name as the connection's JSON spells it.
    pub(crate) fn named(&self) -> [(&'static str, Option<u32>); 4] {
        [
            ("connectSecs", self.connect_secs),
            ("firstByteSecs", self.first_byte_secs),
            ("idleSecs", self.idle_secs),
            ("totalSecs", self.total_secs),
        ]
    }
}

/// A provider everyone knows, for the connection editor to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WellKnown {
    pub name: &'static str,
    pub dialect: Dialect,
    pub base_url: &'static str,
}

impl WellKnown {
    /// A connection to it, without model, headers or key.
    pub fn connection(&self) -> Connection {
        Connection::new(self.name, self.dialect, self.base_url)
    }
}

/// The built-in endpoints: each provider's public API base URL and its dialect (the local
/// servers at their default ports). Hosted OpenAI-style services other than OpenAI itself are
/// `openai-compatible`, so a key is not demanded before sending; they answer 401 without one.
pub fn well_known() -> Vec<WellKnown> {
    use Dialect::*;
    let entry = |name, dialect, base_url| WellKnown {
        name,
        dialect,
        base_url,
    };
    vec![
        entry("OpenAI", Openai, "https://api.openai.com/v1"),
        entry("Anthropic", Anthropic, "https://api.anthropic.com"),
        entry(
            "Google Gemini",
            Gemini,
            "https://generativelanguage.googleapis.com",
        ),
        entry(
            "OpenRouter",
            OpenaiCompatible,
            "https://openrouter.ai/api/v1",
        ),
        entry("DeepSeek", OpenaiCompatible, "https://api.deepseek.com"),
        entry("Mistral", OpenaiCompatible, "https://api.mistral.ai/v1"),
        entry("Ollama", OpenaiCompatible, "http://127.0.0.1:11434/v1"),
        entry(
            "llama.cpp server",
            OpenaiCompatible,
            "http://127.0.0.1:8080/v1",
        ),
        entry("LM Studio", OpenaiCompatible, "http://127.0.0.1:1234/v1"),
        entry("vLLM", OpenaiCompatible, "http://127.0.0.1:8000/v1"),
        entry(
            "llama.cpp server, text completion",
            Llamacpp,
            "http://127.0.0.1:8080",
        ),
        entry("KoboldCpp", Koboldcpp, "http://127.0.0.1:5001"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_connections_are_valid() {
        let all = well_known();
        assert_eq!(all.len(), 12);
        for w in all {
            assert_eq!(w.connection().validate().ok(), Some(()), "{}", w.name);
        }
    }

    #[test]
    fn validation_refuses_bad_parts() {
        let ok = Connection::new("x", Dialect::Openai, "https://example.invalid/v1");
        assert!(ok.validate().is_ok());
        for (url, why) in [
            ("ftp://example.invalid", "http"),
            ("not a url", "does not parse"),
            ("https://example.invalid/v1#x", "fragment"),
        ] {
            let mut c = ok.clone();
            c.base_url = url.into();
            let err = c
                .validate()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains(why), "{url}: {err}");
        }
        let mut c = ok.clone();
        c.name = "  ".into();
        assert!(c.validate().is_err());
        let mut c = ok.clone();
        c.extra_headers.insert("bad name".into(), "v".into());
        assert!(c.validate().is_err());
        let mut c = ok.clone();
        c.extra_headers
            .insert("x-good".into(), "line\nbreak".into());
        assert!(c.validate().is_err());
    }

    #[test]
    fn timeouts_are_from_one_second_to_a_day() {
        let mut c = Connection::new("x", Dialect::Openai, "https://example.invalid/v1");
        c.timeouts.total_secs = Some(Timeouts::MAX_SECS);
        c.timeouts.connect_secs = Some(1);
        assert!(c.validate().is_ok());
        for bad in [0, Timeouts::MAX_SECS + 1] {
            let mut d = c.clone();
            d.timeouts.first_byte_secs = Some(bad);
            let err = d
                .validate()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains("firstByteSecs") && err.contains(&format!("{bad} s")),
                "{err}"
            );
        }
    }

    #[test]
    fn timeouts_round_trip_and_unset_ones_keep_the_defaults() {
        let plain = Connection::new("x", Dialect::Openai, "https://example.invalid/v1");
        let json = serde_json::to_value(&plain).expect("serializes");
        assert!(json.get("timeouts").is_none(), "{json}");
        assert_eq!(
            crate::SendOptions::for_connection(&plain),
            crate::SendOptions::default()
        );

        let read: Connection = serde_json::from_value(serde_json::json!({
            "name": "x", "dialect": "openai", "baseUrl": "https://example.invalid/v1",
            "timeouts": {"totalSecs": 1800, "firstByteSecs": 300}
        }))
        .expect("reads");
        let options = crate::SendOptions::for_connection(&read);
        assert_eq!(options.total_timeout, std::time::Duration::from_secs(1800));
        assert_eq!(
            options.first_byte_timeout,
            std::time::Duration::from_secs(300)
        );
        assert_eq!(
            options.idle_timeout,
            crate::SendOptions::default().idle_timeout
        );
        assert_eq!(
            serde_json::to_value(&read).expect("serializes")["timeouts"],
            serde_json::json!({"totalSecs": 1800, "firstByteSecs": 300})
        );
        let unknown = serde_json::from_value::<Connection>(serde_json::json!({
            "name": "x", "dialect": "openai", "baseUrl": "https://example.invalid/v1",
            "timeouts": {"totalMinutes": 3}
        }));
        assert!(unknown.is_err());
    }

    #[test]
    fn serde_is_camel_case_and_extra_body_must_be_an_object() {
        let json = r#"{"name":"n","dialect":"openai-compatible","baseUrl":"http://127.0.0.1:1/v1",
            "defaultModel":"m","extraHeaders":{"x-a":"b"},"extraBody":{"top_k":4},"keyEnv":"K"}"#;
        let c: Connection = serde_json::from_str(json).expect("reads");
        assert_eq!(c.default_model.as_deref(), Some("m"));
        assert_eq!(c.extra_body.get("top_k"), Some(&Value::from(4)));
        let back = serde_json::to_value(&c).expect("writes");
        assert!(back.get("baseUrl").is_some());
        let bad = json.replace(r#"{"top_k":4}"#, "[1]");
        assert!(serde_json::from_str::<Connection>(&bad).is_err());
    }

    #[test]
    fn extra_body_merges_top_level_fields() {
        let mut c = Connection::new("x", Dialect::Openai, "https://example.invalid");
        c.extra_body.insert("temperature".into(), Value::from(0.5));
        let mut body = serde_json::json!({"model": "m", "temperature": 1});
        c.apply_extra_body(&mut body);
        assert_eq!(body["temperature"], Value::from(0.5));
        assert_eq!(body["model"], Value::from("m"));
    }
}
