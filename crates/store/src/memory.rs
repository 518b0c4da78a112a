//! The `memory_vectors` and `memory_index` tables (RULES 5.15): one vector per stored message,
//! kept with the model that made it, and per session the model its vectors are made with.
//!
//! Every write is one transaction that also raises the session's revision, so a batch of vectors
//! is saved whole or not at all (a killed indexing loses at most the batch in flight and resumes
//! from the rest), and a search that keeps the vectors in memory sees that they changed.
//! Vectors of one session are never of two models: [`Store::memory_begin`] with another model
//! removes the old ones in the same transaction that records the new model.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension};

use crate::error::Context;
use crate::{now_ms, Store, StoreError};

/// What a session's memory is made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryState {
    pub model: String,
    /// The connection it was made through, by name: the one a search embeds its input with.
    pub connection: Option<String>,
    pub dim: u32,
    pub revision: i64,
}

/// One vector to keep.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRow<'a> {
    pub message_key: &'a str,
    pub position: u32,
    pub content_hash: u64,
    /// Of length `dim`; stored as little-endian f32.
    pub vector: &'a [f32],
}

/// A session's vectors, read whole for searching: row `i` is `data[i * dim..(i + 1) * dim]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoredVectors {
    pub model: String,
    pub dim: u32,
    pub revision: i64,
    pub keys: Vec<String>,
    pub positions: Vec<u32>,
    pub hashes: Vec<u64>,
    pub data: Vec<f32>,
}

impl Store {
    /// The model and dimension a session's memory is made with, and its revision.
    pub fn memory_state(&self, session: &str) -> Result<Option<MemoryState>, StoreError> {
        self.conn()
            .query_row(
                "SELECT model, dim, revision, connection FROM memory_index WHERE session_id = ?1",
                [session],
                |r| {
                    Ok(MemoryState {
                        model: r.get(0)?,
                        dim: r.get(1)?,
                        revision: r.get(2)?,
                        connection: r.get(3)?,
                    })
                },
            )
            .optional()
            .during("reading a session's memory")
    }

    /// Starts (or continues) indexing `session` with `model` of `dim` numbers. Vectors of any
    /// other model or dimension are removed, in the transaction that records the new one: an
    /// index never mixes models. Returns how many were removed.
    pub fn memory_begin(
        &self,
        session: &str,
        model: &str,
        dim: u32,
        connection: &str,
    ) -> Result<usize, StoreError> {
        if !self.session_exists(session)? {
            return Err(StoreError::NotFound {
                kind: "session",
                id: session.to_string(),
            });
        }
        self.transaction("starting a session's memory", |tx| {
            let removed = tx
                .execute(
                    "DELETE FROM memory_vectors WHERE session_id = ?1 AND (model <> ?2 OR dim <> ?3)",
                    params![session, model, dim],
                )
                .during("removing stale vectors")?;
            tx.execute(
                "INSERT INTO memory_index (session_id, model, dim, connection, revision, updated_at)
                 VALUES (?1, ?2, ?3, ?6, 1, ?4)
                 ON CONFLICT(session_id) DO UPDATE SET model = ?2, dim = ?3, connection = ?6,
                     revision = revision + (?5 > 0 OR model <> ?2 OR dim <> ?3), updated_at = ?4",
                params![session, model, dim, now_ms(), removed as i64, connection],
            )
            .during("starting a session's memory")?;
            Ok(removed)
        })
    }

