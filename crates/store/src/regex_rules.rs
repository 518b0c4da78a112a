//! The `regex_rules` table: the library of regex rules shared by every preset (RULES 5.2). An
//! invalid pattern is refused when saved, with the regex error.

use promptloom_engine::model::RegexRule;
use rusqlite::params;

use crate::error::Context;
use crate::{now_ms, Store, StoreError};

impl Store {
    /// Replaces the library with `rules`, in their order, in one transaction.
    pub fn save_regex_rules(&self, rules: &[RegexRule]) -> Result<(), StoreError> {
        let mut documents = Vec::with_capacity(rules.len());
        for rule in rules {
            promptloom_engine::regex_rule::compile(rule).map_err(|problem| {
                StoreError::Invalid {
                    kind: "regex rule",
                    id: rule.id.clone(),
                    problem,
                }
            })?;
            documents.push(
                serde_json::to_string(rule).map_err(|e| StoreError::Invalid {
                    kind: "regex rule",
                    id: rule.id.clone(),
                    problem: e.to_string(),
                })?,
            );
        }
        self.transaction("saving regex rules", |tx| {
            tx.execute("DELETE FROM regex_rules", [])
                .during("saving regex rules")?;
            let now = now_ms();
            for (position, (rule, document)) in rules.iter().zip(&documents).enumerate() {
                tx.execute(
                    "INSERT INTO regex_rules (id, position, document, updated_at) VALUES (?1, ?2, ?3, ?4)",
                    params![rule.id, position as i64, document, now],
                )
                .during("saving regex rules")?;
            }
            Ok(())
        })
    }

    pub fn regex_rules(&self) -> Result<Vec<RegexRule>, StoreError> {
        let mut statement = self
            .conn()
            .prepare("SELECT id, document FROM regex_rules ORDER BY position")
            .during("reading regex rules")?;
        let rows: Vec<(String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .during("reading regex rules")?
            .collect::<Result<_, _>>()
            .during("reading regex rules")?;
        rows.into_iter()
            .map(|(id, document)| {
                serde_json::from_str(&document).map_err(|e| StoreError::Invalid {
                    kind: "regex rule",
                    id,
                    problem: e.to_string(),
                })
            })
            .collect()
    }
}
