//! Files written for the user (exports): the new content goes to a temporary file beside the
//! target, is flushed to disk, and only then renamed over the target, so a write that fails (a
//! full disk, a refused permission) leaves the old file exactly as it was and no half file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
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
