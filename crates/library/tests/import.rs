//! Imports into the store as both front doors do them: nothing is overwritten without a note,
//! and a second import of the same file adds no duplicates.

use promptloom_import::import_bytes;
use promptloom_library::{import_into, ImportTarget, LorebookMode};
use promptloom_store::Store;
use serde_json::{json, Value};

fn store_with_preset() -> Store {
    let store = Store::open_in_memory().expect("opens");
    let preset = promptloom_engine::model::parse_preset(
        &json!({ "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [{ "id": "h", "role": "system", "type": "chat_history" }],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [{ "messageId": "h", "enabled": true }] }],
            "lorebook": { "scanDepth": 7, "entries": [
                { "id": "0", "keys": ["old"], "content": "old entry" },
                { "id": "keep", "keys": ["kept"], "content": "kept entry" } ] } })
        .to_string(),
    )
    .expect("valid");
    store.save_preset(&preset).expect("saves");
    store
}

fn world_info() -> Value {
    json!({ "entries": {
        "0": { "uid": 0, "key": ["castle"], "content": "A castle.", "order": 100 },
        "1": { "uid": 1, "key": ["moat"], "content": "A moat.", "order": 100 } } })
}

fn scripts(replacement: &str) -> Value {
    json!([
        { "id": "a1", "scriptName": "Trim", "findRegex": "/\\s+$/g", "replaceString": "", "placement": [1, 2] },
        { "id": "b2", "scriptName": "Swap", "findRegex": "/cat/g", "replaceString": replacement, "placement": [2] },
    ])
}

fn target(into: Option<&str>, lorebook: LorebookMode) -> ImportTarget<'_> {
    ImportTarget { into, lorebook }
}

fn imported(name: &str, value: &Value) -> promptloom_import::Imported {
    import_bytes(name, value.to_string().as_bytes())
        .expect("imports")
        .value
}

