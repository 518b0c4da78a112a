//! The wire dialects a connection can speak.

use std::fmt;
use std::str::FromStr;

use promptloom_engine::profiles::ProviderFormat;
use promptloom_engine::providers::CompletionFormat;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::SendError;

/// Which API a provider speaks. The names are the ones used in settings files and on the command
/// line: `openai`, `anthropic`, `gemini`, `openai-compatible`, `llamacpp` and `koboldcpp`.
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
    /// llama.cpp's own server API, text completion only (`POST {base}/completion`); a key is
    /// optional (the server's `--api-key`).
    Llamacpp,
    /// KoboldCpp's KoboldAI API, text completion only (`POST {base}/api/v1/generate`, streamed
    /// through `{base}/api/extra/generate/stream`); a key is optional (its `--password`).
    Koboldcpp,
}

impl Dialect {
    /// Every dialect, in the order they are listed to people.
    pub const ALL: [Dialect; 6] = [
        Dialect::Openai,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::OpenaiCompatible,
        Dialect::Llamacpp,
        Dialect::Koboldcpp,
    ];

    /// The dialect's name as written in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Openai => "openai",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::OpenaiCompatible => "openai-compatible",
            Dialect::Llamacpp => "llamacpp",
            Dialect::Koboldcpp => "koboldcpp",
        }
    }

    /// The engine's chat request body format for this dialect: the body the engine builds for
    /// it is the one this crate sends. `None` for the dialects that take text completion only.
    pub fn provider_format(self) -> Option<ProviderFormat> {
        match self {
            Dialect::Openai | Dialect::OpenaiCompatible => Some(ProviderFormat::OpenaiChat),
            Dialect::Anthropic => Some(ProviderFormat::AnthropicMessages),
            Dialect::Gemini => Some(ProviderFormat::Gemini),
            Dialect::Llamacpp | Dialect::Koboldcpp => None,
        }
    }

    /// The engine's text-completion body format for this dialect (RULES 5.12): `None` for the
    /// dialects without text completion (Anthropic, Gemini).
    pub fn completion_format(self) -> Option<CompletionFormat> {
        match self {
            Dialect::Openai | Dialect::OpenaiCompatible => {
                Some(CompletionFormat::OpenaiCompletions)
            }
            Dialect::Llamacpp => Some(CompletionFormat::Llamacpp),
            Dialect::Koboldcpp => Some(CompletionFormat::Koboldcpp),
            Dialect::Anthropic | Dialect::Gemini => None,
        }
    }

    /// Whether a request in this dialect needs an API key. The local servers' dialects
    /// (`openai-compatible`, `llamacpp`, `koboldcpp`) may run without one.
    pub fn needs_key(self) -> bool {
        !matches!(
            self,
            Dialect::OpenaiCompatible | Dialect::Llamacpp | Dialect::Koboldcpp
        )
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
            Some(ProviderFormat::OpenaiChat)
        );
        assert_eq!(
            Dialect::Anthropic.provider_format(),
            Some(ProviderFormat::AnthropicMessages)
        );
        assert_eq!(
            Dialect::Gemini.provider_format(),
            Some(ProviderFormat::Gemini)
        );
        // Text completion: the OpenAI dialects through /completions, the local servers' own
        // APIs, and nothing for Anthropic and Gemini.
        assert_eq!(
            Dialect::Openai.completion_format(),
            Some(CompletionFormat::OpenaiCompletions)
        );
        assert_eq!(
            Dialect::Koboldcpp.completion_format(),
            Some(CompletionFormat::Koboldcpp)
        );
        assert_eq!(Dialect::Llamacpp.provider_format(), None);
        assert_eq!(Dialect::Gemini.completion_format(), None);
        assert!(!Dialect::Llamacpp.needs_key());
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
