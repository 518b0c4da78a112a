//! The engine's layers: the pipeline framework (`src/pipeline/`) knows none of its processors,
//! and the built-in processors (`src/processors/`) do not know the module that registers them
//! (`src/build.rs`). These tests read the sources, so that a change that makes a layer reach
//! upwards fails here instead of going unnoticed. And no two of the crate's modules use each
//! other, directly or around a circle.

use std::path::{Path, PathBuf};

fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    collect(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "{}", dir.display());
    files
}

/// Every `.rs` file under `dir`, its submodules' folders included.
fn collect(dir: &Path, files: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source");
            files.push((path, text));
        }
    }
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
        // Their unit tests (a `tests.rs` or a `#[cfg(test)]` module) may build through the
        // whole pipeline.
        if path.ends_with("tests.rs") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        assert!(
            !reaches(code, "build"),
            "{} uses crate::build",
            path.display()
        );
    }
}

/// The crate's top-level modules (`src/<name>.rs` or `src/<name>/`) and, for each, the others
/// its code (not its comments or unit tests) names as `crate::<name>`.
fn module_uses() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = std::collections::BTreeMap::new();
    for (path, text) in sources("") {
        let relative = path.strip_prefix(&src).expect("under src");
        let first = relative.components().next().expect("a name");
        let name = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if name == "lib" || relative.ends_with("tests.rs") {
            continue;
        }
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let used: &mut std::collections::BTreeSet<String> =
            modules.entry(name.clone()).or_default();
        let mut named = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            named.push(word_at(&code[at + 7..]));
        }
        // `use crate::{a, b::c}`
        for (at, _) in code.match_indices("crate::{") {
            let group = &code[at + 8..];
            let group = &group[..group.find('}').unwrap_or(group.len())];
            named.extend(group.split(',').map(|p| word_at(p.trim_start())));
        }
        used.extend(named.into_iter().filter(|m| !m.is_empty() && *m != name));
    }
    modules
}

fn word_at(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn no_two_modules_use_each_other() {
    let uses = module_uses();
    assert!(uses.contains_key("pipeline") && uses.contains_key("processors"));
    // A depth-first walk from each module; reaching it again is a circle.
    for start in uses.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((module, trail)) = stack.pop() {
            for next in uses.get(&module).into_iter().flatten() {
                if next == start {
                    panic!("modules in a circle: {} -> {start}", trail.join(" -> "));
                }
                if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
}
