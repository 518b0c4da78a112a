//! Answers kept per stored message of a session, and the stored texts a session's last build
//! found, under the generation that says when those answers can be read without the session
//! (RULES 5.3).

use std::sync::Arc;

use crate::model::{ChatMessage, Role, Session};

/// Answers about a session's stored messages by stored position, each held with the stored text
/// it was worked out for.
///
/// Checked against the session once per generation of its stored texts ([`Self::sync`]), the
/// answers for stored messages whose text is the stored one are read without their texts: a
/// rebuild over an unchanged session then reads no stored message for them.
#[derive(Debug)]
pub struct ByStoredText<T> {
    entries: Vec<Option<Row<T>>>,
    /// The generation of stored texts every stored text's row was last checked against (0:
    /// none).
    checked: u64,
    /// Whether that is this build's generation: then each such row holds its stored message's
    /// text. Set by [`Self::sync`], which a build calls before it reads any row.
    pub(super) holds: bool,
}

/// One answer, with the text it was worked out for.
#[derive(Debug, Clone)]
struct Row<T> {
    text: Arc<str>,
    answer: T,
    /// Whether the text was its stored message's text ([`ByStoredText::set_stored`]).
    stored: bool,
}

impl<T> Default for ByStoredText<T> {
    fn default() -> Self {
        ByStoredText {
            entries: Vec::new(),
            checked: 0,
            holds: false,
        }
    }
}

impl<T: Clone> ByStoredText<T> {
    /// The answer for stored message `index`, if it was worked out for this very text.
    pub fn get(&self, index: usize, text: &Arc<str>) -> Option<&T> {
        match self.entries.get(index) {
            Some(Some(row)) if Arc::ptr_eq(&row.text, text) => Some(&row.answer),
            _ => None,
        }
    }

    /// The answer for stored message `index` with its stored text (`text` reads it): kept when
    /// the rows are synced with this build's stored texts, else checked against the text.
    pub fn get_stored<'t>(&self, index: usize, text: impl FnOnce() -> &'t Arc<str>) -> Option<&T> {
        if self.holds {
            let row = self.entries.get(index)?.as_ref()?;
            return row.stored.then_some(&row.answer);
        }
        self.get(index, text())
    }

    /// Keeps the answer for stored message `index` with this text, which need not be its stored
    /// text (a rewrite of it): read again with [`Self::get`] and this very text.
    pub fn set(&mut self, index: usize, text: &Arc<str>, answer: T) {
        self.put(index, text, answer, false);
    }

    /// [`Self::set`] for stored message `index` with its stored text.
    pub fn set_stored(&mut self, index: usize, stored: &Arc<str>, answer: T) {
        self.put(index, stored, answer, true);
    }

    fn put(&mut self, index: usize, text: &Arc<str>, answer: T, stored: bool) {
        if !self.holds {
            // Not known to be of the generation last checked: checked again at the next sync.
            self.checked = 0;
        }
        if index >= self.entries.len() {
            self.entries.resize(index + 1, None);
        }
        self.entries[index] = Some(Row {
            text: Arc::clone(text),
            answer,
            stored,
        });
    }

    /// Readies the rows for a build whose session loader found the stored texts of `generation`
    /// (`None`: it did not run). Of another generation than the rows were last checked against,
    /// every stored text's row is checked against its stored message's text now and forgotten
    /// when that is another.
    pub fn sync(&mut self, session: &Session, generation: Option<u64>) {
        self.holds = generation.is_some();
        let Some(generation) = generation else {
            return;
        };
        if self.checked == generation {
            return;
        }
        for (row, stored) in self.entries.iter_mut().zip(
            session
                .messages
                .iter()
                .map(Some)
                .chain(std::iter::repeat(None)),
        ) {
            if row.as_ref().is_some_and(|r| {
                r.stored && !stored.is_some_and(|m| Arc::ptr_eq(&m.content, &r.text))
            }) {
                *row = None;
            }
        }
        self.checked = generation;
    }

    /// Forgets positions past the end of a session that got shorter.
    pub fn truncate(&mut self, len: usize) {
        self.entries.truncate(len);
    }
}

/// The texts and roles of a session's stored messages as its last build's session loader found
/// them, and a fingerprint of their names, ids and numbers of attachments ([`shape_of`]), under
/// a generation that changes whenever one of them does ([`ByStoredText::sync`]). It holds the
/// texts, names and ids, so no other string can be at one's address while it is kept.
#[derive(Debug, Default)]
pub struct StoredTexts {
    pub(super) texts: Vec<Arc<str>>,
    pub(super) roles: Vec<Role>,
    /// The names and ids, held for their addresses only.
    pub(super) _held: Vec<Arc<str>>,
    pub(super) shape: u64,
    pub(super) generation: u64,
}

