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

type Uses = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// A file's code without its comments and unit tests: a `#[cfg(test)]` item declared in a line
/// (`mod tests;`) is left out, and one with a body ends the code.
fn code_of(text: &str) -> String {
    let mut lines = Vec::new();
    let mut test_item = false;
    for line in text.lines().map(str::trim_start) {
        if line.starts_with("#[cfg(test)]") {
            test_item = true;
            continue;
        }
        if test_item {
            if line.starts_with("#[") {
                continue;
            }
            if !line.ends_with(';') {
                break;
            }
            test_item = false;
            continue;
        }
        if !line.starts_with("//") {
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// The first path segment after each `prefix` in `code` (`prefix` being `crate::` or `super::`),
/// groups (`use crate::{a, b::c}`) included.
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut named = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            named.extend(group.split(',').map(|p| word_at(p.trim_start())));
        } else {
            named.push(word_at(rest));
        }
    }
    named.retain(|n| !n.is_empty());
    named
}

/// Folders whose files are modules of their own in the crate's graph: the lorebook's report sits
/// below the pipeline framework and its processor above it.
const SPLIT: &[&str] = &["lorebook"];

/// The crate's top-level modules (`src/<name>.rs` or `src/<name>/`; a file of a [`SPLIT`] folder
/// is `<folder>::<file>`) and, for each, the others its code (not its comments or unit tests)
/// names as `crate::<name>` (or, in a split folder, `super::<file>`).
fn module_uses() -> Uses {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = Uses::new();
    for (path, text) in sources("") {
        let relative = path.strip_prefix(&src).expect("under src");
        let parts: Vec<String> = relative
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        let name = match parts.as_slice() {
            [folder, file, ..] if SPLIT.contains(&folder.as_str()) => format!("{folder}::{file}"),
            [first, ..] => first.clone(),
            [] => continue,
        };
        if name == "lib" || name.ends_with("::mod") || is_test_file(relative) {
            continue;
        }
        let code = code_of(&text);
        let mut named = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + 7..];
            let first = word_at(rest.trim_start_matches('{'));
            match SPLIT.iter().find(|f| **f == first) {
                Some(folder) => {
                    let inner = &rest[folder.len()..];
                    named.extend(
                        inner
                            .strip_prefix("::")
                            .map(|r| format!("{folder}::{}", word_at(r))),
                    );
                }
                None => named.push(first),
            }
        }
        named.extend(named_after(&code, "crate::{"));
        if let Some(folder) = SPLIT.iter().find(|f| name.starts_with(&format!("{f}::"))) {
            named.extend(
                named_after(&code, "super::")
                    .into_iter()
                    .map(|n| format!("{folder}::{n}")),
            );
        }
        let used = modules.entry(name.clone()).or_default();
        used.extend(named.into_iter().filter(|m| !m.is_empty() && *m != name));
    }
    modules
}

fn is_test_file(path: &Path) -> bool {
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    file == "tests.rs" || file.ends_with("_tests.rs") || file == "testing.rs"
}

