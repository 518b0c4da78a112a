//! The `sessions` and `messages` tables: a session row and one row per message, by position.

use std::collections::BTreeMap;

use promptloom_engine::model::{
    validate_session, Attachment, AuthorsNote, ChatMessage, ReplyInfo, Role, Session, Swipe,
    UserProfile,
};
use rusqlite::{params, OptionalExtension};

use crate::error::{self, decode, Context};
use crate::{now_ms, Listed, Store, StoreError};

const KIND: &str = "session";

/// The `extra` column: what a session keeps besides its row's own columns and its messages.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionExtra {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    variables: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authors_note: Option<AuthorsNote>,
}

impl SessionExtra {
    /// The session's extra data; none when it has none (the column stays NULL).
    fn of(session: &Session) -> Option<SessionExtra> {
        (session.variables.is_some() || session.authors_note.is_some()).then(|| SessionExtra {
            variables: session.variables.clone(),
            authors_note: session.authors_note.clone(),
        })
    }
}

impl Store {
    /// Saves `session` whole (its row and every message) in one transaction.
    pub fn save_session(&self, session: &Session) -> Result<(), StoreError> {
        validate_session(session).map_err(|e| invalid(&session.id, e))?;
        let profile = session
            .user_profile
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| invalid(&session.id, e))?;
        let extra = SessionExtra::of(session)
            .map(|e| serde_json::to_string(&e))
            .transpose()
            .map_err(|e| invalid(&session.id, e))?;
        self.transaction("saving a session", |tx| {
            let now = now_ms();
            tx.execute(
                "INSERT INTO sessions (id, title, user_profile, summary, extra, created_at,
                                       updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
                 ON CONFLICT(id) DO UPDATE SET title = ?2, user_profile = ?3, summary = ?4,
                                               extra = ?5, updated_at = ?6",
                params![
                    session.id,
                    session.title,
                    profile,
                    session.summary,
                    extra,
                    now
                ],
            )
            .during("saving a session")?;
            tx.execute("DELETE FROM messages WHERE session_id = ?1", [&session.id])
                .during("saving a session's messages")?;
            let mut insert = tx
                .prepare(
                    "INSERT INTO messages (session_id, position, id, role, name, content,
                                           attachments, created_at, reply, swipes, swipe_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .during("saving a session's messages")?;
            for (position, m) in session.messages.iter().enumerate() {
                let json = |value: &dyn erased::Json| -> Result<Option<String>, StoreError> {
                    value.json().map_err(|e| invalid(&session.id, e))
                };
                let attachments = json(&m.attachments)?;
                let reply = json(&m.reply)?;
                let swipes = json(&m.swipes)?;
                insert
                    .execute(params![
                        session.id,
                        position as i64,
                        m.id,
                        m.role.as_str(),
                        m.name,
                        &*m.content,
                        attachments,
                        m.created_at,
                        reply,
                        swipes,
                        m.swipe_at,
                    ])
                    .during("saving a session's messages")?;
            }
            Ok(())
        })
    }

    pub fn get_session(&self, id: &str) -> Result<Session, StoreError> {
        type SessionRow = (
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let row: Option<SessionRow> = self
            .conn()
            .query_row(
                "SELECT title, user_profile, summary, extra FROM sessions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .during("reading a session")?;
        let (title, profile, summary, extra) = row.ok_or_else(|| StoreError::NotFound {
            kind: KIND,
            id: id.to_string(),
        })?;
        let user_profile: Option<UserProfile> =
            profile.map(|p| decode(KIND, id, &p)).transpose()?;
        let extra: SessionExtra = extra
            .map(|e| decode(KIND, id, &e))
            .transpose()?
            .unwrap_or_default();
        let mut statement = self
            .conn()
            .prepare(
                "SELECT id, role, name, content, attachments, created_at, reply, swipes, swipe_at
                 FROM messages WHERE session_id = ?1 ORDER BY position",
            )
            .during("reading a session's messages")?;
        type Row = (
            Option<String>,
            String,
            Option<String>,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<u32>,
        );
        let rows: Vec<Row> = statement
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .during("reading a session's messages")?
            .collect::<Result<_, _>>()
            .during("reading a session's messages")?;
        let mut messages = Vec::with_capacity(rows.len());
        for (
            position,
            (mid, role, name, content, attachments, created_at, reply, swipes, swipe_at),
        ) in rows.into_iter().enumerate()
        {
            let role = parse_role(&role).ok_or_else(|| {
                invalid(
                    id,
                    format!("messages[{position}].role: unknown role \"{role}\""),
                )
            })?;
            let attachments: Vec<Attachment> = attachments
                .map(|a| serde_json::from_str(&a))
                .transpose()
                .map_err(|e| invalid(id, format!("messages[{position}].attachments: {e}")))?
                .unwrap_or_default();
            let reply: Option<ReplyInfo> = reply
                .map(|r| serde_json::from_str(&r))
                .transpose()
                .map_err(|e| invalid(id, format!("messages[{position}].reply: {e}")))?;
            let swipes: Vec<Swipe> = swipes
                .map(|s| serde_json::from_str(&s))
                .transpose()
                .map_err(|e| invalid(id, format!("messages[{position}].swipes: {e}")))?
                .unwrap_or_default();
            messages.push(ChatMessage {
                id: mid.map(Into::into),
                role,
                name: name.map(Into::into),
                content: content.into(),
                attachments,
                created_at,
                reply: reply.map(Box::new),
                swipes,
                swipe_at,
            });
        }
        let session = Session {
            format_version: promptloom_engine::model::FORMAT_VERSION,
            id: id.to_string(),
            title,
            user_profile,
            summary,
            messages,
            variables: extra.variables,
            authors_note: extra.authors_note,
        };
        validate_session(&session).map_err(|e| invalid(id, e))?;
        Ok(session)
    }

    pub fn list_sessions(&self) -> Result<Vec<Listed>, StoreError> {
        self.listed(
            "SELECT id, COALESCE(title, id), updated_at FROM sessions ORDER BY updated_at DESC, id",
            "listing sessions",
        )
    }

    pub fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        self.delete_by_id("sessions", KIND, id)
    }

    pub fn session_exists(&self, id: &str) -> Result<bool, StoreError> {
        self.conn()
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .during("looking up a session")
    }

    /// `wanted`, or the first free `<wanted>-N`: an import or a new session never overwrites.
    pub fn free_session_id(&self, wanted: &str) -> Result<String, StoreError> {
        crate::free_id(wanted, |id| self.session_exists(id))
    }
}

fn parse_role(role: &str) -> Option<Role> {
    [Role::System, Role::User, Role::Assistant, Role::Tool]
        .into_iter()
        .find(|r| r.as_str() == role)
}

fn invalid(id: &str, e: impl std::fmt::Display) -> StoreError {
    error::invalid(KIND, id, e)
}

/// The optional parts of a message as their JSON column holds them: `None` when there is
/// nothing (an empty list, no reply), so older rows and new ones without them read the same.
mod erased {
    pub(super) trait Json {
        fn json(&self) -> serde_json::Result<Option<String>>;
    }

    impl<T: serde::Serialize> Json for Vec<T> {
        fn json(&self) -> serde_json::Result<Option<String>> {
            if self.is_empty() {
                Ok(None)
            } else {
                serde_json::to_string(self).map(Some)
            }
        }
    }

    impl<T: serde::Serialize> Json for Option<T> {
        fn json(&self) -> serde_json::Result<Option<String>> {
            self.as_ref().map(serde_json::to_string).transpose()
        }
    }
}
