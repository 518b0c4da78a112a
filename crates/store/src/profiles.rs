//! The `model_profiles` table: the user's own model profiles (RULES 5.9).

use promptloom_engine::profiles::ModelProfile;
use rusqlite::params;

use crate::error::{decode, Context};
use crate::{now_ms, Store, StoreError};

impl Store {
    pub fn save_model_profile(&self, profile: &ModelProfile) -> Result<(), StoreError> {
        let document = serde_json::to_string(profile).map_err(|e| StoreError::Invalid {
            kind: "model profile",
            id: profile.id.clone(),
            problem: e.to_string(),
        })?;
        self.transaction("saving a model profile", |tx| {
            tx.execute(
                "INSERT INTO model_profiles (id, document, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(id) DO UPDATE SET document = ?2, updated_at = ?3",
                params![profile.id, document, now_ms()],
            )
            .during("saving a model profile")?;
            Ok(())
        })
    }

    /// Every user profile, in id order; the engine searches them before its built-in ones.
    pub fn model_profiles(&self) -> Result<Vec<ModelProfile>, StoreError> {
        let mut statement = self
            .conn()
            .prepare("SELECT id, document FROM model_profiles ORDER BY id")
            .during("listing model profiles")?;
        let rows: Vec<(String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .during("listing model profiles")?
            .collect::<Result<_, _>>()
            .during("listing model profiles")?;
        rows.into_iter()
            .map(|(id, document)| decode("model profile", &id, &document))
            .collect()
    }

    pub fn delete_model_profile(&self, id: &str) -> Result<(), StoreError> {
        let n = self
            .conn()
            .execute("DELETE FROM model_profiles WHERE id = ?1", [id])
            .during("deleting a model profile")?;
        if n == 0 {
            return Err(StoreError::NotFound {
                kind: "model profile",
                id: id.to_string(),
            });
        }
        Ok(())
    }
}