/// Stored message `index`'s part of a session's fingerprint of names, ids and numbers of
/// attachments: the sum of these over the session changes when any of them does (a name or id
/// by the address of its string, which [`StoredTexts`] holds), but for a 64-bit coincidence, as
/// counts are kept by a 64-bit hash of their text.
#[inline]
pub fn shape_of(index: usize, message: &ChatMessage) -> u64 {
    let address =
        |s: &Option<Arc<str>>| s.as_ref().map_or(0, |s| Arc::as_ptr(s).cast::<u8>() as u64);
    let mut x = address(&message.name)
        ^ address(&message.id).rotate_left(29)
        ^ ((message.attachments.len() as u64) << 52)
        ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // MurmurHash3's finaliser: every bit of `x` moves every bit of the result.
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl StoredTexts {
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// Whether stored message `index` has this very text and this role still.
    pub fn has(&self, index: usize, text: &Arc<str>, role: Role) -> bool {
        self.texts.get(index).is_some_and(|t| Arc::ptr_eq(t, text))
            && self.roles.get(index) == Some(&role)
    }
}

/// What each of one session's stored messages costs, by stored position: its count as the
/// build's format or template writes it (names aside), and the role it was counted for.
pub type HistoryCounts = ByStoredText<(u32, Role)>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::BuildCache;

    /// A session of user messages with these texts.
    fn session_of(texts: &[&str]) -> Session {
        Session {
            format_version: 1,
            id: "s".into(),
            title: None,
            user_profile: None,
            summary: None,
            messages: texts
                .iter()
                .map(|t| crate::model::ChatMessage::new(Role::User, t))
                .collect(),
            variables: None,
            authors_note: None,
        }
    }

    /// Rows of stored texts are checked once per generation of the session's texts, then read
    /// without them; a row kept for another text (a rewrite's) is checked by that text.
    #[test]
    fn rows_of_stored_texts_are_checked_once_a_generation_and_then_read_without_them() {
        let mut session = session_of(&["a", "b"]);
        let rewrite: Arc<str> = Arc::from("b, rewritten");
        let mut rows = ByStoredText::<u32>::default();
        rows.set_stored(0, &session.messages[0].content, 1);
        rows.set(1, &rewrite, 2);
        let other: Arc<str> = Arc::from("a");
        // Not synced: every read checks the text (an equal text in another string is another).
        assert_eq!(
            rows.get_stored(0, || &session.messages[0].content),
            Some(&1)
        );
        assert_eq!(rows.get_stored(0, || &other), None);
        rows.sync(&session, Some(7));
        assert_eq!(rows.get_stored(0, || panic!("not read")), Some(&1));
        assert_eq!(
            rows.get_stored(1, || panic!("not read")),
            None,
            "a rewrite's row"
        );
        assert_eq!(rows.get(1, &rewrite), Some(&2));
        // A new generation: the changed text's row goes, the rewrite's stays.
        session.messages[0].content = Arc::from("a, edited");
        rows.sync(&session, Some(8));
        assert_eq!(rows.get_stored(0, || panic!("not read")), None);
        assert_eq!(rows.get(1, &rewrite), Some(&2));
        // Without a generation (no session loader), reads check the text again.
        rows.set_stored(0, &session.messages[0].content, 3);
        rows.sync(&session, None);
        assert_eq!(rows.get_stored(0, || &other), None);
        assert_eq!(
            rows.get_stored(0, || &session.messages[0].content),
            Some(&3)
        );
        // A row kept meanwhile, of a text the session no longer has: back at the generation
        // last checked, it is checked again.
        let meanwhile: Arc<str> = Arc::from("a, for a while");
        rows.set_stored(0, &meanwhile, 4);
        rows.sync(&session, Some(8));
        assert_eq!(rows.get_stored(0, || panic!("not read")), None);
    }

    #[test]
    fn a_session_gets_a_new_generation_of_stored_texts_only_when_one_changed() {
        let cache = BuildCache::new();
        let mut session = session_of(&["a"]);
        let found = |session: &Session| {
            let seen = cache.take_stored_texts(&session.id);
            let same = seen.len() == session.messages.len()
                && session
                    .messages
                    .iter()
                    .enumerate()
                    .all(|(i, m)| seen.has(i, &m.content, m.role));
            let shape = session
                .messages
                .iter()
                .enumerate()
                .fold(0u64, |sum, (i, m)| sum.wrapping_add(shape_of(i, m)));
            cache.keep_stored_texts(session, seen, same, shape)
        };
        let first = found(&session);
        assert_eq!(found(&session), first);
        session.messages[0].role = Role::Assistant;
        let second = found(&session);
        assert_ne!(second, first);
        session.messages[0].content = Arc::from("a");
        let third = found(&session);
        assert_ne!(third, second, "an equal text in another string");
        assert_eq!(found(&session), third);
        // A name, an id, an attachment, each changed in place with the text left as it was.
        let mut last = third;
        for change in 0..4 {
            let m = &mut session.messages[0];
            match change {
                0 => m.name = Some(Arc::from("Ann")),
                1 => m.name = Some(Arc::from("Ann")),
                2 => m.id = Some(Arc::from("m0")),
                _ => m.attachments.push(crate::model::Attachment {
                    id: "a".into(),
                    kind: crate::model::AttachmentKind::Image,
                    mime: "image/png".into(),
                    name: "a.png".into(),
                    path: None,
                    data_base64: None,
                    transcript: None,
                }),
            }
            let next = found(&session);
            assert_ne!(next, last, "change {change}");
            assert_eq!(found(&session), next);
            last = next;
        }
    }
}
