//! `ui/src/bindings.ts` is generated from the commands and the engine's types. This test writes
//! it; CI then fails when the committed file differs (`git diff --exit-code`), and it fails here
//! at once when the file on disk is stale.

use std::path::PathBuf;

#[test]
fn bindings_are_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    promptloom_app::specta_builder()
        .export(promptloom_app::typescript(), &path)
        .expect("bindings export");
    let after = std::fs::read_to_string(&path).expect("bindings written");
    assert!(
        before == after,
        "ui/src/bindings.ts was stale and has been regenerated; commit the new file"
    );
}
