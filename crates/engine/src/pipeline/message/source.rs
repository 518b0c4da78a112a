//! Where a message came from (RULES 3.7): what produced it, how it was placed, and the stored
//! attachments it refers to.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::AnchorPosition;

/// What produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SourceKind {
    /// A recipe step's template.
    Template,
    /// A stored session message.
    History,
    /// The build option `input`: the text the user is about to send (RULES 5.3).
    Input,
    /// The `user_profile` slot.
    Profile,
    /// One-turn content (RULES 5.5).
    Ephemeral,
    /// An activated lorebook entry (RULES 6).
    Lorebook,
    /// Added by a processor of its own (instruction pinning, alternation fillers, ...).
    Processor,
    /// An older message recalled from long-term memory (RULES 5.15).
    Memory,
}

impl SourceKind {
    /// The kind's name, as said inside a text (its English is [`SourceKind::as_str`]).
    pub fn said(self) -> crate::said::Said {
        match self {
            SourceKind::Template => crate::texts::SOURCE_TEMPLATE,
            SourceKind::History => crate::texts::SOURCE_HISTORY,
            SourceKind::Input => crate::texts::SOURCE_INPUT,
            SourceKind::Profile => crate::texts::SOURCE_PROFILE,
            SourceKind::Ephemeral => crate::texts::SOURCE_EPHEMERAL,
            SourceKind::Lorebook => crate::texts::SOURCE_LOREBOOK,
            SourceKind::Processor => crate::texts::SOURCE_PROCESSOR,
            SourceKind::Memory => crate::texts::SOURCE_MEMORY,
        }
        .into()
    }
}

impl SourceKind {
    /// Every kind, in declaration order: `kind as usize` is its position (a test holds it so).
    pub const ALL: [SourceKind; 8] = [
        SourceKind::Template,
        SourceKind::History,
        SourceKind::Input,
        SourceKind::Profile,
        SourceKind::Ephemeral,
        SourceKind::Lorebook,
        SourceKind::Processor,
        SourceKind::Memory,
    ];

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
            SourceKind::Memory => "memory",
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
    /// The stored message's id, filled in when the build result is made; shared with the
    /// stored message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<Arc<str>>,
    /// The lorebook entry, for lorebook messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<String>,
    /// The processor that added or last rewrote the message, where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor: Option<String>,
    /// One-turn content of this kind was put into the message for this build only (RULES 5.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<crate::pipeline::EphemeralKind>,
    /// For a message recalled from long-term memory (RULES 5.15): the stored message and how
    /// close it was to the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySource>,
}

/// The stored message a memory message recalls (RULES 5.15).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MemorySource {
    /// Its position in the stored session, when the library knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// Its stored id, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// How close it was to the input: the cosine similarity in thousandths (1000 is the same
    /// direction).
    pub score: u32,
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
            memory: None,
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

    /// Where a text of this source is expanded, as the macro warnings, `{{pick}}`'s seed and the
    /// turn-to-turn diff's traces name it: `template:ID#STEP` for a recipe step's template, else
    /// `KIND:ID` with the lorebook entries, the template or `injection`.
    pub fn expansion_position(&self) -> String {
        match (self.kind, &self.template_id, self.step_index) {
            (SourceKind::Template, Some(id), Some(step)) => format!("template:{id}#{step}"),
            (kind, _, _) => format!("{}:{}", kind.as_str(), self.expansion_id()),
        }
    }

    /// What a placed text is named by in [`Source::expansion_position`]: its lorebook entries,
    /// else its template, else `injection`.
    pub fn expansion_id(&self) -> &str {
        self.entry_id
            .as_deref()
            .or(self.template_id.as_deref())
            .unwrap_or("injection")
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
        if let Some(m) = &self.memory {
            if let Some(i) = m.index {
                s.push_str(&format!(" #{i}"));
            }
            s.push_str(&format!(
                " · score {}.{:03}",
                m.score / 1000,
                m.score % 1000
            ));
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
/// provider's form at the very end (RULES 5.7), so nothing is encoded before that.
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
