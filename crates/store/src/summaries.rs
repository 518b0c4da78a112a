//! The `summaries` table (RULES 5.15): every summary a session had, with the range of stored
//! messages it covers, what made it, and whether a person edited it. One is current: its text is
//! also the session's `summary`, which `{{summary}}` reads.

use rusqlite::{params, OptionalExtension, Row};

use crate::error::Context;
use crate::{now_ms, Store, StoreError};

/// One stored summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRecord {
    pub id: i64,
    pub session_id: String,
    pub text: String,
    /// The stored positions of the first and last message it covers.
    pub first_position: u32,
    pub last_position: u32,
    pub first_message_id: Option<String>,
    pub last_message_id: Option<String>,
    /// The connection and model that wrote it; none for one a person wrote.
    pub connection: Option<String>,
    pub model: Option<String>,
    /// Changed by hand since a model wrote it.
    pub edited: bool,
    pub current: bool,
    pub created_at: i64,
}

/// A summary to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSummary<'a> {
    pub text: &'a str,
    pub first_position: u32,
    pub last_position: u32,
    pub first_message_id: Option<&'a str>,
    pub last_message_id: Option<&'a str>,
    pub connection: Option<&'a str>,
    pub model: Option<&'a str>,
    pub edited: bool,
}

const COLUMNS: &str = "id, session_id, text, first_position, last_position, first_message_id, \
                       last_message_id, connection, model, edited, current, created_at";

fn record(r: &Row<'_>) -> rusqlite::Result<SummaryRecord> {
    Ok(SummaryRecord {
        id: r.get(0)?,
        session_id: r.get(1)?,
        text: r.get(2)?,
        first_position: r.get(3)?,
        last_position: r.get(4)?,
        first_message_id: r.get(5)?,
        last_message_id: r.get(6)?,
        connection: r.get(7)?,
        model: r.get(8)?,
        edited: r.get(9)?,
        current: r.get(10)?,
        created_at: r.get(11)?,
    })
}

impl Store {
    /// Keeps `summary` for `session` and makes it the current one (the session's `summary`
    /// too), in one transaction. Earlier summaries stay, to restore.
    pub fn add_summary(
        &self,
        session: &str,
        summary: &NewSummary<'_>,
    ) -> Result<SummaryRecord, StoreError> {
        self.require_session(session)?;
        if summary.first_position > summary.last_position {
            return Err(crate::error::invalid(
                "summary",
                session,
                format!(
                    "its range starts after it ends ({} to {})",
                    summary.first_position, summary.last_position
                ),
            ));
        }
        let id = self.transaction("keeping a summary", |tx| {
            tx.execute(
                "UPDATE summaries SET current = 0 WHERE session_id = ?1",
                [session],
            )
            .during("keeping a summary")?;
            tx.execute(
                "INSERT INTO summaries (session_id, text, first_position, last_position,
                     first_message_id, last_message_id, connection, model, edited, current,
                     created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10)",
                params![
                    session,
                    summary.text,
                    summary.first_position,
                    summary.last_position,
                    summary.first_message_id,
                    summary.last_message_id,
                    summary.connection,
                    summary.model,
                    summary.edited,
                    now_ms()
                ],
            )
            .during("keeping a summary")?;
            let id = tx.last_insert_rowid();
            set_session_summary(tx, session, summary.text)?;
            Ok(id)
        })?;
        self.summary(session, id)
    }

    /// Every summary of `session`, newest first.
    pub fn summaries(&self, session: &str) -> Result<Vec<SummaryRecord>, StoreError> {
        self.require_session(session)?;
        let mut statement = self
            .conn()
            .prepare(&format!(
                "SELECT {COLUMNS} FROM summaries WHERE session_id = ?1 ORDER BY id DESC"
            ))
            .during("listing summaries")?;
        let rows = statement
            .query_map([session], record)
            .during("listing summaries")?;
        rows.collect::<Result<_, _>>().during("listing summaries")
    }

    /// The current summary of `session`, when it has one.
    pub fn current_summary(&self, session: &str) -> Result<Option<SummaryRecord>, StoreError> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM summaries WHERE session_id = ?1 AND current = 1"),
                [session],
                record,
            )
            .optional()
            .during("reading the current summary")
    }

    /// Summary `id` of `session`.
    pub fn summary(&self, session: &str, id: i64) -> Result<SummaryRecord, StoreError> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM summaries WHERE session_id = ?1 AND id = ?2"),
                params![session, id],
                record,
            )
            .optional()
            .during("reading a summary")?
            .ok_or_else(|| StoreError::NotFound {
                kind: "summary",
                id: format!("{session}#{id}"),
            })
    }

    /// Makes summary `id` the current one again (the session's `summary` becomes its text).
    pub fn restore_summary(&self, session: &str, id: i64) -> Result<SummaryRecord, StoreError> {
        let chosen = self.summary(session, id)?;
        self.transaction("restoring a summary", |tx| {
            tx.execute(
                "UPDATE summaries SET current = (id = ?2) WHERE session_id = ?1",
                params![session, id],
            )
            .during("restoring a summary")?;
            set_session_summary(tx, session, &chosen.text)
        })?;
        self.summary(session, id)
    }

    fn require_session(&self, session: &str) -> Result<(), StoreError> {
        if self.session_exists(session)? {
            Ok(())
        } else {
            Err(StoreError::NotFound {
                kind: "session",
                id: session.to_string(),
            })
        }
    }
}

fn set_session_summary(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    text: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE sessions SET summary = ?2, updated_at = ?3 WHERE id = ?1",
        params![session, text, now_ms()],
    )
    .during("setting the session's summary")?;
    Ok(())
}
