//! Messages in the pipeline's intermediate form, and their provenance (RULES 3.7).

use std::borrow::Cow;
use std::sync::Arc;

use crate::model::{ChatMessage, Role, Session};

mod kept;
mod source;

pub use kept::*;
pub use source::*;

/// One message on its way through the pipeline.
///
/// A stored history message that nothing has changed is a reference to the session: its
/// position and the stored message. Over a long session a build neither copies the text of each
/// message nor touches its shared count, and the provenance follows from the position (RULES 3.7).
/// The first change to anything but the role and the count gives the message parts of its own.
#[derive(Debug, Clone)]
pub struct PipelineMessage<'s> {
    pub role: Role,
    /// Whether `tokens` holds the count.
    counted: bool,
    /// Token count of the content plus the format's per-message overhead, once counted. Cleared
    /// whenever the content changes.
    tokens: u32,
    body: Body<'s>,
}

/// What a message is made of: a stored message as stored, or parts of its own. Shared by
/// [`PipelineMessage`] and the build result's `BuiltMessage`, which answer through it.
#[derive(Debug, Clone)]
pub(super) enum Body<'s> {
    Stored(Stored<'s>),
    /// Everything else, and a stored message once something changed it. Shared (cloning a
    /// message is cheap); changing shared parts copies them first.
    Own(Arc<Parts>),
    /// A stored message with a new text and nothing else changed, the same every build (a
    /// history regex rule's rewrite, kept between builds), borrowed from the [`KeptRewrites`]
    /// the caller holds beside the session. One pointer, so that a message stays 24 bytes.
    Rewrite(&'s RewriteParts),
}

/// Stored message `index`, as stored. What the pipeline asks of every message (role, whether it
/// has a name or attachments) is kept here, so that a pass over a long history reads the stored
/// message only for its text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stored<'s> {
    index: u32,
    role: Role,
    has_name: bool,
    /// The stored name is not sent (the session loader's `names: none`).
    unnamed: bool,
    has_attachments: bool,
    message: &'s ChatMessage,
}

#[derive(Debug, Clone)]
pub(super) struct Parts {
    /// Shared with the stored message while it is the stored name.
    pub(super) name: Option<Arc<str>>,
    pub(super) content: Arc<str>,
    pub(super) source: Source,
    pub(super) attachments: Vec<AttachmentRef>,
    /// Cut by the token limiter (`truncateOverflowing`) or the `proportional` budget.
    pub(super) truncated: bool,
    /// Where the texts a formatter joined into this one came from, in order after `source`.
    pub(super) merged: Vec<Source>,
}

impl Stored<'_> {
    /// The parts of this stored message with `content` for its text: its name (when it is
    /// sent), its attachments and its provenance, the stored id included.
    fn parts(&self, content: Arc<str>) -> Parts {
        let attachments = stored_attachments(self.index, self.message.attachments.len());
        Parts {
            name: self.message.name.clone().filter(|_| self.has_name),
            content,
            source: Source {
                message_id: self.message.id.clone(),
                ..Source::history(self.index as usize)
            },
            attachments,
            truncated: false,
            merged: Vec::new(),
        }
    }

    /// Whether `rewrite` was made from this stored message as it is now: the same position,
    /// name (when sent), id and number of attachments. Compared by address first, where the
    /// texts are shared with the stored message (a text never changes in place).
    fn is_rewritten_as(&self, rewrite: &RewriteParts) -> bool {
        let name = self.message.name.as_ref().filter(|_| self.has_name);
        rewrite.index == self.index
            && rewrite.attachments as usize == self.message.attachments.len()
            && same_text(rewrite.name.as_ref(), name)
            && same_text(rewrite.id.as_ref(), self.message.id.as_ref())
    }
}

/// References to the `count` attachments of stored message `index`.
fn stored_attachments(index: u32, count: usize) -> Vec<AttachmentRef> {
    (0..count as u32)
        .map(|attachment| AttachmentRef {
            message: index,
            attachment,
        })
        .collect()
}

