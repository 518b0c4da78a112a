//! `promptloom import` and `promptloom export` against a database in a scratch folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-cli-lib-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
    fn db(&self) -> String {
        self.0.join("lib.db").to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_promptloom"))
        .args(args)
        .output()
        .expect("the promptloom binary runs")
}

fn ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_native_preset_round_trips_through_the_database() {
    let scratch = Scratch::new("roundtrip");
    let file = repo().join("presets/multi-model.json");
    let out = ok(&[
        "import",
        file.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert!(
        out.contains("Imported preset \"multi-model-mystery\""),
        "{out}"
    );
    assert!(out.contains("Everything was mapped."), "{out}");
    // A second import never overwrites: it gets a free id.
    let out = ok(&[
        "import",
        file.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert!(out.contains("\"multi-model-mystery-2\""), "{out}");

    let exported = ok(&["export", "multi-model-mystery", "--db", &scratch.db()]);
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("reads")).expect("json");
    let back: Value = serde_json::from_str(&exported).expect("json");
    assert_eq!(back["messageTemplates"], original["messageTemplates"]);
    assert_eq!(back["contextRecipes"], original["contextRecipes"]);
    assert_eq!(back["character"], original["character"]);

    let st = ok(&[
        "export",
        "multi-model-mystery",
        "--to",
        "sillytavern",
        "--db",
        &scratch.db(),
    ]);
    let st: Value = serde_json::from_str(&st).expect("json");
    assert!(
        st["prompts"].is_array() && st["prompt_order"].is_array(),
        "{st}"
    );

    // The preset has a character but no lorebook: a card, yes; world info, a clear refusal.
    let card = ok(&[
        "export",
        "multi-model-mystery",
        "--to",
        "sillytavern-card",
        "--db",
        &scratch.db(),
    ]);
    let card: Value = serde_json::from_str(&card).expect("json");
    assert_eq!(card["spec"], "chara_card_v2");
    let output = run(&[
        "export",
        "multi-model-mystery",
        "--to",
        "sillytavern-world-info",
        "--db",
        &scratch.db(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("has no lorebook"), "{err}");
}

#[test]
fn sessions_import_and_export() {
    let scratch = Scratch::new("session");
    let file = repo().join("presets/sessions/example.json");
    let out = ok(&[
        "import",
        file.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert!(out.contains("session"), "{out}");
    let id: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("reads")).expect("json");
    let id = id["id"].as_str().expect("id");
    let exported = ok(&["export", id, "--db", &scratch.db()]);
    let back: Value = serde_json::from_str(&exported).expect("json");
    assert_eq!(back["messages"].as_array().map(Vec::len), Some(8));
}

#[test]
fn bad_input_is_refused_and_writes_nothing() {
    let scratch = Scratch::new("bad");
    let bad = scratch.0.join("bad.json");
    std::fs::write(&bad, "{ this is not json").expect("writes");
    let output = run(&[
        "import",
        bad.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bad.json") && err.contains("not valid JSON"),
        "{err}"
    );
    assert!(
        !Path::new(&scratch.db()).exists(),
        "no database was created"
    );
}

#[test]
fn exporting_an_unknown_id_names_it() {
    let scratch = Scratch::new("unknown");
    let output = run(&["export", "ghost", "--db", &scratch.db()]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("\"ghost\""), "{err}");
}

#[test]
fn a_newer_database_is_refused_by_the_command_too() {
    let scratch = Scratch::new("newer");
    let file = repo().join("presets/general-assistant.json");
    ok(&[
        "import",
        file.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    {
        let store = promptloom_store::Store::open(Path::new(&scratch.db())).expect("opens");
        store
            .debug_execute("PRAGMA user_version = 99")
            .expect("sets");
    }
    let output = run(&["export", "general-assistant", "--db", &scratch.db()]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("99") && err.contains("newer"), "{err}");
}

#[test]
fn sillytavern_files_import_with_their_reports() {
    let dir = repo().join("../shared/fixtures/sillytavern");
    if !dir.is_dir() {
        println!("fixtures not found at ../shared/fixtures/sillytavern, skipping");
        return;
    }
    let scratch = Scratch::new("st");
    let out = ok(&[
        "import",
        dir.join("Default.json").to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert!(out.contains("SillyTavern chat-completion preset"), "{out}");
    assert!(out.contains("Not mapped"), "{out}");
    let out = ok(&[
        "import",
        dir.join("default_Seraphina.png").to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert!(out.contains("preset \"seraphina\""), "{out}");
    let output = run(&[
        "import",
        dir.join("Eldoria.json").to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    assert_eq!(output.status.code(), Some(2), "world info needs --into");
    let out = ok(&[
        "import",
        dir.join("Eldoria.json").to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
        "--into",
        "seraphina",
    ]);
    assert!(out.contains("lorebook of preset \"seraphina\""), "{out}");
}

fn write_json(scratch: &Scratch, name: &str, value: &Value) -> String {
    let path = scratch.0.join(name);
    std::fs::write(&path, value.to_string()).expect("write");
    path.to_string_lossy().into_owned()
}

#[test]
fn world_info_into_a_preset_with_a_lorebook_says_it_replaces_it_or_merges() {
    let scratch = Scratch::new("wi-replace");
    let preset = repo().join("presets/general-assistant.json");
    ok(&[
        "import",
        preset.to_str().expect("utf-8"),
        "--db",
        &scratch.db(),
    ]);
    let book = |key: &str| serde_json::json!({ "entries": { "0": { "uid": 0, "key": [key], "content": format!("About {key}.") } } });
    let first = write_json(&scratch, "first.json", &book("castle"));
    let second = write_json(&scratch, "second.json", &book("moat"));
    let db = scratch.db();
    let into = ["--db", db.as_str(), "--into", "general-assistant"];
    let out = ok(&[&["import", first.as_str()][..], &into[..]].concat());
    assert!(
        !out.contains("Note:"),
        "nothing was there to replace: {out}"
    );
    let out = ok(&[&["import", second.as_str()][..], &into[..]].concat());
    assert!(
        out.contains(
            "Note: the entries of the lorebook of preset \"general-assistant\" were replaced (it had 1 entry); its settings are kept"
        ),
        "{out}"
    );
    let out = ok(&[&["import", first.as_str(), "--merge"][..], &into[..]].concat());
    assert!(out.contains("1 entry added"), "{out}");
    assert!(out.contains("added as \"0-2\""), "{out}");
}

// world-info.js, getWorldInfoSettings(): SillyTavern's settings.json gives its world info settings
// to the book of the preset named with --into; without one it is refused and nothing is written.
#[test]
fn sillytavern_settings_go_into_a_presets_lorebook() {
    let scratch = Scratch::new("wi-settings");
    let preset = repo().join("presets/general-assistant.json");
    let db = scratch.db();
    ok(&["import", preset.to_str().expect("utf-8"), "--db", &db]);
    let settings = write_json(
        &scratch,
        "settings.json",
        &serde_json::json!({ "username": "Ana", "power_user": {},
            "world_info_settings": { "world_info_depth": 5, "world_info_include_names": false } }),
    );
    let refused = run(&["import", &settings, "--db", &db]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("world info settings") && stderr.contains("--into PRESET_ID"),
        "{stderr}"
    );
    let out = ok(&[
        "import",
        &settings,
        "--db",
        &db,
        "--into",
        "general-assistant",
    ]);
    assert!(
        out.starts_with("Imported world info settings of preset \"general-assistant\""),
        "{out}"
    );
    assert!(out.contains("(SillyTavern world info settings)"), "{out}");
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    let preset = store.get_preset("general-assistant").expect("reads");
    assert_eq!(preset.lorebook.expect("a book").scan_depth, 5);
}

#[test]
fn regex_scripts_go_into_a_preset_once_and_a_taken_id_is_renamed() {
    let scratch = Scratch::new("regex-ids");
    let preset = repo().join("presets/general-assistant.json");
    let db = scratch.db();
    ok(&["import", preset.to_str().expect("utf-8"), "--db", &db]);
    let scripts = |replacement: &str| {
        serde_json::json!([{ "id": "swap", "scriptName": "Swap", "findRegex": "/cat/g",
                             "replaceString": replacement, "placement": [2] }])
    };
    let dog = write_json(&scratch, "dog.json", &scripts("dog"));
    let bird = write_json(&scratch, "bird.json", &scripts("bird"));
    // Without a preset: refused, naming the option, and nothing is written.
    let refused = run(&["import", &dog, "--db", &db]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--into PRESET_ID"), "{stderr}");
    let into = ["--db", db.as_str(), "--into", "general-assistant"];
    ok(&[&["import", dog.as_str()][..], &into[..]].concat());
    let out = ok(&[&["import", dog.as_str()][..], &into[..]].concat());
    assert!(out.contains("is there already, the same; skipped"), "{out}");
    let out = ok(&[&["import", bird.as_str()][..], &into[..]].concat());
    assert!(out.contains("added as \"swap-2\""), "{out}");
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    let rules = store
        .get_preset("general-assistant")
        .expect("reads")
        .regex_rules
        .unwrap_or_default();
    let replacements: Vec<&str> = rules.iter().map(|r| r.replacement.as_str()).collect();
    assert_eq!(replacements, ["dog", "bird"]);
}

#[test]
fn model_profiles_are_added_listed_replaced_and_removed() {
    let scratch = Scratch::new("profiles");
    let db = scratch.db();
    let profile = |window: u32| {
        serde_json::json!({ "id": "local-llama", "patterns": ["llama*"], "providerFormat": "openai-chat",
            "contextWindow": window, "reservedReply": 1024,
            "capabilities": { "vision": false, "audio": false, "documents": false, "systemRole": true } })
    };
    let good = write_json(&scratch, "llama.json", &profile(8192));
    let out = ok(&["profile", "list", "--db", &db]);
    assert!(out.contains("No model profiles of your own"), "{out}");
    let out = ok(&["profile", "add", &good, "--db", &db]);
    assert!(
        out.contains("Added model profile \"local-llama\" (llama*)"),
        "{out}"
    );
    let out = ok(&["profile", "list", "--db", &db]);
    assert!(
        out.contains("local-llama  llama*  8192 tokens, openai-chat"),
        "{out}"
    );
    let out = ok(&["profile", "add", &good, "--db", &db]);
    assert!(out.contains("Replaced model profile"), "{out}");

    // A window the reply reserve fills: refused, naming the file and the fields; nothing written.
    let bad = write_json(&scratch, "bad.json", &profile(512));
    let refused = run(&["profile", "add", &bad, "--db", &db]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("bad.json") && stderr.contains("reservedReply"),
        "{stderr}"
    );
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    assert_eq!(
        store.model_profiles().expect("reads")[0].context_window,
        8192
    );
    drop(store);

    let out = ok(&["profile", "remove", "local-llama", "--db", &db]);
    assert!(
        out.contains("Removed model profile \"local-llama\""),
        "{out}"
    );
    let again = run(&["profile", "remove", "local-llama", "--db", &db]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("no model profile with id \"local-llama\"")
    );
}

/// A small byte-pair tokenizer.json of a user's own.
const TINY_TOKENIZER: &str = r#"{"added_tokens": [], "model": {"type": "BPE",
    "vocab": {"a": 0, "b": 1, "ab": 2, " ": 3}, "merges": ["a b"]}}"#;

// RULES 5.8: a profile's own tokenizer file is taken from the profile's folder, must stay inside
// it and must read as a tokenizer; anything else is refused naming the file, and nothing is
// stored.
#[test]
fn a_profiles_tokenizer_file_stays_in_its_folder_and_must_read() {
    let scratch = Scratch::new("profile-tokenizer");
    let db = scratch.db();
    let folder = scratch.0.join("mine");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("tokenizer.json"), TINY_TOKENIZER).unwrap();
    std::fs::write(scratch.0.join("outside.json"), TINY_TOKENIZER).unwrap();
    std::fs::write(folder.join("broken.json"), "{ not json").unwrap();
    let profile = |file: &str| {
        serde_json::json!({ "id": "mine", "patterns": ["my-model"], "providerFormat": "openai-chat",
            "contextWindow": 8192, "reservedReply": 1024, "tokenizerFile": file,
            "capabilities": { "vision": false, "audio": false, "documents": false, "systemRole": true } })
    };
    let write = |name: &str, file: &str| {
        let path = folder.join(name);
        std::fs::write(&path, profile(file).to_string()).unwrap();
        path.to_string_lossy().into_owned()
    };
    for (name, file, problem) in [
        (
            "escape.json",
            "../outside.json",
            "outside the profile's folder",
        ),
        (
            "absolute.json",
            "/etc/hostname",
            "outside the profile's folder",
        ),
        ("missing.json", "nowhere.json", "cannot be read"),
        ("broken-profile.json", "broken.json", "not a tokenizer.json"),
    ] {
        let refused = run(&["profile", "add", &write(name, file), "--db", &db]);
        assert_eq!(refused.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains(name) && stderr.contains(problem),
            "{name}: {stderr}"
        );
    }
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    assert!(store.model_profiles().expect("reads").is_empty());
    drop(store);

    ok(&[
        "profile",
        "add",
        &write("good.json", "tokenizer.json"),
        "--db",
        &db,
    ]);
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    let kept = store.model_profiles().expect("reads").remove(0);
    let kept_file = kept.tokenizer_file.expect("the tokenizer file");
    assert!(Path::new(&kept_file).is_absolute(), "{kept_file}");
    assert!(kept_file.ends_with("tokenizer.json"), "{kept_file}");
}

// RULES 7.2, 8.3: SillyTavern's Advanced Formatting from the command line. A master export (or a
// context template) becomes a preset; an instruct template and a system prompt go into the
// preset named with --into, and are refused without one.
#[test]
fn sillytavern_advanced_formatting_imports() {
    let scratch = Scratch::new("advanced-formatting");
    let db = scratch.db();
    let chatml = serde_json::json!({
        "name": "ChatML", "input_sequence": "<|im_start|>user",
        "output_sequence": "<|im_start|>assistant", "system_sequence": "<|im_start|>system",
        "stop_sequence": "<|im_end|>", "wrap": true, "names_behavior": "none",
        "input_suffix": "<|im_end|>\n", "output_suffix": "<|im_end|>\n",
        "system_suffix": "<|im_end|>\n" });
    let master = write_json(
        &scratch,
        "ChatML set.json",
        &serde_json::json!({
            "instruct": chatml,
            "context": { "name": "ChatML", "names_as_stop_strings": false,
                "story_string": "<|im_start|>system\n{{#if system}}{{system}}\n{{/if}}{{trim}}<|im_end|>" },
            "sysprompt": { "name": "Blank", "content": "" } }),
    );
    let out = ok(&["import", &master, "--db", &db]);
    assert!(
        out.starts_with("Imported preset \"chatml-set\" (ChatML)")
            && out.contains("(SillyTavern Advanced Formatting export)"),
        "{out}"
    );
    let instruct = write_json(
        &scratch,
        "Alpaca.json",
        &serde_json::json!({
        "name": "Alpaca", "input_sequence": "### Instruction:", "output_sequence": "### Response:" }),
    );
    let refused = run(&["import", &instruct, "--db", &db]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("an instruct template") && stderr.contains("--into PRESET_ID"),
        "{stderr}"
    );
    let out = ok(&["import", &instruct, "--db", &db, "--into", "chatml-set"]);
    assert!(
        out.starts_with("Imported instruct template of preset \"chatml-set\"")
            && out.contains("in place of \"ChatML\""),
        "{out}"
    );
    let sysprompt = write_json(
        &scratch,
        "Actor.json",
        &serde_json::json!({ "name": "Actor", "content": "You are {{char}}." }),
    );
    let out = ok(&["import", &sysprompt, "--db", &db, "--into", "chatml-set"]);
    assert!(
        out.starts_with("Imported system prompt of preset \"chatml-set\"")
            && out.contains("(its variable systemPrompt) is now \"Actor\""),
        "{out}"
    );
    let store = promptloom_store::Store::open(Path::new(&db)).expect("opens");
    let preset = store.get_preset("chatml-set").expect("reads");
    assert_eq!(preset.instruct.expect("a template").name, "Alpaca");
    assert_eq!(
        preset.variables.expect("variables")["systemPrompt"],
        "You are {{char}}."
    );
}
