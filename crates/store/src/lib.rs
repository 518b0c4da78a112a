//! Promptloom's persistence (RULES 9.1): presets, sessions and their messages, model profiles,
//! app settings, summaries and memory vectors (RULES 5.15) in one SQLite database, one module
//! per table.
//!
//! - WAL mode with `synchronous = FULL`: a save that returned is on disk, even across a power cut,
//!   and a killed process never leaves a half-written save (SQLite's journal rolls it back).
//! - Versioned migrations (`migrations/NNNN_*.sql`, embedded), each applied in its own
//!   transaction together with the new `user_version`. A database written by a newer build is
//!   refused before anything is written; one from an older build is copied to
//!   `<file>.backup-v<old version>` before it is migrated.
//! - A file that is not a SQLite database, or fails SQLite's quick check, is reported and left
//!   exactly as it was.

mod error;

pub mod app_settings;
pub mod builtin;
pub mod connections;
pub mod memory;
pub mod presets;
pub mod profiles;
pub mod sessions;
pub mod summaries;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};

pub use builtin::{builtin_presets, builtin_sessions};
use error::Context;
pub use error::StoreError;

/// The migrations, in order; the schema version is their count.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../migrations/0001_init.sql")),
    (
        "0002_preset_revision",
        include_str!("../migrations/0002_preset_revision.sql"),
    ),
    ("0003_unused", include_str!("../migrations/0003_unused.sql")),
    (
        "0004_connections",
        include_str!("../migrations/0004_connections.sql"),
    ),
    (
        "0005_replies",
        include_str!("../migrations/0005_replies.sql"),
    ),
    (
        "0006_session_extra",
        include_str!("../migrations/0006_session_extra.sql"),
    ),
    ("0007_memory", include_str!("../migrations/0007_memory.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The 16 bytes every SQLite database file starts with.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
}

impl Store {
    /// Opens (or creates) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Self::open_with(path, MIGRATIONS)
    }

    fn open_with(path: &Path, migrations: &[(&str, &str)]) -> Result<Store, StoreError> {
        let supported = migrations.len() as i64;
        let shown = path.display().to_string();
        let existing = path.exists();
        if existing {
            check_header(path)?;
        }
        if existing {
            // Every check through a read-only connection: it cannot write, and it never
            // checkpoints a WAL into the file, so a refused database stays byte for byte.
            let reader = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| corrupt(&shown, e))?;
            let version: i64 = reader
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| corrupt(&shown, e))?;
            if version > supported {
                return Err(StoreError::NewerSchema {
                    path: shown,
                    found: version,
                    supported,
                });
            }
            let check: String = reader
                .query_row("PRAGMA quick_check", [], |r| r.get(0))
                .map_err(|e| corrupt(&shown, e))?;
            if check != "ok" {
                return Err(StoreError::Corrupt {
                    path: shown,
                    reason: check,
                });
            }
        }
        let flags = if existing {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let conn = Connection::open_with_flags(path, flags).map_err(|e| corrupt(&shown, e))?;
        let store = Store {
            conn,
            path: Some(path.to_path_buf()),
        };
        let version = store
            .schema_version()
            .during("reading the schema version")?;
        if version > 0 && version < supported {
            store.backup(version)?;
        }
        store.configure()?;
        store.migrate(migrations)?;
        Ok(store)
    }

    /// A database in memory, for tests and previews that keep nothing.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().during("opening an in-memory database")?;
        let store = Store { conn, path: None };
        store.configure()?;
        store.migrate(MIGRATIONS)?;
        Ok(store)
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn schema_version(&self) -> Result<i64, rusqlite::Error> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0))
    }

    fn configure(&self) -> Result<(), StoreError> {
        self.conn
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA busy_timeout = 5000;",
            )
            .during("configuring the database")
    }

    fn migrate(&self, migrations: &[(&str, &str)]) -> Result<(), StoreError> {
        let current = self.schema_version().during("reading the schema version")?;
        for (index, (name, sql)) in migrations.iter().enumerate() {
            let version = index as i64 + 1;
            if version <= current {
                continue;
            }
            let tx = self
                .conn
                .unchecked_transaction()
                .during("starting a migration")?;
            tx.execute_batch(sql)
                .during(&format!("applying migration {name}"))?;
            tx.pragma_update(None, "user_version", version)
                .during(&format!("recording migration {name}"))?;
            tx.commit()
                .during(&format!("committing migration {name}"))?;
        }
        Ok(())
    }

    /// A copy of the database as it is, next to it, before a migration changes it.
    fn backup(&self, version: i64) -> Result<(), StoreError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        // Never over an earlier backup: `.backup-v1`, then `.backup-v1-2`, ...
        let name = |n: u32| {
            let mut target = path.clone().into_os_string();
            match n {
                1 => target.push(format!(".backup-v{version}")),
                n => target.push(format!(".backup-v{version}-{n}")),
            }
            PathBuf::from(target)
        };
        let target = (1..)
            .map(name)
            .find(|t| !t.exists())
            .unwrap_or_else(|| name(u32::MAX));
        self.conn
            .execute("VACUUM INTO ?1", [target.to_string_lossy().as_ref()])
            .map_err(|e| StoreError::Backup(format!("{}: {e}", target.display())))?;
        Ok(())
    }

    /// Runs `f` in one transaction: everything it writes is saved, or nothing is.
    pub(crate) fn transaction<T>(
        &self,
        operation: &str,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = self.conn.unchecked_transaction().during(operation)?;
        let value = f(&tx)?;
        tx.commit().during(operation)?;
        Ok(value)
    }

    /// Rows of `(id, name, updated_at)` from `sql`, for the list functions of the tables.
    pub(crate) fn listed(&self, sql: &str, operation: &str) -> Result<Vec<Listed>, StoreError> {
        let mut statement = self.conn.prepare(sql).during(operation)?;
        let rows = statement
            .query_map([], |r| {
                Ok(Listed {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    updated_at: r.get(2)?,
                })
            })
            .during(operation)?;
        rows.collect::<Result<_, _>>().during(operation)
    }

    /// Deletes the row `id` of `table`; no such row is `NotFound`.
    pub(crate) fn delete_by_id(
        &self,
        table: &str,
        kind: &'static str,
        id: &str,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(&format!("DELETE FROM {table} WHERE id = ?1"), [id])
            .during(&format!("deleting a {kind}"))?;
        if n == 0 {
            return Err(StoreError::NotFound {
                kind,
                id: id.to_string(),
            });
        }
        Ok(())
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// SQLite's full consistency check: "ok", or what is wrong.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .during("checking the database")
    }

    /// Runs raw SQL: for tests that set up states the API never writes (a newer schema version,
    /// a damaged document). Not for application code.
    #[doc(hidden)]
    pub fn debug_execute(&self, sql: &str) -> Result<(), StoreError> {
        self.conn.execute_batch(sql).during("running test SQL")
    }
}