/// Whether two shared texts say the same: the same text when they are the same `Arc` (a text
/// never changes in place), else compared.
fn same_text(a: Option<&Arc<str>>, b: Option<&Arc<str>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || **a == **b,
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// A stored message with a new text and nothing else changed, as parts that later builds can
/// share: what a history regex rule made of it, kept between builds so that a rebuild puts the
/// same parts in without copying the message again (RULES 5.2). A build's messages borrow it
/// from the caller's [`KeptRewrites`].
#[derive(Debug, Clone)]
pub struct Rewritten(Arc<RewriteParts>);

/// What [`Rewritten`] points to: the new text and what the stored message had (its position,
/// name when sent, id and number of attachments), from which its provenance and attachments
/// follow as for a stored message. One small block, so that the rewrites of a session, made in
/// a row, lie in a row, and a pass over a long history reads them as it reads the history.
#[derive(Debug)]
#[repr(C)]
pub(super) struct RewriteParts {
    content: Arc<str>,
    index: u32,
    attachments: u32,
    name: Option<Arc<str>>,
    id: Option<Arc<str>>,
}

impl RewriteParts {
    /// The message as parts of its own, for when something changes it.
    fn parts(&self) -> Parts {
        Parts {
            name: self.name.clone(),
            content: Arc::clone(&self.content),
            source: self.source(true),
            attachments: stored_attachments(self.index, self.attachments as usize),
            truncated: false,
            merged: Vec::new(),
        }
    }

    fn source(&self, with_id: bool) -> Source {
        Source {
            message_id: self.id.clone().filter(|_| with_id),
            ..Source::history(self.index as usize)
        }
    }
}

/// The same parts, not merely equal ones.
impl PartialEq for Rewritten {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Rewritten {}

impl Rewritten {
    /// The new text.
    pub fn content_arc(&self) -> &Arc<str> {
        &self.0.content
    }
}

impl<'s> Body<'s> {
    fn stored(index: usize, message: &'s ChatMessage, named: bool) -> Self {
        Body::Stored(Stored {
            index: index as u32,
            role: message.role,
            has_name: named && message.name.is_some(),
            unnamed: !named && message.name.is_some(),
            has_attachments: !message.attachments.is_empty(),
            message,
        })
    }

    /// The stored position and message when the body is a stored message, `role` is still its
    /// role and its name goes with it.
    pub(super) fn as_stored(&self, role: Role) -> Option<(u32, &'s ChatMessage)> {
        match self {
            Body::Stored(s) if s.role == role && !s.unnamed => Some((s.index, s.message)),
            _ => None,
        }
    }

    /// The parts, made its own first if it is still a stored message, and copied first if
    /// they are shared.
    fn parts_mut(&mut self) -> &mut Parts {
        match self {
            Body::Stored(s) => *self = Body::Own(Arc::new(s.parts(Arc::clone(&s.message.content)))),
            Body::Rewrite(r) => *self = Body::Own(Arc::new(r.parts())),
            Body::Own(_) => {}
        }
        match self {
            Body::Own(parts) => Arc::make_mut(parts),
            _ => unreachable!("made its own above"),
        }
    }

    /// The same body with parts of its own, so that it no longer borrows the session.
    pub(super) fn into_owned(mut self) -> Body<'static> {
        self.parts_mut();
        match self {
            Body::Own(parts) => Body::Own(parts),
            _ => unreachable!("made its own above"),
        }
    }

    pub(super) fn content_arc(&self) -> &Arc<str> {
        match self {
            Body::Stored(s) => &s.message.content,
            Body::Rewrite(r) => &r.content,
            Body::Own(parts) => &parts.content,
        }
    }

    pub(super) fn name(&self) -> Option<&str> {
        match self {
            Body::Stored(s) if s.has_name => s.message.name.as_deref(),
            Body::Stored(_) => None,
            Body::Rewrite(r) => r.name.as_deref(),
            Body::Own(parts) => parts.name.as_deref(),
        }
    }

    pub(super) fn kind(&self) -> SourceKind {
        match self {
            Body::Stored(_) | Body::Rewrite(_) => SourceKind::History,
            Body::Own(parts) => parts.source.kind,
        }
    }

    pub(super) fn history_index(&self) -> Option<u32> {
        match self {
            Body::Stored(s) => Some(s.index),
            Body::Rewrite(r) => Some(r.index),
            Body::Own(parts) => parts.source.history_index,
        }
    }

    /// The provenance; with `with_id` a stored message's id, without it none (parts made from
    /// a stored message carry its id, which the pipeline does not show).
    pub(super) fn source(&self, with_id: bool) -> Cow<'_, Source> {
        let parts = match self {
            Body::Stored(s) => {
                return Cow::Owned(Source {
                    message_id: s.message.id.clone().filter(|_| with_id),
                    ..Source::history(s.index as usize)
                })
            }
            Body::Rewrite(r) => return Cow::Owned(r.source(with_id)),
            Body::Own(parts) => parts,
        };
        if !with_id && parts.source.message_id.is_some() {
            Cow::Owned(Source {
                message_id: None,
                ..parts.source.clone()
            })
        } else {
            Cow::Borrowed(&parts.source)
        }
    }

    pub(super) fn has_attachments(&self) -> bool {
        match self {
            Body::Stored(s) => s.has_attachments,
            Body::Rewrite(r) => r.attachments > 0,
            Body::Own(parts) => !parts.attachments.is_empty(),
        }
    }

    /// References to the stored attachments the message carries: for a stored message, every
    /// attachment it has.
    pub(super) fn attachments(&self) -> Cow<'_, [AttachmentRef]> {
        match self {
            Body::Stored(s) if !s.has_attachments => Cow::Borrowed(&[]),
            Body::Stored(s) => Cow::Owned(stored_attachments(s.index, s.message.attachments.len())),
            Body::Rewrite(r) if r.attachments == 0 => Cow::Borrowed(&[]),
            Body::Rewrite(r) => Cow::Owned(stored_attachments(r.index, r.attachments as usize)),
            Body::Own(parts) => Cow::Borrowed(&parts.attachments),
        }
    }

    pub(super) fn truncated(&self) -> bool {
        matches!(self, Body::Own(parts) if parts.truncated)
    }

    pub(super) fn merged(&self) -> &[Source] {
        match self {
            Body::Stored(_) | Body::Rewrite(_) => &[],
            Body::Own(parts) => &parts.merged,
        }
    }
}