fn word_at(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Panics naming the first circle in `uses`, if there is one.
fn assert_no_circle(what: &str, uses: &Uses) {
    // A depth-first walk from each module; reaching it again is a circle.
    for start in uses.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((module, trail)) = stack.pop() {
            for next in uses.get(&module).into_iter().flatten() {
                if next == start {
                    panic!(
                        "{what}: modules in a circle: {} -> {start}",
                        trail.join(" -> ")
                    );
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

#[test]
fn no_two_modules_use_each_other() {
    let uses = module_uses();
    assert!(uses.contains_key("pipeline") && uses.contains_key("processors"));
    assert!(uses["pipeline"].contains("lorebook::report"));
    assert_no_circle("the engine", &uses);
}

/// The files of one folder (`dir`: a crate's `src/` or a module's folder) and, for each, the
/// others it names: `super::<file>` (a name that is no file of the folder is the folder's
/// `mod.rs`), or in a crate's `src/`, `crate::<file>` (else `lib.rs` or `main.rs`, which declare
/// and re-export). The folder's root (`mod.rs`, `lib.rs`, `main.rs`) names its files by their
/// own names. A subfolder is one module, which names others only as `crate::<file>`.
fn file_uses(dir: &Path, crate_root: bool) -> Uses {
    let mut files = Vec::new();
    collect(dir, &mut files);
    let module_of = |path: &Path| -> String {
        let relative = path.strip_prefix(dir).expect("in the folder");
        let first = relative.components().next().expect("a name");
        first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string()
    };
    let is_root = |m: &str| matches!(m, "mod" | "lib" | "main");
    let modules: std::collections::BTreeSet<String> = files
        .iter()
        .filter(|(p, _)| !is_test_file(p))
        .map(|(p, _)| module_of(p))
        .collect();
    let root = modules
        .iter()
        .find(|m| is_root(m))
        .cloned()
        .expect("a mod.rs, lib.rs or main.rs");
    let mut uses = Uses::new();
    for (path, text) in &files {
        if is_test_file(path) {
            continue;
        }
        let name = module_of(path);
        let code = code_of(text);
        let nested = path.parent() != Some(dir);
        let mut named = Vec::new();
        if is_root(&name) {
            // The root names its files directly: `use scan::split`, `pub use env::MacroEnv`.
            for m in modules.iter().filter(|m| !is_root(m)) {
                let path = format!("{m}::");
                if code.match_indices(&path).any(|(at, _)| {
                    !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                }) {
                    named.push(m.clone());
                }
            }
        } else {
            // In a subfolder, `super::` stays inside it; `crate::` names the crate's modules.
            let mut prefixes = if nested { vec![] } else { vec!["super::"] };
            if crate_root {
                prefixes.push("crate::");
            }
            for prefix in prefixes {
                for n in named_after(&code, prefix) {
                    named.push(if modules.contains(&n) {
                        n
                    } else {
                        root.clone()
                    });
                }
            }
        }
        let used = uses.entry(name.clone()).or_default();
        used.extend(named.into_iter().filter(|m| *m != name));
    }
    uses
}

fn src_of(krate: &str, folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
        .join(folder)
}

#[test]
fn the_macro_files_import_one_way() {
    let uses = file_uses(&src_of("engine", "macros"), false);
    assert!(uses["evaluate"].contains("expander") && uses["mod"].contains("expander"));
    assert_no_circle("src/macros", &uses);
}

#[test]
fn the_lorebook_files_import_one_way() {
    let uses = file_uses(&src_of("engine", "lorebook"), false);
    assert!(uses["processor"].contains("sillytavern"));
    assert_no_circle("src/lorebook", &uses);
    let uses = file_uses(&src_of("engine", "lorebook/sillytavern"), false);
    assert_no_circle("src/lorebook/sillytavern", &uses);
}

#[test]
fn the_command_lines_modules_import_one_way() {
    let uses = file_uses(&src_of("cli", ""), true);
    assert!(uses["preview"].contains("count") && uses["count"].contains("request"));
    assert_no_circle("promptloom-cli", &uses);
}

#[test]
fn the_send_crates_modules_import_one_way() {
    let uses = file_uses(&src_of("send", ""), true);
    assert!(uses["send"].contains("http") && uses["http"].contains("options"));
    assert_no_circle("promptloom-send", &uses);
}

#[test]
fn the_checker_finds_a_circle_through_a_folders_root() {
    let dir = std::env::temp_dir().join(format!("promptloom-layers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mod.rs"),
        "mod a;\nuse a::thing;\npub struct Env;\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.rs"), "use super::Env;\npub fn thing() {}\n").unwrap();
    let uses = file_uses(&dir, false);
    let found = std::panic::catch_unwind(|| assert_no_circle("test", &uses));
    std::fs::remove_dir_all(&dir).ok();
    assert!(found.is_err(), "{uses:?}");
}
