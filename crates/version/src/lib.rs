//! The version every front door reports, computed once by this crate's build script from the
//! workspace version and git (docs/ARCHITECTURE.md, "Versions"): `promptloom --version`, the
//! app's `--version` and its `about` command all read these constants.

#[cfg(test)]
mod tree;

/// The workspace version (`Cargo.toml`, `[workspace.package]`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version with the commit: `0.1.0 (269d4c6a1b2c)`, `0.1.0 (269d4c6a1b2c-dirty)` when the
/// tree had uncommitted changes at build time, `0.1.0 (commit unknown)` when built without git.
pub const VERSION_LINE: &str = env!("PROMPTLOOM_VERSION_LINE");

/// Whether a tracked file had uncommitted changes when this was built.
pub const DIRTY: bool = matches!(env!("PROMPTLOOM_DIRTY").as_bytes(), b"1");

/// The full hash of the commit this was built from, when git could tell.
pub fn commit() -> Option<&'static str> {
    let commit = env!("PROMPTLOOM_COMMIT");
    (!commit.is_empty()).then_some(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_agrees_with_the_parts() {
        assert_eq!(VERSION_LINE, tree::version_line(VERSION, commit(), DIRTY));
    }

    #[test]
    fn a_build_in_a_checkout_knows_its_commit() {
        let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.git");
        if checkout.exists() {
            let commit = commit().expect("built inside the repository");
            assert_eq!(commit.len(), 40, "{commit}");
        } else {
            assert_eq!(commit(), None, "a tarball's build has no commit");
        }
    }
}