impl<'s> PipelineMessage<'s> {
    pub fn new(role: Role, content: impl Into<Arc<str>>, source: Source) -> Self {
        PipelineMessage {
            role,
            counted: false,
            tokens: 0,
            body: Body::Own(Arc::new(Parts {
                name: None,
                content: content.into(),
                source,
                attachments: Vec::new(),
                truncated: false,
                merged: Vec::new(),
            })),
        }
    }

    /// Stored message `index` of `session`, as stored: its text, name and attachments are read
    /// from the session until something changes them. `None` past the session's end.
    pub fn stored(session: &'s Session, index: usize) -> Option<Self> {
        session
            .messages
            .get(index)
            .map(|message| Self::from_stored(index, message))
    }

    /// [`Self::stored`] for a message the caller took from the session at `index`.
    pub(crate) fn from_stored(index: usize, message: &'s ChatMessage) -> Self {
        PipelineMessage {
            role: message.role,
            counted: false,
            tokens: 0,
            body: Body::stored(index, message, true),
        }
    }

    /// [`Self::from_stored`], without its stored name unless `named` (the session loader's
    /// `names: none` sends none). Still a reference: nothing is copied.
    #[inline]
    pub(crate) fn from_stored_as(index: usize, message: &'s ChatMessage, named: bool) -> Self {
        PipelineMessage {
            role: message.role,
            counted: false,
            tokens: 0,
            body: Body::stored(index, message, named),
        }
    }

    /// The stored position and message when this is a stored message exactly as stored: same
    /// text, role and name, plain history provenance, nothing joined, cut or attached anew.
    pub fn as_stored(&self) -> Option<(usize, &'s ChatMessage)> {
        self.body
            .as_stored(self.role)
            .map(|(index, message)| (index as usize, message))
    }

