//! Attachment bytes for the command line: `dataBase64`, else a `path` read from the session
//! file's folder and only from there. A session file can come from anyone, and the request body
//! embeds what the path names, so a path that is absolute, climbs out with `..`, leads outside
//! through a link, or names something other than a regular file is refused with the reason; the
//! build then puts a note and a warning in its place (docs/ARCHITECTURE.md, "Limits").

use std::path::{Component, Path, PathBuf};

use promptloom_engine::assets::{inline_bytes, AssetSource};
use promptloom_engine::model::Attachment;
use promptloom_engine::{texts, Said};
use promptloom_import::MAX_FILE_SIZE;

pub struct FileAssets {
    /// The session file's folder; `None` without a session file, when no path can be read.
    base: Option<PathBuf>,
}

impl FileAssets {
    pub fn new(session_file: Option<&Path>) -> Self {
        let base = session_file.map(|f| match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
        FileAssets { base }
    }

    /// Where `path` leads, when it stays inside the session's folder and names a regular file
    /// of at most [`MAX_FILE_SIZE`] bytes.
    fn locate(&self, path: &str) -> Result<PathBuf, Said> {
        let base = self
            .base
            .as_ref()
            .ok_or_else(|| texts::ASSET_NO_SESSION_FILE.with("path", path))?;
        let relative = Path::new(path);
        if relative.has_root() || relative.is_absolute() {
            return Err(texts::ASSET_ABSOLUTE.with("path", path));
        }
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(texts::ASSET_OUTSIDE.with("path", path));
        }
        let folder = base
            .canonicalize()
            .map_err(|e| texts::ASSET_FOLDER_UNREADABLE.with("detail", e))?;
        // Links resolved: the file itself must be inside the folder too.
        let full = folder
            .join(relative)
            .canonicalize()
            .map_err(|e| unreadable(path, &e))?;
        if !full.starts_with(&folder) {
            return Err(texts::ASSET_LINK_OUTSIDE.with("path", path));
        }
        let meta = std::fs::metadata(&full).map_err(|e| unreadable(path, &e))?;
        if !meta.is_file() {
            return Err(texts::ASSET_NOT_REGULAR.with("path", path));
        }
        if meta.len() > MAX_FILE_SIZE {
            return Err(texts::ASSET_TOO_LARGE
                .with("path", path)
                .with("bytes", meta.len()));
        }
        Ok(full)
    }
}

impl AssetSource for FileAssets {
    fn load(&self, attachment: &Attachment) -> Result<Vec<u8>, Said> {
        if let Some(inline) = inline_bytes(attachment) {
            return inline;
        }
        let Some(path) = &attachment.path else {
            return Err(texts::ASSET_NO_DATA.into());
        };
        let full = self.locate(path)?;
        let bytes = promptloom_import::read_limited(&full).map_err(|e| unreadable(path, &e))?;
        if bytes.len() as u64 > MAX_FILE_SIZE {
            return Err(texts::ASSET_GREW.with("path", path));
        }
        Ok(bytes)
    }

    fn check(&self, attachment: &Attachment) -> Result<(), Said> {
        match (inline_bytes(attachment), &attachment.path) {
            (Some(inline), _) => inline.map(|_| ()),
            (None, Some(path)) => self.locate(path).map(|_| ()),
            (None, None) => Err(texts::ASSET_NO_DATA.into()),
        }
    }
}

fn unreadable(path: &str, e: &std::io::Error) -> Said {
    match e.kind() {
        std::io::ErrorKind::NotFound => texts::ASSET_NOT_FOUND.with("path", path),
        std::io::ErrorKind::PermissionDenied => texts::ASSET_PERMISSION.with("path", path),
        _ => texts::ASSET_UNREADABLE.with("path", path).with("detail", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use promptloom_engine::model::AttachmentKind;

    fn at(path: &str) -> Attachment {
        Attachment {
            id: "a".into(),
            kind: AttachmentKind::Text,
            mime: "text/plain".into(),
            name: "a".into(),
            path: Some(path.into()),
            data_base64: None,
            transcript: None,
        }
    }

    #[test]
    fn only_regular_files_inside_the_session_folder_are_read() {
        let dir = std::env::temp_dir().join(format!("promptloom-assets-{}", std::process::id()));
        let inside = dir.join("chat");
        std::fs::create_dir_all(inside.join("sub")).expect("folders");
        std::fs::write(inside.join("sub/notes.txt"), "mine").expect("file");
        std::fs::write(dir.join("secret.txt"), "secret").expect("file");
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("secret.txt"), inside.join("link.txt")).expect("link");
        let assets = FileAssets::new(Some(&inside.join("session.json")));
        assert_eq!(assets.load(&at("sub/notes.txt")), Ok(b"mine".to_vec()));
        assert_eq!(assets.load(&at("./sub/notes.txt")), Ok(b"mine".to_vec()));
        for (path, why) in [
            ("../secret.txt", "leaves the session's folder"),
            ("sub/../../secret.txt", "leaves the session's folder"),
            ("/etc/passwd", "absolute path"),
            ("sub", "not a regular file"),
            ("missing.txt", "no such file"),
            #[cfg(unix)]
            ("link.txt", "leads outside"),
        ] {
            let err = assets.load(&at(path)).expect_err(path);
            let text = err.to_string();
            assert!(text.contains(why), "{path}: {text}");
            assert!(!text.contains("secret\""), "{text}");
            assert_eq!(assets.check(&at(path)), Err(err));
        }
        assert!(FileAssets::new(None).load(&at("x.txt")).is_err());
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
