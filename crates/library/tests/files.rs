//! Exports are written through a temporary file and a rename: a failed write leaves the old file.

use promptloom_library::files::write_atomically;

fn folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("promptloom-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("lists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect()
}

#[test]
fn a_write_replaces_the_file_whole() {
    let dir = folder("replace");
    let file = dir.join("export.json");
    write_atomically(&file, b"old").expect("writes");
    write_atomically(&file, b"new content").expect("writes");
    assert_eq!(std::fs::read(&file).expect("reads"), b"new content");
    assert!(leftovers(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_that_cannot_start_leaves_nothing_behind() {
    let dir = folder("refused");
    // A target that is a folder is refused, and the folder stays.
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("folder");
    assert!(write_atomically(&sub, b"x").is_err());
    assert!(sub.is_dir());
    // A folder that is not there: nothing is made.
    assert!(write_atomically(&dir.join("missing/export.json"), b"x").is_err());
    assert!(!dir.join("missing").exists());
    assert!(leftovers(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
// A write that fails half way (a full disk) is tested through the real command, under a file
// size limit: crates/cli/tests/hostile.rs.
