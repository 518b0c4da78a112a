//! The chat session (RULES 2): the stored history a build reads and never writes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{preset::default_format_version, Role, DEFAULT_NOTE_DEPTH};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Session {
    #[serde(default = "default_format_version")]
    pub format_version: u32,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_profile: Option<UserProfile>,
    /// `{{summary}}`: a stored summary of older turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default)]
    pub messages: Vec<ChatMessage>,
    /// The chat's own variables (SillyTavern's local variables): `{{getvar}}` reads them before
    /// the preset's (RULES 4.3). A build never changes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<BTreeMap<String, String>>,
    /// The chat's author's note, placed by the `authors-note` processor (RULES 5.11.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authors_note: Option<AuthorsNote>,
}

/// Where the author's note goes (RULES 5.11.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum NotePosition {
    /// Directly before the main prompt.
    BeforePrompt,
    /// Directly after the main prompt.
    InPrompt,
    /// In the chat, `depth` messages from its end.
    #[default]
    InChat,
}

/// A note the chat keeps and the `authors-note` processor places every `interval` user messages
/// (RULES 5.11.2). The defaults are SillyTavern's: in the chat at depth 4, as a system message,
/// on every turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AuthorsNote {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub position: NotePosition,
    #[serde(default = "default_note_depth")]
    pub depth: u32,
    #[serde(default = "default_note_role")]
    pub role: Role,
    /// Shown when the number of user messages is a multiple of this; 1 is every turn, 0 never.
    #[serde(default = "default_note_interval")]
    pub interval: u32,
}

fn default_note_depth() -> u32 {
    DEFAULT_NOTE_DEPTH
}

fn default_note_role() -> Role {
    Role::System
}

fn default_note_interval() -> u32 {
    1
}

impl Default for AuthorsNote {
    fn default() -> Self {
        AuthorsNote {
            content: String::new(),
            position: NotePosition::default(),
            depth: DEFAULT_NOTE_DEPTH,
            role: Role::System,
            interval: 1,
        }
    }
}

impl Session {
    /// An empty session, for previews that have no chat yet.
    pub fn empty(id: impl Into<String>) -> Self {
        Session {
            format_version: default_format_version(),
            id: id.into(),
            title: None,
            user_profile: None,
            summary: None,
            messages: Vec::new(),
            variables: None,
            authors_note: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct UserProfile {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// One stored chat message. `content` is shared (`Arc<str>`) so that a build over a long session
/// references the text instead of copying it; so are `name` and `id`, so that what a build keeps
/// made from a message (a history regex rule's rewrite) shares them, and a later build sees that
/// they are still the message's by comparing pointers, not texts (the texts never change in
/// place: an edit gives a new `Arc`).
///
/// Laid out in the order written (`repr(C)`), what every build reads of every message first: its
/// role, text, name, attachments and id sit in the first 80 bytes, so a pass over a long session
/// reads two cache lines of each message, not three (144 bytes in all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
#[repr(C)]
pub struct ChatMessage {
    pub role: Role,
    pub content: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Arc<str>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// For a reply a provider sent: what sent it, how it ended, what it cost and took (RULES 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Box<ReplyInfo>>,
    /// The other replies to the same turn (regenerated, or SillyTavern's swipes), in the order
    /// they came, without the one chosen (`content`); kept to flip to. Builds read `content` only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub swipes: Vec<Swipe>,
    /// Where `content` stands among all the replies in order (the swipes with it put back at
    /// this position); none means last, the newest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swipe_at: Option<u32>,
}

impl ChatMessage {
    pub fn new(role: Role, content: &str) -> Self {
        ChatMessage {
            id: None,
            role,
            name: None,
            content: Arc::from(content),
            attachments: Vec::new(),
            created_at: None,
            reply: None,
            swipes: Vec::new(),
            swipe_at: None,
        }
    }
}

/// What came back with a reply from a provider.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ReplyInfo {
    /// The connection it was sent through, by name.
    pub connection: String,
    pub model: String,
    /// Why the provider stopped (`stop`, `length`, `end_turn`, ...), as it said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The provider's own count of the prompt, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u32>,
    /// Promptloom's count of the same prompt, for the build that was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_prompt_tokens: Option<u32>,
    /// Milliseconds from sending to the first text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_ms: Option<u32>,
    /// Milliseconds from sending to the end of the reply.
    #[serde(default)]
    pub total_ms: u32,
    /// Stopped before the provider finished (the user pressed Stop): what arrived is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

/// Another reply to the same turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Swipe {
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<ReplyInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    Image,
    Audio,
    Video,
    Document,
    Text,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub id: String,
    pub kind: AttachmentKind,
    pub mime: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_base64: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
}
