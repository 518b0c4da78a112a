//! The `processor_settings` table: application-wide processor settings by processor id (a
//! preset's own settings travel in its document and win over these).

use promptloom_engine::model::ProcessorConfig;
use rusqlite::params;

use crate::error::Context;
use crate::{now_ms, Store, StoreError};

impl Store {
    pub fn save_processor_setting(&self, config: &ProcessorConfig) -> Result<(), StoreError> {
        let document = serde_json::to_string(config).map_err(|e| StoreError::Invalid {
            kind: "processor setting",
            id: config.id.clone(),
            problem: e.to_string(),
        })?;
        self.transaction("saving a processor setting", |tx| {
            tx.execute(
                "INSERT INTO processor_settings (processor_id, config, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(processor_id) DO UPDATE SET config = ?2, updated_at = ?3",
                params![config.id, document, now_ms()],
            )
            .during("saving a processor setting")?;
            Ok(())
        })
    }

    pub fn processor_settings(&self) -> Result<Vec<ProcessorConfig>, StoreError> {
        let mut statement = self
            .conn()
            .prepare("SELECT processor_id, config FROM processor_settings ORDER BY processor_id")
            .during("reading processor settings")?;
        let rows: Vec<(String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .during("reading processor settings")?
            .collect::<Result<_, _>>()
            .during("reading processor settings")?;
        rows.into_iter()
            .map(|(id, document)| {
                serde_json::from_str(&document).map_err(|e| StoreError::Invalid {
                    kind: "processor setting",
                    id,
                    problem: e.to_string(),
                })
            })
            .collect()
    }

    pub fn delete_processor_setting(&self, processor_id: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "DELETE FROM processor_settings WHERE processor_id = ?1",
                [processor_id],
            )
            .during("deleting a processor setting")?;
        Ok(())
    }
}