    /// The stored position and message when this is still its stored message as stored, but
    /// for a stored name the session loader does not send: what a history rule's rewrite is
    /// kept for ([`Self::rewritten`]).
    pub fn as_rewritable(&self) -> Option<(usize, &'s ChatMessage)> {
        match &self.body {
            Body::Stored(s) if s.role == self.role => Some((s.index as usize, s.message)),
            _ => None,
        }
    }

    /// The stored position and message when this message's text is still its stored message's
    /// text, whatever else changed (its role, or a name not sent).
    pub fn stored_text(&self) -> Option<(usize, &'s ChatMessage)> {
        match &self.body {
            Body::Stored(s) => Some((s.index as usize, s.message)),
            _ => None,
        }
    }

    /// Joins `other`'s text after this one's with `separator`, keeping its provenance in
    /// `merged` (formatters that merge messages).
    pub fn absorb(&mut self, other: PipelineMessage<'_>, separator: &str, processor: &str) {
        self.absorb_all(vec![other], separator, processor);
    }

    /// Joins the texts of `others` after this one's, each after `separator`, keeping their
    /// provenance in `merged`: one new text for a whole run, however long the run.
    pub fn absorb_all(
        &mut self,
        others: Vec<PipelineMessage<'_>>,
        separator: &str,
        processor: &str,
    ) {
        if others.is_empty() {
            return;
        }
        let length = self.content().len()
            + others
                .iter()
                .map(|o| separator.len() + o.content().len())
                .sum::<usize>();
        let mut text = String::with_capacity(length);
        text.push_str(self.content());
        for other in &others {
            text.push_str(separator);
            text.push_str(other.content());
        }
        self.set_content(text);
        let parts = self.body.parts_mut();
        for other in others {
            parts
                .attachments
                .extend(other.attachments().iter().copied());
            parts.truncated |= other.truncated();
            let (source, merged) = other.into_provenance();
            parts.merged.push(source);
            parts.merged.extend(merged);
        }
        parts.source.processor = Some(processor.to_string());
    }

    pub fn content(&self) -> &str {
        self.body.content_arc()
    }

    pub fn content_arc(&self) -> &Arc<str> {
        self.body.content_arc()
    }

    pub fn set_content(&mut self, content: impl Into<Arc<str>>) {
        self.body.parts_mut().content = content.into();
        self.counted = false;
    }

    pub fn name(&self) -> Option<&str> {
        self.body.name()
    }

    /// This stored message, as stored but for a name not sent, with `content` for its text, as
    /// parts later builds can share ([`Rewritten`]; the name only when sent); `None` when it is
    /// not ([`Self::as_rewritable`]).
    pub fn rewritten(&self, content: Arc<str>) -> Option<Rewritten> {
        match &self.body {
            Body::Stored(s) if s.role == self.role => Some(Rewritten(Arc::new(RewriteParts {
                content,
                index: s.index,
                attachments: s.message.attachments.len() as u32,
                name: s.message.name.clone().filter(|_| s.has_name),
                id: s.message.id.clone(),
            }))),
            _ => None,
        }
    }

    /// Gives this stored message the text of `rewritten`, borrowing its parts, when they were
    /// made from this same stored message as it is now ([`Self::rewritten`]); gives them back,
    /// changing nothing, otherwise.
    pub fn set_rewritten(&mut self, rewritten: KeptRewrite<'s>) -> Result<(), KeptRewrite<'s>> {
        match &self.body {
            Body::Stored(s) if s.role == self.role && s.is_rewritten_as(rewritten.0) => {
                self.body = Body::Rewrite(rewritten.0);
                self.counted = false;
                Ok(())
            }
            _ => Err(rewritten),
        }
    }

    /// [`Self::set_rewritten`] for a rewrite this same stored message took in a build over the
    /// same stored texts, names, ids and attachments (one stored-texts generation), `named`
    /// when it carries the stored name: only that it is still stored message `index` as stored,
    /// its name sent or not as then, is checked, not what the rewrite was made from.
    pub fn set_replayed(
        &mut self,
        index: u32,
        rewritten: KeptRewrite<'s>,
        named: bool,
    ) -> Result<(), KeptRewrite<'s>> {
        if !self.takes_replayed(index, named) {
            return Err(rewritten);
        }
        self.body = Body::Rewrite(rewritten.0);
        self.counted = false;
        Ok(())
    }

