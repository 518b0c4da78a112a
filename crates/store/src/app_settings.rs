//! The `app_settings` table: small key → value settings (theme, language, first-start flags).

use rusqlite::{params, OptionalExtension};

use crate::error::Context;
use crate::{Store, StoreError};

impl Store {
    pub fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn()
            .query_row(
                "SELECT value FROM app_settings WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .during("reading a setting")
    }

    pub fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO app_settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = ?2",
                params![key, value],
            )
            .during("saving a setting")?;
        Ok(())
    }
}
