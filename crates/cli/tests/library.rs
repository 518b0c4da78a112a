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
