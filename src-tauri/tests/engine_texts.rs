//! `ui/src/i18n/engineTexts.json` lists every code the engine and the importers can say, with its
//! English: the lists of `promptloom_engine::texts`, `promptloom_import::texts` and
//! `promptloom_library::import::texts`, and the texts of the built-in processors' descriptors.
//! This test writes it and fails when the file on disk was stale (CI also runs `git diff
//! --exit-code` on it); the UI's tests then fail when the Chinese table
//! (`ui/src/i18n/engineZh.ts`) lacks one of its codes.

use std::collections::BTreeMap;
use std::path::PathBuf;

#[test]
fn engine_texts_are_current() {
    let mut texts: BTreeMap<String, &str> = BTreeMap::new();
    let mut add = |code: String, english: &'static str| {
        assert!(
            texts.insert(code.clone(), english).is_none(),
            "the code {code} is given twice"
        );
    };
    for text in promptloom_engine::texts::ALL
        .iter()
        .chain(promptloom_import::texts::ALL)
        .chain(promptloom_library::import::texts::ALL)
    {
        add(text.code.to_string(), text.english);
    }
    for descriptor in promptloom_engine::Pipeline::builtin().descriptors() {
        for (code, english) in descriptor.texts() {
            add(code, english);
        }
    }
    let mut json = serde_json::to_string_pretty(&texts).expect("texts as JSON");
    json.push('\n');

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/i18n/engineTexts.json");
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    if before != json {
        std::fs::write(&path, &json).expect("engine texts written");
    }
    assert!(
        before == json,
        "ui/src/i18n/engineTexts.json was stale and has been regenerated; commit the new file"
    );
}
