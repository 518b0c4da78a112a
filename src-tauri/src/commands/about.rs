//! What the app says of itself: the version it was built as (the same line `promptloom
//! --version` prints) and where it keeps its database; and opening that database's folder in the
//! system's file manager, the only folder this shell ever opens there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use promptloom_engine::codes;
use serde::Serialize;

use crate::error::AppError;
use crate::state;

/// The app's version and database, for an About dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct About {
    /// The workspace version, `0.1.0`.
    pub version: String,
    /// The full hash of the commit the app was built from; null when it was built without git.
    pub commit: Option<String>,
    /// Whether tracked files had uncommitted changes when the app was built.
    pub dirty: bool,
    /// The version as `promptloom --version` prints it: `0.1.0 (269d4c6a1b2c-dirty)`.
    pub version_line: String,
    /// The database file the app uses.
    pub database_path: String,
}

impl About {
    fn of(database: &Path) -> About {
        About {
            version: promptloom_version::VERSION.to_string(),
            commit: promptloom_version::commit().map(str::to_string),
            dirty: promptloom_version::DIRTY,
            version_line: promptloom_version::VERSION_LINE.to_string(),
            database_path: database.display().to_string(),
        }
    }
}

/// The version the app was built as and the database it uses.
#[tauri::command]
#[specta::specta]
pub fn about() -> Result<About, AppError> {
    Ok(About::of(&state::database_path()?))
}

/// Opens the folder that holds the database in the system's file manager.
#[tauri::command]
#[specta::specta]
pub async fn open_database_folder() -> Result<(), AppError> {
    let folder = database_folder(&state::database_path()?)?;
    tauri::async_runtime::spawn_blocking(move || run_opener(file_manager(&folder), &folder))
        .await
        .map_err(|e| AppError::new(codes::INTERNAL, format!("a background task failed: {e}")))?
}

/// The folder of `database`, as an absolute path (a file manager is handed nothing that could
/// read as an option), which must exist.
fn database_folder(database: &Path) -> Result<PathBuf, AppError> {
    let parent = match database.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let folder = parent.canonicalize().map_err(|e| {
        AppError::new(
            codes::IO,
            format!("cannot open the database folder {}: {e}", parent.display()),
        )
    })?;
    if !folder.is_dir() {
        return Err(AppError::new(
            codes::IO,
            format!(
                "cannot open the database folder {}: it is not a folder",
                folder.display()
            ),
        ));
    }
    Ok(folder)
}

/// The system's own opener for a folder.
fn file_manager(folder: &Path) -> Command {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(target_os = "windows") {
        "explorer"
    } else {
        "xdg-open"
    };
    let mut command = Command::new(program);
    command.arg(folder);
    command
}

/// How long the opener may take to say it failed; past that it is taken to be showing the folder
/// (some openers stay until the file manager closes).
const OPENER_VERDICT: Duration = Duration::from_secs(3);

/// Runs `command`, which opens `folder`, and says whether it failed.
fn run_opener(mut command: Command, folder: &Path) -> Result<(), AppError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let failed = |why: String| {
        AppError::new(
            codes::IO,
            format!("cannot open the folder {}: {why}", folder.display()),
        )
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(format!("{program} did not start ({e})")))?;
    let started = Instant::now();
    while started.elapsed() < OPENER_VERDICT {
        match child.try_wait() {
            // Explorer answers 1 even when it opened the folder.
            Ok(Some(status)) if status.success() || cfg!(target_os = "windows") => return Ok(()),
            Ok(Some(status)) => return Err(failed(format!("{program} ended with {status}"))),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(failed(format!("waiting for {program} failed ({e})"))),
        }
    }
    // Still running: reap it whenever it ends.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_reports_the_version_line_the_command_prints() {
        let about = About::of(Path::new("/data/promptloom/promptloom.db"));
        assert_eq!(about.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(about.version_line, promptloom_version::VERSION_LINE);
        assert!(about.version_line.starts_with(&about.version));
        assert_eq!(about.dirty, about.version_line.ends_with("-dirty)"));
        if let Some(commit) = &about.commit {
            assert!(about.version_line.contains(&commit[..12]), "{about:?}");
        }
        assert_eq!(about.database_path, "/data/promptloom/promptloom.db");
    }

    #[test]
    fn about_crosses_as_camel_case_fields() {
        let json = serde_json::to_value(About::of(Path::new("db.sqlite"))).expect("json");
        assert_eq!(json["databasePath"], "db.sqlite");
        assert_eq!(json["versionLine"], promptloom_version::VERSION_LINE);
        assert_eq!(json["version"], promptloom_version::VERSION);
        assert_eq!(json["dirty"], promptloom_version::DIRTY);
        assert!(
            json.get("commit").is_some(),
            "null when unknown, never left out"
        );
        assert_eq!(json.as_object().map(|o| o.len()), Some(5), "{json}");
    }

    #[test]
    fn the_folder_opened_is_the_databases_own_as_an_absolute_path() {
        let dir = std::env::temp_dir().join(format!("promptloom-about-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let folder = database_folder(&dir.join("promptloom.db")).expect("the folder");
        assert_eq!(folder, dir.canonicalize().expect("canonical"));
        let command = file_manager(&folder);
        let args: Vec<_> = command.get_args().collect();
        assert_eq!(args, [folder.as_os_str()], "the folder and nothing else");
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[test]
    fn a_relative_database_path_opens_the_current_folder() {
        let folder = database_folder(Path::new("promptloom.db")).expect("the folder");
        assert!(folder.is_absolute());
        assert_eq!(
            folder,
            std::env::current_dir()
                .expect("cwd")
                .canonicalize()
                .expect("canonical")
        );
    }

    #[test]
    fn a_missing_database_folder_says_which_and_why() {
        let missing = std::env::temp_dir().join("promptloom-no-such-folder/sub/promptloom.db");
        let e = database_folder(&missing).expect_err("no such folder");
        assert_eq!(e.code, codes::IO);
        assert!(
            e.message.contains("promptloom-no-such-folder"),
            "{}",
            e.message
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_opener_that_fails_or_is_missing_is_reported() {
        let folder = std::env::temp_dir();
        let e = run_opener(Command::new("false"), &folder).expect_err("false fails");
        assert!(e.message.contains("false ended with"), "{}", e.message);
        assert!(
            e.message.contains(&*folder.to_string_lossy()),
            "{}",
            e.message
        );
        let e = run_opener(Command::new("/nonexistent/xdg-open"), &folder).expect_err("missing");
        assert!(e.message.contains("did not start"), "{}", e.message);
        run_opener(Command::new("true"), &folder).expect("an opener that succeeds");
    }
}
