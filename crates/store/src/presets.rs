//! The `presets` table: agent presets as native JSON documents.

use promptloom_engine::model::{preset_from_value, AgentPreset};
use rusqlite::{params, OptionalExtension};

use crate::error::{self, Context};
use crate::{now_ms, Listed, Store, StoreError};

const KIND: &str = "preset";

impl Store {
    /// Saves `preset` (insert or replace) in one transaction and returns its new revision. It
    /// must pass the engine's validation; a refused save leaves the stored version as it was.
    pub fn save_preset(&self, preset: &AgentPreset) -> Result<i64, StoreError> {
        self.save_preset_over(preset, None)
    }

    /// [`Self::save_preset`], but only over revision `opened` (the one it was read at): when
    /// another writer saved it since, nothing is written and the error says so. A preset that
    /// is no longer stored is saved anew.
    pub fn save_preset_at(&self, preset: &AgentPreset, opened: i64) -> Result<i64, StoreError> {
        self.save_preset_over(preset, Some(opened))
    }

    fn save_preset_over(
        &self,
        preset: &AgentPreset,
        opened: Option<i64>,
    ) -> Result<i64, StoreError> {
        let document = checked(preset)?;
        self.transaction("saving a preset", |tx| {
            let current: Option<i64> = tx
                .query_row(
                    "SELECT revision FROM presets WHERE id = ?1",
                    [&preset.id],
                    |r| r.get(0),
                )
                .optional()
                .during("saving a preset")?;
            if let (Some(expected), Some(found)) = (opened, current) {
                if expected != found {
                    return Err(StoreError::Conflict {
                        kind: KIND,
                        id: preset.id.clone(),
                        expected,
                        found,
                    });
                }
            }
            let now = now_ms();
            tx.query_row(
                "INSERT INTO presets (id, name, document, created_at, updated_at, revision)
                 VALUES (?1, ?2, ?3, ?4, ?4, 1)
                 ON CONFLICT(id) DO UPDATE SET name = ?2, document = ?3, updated_at = ?4,
                     revision = revision + 1
                 RETURNING revision",
                params![preset.id, preset.name, document, now],
                |r| r.get(0),
            )
            .during("saving a preset")
        })
    }

    pub fn get_preset(&self, id: &str) -> Result<AgentPreset, StoreError> {
        self.get_preset_with_revision(id).map(|(preset, _)| preset)
    }

    /// The preset and the revision it is at, for a later [`Self::save_preset_at`].
    pub fn get_preset_with_revision(&self, id: &str) -> Result<(AgentPreset, i64), StoreError> {
        let row: Option<(String, i64)> = self
            .conn()
            .query_row(
                "SELECT document, revision FROM presets WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .during("reading a preset")?;
        let (document, revision) = row.ok_or_else(|| StoreError::NotFound {
            kind: KIND,
            id: id.to_string(),
        })?;
        Ok((parse(id, &document)?, revision))
    }

    pub fn list_presets(&self) -> Result<Vec<Listed>, StoreError> {
        self.listed(
            "SELECT id, name, updated_at FROM presets ORDER BY name COLLATE NOCASE, id",
            "listing presets",
        )
    }

    pub fn delete_preset(&self, id: &str) -> Result<(), StoreError> {
        self.delete_by_id("presets", KIND, id)
    }

    pub fn rename_preset(&self, id: &str, name: &str) -> Result<(), StoreError> {
        let mut preset = self.get_preset(id)?;
        preset.name = name.to_string();
        self.save_preset(&preset).map(|_| ())
    }

    /// A copy of preset `id` under `new_id` and `name`.
    pub fn duplicate_preset(
        &self,
        id: &str,
        new_id: &str,
        name: &str,
    ) -> Result<AgentPreset, StoreError> {
        if self.preset_exists(new_id)? {
            return Err(StoreError::Invalid {
                kind: KIND,
                id: new_id.to_string(),
                problem: "a preset with this id exists already".into(),
            });
        }
        let mut preset = self.get_preset(id)?;
        preset.id = new_id.to_string();
        preset.name = name.to_string();
        self.save_preset(&preset)?;
        Ok(preset)
    }

    /// `wanted`, or the first free `<wanted>-N`: an import or a copy never overwrites a preset.
    pub fn free_preset_id(&self, wanted: &str) -> Result<String, StoreError> {
        crate::free_id(wanted, |id| self.preset_exists(id))
    }

    pub fn preset_exists(&self, id: &str) -> Result<bool, StoreError> {
        self.conn()
            .query_row("SELECT 1 FROM presets WHERE id = ?1", [id], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .during("looking up a preset")
    }
}

/// The preset as JSON, after the engine's validation.
fn checked(preset: &AgentPreset) -> Result<String, StoreError> {
    let value = serde_json::to_value(preset).map_err(|e| invalid(&preset.id, e))?;
    preset_from_value(value.clone()).map_err(|e| invalid(&preset.id, e))?;
    serde_json::to_string(&value).map_err(|e| invalid(&preset.id, e))
}

fn parse(id: &str, document: &str) -> Result<AgentPreset, StoreError> {
    promptloom_engine::model::parse_preset(document).map_err(|e| invalid(id, e))
}

fn invalid(id: &str, e: impl std::fmt::Display) -> StoreError {
    error::invalid(KIND, id, e)
}