    /// The key and content hash of every vector `session` keeps of `model`.
    pub fn memory_hashes(
        &self,
        session: &str,
        model: &str,
    ) -> Result<HashMap<String, u64>, StoreError> {
        let mut statement = self
            .conn()
            .prepare(
                "SELECT message_key, content_hash FROM memory_vectors
                 WHERE session_id = ?1 AND model = ?2",
            )
            .during("reading a session's memory")?;
        let rows = statement
            .query_map(params![session, model], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .during("reading a session's memory")?;
        rows.collect::<Result<_, _>>()
            .during("reading a session's memory")
    }

    /// Keeps `rows` (made by `model`) and removes the vectors of `gone` keys, all in one
    /// transaction that raises the revision. A vector whose length is not the session's
    /// dimension is refused and nothing is written.
    pub fn memory_write(
        &self,
        session: &str,
        model: &str,
        rows: &[VectorRow<'_>],
        gone: &[String],
    ) -> Result<(), StoreError> {
        let state = self.memory_state(session)?.filter(|s| s.model == model);
        let Some(state) = state else {
            return Err(crate::error::invalid(
                "memory",
                session,
                format!("its index is not of model \"{model}\"; start it with that model first"),
            ));
        };
        if let Some(bad) = rows.iter().find(|r| r.vector.len() != state.dim as usize) {
            return Err(crate::error::invalid(
                "memory",
                session,
                format!(
                    "the vector of message \"{}\" has {} numbers, not the index's {}",
                    bad.message_key,
                    bad.vector.len(),
                    state.dim
                ),
            ));
        }
        self.transaction("saving memory vectors", |tx| {
            let mut insert = tx
                .prepare(
                    "INSERT INTO memory_vectors (session_id, message_key, position, content_hash,
                         model, dim, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT(session_id, message_key) DO UPDATE SET position = ?3,
                         content_hash = ?4, model = ?5, dim = ?6, vector = ?7",
                )
                .during("saving memory vectors")?;
            for r in rows {
                let mut blob = Vec::with_capacity(r.vector.len() * 4);
                for x in r.vector {
                    blob.extend_from_slice(&x.to_le_bytes());
                }
                insert
                    .execute(params![
                        session,
                        r.message_key,
                        r.position,
                        r.content_hash as i64,
                        model,
                        state.dim,
                        blob
                    ])
                    .during("saving memory vectors")?;
            }
            let mut delete = tx
                .prepare("DELETE FROM memory_vectors WHERE session_id = ?1 AND message_key = ?2")
                .during("removing memory vectors")?;
            for key in gone {
                delete
                    .execute(params![session, key])
                    .during("removing memory vectors")?;
            }
            tx.execute(
                "UPDATE memory_index SET revision = revision + 1, updated_at = ?2
                 WHERE session_id = ?1",
                params![session, now_ms()],
            )
            .during("saving memory vectors")?;
            Ok(())
        })
    }

    /// Every vector `session` keeps, for searching; none when it has no index. A vector whose
    /// stored bytes are not `dim` numbers is an error naming the message.
    pub fn memory_vectors(&self, session: &str) -> Result<Option<StoredVectors>, StoreError> {
        let Some(state) = self.memory_state(session)? else {
            return Ok(None);
        };
        let dim = state.dim as usize;
        let mut out = StoredVectors {
            model: state.model.clone(),
            dim: state.dim,
            revision: state.revision,
            ..StoredVectors::default()
        };
        let mut statement = self
            .conn()
            .prepare(
                "SELECT message_key, position, content_hash, vector FROM memory_vectors
                 WHERE session_id = ?1 AND model = ?2 ORDER BY position",
            )
            .during("reading memory vectors")?;
        let mut rows = statement
            .query(params![session, state.model])
            .during("reading memory vectors")?;
        while let Some(row) = rows.next().during("reading memory vectors")? {
            let key: String = row.get(0).during("reading memory vectors")?;
            let blob = row
                .get_ref(3)
                .during("reading memory vectors")?
                .as_blob()
                .map_err(|e| crate::error::invalid("memory", session, e))?;
            if blob.len() != dim * 4 {
                return Err(crate::error::invalid(
                    "memory",
                    session,
                    format!(
                        "the stored vector of message \"{key}\" has {} bytes, not {} ({dim} numbers); index the session again",
                        blob.len(),
                        dim * 4
                    ),
                ));
            }
            out.data.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            out.keys.push(key);
            out.positions
                .push(row.get(1).during("reading memory vectors")?);
            out.hashes
                .push(row.get::<_, i64>(2).during("reading memory vectors")? as u64);
        }
        Ok(Some(out))
    }
}
