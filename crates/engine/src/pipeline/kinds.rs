//! The kinds of generation a build is made for, and how its reply begins (RULES 5.14).

use serde::{Deserialize, Serialize};

/// The kinds of generation a build can be made for (RULES 5.14).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum GenerationType {
    /// The model's next reply.
    #[default]
    Normal,
    /// More of the last reply, appended to it.
    Continue,
    /// The user's next message, written by the model.
    Impersonate,
    /// A one-off request with a prompt of its own; nothing is stored.
    Quiet,
}

impl GenerationType {
    pub const ALL: [GenerationType; 4] = [
        GenerationType::Normal,
        GenerationType::Continue,
        GenerationType::Impersonate,
        GenerationType::Quiet,
    ];

    pub fn is_normal(&self) -> bool {
        *self == GenerationType::Normal
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GenerationType::Normal => "normal",
            GenerationType::Continue => "continue",
            GenerationType::Impersonate => "impersonate",
            GenerationType::Quiet => "quiet",
        }
    }

    /// Whether the build appends its `input` to the history as the user's newest message: only
    /// an ordinary reply does (a quiet request sends it as its prompt, RULES 5.14).
    pub fn takes_input(self) -> bool {
        self == GenerationType::Normal
    }
}

/// How the reply of a build begins (RULES 5.14): what the request ends with, and what goes
/// before the text the provider sends when the reply is stored or shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ReplyStart {
    pub generation_type: GenerationType,
    /// The text the reply begins with: the request's last message (an assistant message, or in
    /// text completion the text after the reply prefix), and the start of the reply as stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    /// A continuation: what goes between the reply it continues and the text that comes back.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub joiner: String,
    /// A continuation whose request ends with the reply it continues (a prefill of its own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continues_last: bool,
    /// A continuation: the stored position of the reply it continues, as the finished build
    /// has it (none when no reply is continued, or a processor dropped or joined it). A front
    /// door sends a continuation only when this is the session's last message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued: Option<u32>,
}

impl ReplyStart {
    /// An ordinary reply that begins with whatever the model writes.
    pub fn is_plain(&self) -> bool {
        *self == ReplyStart::default()
    }

    /// The text stored (or shown) for a reply whose provider sent `received`: the prefill and
    /// what came back. A continuation's is what goes after the reply it continues.
    pub fn reply_text(&self, received: &str) -> String {
        let start = match self.generation_type {
            GenerationType::Continue => self.joiner.as_str(),
            _ => self.prefill.as_deref().unwrap_or(""),
        };
        let mut text = String::with_capacity(start.len() + received.len());
        text.push_str(start);
        text.push_str(received);
        text
    }
}
