//! One message of a build's result (RULES 3.7): its text, tokens and provenance, read through
//! the pipeline's message body, and how it is written out.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Serialize;

use super::message::Body;
use super::{AttachmentRef, Source, SourceKind};
use crate::model::Role;

/// One message of the build result, with its tokens and provenance (RULES 3.7).
///
/// A history message that went in exactly as stored still refers to the session it was built
/// from (see [`PipelineMessage`]); [`BuiltMessage::source`] reads its provenance, message id
/// included, off that. It serialises as [`BuiltMessageJson`] shows.
#[derive(Debug, Clone)]
pub struct BuiltMessage<'s> {
    pub role: Role,
    /// Content tokens plus the format's per-message overhead.
    pub tokens: u32,
    /// Whether `tokens` is exact (RULES 5.8): counted with the model's own tokenizer, with known
    /// affixes, and no attachment (whose tokens are not counted).
    pub exact: bool,
    pub(super) body: Body<'s>,
}

impl<'s> BuiltMessage<'s> {
    pub fn content(&self) -> &str {
        self.body.content_arc()
    }

    /// The text, shared with the pipeline (and, for history, with the stored session).
    pub fn content_arc(&self) -> &Arc<str> {
        self.body.content_arc()
    }

    pub fn name(&self) -> Option<&str> {
        self.body.name()
    }

    /// Where the message came from; a history message's stored id included.
    pub fn source(&self) -> Cow<'_, Source> {
        self.body.source(true)
    }

    /// What produced the message, without making its whole provenance.
    pub fn kind(&self) -> SourceKind {
        self.body.kind()
    }

    pub fn truncated(&self) -> bool {
        self.body.truncated()
    }

    pub fn attachments(&self) -> Cow<'_, [AttachmentRef]> {
        self.body.attachments()
    }

    /// Provenance of texts a formatter joined into this message, after `source`'s.
    pub fn merged(&self) -> &[Source] {
        self.body.merged()
    }

    /// The stored position when this history message went in exactly as stored: same text,
    /// role and name, plain provenance, nothing joined, cut or attached anew. A reader that
    /// holds the session can take such messages from it (the app's preview does).
    pub fn stored_index(&self) -> Option<u32> {
        self.body.as_stored(self.role).map(|(index, _)| index)
    }

    /// The same message with parts of its own, so that it no longer borrows the session.
    pub fn into_owned(self) -> BuiltMessage<'static> {
        let source = self.source().into_owned();
        let mut body = self.body.into_owned();
        if let Body::Own(parts) = &mut body {
            // A stored message's id, which the pipeline leaves to the result.
            if parts.source != source {
                Arc::make_mut(parts).source = source;
            }
        }
        BuiltMessage {
            role: self.role,
            tokens: self.tokens,
            exact: self.exact,
            body,
        }
    }

    /// What serialises: the message with every part in its own field.
    fn json(&self) -> BuiltMessageJson<'_> {
        BuiltMessageJson {
            role: self.role,
            name: self.name(),
            content: self.content(),
            tokens: self.tokens,
            exact: self.exact,
            source: self.source(),
            truncated: self.truncated(),
            attachments: self.attachments(),
            merged: self.merged(),
        }
    }
}

/// Equal when everything a reader can see is equal.
impl PartialEq for BuiltMessage<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json()
    }
}

impl Serialize for BuiltMessage<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(serializer)
    }
}

#[cfg(feature = "specta")]
impl specta::Type for BuiltMessage<'_> {
    fn definition(types: &mut specta::Types) -> specta::datatype::DataType {
        BuiltMessageJson::definition(types)
    }
}

/// One message of the build result, with its tokens and provenance (RULES 3.7).
// How a `BuiltMessage` is written out, and its type in the UI's bindings.
#[derive(Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "BuiltMessage", rename_all = "camelCase")]
struct BuiltMessageJson<'a> {
    role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(type = Option<String>))]
    name: Option<&'a str>,
    /// Shared with the pipeline (and, for history, with the stored session): a build over a long
    /// session references its text instead of copying it.
    #[cfg_attr(feature = "specta", specta(type = String))]
    content: &'a str,
    /// Content tokens plus the format's per-message overhead.
    tokens: u32,
    /// Whether `tokens` is exact, or an estimate.
    exact: bool,
    #[cfg_attr(feature = "specta", specta(type = Source))]
    source: Cow<'a, Source>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    #[cfg_attr(feature = "specta", specta(type = Vec<AttachmentRef>))]
    attachments: Cow<'a, [AttachmentRef]>,
    /// Provenance of texts a formatter joined into this message, after `source`'s.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    #[cfg_attr(feature = "specta", specta(type = Vec<Source>))]
    merged: &'a [Source],
}
