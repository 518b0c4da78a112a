//! Messages in the pipeline's intermediate form, and their provenance (SPEC 3.7).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{AnchorPosition, Role};

/// What produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SourceKind {
    /// A recipe step's template.
    Template,
    /// A stored session message.
    History,
    /// The build option `input`: the text the user is about to send (the seed 001 safety net).
    Input,
    /// The `user_profile` slot.
    Profile,
    /// One-turn content (SPEC 5.5).
    Ephemeral,
    /// An activated lorebook entry (SPEC 6).
    Lorebook,
    /// Added by a processor of its own (instruction pinning, alternation fillers, ...).
    Processor,
}

impl SourceKind {
    /// History-like messages are the ones the token limiter may drop.
    pub fn is_history(self) -> bool {
        matches!(self, SourceKind::History | SourceKind::Input)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Template => "template",
            SourceKind::History => "history",
            SourceKind::Input => "input",
            SourceKind::Profile => "profile",
            SourceKind::Ephemeral => "ephemeral",
            SourceKind::Lorebook => "lorebook",
            SourceKind::Processor => "processor",
        }
    }
}

/// How a message was placed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum Placement {
    /// In list order (the recipe's skeleton), or history in its own order.
    List,
    /// At depth `depth` in the history.
    Depth { depth: u32 },
    /// Before or after an anchor.
    Anchor {
        target: String,
        position: AnchorPosition,
    },
}

impl Placement {
    pub fn badge(&self) -> String {
        match self {
            Placement::List => "list".into(),
            Placement::Depth { depth } => format!("depth {depth}"),
            Placement::Anchor { target, position } => format!("⚓ {} {target}", position.as_str()),
        }
    }
}

/// Where a message came from. Fields that do not apply are absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub kind: SourceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_index: Option<u32>,
    pub placement: Placement,
    /// Position in the stored session, for history messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_index: Option<u32>,
    /// The stored message's id, filled in when the build result is made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The lorebook entry, for lorebook messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// The processor that added or last rewrote the message, where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor: Option<String>,
    /// One-turn content of this kind was put into the message for this build only (SPEC 5.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<super::EphemeralKind>,
}

impl Source {
    pub fn new(kind: SourceKind, placement: Placement) -> Self {
        Source {
            kind,
            template_id: None,
            step_index: None,
            placement,
            history_index: None,
            message_id: None,
            entry_id: None,
            processor: None,
            ephemeral: None,
        }
    }

    pub fn history(index: usize) -> Self {
        Source {
            history_index: Some(index as u32),
            ..Source::new(SourceKind::History, Placement::List)
        }
    }

    /// A message a processor made (a placeholder turn, a pinned instruction).
    pub fn processor(id: &str) -> Self {
        Source {
            processor: Some(id.to_string()),
            ..Source::new(SourceKind::Processor, Placement::List)
        }
    }

    /// A short label for people: `template sys · depth 2`, `history #4`.
    pub fn badge(&self) -> String {
        let mut s = self.kind.as_str().to_string();
        let label = match self.kind {
            SourceKind::Processor => self.processor.as_ref(),
            _ => self.template_id.as_ref().or(self.entry_id.as_ref()),
        };
        if let Some(id) = label {
            s.push(' ');
            s.push_str(id);
        }
        if let Some(i) = self.history_index {
            s.push_str(&format!(" #{i}"));
        }
        if self.placement != Placement::List {
            s.push_str(" · ");
            s.push_str(&self.placement.badge());
        }
        if let Some(kind) = self.ephemeral {
            s.push_str(" · +ephemeral ");
            s.push_str(kind.as_str());
        }
        s
    }
}

/// A reference to an attachment of a stored message: the asset resolver turns it into the
/// provider's form at the very end (SPEC 5.7), so nothing is encoded before that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentRef {
    pub message: u32,
    pub attachment: u32,
}

impl AttachmentRef {
    /// The stored attachment this points at.
    pub fn resolve<'s>(
        &self,
        session: &'s crate::model::Session,
    ) -> Option<&'s crate::model::Attachment> {
        session
            .messages
            .get(self.message as usize)
            .and_then(|m| m.attachments.get(self.attachment as usize))
    }
}

/// One message on its way through the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineMessage {
    pub role: Role,
    pub name: Option<String>,
    /// Visible to the pipeline module so that the build result can move it out.
    pub(super) content: Arc<str>,
    pub source: Source,
    pub attachments: Vec<AttachmentRef>,
    /// Cut by the token limiter (`truncateOverflowing`).
    pub truncated: bool,
    /// Where the texts a formatter joined into this one came from, in order after `source`.
    pub merged: Vec<Source>,
    /// Token count of `content` plus the format's per-message overhead, once counted. Cleared
    /// whenever the content changes.
    tokens: Option<u32>,
}

impl PipelineMessage {
    pub fn new(role: Role, content: impl Into<Arc<str>>, source: Source) -> Self {
        PipelineMessage {
            role,
            name: None,
            content: content.into(),
            source,
            attachments: Vec::new(),
            truncated: false,
            merged: Vec::new(),
            tokens: None,
        }
    }

    /// Joins `other`'s text after this one's with `separator`, keeping its provenance in
    /// `merged` (formatters that merge messages).
    pub fn absorb(&mut self, other: PipelineMessage, separator: &str, processor: &str) {
        let text = format!("{}{separator}{}", self.content, other.content);
        self.set_content(text);
        self.attachments.extend(other.attachments);
        self.truncated |= other.truncated;
        self.merged.push(other.source);
        self.merged.extend(other.merged);
        self.source.processor = Some(processor.to_string());
    }

    pub fn content(&self) -> &str {
        &self.content
    }

    pub fn content_arc(&self) -> &Arc<str> {
        &self.content
    }

    pub fn set_content(&mut self, content: impl Into<Arc<str>>) {
        self.content = content.into();
        self.tokens = None;
    }

    pub fn tokens(&self) -> Option<u32> {
        self.tokens
    }

    pub fn set_tokens(&mut self, tokens: u32) {
        self.tokens = Some(tokens);
    }
}
