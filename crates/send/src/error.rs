//! Everything that can go wrong when sending, each as one message a person can act on.

use std::fmt;
use std::time::Duration;

use promptloom_engine::codes;
use thiserror::Error;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the connection (TCP and TLS).
    Connect,
    /// From sending the request until the reply's status and headers arrived.
    FirstByte,
    /// Between two parts of the reply's body (and before its first part).
    Idle,
    /// The whole send, from the first attempt to the reply's end.
    Total,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "to connect",
            TimeoutPhase::FirstByte => "to start answering",
            TimeoutPhase::Idle => "between two parts of the reply",
            TimeoutPhase::Total => "to send and answer in all",
        })
    }
}

/// A failed send. Provider texts in it are escaped (no control characters) and an API key is
/// never part of it. When a stream fails half way, the text that arrived before has already gone
/// to the caller's event callback.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SendError {
    #[error("unknown dialect \"{found}\"; the dialects are: {valid}")]
    UnknownDialect { found: String, valid: String },
    #[error("connection \"{name}\": {message}")]
    InvalidConnection { name: String, message: String },
    #[error("connection \"{connection}\" ({dialect}) needs an API key and none was given{}; nothing was sent",
        key_env.as_deref().map(|v| format!(" (the environment variable {v} is not set)")).unwrap_or_default())]
    MissingKey {
        connection: String,
        dialect: String,
        key_env: Option<String>,
    },
    /// The provider answered with an error status; `message` is the provider's own text.
    #[error("HTTP {status}{} from {url}{}: {message}",
        reason.map(|r| format!(" {r}")).unwrap_or_default(),
        if *attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() })]
    Status {
        status: u16,
        reason: Option<&'static str>,
        url: String,
        message: String,
        attempts: u32,
    },
    /// An error the provider reported inside a reply that had started well (Anthropic's
    /// `error` event, an `error` object in a stream).
    #[error("the provider reported an error: {message}")]
    Provider { message: String },
    #[error("could not reach {url}: {message}")]
    Network { url: String, message: String },
    #[error("no answer from {url}: it took more than {} {phase}", seconds(*after))]
    Timeout {
        url: String,
        phase: TimeoutPhase,
        after: Duration,
    },
    #[error("the reply cannot be read: {message}")]
    BadReply { message: String },
    #[error("the reply is too large: {what} is over {limit} bytes")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the connection closed before the reply was complete ({received_chars} characters had arrived)")]
    CutShort { received_chars: usize },
    /// A token count asked of a connection whose API has no endpoint for it.
    #[error("connection \"{connection}\" ({dialect}) has no token-counting endpoint")]
    NoTokenCount { connection: String, dialect: String },
    /// Embeddings asked of a connection whose API has none (RULES 5.15).
    #[error("connection \"{connection}\" ({dialect}) has no embeddings endpoint")]
    NoEmbeddings { connection: String, dialect: String },
    /// A request body that a token-counting request cannot be made from.
    #[error("the request body cannot be counted: {message}")]
    CountBody { message: String },
}

