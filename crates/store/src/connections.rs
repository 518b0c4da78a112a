//! The `connections` table: where a user sends, by name. The store keeps each as a JSON document
//! and does not know its shape: the application layer reads and checks it (`crates/library`,
//! `connections`). No key is ever stored here; keys live in the OS keychain.

use rusqlite::{params, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{decode, invalid, Context};
use crate::{now_ms, Store, StoreError};

const KIND: &str = "connection";

impl Store {
    /// Saves `connection` under `name`, replacing one of that name.
    pub fn save_connection<T: Serialize>(
        &self,
        name: &str,
        connection: &T,
    ) -> Result<(), StoreError> {
        let document = serde_json::to_string(connection).map_err(|e| invalid(KIND, name, e))?;
        self.transaction("saving a connection", |tx| {
            tx.execute(
                "INSERT INTO connections (name, document, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(name) DO UPDATE SET document = ?2, updated_at = ?3",
                params![name, document, now_ms()],
            )
            .during("saving a connection")?;
            Ok(())
        })
    }

    /// Every connection, in name order.
    pub fn connections<T: DeserializeOwned>(&self) -> Result<Vec<T>, StoreError> {
        let mut statement = self
            .conn()
            .prepare("SELECT name, document FROM connections ORDER BY name")
            .during("listing connections")?;
        let rows: Vec<(String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .during("listing connections")?
            .collect::<Result<_, _>>()
            .during("listing connections")?;
        rows.into_iter()
            .map(|(name, document)| decode(KIND, &name, &document))
            .collect()
    }

    /// The connection called `name`.
    pub fn connection<T: DeserializeOwned>(&self, name: &str) -> Result<T, StoreError> {
        let document: Option<String> = self
            .conn()
            .query_row(
                "SELECT document FROM connections WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .during("reading a connection")?;
        match document {
            Some(document) => decode(KIND, name, &document),
            None => Err(StoreError::NotFound {
                kind: KIND,
                id: name.to_string(),
            }),
        }
    }

    pub fn delete_connection(&self, name: &str) -> Result<(), StoreError> {
        let n = self
            .conn()
            .execute("DELETE FROM connections WHERE name = ?1", [name])
            .during("deleting a connection")?;
        if n == 0 {
            return Err(StoreError::NotFound {
                kind: KIND,
                id: name.to_string(),
            });
        }
        Ok(())
    }
}
