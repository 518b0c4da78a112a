//! The wire dialects a connection can speak.

use std::fmt;
use std::str::FromStr;

use promptloom_engine::profiles::ProviderFormat;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SendError;

/// Which API a provider speaks. The names are the ones used in settings files and on the command
/// line: `openai`, `anthropic`, `gemini` and `openai-compatible`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI's Chat Completions API (`POST {base}/chat/completions`).
    Openai,
    /// Anthropic's Messages API (`POST {base}/v1/messages`).
    Anthropic,
    /// Google's Gemini API (`generateContent` and `streamGenerateContent`).
    Gemini,
    /// Any server that speaks Chat Completions (OpenRouter, Ollama, llama.cpp, vLLM, ...). The
    /// wire is the same as `openai`; the base URL has to be given and a key is optional.
    OpenaiCompatible,
}

impl Dialect {
    /// Every dialect, in the order they are listed to people.
    pub const ALL: [Dialect; 4] = [
        Dialect::Openai,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::OpenaiCompatible,
    ];

    /// The dialect's name as written in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Openai => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::OpenaiCompatible => "openai-compatible",
        }
    }

    /// The engine's request body format for this dialect: the body the engine builds for it is
    /// the one this crate sends.
    pub fn provider_format(self) -> ProviderFormat {
        match self {
            Dialect::Openai | Dialect::OpenaiCompatible => ProviderFormat::OpenaiChat,
            Dialect::Anthropic => ProviderFormat::AnthropicMessages,
            Dialect::Gemini => ProviderFormat::Gemini,
        }
    }

    /// Whether a request in this dialect needs an API key. Only `openai-compatible` servers may
    /// run without one (local servers usually do).
    pub fn needs_key(self) -> bool {
        !matches!(self, Dialect::OpenaiCompatible)
    }

    /// The valid names, comma separated, for error messages.
    pub fn valid_names() -> String {
        Dialect::ALL
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = SendError;

    /// Reads one of the exact names; anything else is `SendError::UnknownDialect`, which names
    /// what was given and lists the valid names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| SendError::UnknownDialect {
                found: s.to_string(),
                valid: Dialect::valid_names(),
            })
    }
}

impl Serialize for Dialect {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Dialect {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>().ok(), Some(d));
            assert_eq!(d.to_string(), d.as_str());
        }
    }

    #[test]
    fn unknown_names_are_named_with_the_valid_ones() {
        let err = "claude".parse::<Dialect>().err().map(|e| e.to_string());
        let err = err.unwrap_or_default();
        assert!(err.contains("\"claude\""), "{err}");
        assert!(
            err.contains("openai, anthropic, gemini, openai-compatible"),
            "{err}"
        );
        // Exact names only.
        assert!("OpenAI".parse::<Dialect>().is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(
            Dialect::OpenaiCompatible.provider_format(),
            ProviderFormat::OpenaiChat
        );
        assert_eq!(
            Dialect::Anthropic.provider_format(),
            ProviderFormat::AnthropicMessages
        );
        assert_eq!(Dialect::Gemini.provider_format(), ProviderFormat::Gemini);
    }

    #[test]
    fn serde_uses_the_names() {
        let json = serde_json::to_string(&Dialect::OpenaiCompatible).unwrap_or_default();
        assert_eq!(json, "\"openai-compatible\"");
        let back: Result<Dialect, _> = serde_json::from_str("\"gemini\"");
        assert_eq!(back.ok(), Some(Dialect::Gemini));
        assert!(serde_json::from_str::<Dialect>("\"bard\"").is_err());
    }
}