fn seconds(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

impl SendError {
    /// The same error with `key` (and every piece of it, [`crate::ApiKey::scrub`]) taken out of
    /// each text a provider or its address could have put in it.
    pub fn scrubbed(self, key: Option<&crate::key::ApiKey>) -> SendError {
        let Some(key) = key else {
            return self;
        };
        let clean = |text: String| match key.scrub(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(clean) => clean,
        };
        match self {
            SendError::Status {
                status,
                reason,
                url,
                message,
                attempts,
            } => SendError::Status {
                status,
                reason,
                url: clean(url),
                message: clean(message),
                attempts,
            },
            SendError::Provider { message } => SendError::Provider {
                message: clean(message),
            },
            SendError::Network { url, message } => SendError::Network {
                url: clean(url),
                message: clean(message),
            },
            SendError::Timeout { url, phase, after } => SendError::Timeout {
                url: clean(url),
                phase,
                after,
            },
            SendError::BadReply { message } => SendError::BadReply {
                message: clean(message),
            },
            SendError::CountBody { message } => SendError::CountBody {
                message: clean(message),
            },
            SendError::InvalidConnection { name, message } => SendError::InvalidConnection {
                name,
                message: clean(message),
            },
            other => other,
        }
    }

    /// The stable code the UI and the command line switch on (one of `promptloom_engine::codes`).
    pub fn code(&self) -> &'static str {
        match self {
            SendError::UnknownDialect { .. } => codes::UNKNOWN_DIALECT,
            SendError::InvalidConnection { .. } => codes::INVALID_CONNECTION,
            SendError::MissingKey { .. } => codes::MISSING_KEY,
            SendError::Status { .. } => codes::HTTP_STATUS,
            SendError::Provider { .. } => codes::PROVIDER_ERROR,
            SendError::Network { .. } => codes::NETWORK,
            SendError::Timeout { .. } => codes::TIMEOUT,
            SendError::BadReply { .. } => codes::BAD_REPLY,
            SendError::TooLarge { .. } => codes::REPLY_TOO_LARGE,
            SendError::CutShort { .. } => codes::REPLY_CUT_SHORT,
            // The connection cannot be used for this.
            SendError::NoTokenCount { .. } | SendError::NoEmbeddings { .. } => {
                codes::INVALID_CONNECTION
            }
            // The body is ours, made by the engine; one that does not read is the app's fault.
            SendError::CountBody { .. } => codes::INTERNAL,
        }
    }

    /// The HTTP status, for errors that have one.
    pub fn status(&self) -> Option<u16> {
        match self {
            SendError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub(crate) fn bad_reply(message: impl Into<String>) -> Self {
        SendError::BadReply {
            message: message.into(),
        }
    }

    pub(crate) fn count_body(message: impl Into<String>) -> Self {
        SendError::CountBody {
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_in_the_engine_list() {
        let samples = [
            SendError::UnknownDialect {
                found: "x".into(),
                valid: "y".into(),
            },
            SendError::InvalidConnection {
                name: "n".into(),
                message: "m".into(),
            },
            SendError::MissingKey {
                connection: "c".into(),
                dialect: "openai".into(),
                key_env: Some("OPENAI_API_KEY".into()),
            },
            SendError::Status {
                status: 401,
                reason: Some("Unauthorized"),
                url: "u".into(),
                message: "m".into(),
                attempts: 1,
            },
            SendError::Provider {
                message: "m".into(),
            },
            SendError::Network {
                url: "u".into(),
                message: "m".into(),
            },
            SendError::Timeout {
                url: "u".into(),
                phase: TimeoutPhase::Idle,
                after: Duration::from_millis(1500),
            },
            SendError::bad_reply("m"),
            SendError::TooLarge {
                what: "the reply",
                limit: 1,
            },
            SendError::CutShort { received_chars: 3 },
            SendError::NoTokenCount {
                connection: "c".into(),
                dialect: "openai".into(),
            },
            SendError::count_body("m"),
            SendError::NoEmbeddings {
                connection: "c".into(),
                dialect: "anthropic".into(),
            },
        ];
        for e in samples {
            assert!(codes::ALL.contains(&e.code()), "{}", e.code());
            assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn messages_read_well() {
        let e = SendError::Status {
            status: 429,
            reason: Some("Too Many Requests"),
            url: "http://h/v1/chat/completions".into(),
            message: "slow down".into(),
            attempts: 3,
        };
        assert_eq!(
            e.to_string(),
            "HTTP 429 Too Many Requests from http://h/v1/chat/completions (after 3 attempts): slow down"
        );
        let e = SendError::Timeout {
            url: "u".into(),
            phase: TimeoutPhase::FirstByte,
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            e.to_string(),
            "no answer from u: it took more than 1.5 s to start answering"
        );
    }
}
