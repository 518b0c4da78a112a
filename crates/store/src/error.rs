//! The store's typed errors. Each names the thing and the problem; `code()` is the stable code the
//! UI and the CLI switch on.

use promptloom_engine::codes;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// SQLite refused an operation; `operation` says which.
    #[error("database error while {operation}: {source}")]
    Sqlite {
        operation: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The database was written by a newer Promptloom. Nothing was changed.
    #[error("the database {path} has schema version {found}, newer than this build's {supported}; update Promptloom to open it")]
    NewerSchema {
        path: String,
        found: i64,
        supported: i64,
    },
    /// The file is not a SQLite database, or it is damaged. It was not changed.
    #[error("the database {path} is damaged or not a Promptloom database: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("no {kind} with id \"{id}\"")]
    NotFound { kind: &'static str, id: String },
    /// A stored document, or one being saved, does not pass the engine's validation.
    #[error("{kind} \"{id}\": {problem}")]
    Invalid {
        kind: &'static str,
        id: String,
        problem: String,
    },
    #[error("cannot back up the database before migrating it: {0}")]
    Backup(String),
    /// The row changed since the writer read it (another program saved it meanwhile). Nothing
    /// was written.
    #[error("{kind} \"{id}\" was changed by another program since it was opened (revision {found}, opened at {expected})")]
    Conflict {
        kind: &'static str,
        id: String,
        expected: i64,
        found: i64,
    },
}

impl StoreError {
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Sqlite { .. } => codes::DATABASE,
            StoreError::NewerSchema { .. } => codes::NEWER_SCHEMA,
            StoreError::Corrupt { .. } => codes::CORRUPT_DATABASE,
            StoreError::NotFound { .. } => codes::NOT_FOUND,
            StoreError::Invalid { .. } => codes::INVALID_DOCUMENT,
            StoreError::Backup(_) => codes::BACKUP_FAILED,
            StoreError::Conflict { .. } => codes::CONFLICT,
        }
    }
}

/// Attaches the operation to a SQLite error.
pub(crate) trait Context<T> {
    fn during(self, operation: &str) -> Result<T, StoreError>;
}

impl<T> Context<T> for Result<T, rusqlite::Error> {
    fn during(self, operation: &str) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Sqlite {
            operation: operation.to_string(),
            source,
        })
    }
}

/// A stored JSON document read back as `T`; one that no longer reads is an error naming its kind
/// and id.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    kind: &'static str,
    id: &str,
    document: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(document).map_err(|e| invalid(kind, id, e))
}

/// A document of `kind` `id` that does not read or does not validate.
pub(crate) fn invalid(kind: &'static str, id: &str, problem: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid {
        kind,
        id: id.to_string(),
        problem: problem.to_string(),
    }
}