#[test]
fn world_info_over_a_lorebook_says_it_replaced_it() {
    let store = store_with_preset();
    let outcome = import_into(
        &store,
        imported("wi.json", &world_info()),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert_eq!(outcome.notes.len(), 1, "{:?}", outcome.notes);
    assert!(
        outcome.notes[0].contains("replaced") && outcome.notes[0].contains("2 entries"),
        "{:?}",
        outcome.notes
    );
    let book = store
        .get_preset("p")
        .expect("reads")
        .lorebook
        .expect("a book");
    let contents: Vec<&str> = book.entries.iter().map(|e| e.content.as_str()).collect();
    assert_eq!(contents, ["A castle.", "A moat."]);
    // The file has no settings (SillyTavern keeps them globally): the book's stay.
    assert_eq!(book.scan_depth, 7);
}

// world-info.js, getWorldInfoSettings(): SillyTavern's global settings hold for every book, so
// they go onto the preset's book whichever came first, and a world info file imported after them
// leaves them as they are.
#[test]
fn world_info_settings_go_into_a_preset_and_stay_when_world_info_follows() {
    let store = store_with_preset();
    let mut preset = store.get_preset("p").expect("reads");
    preset.lorebook = None;
    store.save_preset(&preset).expect("saves");
    let settings = json!({ "username": "Ana", "world_info_settings": {
        "world_info_depth": 3, "world_info_budget": 40, "world_info_include_names": false } });
    let outcome = import_into(
        &store,
        imported("settings.json", &settings),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert_eq!(
        outcome.notes,
        [
            "preset \"p\" gets a lorebook with SillyTavern's world info settings (scan depth, \
          budget, recursion, matching) and no entries yet"
        ]
    );
    import_into(
        &store,
        imported("wi.json", &world_info()),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    let preset = store.get_preset("p").expect("reads");
    let book = preset.lorebook.as_ref().expect("a book");
    assert_eq!((book.scan_depth, book.token_budget), (3, 40));
    assert_eq!(book.entries.len(), 2);
    // Over a book with entries, the note says they are kept.
    let outcome = import_into(
        &store,
        imported("settings.json", &settings),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert!(
        outcome.notes[0].ends_with("in place of its own, and keeps its 2 entries"),
        "{:?}",
        outcome.notes
    );
    let lorebook = preset
        .processors
        .iter()
        .flatten()
        .find(|c| c.id == "lorebook");
    assert_eq!(
        lorebook.and_then(|c| c.settings.get("includeNames")),
        Some(&json!(false))
    );
    // Without a preset they are refused, as world info is.
    let err = import_into(
        &store,
        imported("settings.json", &settings),
        target(None, LorebookMode::Replace),
    )
    .expect_err("needs a preset");
    assert_eq!(err.code(), "needs_preset");
}

#[test]
fn world_info_merged_keeps_the_old_entries_and_settings_and_renames_taken_ids() {
    let store = store_with_preset();
    let outcome = import_into(
        &store,
        imported("wi.json", &world_info()),
        target(Some("p"), LorebookMode::Merge),
    )
    .expect("imports");
    let book = store
        .get_preset("p")
        .expect("reads")
        .lorebook
        .expect("a book");
    assert_eq!(book.scan_depth, 7, "the book's settings are kept");
    let ids: Vec<&str> = book.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["0", "keep", "0-2", "1"]);
    assert!(
        outcome.notes[0].contains("2 entries added") && outcome.notes[0].contains("keeps its 2")
    );
    assert!(outcome
        .notes
        .iter()
        .any(|n| n.contains("\"0\" is taken") && n.contains("\"0-2\"")));
}

#[test]
fn world_info_into_a_preset_without_a_lorebook_needs_no_note() {
    let store = store_with_preset();
    let mut preset = store.get_preset("p").expect("reads");
    preset.lorebook = None;
    store.save_preset(&preset).expect("saves");
    let outcome = import_into(
        &store,
        imported("wi.json", &world_info()),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
}

#[test]
fn regex_scripts_imported_twice_add_no_duplicate_ids() {
    let store = store_with_preset();
    for _ in 0..2 {
        import_into(
            &store,
            imported("s.json", &scripts("dog")),
            target(Some("p"), LorebookMode::Replace),
        )
        .expect("imports");
    }
    let rules = store
        .get_preset("p")
        .expect("reads")
        .regex_rules
        .expect("rules");
    assert_eq!(rules.len(), 2, "{rules:?}");
    // The same ids with other content: added under free ids, each said.
    let outcome = import_into(
        &store,
        imported("s.json", &scripts("bird")),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    let rules = store
        .get_preset("p")
        .expect("reads")
        .regex_rules
        .expect("rules");
    let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert_eq!(rules.len(), 3, "{ids:?}");
    assert!(
        outcome.notes.iter().any(|n| n.contains("skipped")),
        "{:?}",
        outcome.notes
    );
    assert!(
        outcome
            .notes
            .iter()
            .any(|n| n.contains("taken by a different rule")),
        "{:?}",
        outcome.notes
    );
}

#[test]
fn world_info_and_scripts_without_a_preset_are_refused_and_write_nothing() {
    let store = store_with_preset();
    for (name, value) in [("wi.json", world_info()), ("s.json", scripts("x"))] {
        let err = import_into(
            &store,
            imported(name, &value),
            target(None, LorebookMode::Replace),
        )
        .expect_err("needs a preset");
        assert_eq!(err.code(), "needs_preset");
    }
    // The one preset is as it was: no rules, the same lorebook.
    let preset = store.get_preset("p").expect("reads");
    assert!(preset.regex_rules.is_none());
    assert_eq!(preset.lorebook.expect("kept").entries.len(), 2);
    assert_eq!(store.list_presets().expect("lists").len(), 1);
}

fn chatml_instruct(name: &str) -> Value {
    json!({ "name": name, "input_sequence": "<|im_start|>user", "output_sequence": "<|im_start|>assistant",
        "system_sequence": "<|im_start|>system", "stop_sequence": "<|im_end|>", "wrap": true,
        "input_suffix": "<|im_end|>\n", "output_suffix": "<|im_end|>\n", "system_suffix": "<|im_end|>\n",
        "names_behavior": "none" })
}

// RULES 7.2, 7.4: a SillyTavern instruct template goes into a preset as its own (its builds
// become text completion); a second one replaces it, said in a note; without a preset it is
// refused as world info is.
#[test]
fn an_instruct_template_goes_into_a_preset_and_says_what_it_replaced() {
    let store = store_with_preset();
    let outcome = import_into(
        &store,
        imported("ChatML.json", &chatml_instruct("ChatML")),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert_eq!(
        outcome.notes,
        ["preset \"p\" now builds text completion with the instruct template \"ChatML\""]
    );
    let preset = store.get_preset("p").expect("reads");
    assert_eq!(
        preset.instruct.as_ref().map(|t| t.id.as_str()),
        Some("chatml")
    );
    let outcome = import_into(
        &store,
        imported("Other.json", &chatml_instruct("Other")),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert!(
        outcome.notes[0].ends_with("\"Other\", in place of \"ChatML\""),
        "{:?}",
        outcome.notes
    );
    let err = import_into(
        &store,
        imported("ChatML.json", &chatml_instruct("ChatML")),
        target(None, LorebookMode::Replace),
    )
    .expect_err("needs a preset");
    assert_eq!(err.code(), "needs_preset");
}

// RULES 7.2: a system prompt goes into a preset as its variable systemPrompt; the story string
// of an imported context template reads it, and a preset that reads it nowhere says so.
#[test]
fn a_system_prompt_goes_into_a_preset_and_says_whether_it_is_read() {
    let store = store_with_preset();
    let prompt = json!({ "name": "Actor", "content": "You are {{char}}." });
    let outcome = import_into(
        &store,
        imported("Actor.json", &prompt),
        target(Some("p"), LorebookMode::Replace),
    )
    .expect("imports");
    assert!(
        outcome.notes[0].contains("no template of it reads {{getvar::systemPrompt}}"),
        "{:?}",
        outcome.notes
    );
    let context = json!({ "name": "Minimal", "story_string": "{{#if system}}{{system}}\n{{/if}}{{description}}" });
    let made = import_into(
        &store,
        imported("Minimal.json", &context),
        target(None, LorebookMode::Replace),
    )
    .expect("imports");
    let promptloom_library::Place::Preset { id, .. } = made.place else {
        panic!("a preset");
    };
    let outcome = import_into(
        &store,
        imported("Actor.json", &prompt),
        target(Some(&id), LorebookMode::Replace),
    )
    .expect("imports");
    assert_eq!(
        outcome.notes,
        [format!(
            "the system prompt of preset \"{id}\" (its variable systemPrompt) is now \"Actor\""
        )]
    );
    let preset = store.get_preset(&id).expect("reads");
    assert_eq!(
        preset.variables.expect("variables")["systemPrompt"],
        "You are {{char}}."
    );
}
