//! Asks git, once per change of the tree, which commit this build is made from and whether
//! tracked files differ from it; the crate then holds the answer as constants (src/lib.rs).

#[path = "src/tree.rs"]
mod tree;

use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let found = tree::read_tree(&root);
    let line = tree::version_line(&version, found.commit.as_deref(), found.dirty);
    println!(
        "cargo:rustc-env=PROMPTLOOM_COMMIT={}",
        found.commit.as_deref().unwrap_or("")
    );
    println!("cargo:rustc-env=PROMPTLOOM_DIRTY={}", u8::from(found.dirty));
    println!("cargo:rustc-env=PROMPTLOOM_VERSION_LINE={line}");
    // Run again when HEAD moves, the index changes or a tracked file is edited: each can change
    // the commit or the dirty mark. Without git there is nothing to watch but this script.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tree.rs");
    for path in &found.watched {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
