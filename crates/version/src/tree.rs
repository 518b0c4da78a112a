//! What git says of the tree a build is made from: the commit, whether tracked files differ from
//! it, and which files to watch for a change of either. Shared by the build script, which runs it,
//! and the crate's tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tree a build is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// HEAD's full hash; `None` where there is no git or no repository (a source tarball).
    pub commit: Option<String>,
    /// Whether a tracked file had changes that were not committed (untracked files do not count).
    pub dirty: bool,
    /// The files whose change can change the two above: git's HEAD, index and branch ref, and
    /// every tracked file.
    pub watched: Vec<PathBuf>,
}

/// How many hex digits of the commit the version line shows.
const SHORT: usize = 12;

/// The version as every front door prints it: `0.1.0 (269d4c6a1b2c)`, with `-dirty` after the
/// commit when the tree had uncommitted changes, or `0.1.0 (commit unknown)` without git.
pub fn version_line(version: &str, commit: Option<&str>, dirty: bool) -> String {
    match commit {
        Some(commit) => {
            let short = commit.get(..SHORT).unwrap_or(commit);
            let mark = if dirty { "-dirty" } else { "" };
            format!("{version} ({short}{mark})")
        }
        None => format!("{version} (commit unknown)"),
    }
}

/// Reads the tree at `root`. Anything git cannot answer (no git, not a repository, no commit yet,
/// or `root` only a folder inside another repository, as a tarball unpacked in one is) gives a
/// tree of unknown commit rather than an error: the version then says so.
pub fn read_tree(root: &Path) -> Tree {
    let unknown = Tree {
        commit: None,
        dirty: false,
        watched: Vec::new(),
    };
    let Some(top) = git(root, &["rev-parse", "--show-toplevel"]) else {
        return unknown;
    };
    if !same_folder(Path::new(top.trim()), root) {
        return unknown;
    }
    let Some(commit) = git(root, &["rev-parse", "--verify", "-q", "HEAD"]) else {
        return unknown;
    };
    let Some(status) = git(
        root,
        &["status", "--porcelain", "-z", "--untracked-files=no"],
    ) else {
        return unknown;
    };
    Tree {
        commit: Some(commit.trim().to_string()),
        dirty: !status.is_empty(),
        watched: watched_files(root),
    }
}

fn watched_files(root: &Path) -> Vec<PathBuf> {
    let mut names = vec![
        "HEAD".to_string(),
        "index".to_string(),
        "packed-refs".to_string(),
    ];
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch.trim().to_string());
    }
    let mut watched: Vec<PathBuf> = names
        .iter()
        .filter_map(|name| git(root, &["rev-parse", "--git-path", name]))
        .map(|p| root.join(p.trim()))
        // A file that does not exist would make cargo run the script on every build.
        .filter(|p| p.exists())
        .collect();
    if let Some(files) = git(root, &["ls-files", "-z"]) {
        watched.extend(
            files
                .split('\0')
                .filter(|f| !f.is_empty())
                .map(|f| root.join(f)),
        );
    }
    watched
}

/// Runs git in `root`; its standard output when it succeeded.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        // A build only reads: git status must not take the index lock or rewrite the index.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_short_commit_and_marks_a_dirty_tree_after_it() {
        let commit = "269d4c6a1b2c3d4e5f60718293a4b5c6d7e8f901";
        let clean = version_line("0.1.0", Some(commit), false);
        assert_eq!(clean, "0.1.0 (269d4c6a1b2c)");
        let dirty = version_line("0.1.0", Some(commit), true);
        assert_eq!(dirty, "0.1.0 (269d4c6a1b2c-dirty)");
    }

    #[test]
    fn without_git_the_commit_is_unknown() {
        assert_eq!(version_line("0.1.0", None, false), "0.1.0 (commit unknown)");
    }

    /// A scratch folder, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir()
                .join(format!("promptloom-version-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch folder");
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn run_git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=Test",
                "-c",
                "user.email=test@example.invalid",
            ])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {status:?}");
    }

    fn repository(name: &str) -> Scratch {
        let scratch = Scratch::new(name);
        run_git(&scratch.0, &["init", "-q"]);
        std::fs::write(scratch.0.join("a.txt"), "one\n").expect("file");
        run_git(&scratch.0, &["add", "a.txt"]);
        run_git(&scratch.0, &["commit", "-q", "-m", "first"]);
        scratch
    }

    #[test]
    fn a_committed_tree_is_clean_and_names_head() {
        let repo = repository("clean");
        let tree = read_tree(&repo.0);
        let commit = tree.commit.expect("a commit");
        assert_eq!(commit.len(), 40, "{commit}");
        assert!(commit.chars().all(|c| c.is_ascii_hexdigit()), "{commit}");
        assert!(!tree.dirty);
        assert!(tree.watched.contains(&repo.0.join("a.txt")));
        assert!(
            tree.watched.iter().any(|p| p.ends_with("HEAD")),
            "{:?}",
            tree.watched
        );
    }

    #[test]
    fn an_edited_tracked_file_makes_the_tree_dirty() {
        let repo = repository("edited");
        std::fs::write(repo.0.join("a.txt"), "two\n").expect("edit");
        assert!(read_tree(&repo.0).dirty);
    }

    #[test]
    fn an_untracked_file_leaves_the_tree_clean() {
        let repo = repository("untracked");
        std::fs::write(repo.0.join("new.txt"), "new\n").expect("file");
        assert!(!read_tree(&repo.0).dirty);
    }

    #[test]
    fn a_folder_that_is_no_repository_has_an_unknown_commit() {
        let plain = Scratch::new("plain");
        let tree = read_tree(&plain.0);
        assert_eq!(tree.commit, None);
        assert!(!tree.dirty);
    }

    #[test]
    fn a_tarball_unpacked_inside_another_repository_does_not_take_its_commit() {
        let repo = repository("outer");
        let inner = repo.0.join("unpacked");
        std::fs::create_dir_all(&inner).expect("folder");
        assert_eq!(read_tree(&inner).commit, None);
    }

    #[test]
    fn a_repository_without_a_commit_has_an_unknown_commit() {
        let empty = Scratch::new("empty");
        run_git(&empty.0, &["init", "-q"]);
        assert_eq!(read_tree(&empty.0).commit, None);
    }
}