    /// Whether [`Self::set_replayed`] gives this message a rewrite made for stored message
    /// `index` with its name sent (`named`) or not.
    pub fn takes_replayed(&self, index: u32, named: bool) -> bool {
        matches!(&self.body, Body::Stored(s)
            if s.index == index && s.role == self.role && s.has_name == named)
    }

    pub fn set_name(&mut self, name: Option<String>) {
        if self.name() != name.as_deref() {
            self.body.parts_mut().name = name.map(Arc::from);
            self.counted = false;
        }
    }

    /// What produced the message.
    pub fn kind(&self) -> SourceKind {
        self.body.kind()
    }

    /// The stored position, for history messages.
    pub fn history_index(&self) -> Option<u32> {
        self.body.history_index()
    }

    /// Where the message came from. A stored message's id is filled in by the build result.
    pub fn source(&self) -> Cow<'_, Source> {
        self.body.source(false)
    }

    /// The provenance, to change it.
    pub fn source_mut(&mut self) -> &mut Source {
        &mut self.body.parts_mut().source
    }

    /// The message's own provenance and that of the texts joined into it.
    pub fn into_provenance(self) -> (Source, Vec<Source>) {
        match self.body {
            Body::Stored(_) => (self.body.source(false).into_owned(), Vec::new()),
            Body::Own(parts) => {
                let parts = Arc::unwrap_or_clone(parts);
                (parts.source, parts.merged)
            }
            Body::Rewrite(r) => (r.source(true), Vec::new()),
        }
    }

    pub fn has_attachments(&self) -> bool {
        self.body.has_attachments()
    }

    /// References to the stored attachments this message carries.
    pub fn attachments(&self) -> Cow<'_, [AttachmentRef]> {
        self.body.attachments()
    }

    pub fn set_attachments(&mut self, attachments: Vec<AttachmentRef>) {
        if *self.attachments() != *attachments {
            self.body.parts_mut().attachments = attachments;
        }
    }

    /// Whether the token limiter or the `proportional` budget cut this message.
    pub fn truncated(&self) -> bool {
        self.body.truncated()
    }

    /// Replaces the content with a cut of it.
    pub fn set_truncated(&mut self, content: impl Into<Arc<str>>) {
        self.set_content(content);
        self.body.parts_mut().truncated = true;
    }

    /// Provenance of the texts a formatter joined into this message, after `source`'s.
    pub fn merged(&self) -> &[Source] {
        self.body.merged()
    }

    pub fn tokens(&self) -> Option<u32> {
        self.counted.then_some(self.tokens)
    }

    pub fn set_tokens(&mut self, tokens: u32) {
        self.tokens = tokens;
        self.counted = true;
    }

    /// The same message with parts of its own, so that it no longer borrows the session.
    pub fn into_owned(self) -> PipelineMessage<'static> {
        PipelineMessage {
            role: self.role,
            counted: self.counted,
            tokens: self.tokens,
            body: self.body.into_owned(),
        }
    }

    /// Split for the build result.
    pub(super) fn into_body(self) -> (Role, Body<'s>) {
        (self.role, self.body)
    }
}

/// Equal when everything a reader can see is equal, whether or not the text is still the
/// session's.
impl PartialEq for PipelineMessage<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role
            && self.tokens() == other.tokens()
            && self.content() == other.content()
            && self.name() == other.name()
            && self.source() == other.source()
            && self.attachments() == other.attachments()
            && self.truncated() == other.truncated()
            && self.merged() == other.merged()
    }
}

#[cfg(test)]
mod tests;