fn check_header(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut header = [0u8; 16];
    let mut file = std::fs::File::open(path).map_err(|e| StoreError::Corrupt {
        path: shown.clone(),
        reason: format!("cannot read it: {e}"),
    })?;
    let read = file.read(&mut header).map_err(|e| StoreError::Corrupt {
        path: shown.clone(),
        reason: format!("cannot read it: {e}"),
    })?;
    // An empty file is what some tools create as a placeholder: SQLite treats it as new.
    if read == 0 {
        return Ok(());
    }
    if read < header.len() || &header != SQLITE_HEADER {
        return Err(StoreError::Corrupt {
            path: shown,
            reason: "not a SQLite database (its header is wrong)".into(),
        });
    }
    Ok(())
}

fn corrupt(path: &str, e: rusqlite::Error) -> StoreError {
    StoreError::Corrupt {
        path: path.to_string(),
        reason: e.to_string(),
    }
}

/// Where the app keeps its database when nobody says otherwise: the platform's per-user data
/// folder (`$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/Application Support` on
/// macOS, `%APPDATA%` on Windows), in a `promptloom` folder.
pub fn default_database_path() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(target_os = "windows") {
        env("APPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))
    }?;
    Some(base.join("promptloom").join("promptloom.db"))
}

/// Milliseconds since the Unix epoch, for `created_at` / `updated_at`.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `wanted` if it is free, else `<wanted>-2`, `<wanted>-3`, ...
pub fn free_id(
    wanted: &str,
    taken: impl Fn(&str) -> Result<bool, StoreError>,
) -> Result<String, StoreError> {
    if !taken(wanted)? {
        return Ok(wanted.to_string());
    }
    let mut n = 2;
    loop {
        let candidate = format!("{wanted}-{n}");
        if !taken(&candidate)? {
            return Ok(candidate);
        }
        n += 1;
    }
}

/// A row's id and name with its last change, for lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    pub id: String,
    pub name: String,
    pub updated_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("promptloom-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn an_older_database_is_backed_up_before_it_is_migrated() {
        let dir = scratch("backup");
        let path = dir.join("p.db");
        let first = [MIGRATIONS[0]];
        {
            let store = Store::open_with(&path, &first).expect("opens");
            store.set_setting("theme", "dark").expect("saves");
        }
        let second = [
            MIGRATIONS[0],
            ("0002_test", "CREATE TABLE later (x INTEGER);"),
        ];
        let store = Store::open_with(&path, &second).expect("migrates");
        assert_eq!(store.schema_version().expect("version"), 2);
        let backup = dir.join("p.db.backup-v1");
        assert!(backup.exists(), "backup written");
        let old = Store::open_with(&backup, &first).expect("the backup opens");
        assert_eq!(old.schema_version().expect("version"), 1);
        assert_eq!(
            old.setting("theme").expect("reads").as_deref(),
            Some("dark")
        );
        drop(old);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failing_migration_changes_nothing() {
        let dir = scratch("failing");
        let path = dir.join("p.db");
        let first = [MIGRATIONS[0]];
        drop(Store::open_with(&path, &first).expect("opens"));
        let broken = [
            MIGRATIONS[0],
            (
                "0002_broken",
                "CREATE TABLE half (x INTEGER); THIS IS NOT SQL;",
            ),
        ];
        let err = Store::open_with(&path, &broken).err().expect("refused");
        assert_eq!(err.code(), "database");
        assert!(err.to_string().contains("0002_broken"), "{err}");
        let store = Store::open_with(&path, &first).expect("still opens");
        assert_eq!(store.schema_version().expect("version"), 1);
        let half: Option<String> = store
            .conn()
            .query_row(
                "SELECT name FROM sqlite_master WHERE name = 'half'",
                [],
                |r| r.get(0),
            )
            .ok();
        assert_eq!(half, None, "the migration's transaction rolled back");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
