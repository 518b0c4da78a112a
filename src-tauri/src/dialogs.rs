//! The native file dialogs, opened from Rust so that paths never come from the page. Each call
//! blocks its (background) thread until the user answers.
//!
//! Debug builds only: when `PROMPTLOOM_TEST_DIALOG` names a file, each dialog takes its answer
//! from that file's first line instead (an empty line: cancelled) and removes the line. The
//! end-to-end tests drive the real window through WebDriver, which cannot reach a native dialog;
//! release builds have no such door.

use promptloom_engine::codes;
use std::path::PathBuf;

use tauri::AppHandle;
use tauri_plugin_dialog::DialogExt;

use crate::error::AppError;

/// The file the user picked in the open dialog, or none when they cancelled.
pub fn pick_file(app: &AppHandle, title: &str, filter: &str) -> Result<Option<PathBuf>, AppError> {
    #[cfg(debug_assertions)]
    if let Some(answer) = test_answer()? {
        return Ok(answer);
    }
    app.dialog()
        .file()
        .set_title(title)
        .add_filter(filter, &["json", "png", "charx", "jsonl"])
        .blocking_pick_file()
        .map(into_path)
        .transpose()
}

/// Where the user chose to save `file_name`, or none when they cancelled.
pub fn save_file(
    app: &AppHandle,
    title: &str,
    filter: &str,
    file_name: &str,
) -> Result<Option<PathBuf>, AppError> {
    #[cfg(debug_assertions)]
    if let Some(answer) = test_answer()? {
        return Ok(answer);
    }
    app.dialog()
        .file()
        .set_title(title)
        .set_file_name(file_name)
        .add_filter(filter, &["json"])
        .blocking_save_file()
        .map(into_path)
        .transpose()
}

fn into_path(path: tauri_plugin_dialog::FilePath) -> Result<PathBuf, AppError> {
    path.into_path()
        .map_err(|e| AppError::new(codes::IO, format!("the dialog gave no file path: {e}")))
}

/// The next answer of the end-to-end tests' answer file, when the tests set one up. With the
/// file set up but no answer left, the dialog is cancelled: a test never waits on a real one.
#[cfg(debug_assertions)]
fn test_answer() -> Result<Option<Option<PathBuf>>, AppError> {
    let Some(file) = std::env::var_os("PROMPTLOOM_TEST_DIALOG") else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut lines = text.lines();
    let answer = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    std::fs::write(&file, rest.join("\n"))
        .map_err(|e| AppError::new(codes::IO, format!("the test dialog file: {e}")))?;
    Ok(Some((!answer.is_empty()).then(|| PathBuf::from(answer))))
}
