//! The engine's layers: the pipeline framework (`src/pipeline/`) knows none of its processors,
//! and the built-in processors (`src/processors/`) do not know the module that registers them
//! (`src/build.rs`). These tests read the sources, so that a change that makes a layer reach
//! upwards fails here instead of going unnoticed.

use std::path::{Path, PathBuf};

fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("source folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("source");
            (p, text)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}", dir.display());
    files
}

fn reaches(text: &str, module: &str) -> bool {
    let path = format!("crate::{module}");
    text.match_indices(&path).any(|(at, _)| {
        // `crate::build` names the module; `crate::builder` would be another one.
        !text[at + path.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn the_pipeline_framework_knows_no_processor() {
    for (path, text) in sources("pipeline") {
        for module in ["processors", "build"] {
            assert!(
                !reaches(&text, module),
                "{} uses crate::{module}",
                path.display()
            );
        }
    }
}

#[test]
fn the_processors_do_not_know_who_registers_them() {
    for (path, text) in sources("processors") {
        // Their unit tests may build through the whole pipeline.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        assert!(
            !reaches(code, "build"),
            "{} uses crate::build",
            path.display()
        );
    }
}
