//! Files written for the user (exports): the new content goes to a temporary file beside the
//! target, is flushed to disk, and only then renamed over the target, so a write that fails (a
//! full disk, a refused permission) leaves the old file exactly as it was and no half file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder `path` is in (`.` for a bare name) and its file name.
fn folder_and_name(path: &Path) -> std::io::Result<(PathBuf, &std::ffi::OsStr)> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    Ok((folder, name))
}

/// An exclusive lock on the file beside `path` (`.NAME.lock`, in the same folder), held until it
/// is dropped. The operating system lets go of it when the process ends, however it ends, so a
/// lock is never left behind by a crash; the empty file itself stays.
#[derive(Debug)]
pub struct FileLock {
    /// Held open for the lock's life: closing it lets go.
    _held: std::fs::File,
}

/// Takes the lock beside `path`, waiting up to `wait` for another holder to let go.
pub fn lock_beside(path: &Path, wait: std::time::Duration) -> std::io::Result<FileLock> {
    let (folder, name) = folder_and_name(path)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(folder.join(format!(".{}.lock", name.to_string_lossy())))?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(FileLock { _held: file }),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::other(format!(
                    "another program has held it for over {} s",
                    wait.as_secs()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Keeps a reply that could not be saved where it belonged in a file of its own beside `beside`:
/// `NAME.reply-SECONDS.txt`, or `NAME.reply-LABEL-SECONDS.txt` with `label` (its characters other
/// than letters, digits, `-` and `_` as `_`). Returns the file.
pub fn keep_reply(beside: &Path, label: Option<&str>, reply: &str) -> std::io::Result<PathBuf> {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let label: String = label
        .unwrap_or_default()
        .chars()
        .take(64)
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = beside.as_os_str().to_owned();
    match label.is_empty() {
        true => name.push(format!(".reply-{seconds}.txt")),
        false => name.push(format!(".reply-{label}-{seconds}.txt")),
    }
    let file = PathBuf::from(name);
    write_atomically(&file, reply.as_bytes())?;
    Ok(file)
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let (folder, name) = folder_and_name(path)?;
    if path.is_dir() {
        return Err(std::io::Error::other("is a folder"));
    }
    let mut temporary = folder.join(format!(
        ".{}.{}.part",
        name.to_string_lossy(),
        std::process::id()
    ));
    // Another export of this process to the same name may be under way: take a free one.
    let mut n = 1;
    while temporary.exists() {
        n += 1;
        temporary = folder.join(format!(
            ".{}.{}-{n}.part",
            name.to_string_lossy(),
            std::process::id()
        ));
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written?;
    // The rename itself reaches the disk with the folder's entry.
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(&folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}
