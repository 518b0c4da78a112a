//! The store end to end: every table, refusals that change nothing, built-in presets.

use std::path::PathBuf;

use promptloom_engine::model::{parse_preset, parse_session};
use promptloom_engine::profiles::profile_for_model;
use promptloom_store::builtin::{builtin_presets, builtin_sessions};
use promptloom_store::{Store, StoreError, SCHEMA_VERSION};

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("promptloom-store-it-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
    fn db(&self) -> PathBuf {
        self.0.join("promptloom.db")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn preset(id: &str, name: &str) -> promptloom_engine::model::AgentPreset {
    parse_preset(&format!(
        r#"{{ "formatVersion": 1, "id": "{id}", "name": "{name}",
             "messageTemplates": [ {{ "id": "sys", "role": "system", "content": "hi" }},
                                   {{ "id": "h", "role": "system", "type": "chat_history" }} ],
             "contextRecipes": [ {{ "id": "r", "modelFilter": ["*"], "steps": [
                 {{ "messageId": "sys", "enabled": true }}, {{ "messageId": "h", "enabled": true }} ] }} ] }}"#
    ))
    .expect("valid preset")
}

#[test]
fn a_new_database_gets_the_current_schema_and_reopens_unchanged() {
    let scratch = Scratch::new("fresh");
    let store = Store::open(&scratch.db()).expect("creates");
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    store.save_preset(&preset("a", "Alpha")).expect("saves");
    drop(store);
    let store = Store::open(&scratch.db()).expect("reopens");
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    assert_eq!(store.get_preset("a").expect("still there").name, "Alpha");
    assert!(
        !scratch.0.join("promptloom.db.backup-v1").exists(),
        "no migration, no backup"
    );
}

#[test]
fn presets_save_list_rename_duplicate_delete() {
    let store = Store::open_in_memory().expect("opens");
    store.save_preset(&preset("b", "Beta")).expect("saves");
    store.save_preset(&preset("a", "Alpha")).expect("saves");
    let names: Vec<String> = store
        .list_presets()
        .expect("lists")
        .into_iter()
        .map(|l| l.name)
        .collect();
    assert_eq!(names, ["Alpha", "Beta"]);
    store.rename_preset("a", "Aleph").expect("renames");
    assert_eq!(store.get_preset("a").expect("reads").name, "Aleph");
    let copy = store
        .duplicate_preset("a", "a2", "Aleph copy")
        .expect("duplicates");
    assert_eq!(
        copy.message_templates,
        store.get_preset("a").expect("reads").message_templates
    );
    assert!(matches!(
        store.duplicate_preset("a", "b", "clash"),
        Err(StoreError::Invalid { .. })
    ));
    store.delete_preset("a").expect("deletes");
    assert!(matches!(
        store.get_preset("a"),
        Err(StoreError::NotFound { .. })
    ));
    let err = store.delete_preset("a").unwrap_err();
    assert_eq!(err.code(), "not_found");
    assert!(err.to_string().contains("\"a\""), "{err}");
}

#[test]
fn an_invalid_preset_is_refused_and_the_stored_one_stays() {
    let store = Store::open_in_memory().expect("opens");
    store.save_preset(&preset("p", "Good")).expect("saves");
    let mut bad = preset("p", "Bad");
    bad.message_templates[1].id = "sys".into(); // a duplicate id
    let err = store.save_preset(&bad).unwrap_err();
    assert_eq!(err.code(), "invalid_document");
    assert!(err.to_string().contains("duplicate template id"), "{err}");
    assert_eq!(store.get_preset("p").expect("reads").name, "Good");
}

#[test]
fn a_stored_document_that_no_longer_validates_is_an_error_naming_its_id() {
    let scratch = Scratch::new("stale");
    let store = Store::open(&scratch.db()).expect("opens");
    store.save_preset(&preset("p", "P")).expect("saves");
    drop(store);
    // A document an older or buggy build might have written: no templates, no name.
    let store = Store::open(&scratch.db()).expect("opens");
    store
        .debug_execute(
            "UPDATE presets SET document = '{\"formatVersion\":1,\"id\":\"p\"}' WHERE id = 'p'",
        )
        .expect("writes");
    drop(store);
    let store = Store::open(&scratch.db()).expect("opens");
    let err = store.get_preset("p").unwrap_err();
    assert_eq!(err.code(), "invalid_document");
    assert!(err.to_string().contains("\"p\""), "{err}");
}

#[test]
fn sessions_keep_every_message_in_order() {
    let store = Store::open_in_memory().expect("opens");
    let session = parse_session(
        r#"{ "formatVersion": 1, "id": "s", "title": "Trip", "summary": "so far",
             "userProfile": { "name": "Ann", "content": "botanist" },
             "messages": [
               { "id": "m1", "role": "user", "content": "hello", "createdAt": "2026-11-22T10:00:00Z" },
               { "id": "m2", "role": "assistant", "name": "Quill", "content": "hi",
                 "attachments": [ { "id": "a", "kind": "image", "mime": "image/png", "name": "x.png", "path": "x.png" } ],
                 "reply": { "connection": "local", "model": "m", "finishReason": "stop", "promptTokens": 12,
                            "completionTokens": 3, "countedPromptTokens": 11, "firstTokenMs": 40, "totalMs": 90 },
                 "swipes": [ { "content": "hey", "reply": { "connection": "local", "model": "m", "totalMs": 5,
                                                          "incomplete": true } },
                             { "content": "hello there" } ] },
               { "role": "system", "content": "note" } ] }"#,
    )
    .expect("valid");
    store.save_session(&session).expect("saves");
    assert_eq!(store.get_session("s").expect("reads"), session);
    let mut shorter = session.clone();
    shorter.messages.truncate(1);
    store.save_session(&shorter).expect("saves");
    assert_eq!(store.get_session("s").expect("reads").messages.len(), 1);
    assert_eq!(store.list_sessions().expect("lists")[0].name, "Trip");
    store.delete_session("s").expect("deletes");
    assert!(matches!(
        store.get_session("s"),
        Err(StoreError::NotFound { .. })
    ));
}

/// A session's own variables and its author's note round-trip through the `extra` column, and a
/// session saved without them again reads back without them.
#[test]
fn sessions_keep_their_variables_and_authors_note() {
    let store = Store::open_in_memory().expect("opens");
    let session = parse_session(
        r#"{ "formatVersion": 1, "id": "s",
             "variables": { "mood": "calm", "count": "3" },
             "authorsNote": { "content": "Keep it short.", "position": "before_prompt",
                              "depth": 2, "role": "user", "interval": 3 },
             "messages": [ { "role": "user", "content": "hello" } ] }"#,
    )
    .expect("valid");
    store.save_session(&session).expect("saves");
    let read = store.get_session("s").expect("reads");
    assert_eq!(read, session);
    assert_eq!(read.authors_note.as_ref().map(|n| n.interval), Some(3));
    assert_eq!(
        read.variables
            .as_ref()
            .and_then(|v| v.get("mood"))
            .map(String::as_str),
        Some("calm")
    );
    let mut plain = session.clone();
    plain.variables = None;
    plain.authors_note = None;
    store.save_session(&plain).expect("saves");
    assert_eq!(store.get_session("s").expect("reads"), plain);
}

#[test]
fn profiles_and_app_settings_round_trip() {
    let store = Store::open_in_memory().expect("opens");
    let mut profile = profile_for_model("gpt-4o", &[]);
    profile.id = "mine".into();
    profile.builtin = false;
    store.save_model_profile(&profile).expect("saves");
    assert_eq!(store.model_profiles().expect("reads"), [profile]);
    store.delete_model_profile("mine").expect("deletes");
    assert!(store.model_profiles().expect("reads").is_empty());
    assert!(matches!(
        store.delete_model_profile("mine"),
        Err(StoreError::NotFound { .. })
    ));

    assert_eq!(store.setting("theme").expect("reads"), None);
    store.set_setting("theme", "dark").expect("saves");
    assert_eq!(
        store.setting("theme").expect("reads").as_deref(),
        Some("dark")
    );
}

#[test]
fn a_version_2_database_loses_only_the_tables_nothing_read() {
    let scratch = Scratch::new("v2");
    let path = scratch.0.join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).expect("creates");
        conn.execute_batch(include_str!("../migrations/0001_init.sql"))
            .expect("0001");
        conn.execute_batch(include_str!("../migrations/0002_preset_revision.sql"))
            .expect("0002");
        conn.execute_batch(
            "INSERT INTO regex_rules VALUES ('r', 0, '{}', 0);
             INSERT INTO processor_settings VALUES ('token-limiter', '{}', 0);
             PRAGMA user_version = 2;",
        )
        .expect("old rows");
    }
    let store = Store::open(&path).expect("migrates");
    let preset = parse_preset(builtin_presets()[0].1).expect("valid");
    store.save_preset(&preset).expect("saves");
    assert_eq!(store.get_preset(&preset.id).expect("reads"), preset);
    drop(store);
    let conn = rusqlite::Connection::open(&path).expect("opens");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("lists");
    assert!(
        !tables
            .iter()
            .any(|t| t == "regex_rules" || t == "processor_settings"),
        "{tables:?}"
    );
    assert_eq!(
        conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .expect("reads"),
        SCHEMA_VERSION
    );
    // The backup taken before the migration keeps what the dropped tables held.
    let backup = rusqlite::Connection::open(scratch.0.join("old.db.backup-v2")).expect("opens");
    assert_eq!(
        backup
            .query_row("SELECT count(*) FROM regex_rules", [], |r| r
                .get::<_, i64>(0))
            .expect("reads"),
        1
    );
}

#[test]
fn builtin_presets_install_once_and_restore() {
    let store = Store::open_in_memory().expect("opens");
    let installed = store
        .install_builtin_presets(builtin_presets())
        .expect("installs");
    assert_eq!(installed.len(), builtin_presets().len());
    let id = installed[0].clone();
    store.delete_preset(&id).expect("deletes");
    assert!(store
        .install_builtin_presets(builtin_presets())
        .expect("runs")
        .is_empty());
    assert!(
        !store.preset_exists(&id).expect("looks"),
        "a deleted built-in stays deleted"
    );
    store
        .restore_builtin_preset(builtin_presets(), &id)
        .expect("restores");
    assert!(store.preset_exists(&id).expect("looks"));
    assert!(matches!(
        store.restore_builtin_preset(builtin_presets(), "nope"),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn builtin_sessions_install_once() {
    let store = Store::open_in_memory().expect("opens");
    let installed = store
        .install_builtin_sessions(builtin_sessions())
        .expect("installs");
    assert_eq!(installed.len(), builtin_sessions().len());
    let session = store.get_session(&installed[0]).expect("reads");
    assert!(!session.messages.is_empty());
    store.delete_session(&installed[0]).expect("deletes");
    assert!(store
        .install_builtin_sessions(builtin_sessions())
        .expect("runs")
        .is_empty());
    assert!(
        store.get_session(&installed[0]).is_err(),
        "a deleted example stays deleted"
    );
}

#[test]
fn a_database_from_a_newer_build_is_refused_without_a_write() {
    let scratch = Scratch::new("newer");
    let store = Store::open(&scratch.db()).expect("creates");
    store
        .debug_execute(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 5))
        .expect("sets");
    store
        .debug_execute("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("checkpoints");
    drop(store);
    let before = std::fs::read(scratch.db()).expect("reads");
    let err = Store::open(&scratch.db()).err().expect("refused");
    assert_eq!(err.code(), "newer_schema");
    let text = err.to_string();
    assert!(
        text.contains(&format!("{}", SCHEMA_VERSION + 5)) && text.contains("promptloom.db"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(scratch.db()).expect("reads"),
        before,
        "not one byte changed"
    );
}

#[test]
fn a_file_that_is_not_a_database_is_reported_and_left_alone() {
    let scratch = Scratch::new("garbage");
    let garbage =
        b"this is a text file, not SQLite, and it must stay exactly like this\n".repeat(20);
    std::fs::write(scratch.db(), &garbage).expect("writes");
    let err = Store::open(&scratch.db()).err().expect("refused");
    assert_eq!(err.code(), "corrupt_database");
    assert!(err.to_string().contains("promptloom.db"), "{err}");
    assert_eq!(std::fs::read(scratch.db()).expect("reads"), garbage);
}

#[test]
fn a_truncated_database_is_reported_and_left_alone() {
    let scratch = Scratch::new("truncated");
    let store = Store::open(&scratch.db()).expect("creates");
    for i in 0..200 {
        store
            .save_preset(&preset(&format!("p{i}"), &"x".repeat(400)))
            .expect("saves");
    }
    store
        .debug_execute("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("checkpoints");
    drop(store);
    let full = std::fs::read(scratch.db()).expect("reads");
    let cut = &full[..full.len() / 2];
    std::fs::write(scratch.db(), cut).expect("writes");
    let _ = std::fs::remove_file(scratch.0.join("promptloom.db-wal"));
    let _ = std::fs::remove_file(scratch.0.join("promptloom.db-shm"));
    let err = Store::open(&scratch.db()).err().expect("refused");
    assert_eq!(err.code(), "corrupt_database", "{err}");
    assert_eq!(std::fs::read(scratch.db()).expect("reads"), cut);
}

#[test]
fn a_save_over_a_revision_another_writer_changed_is_refused_and_changes_nothing() {
    let scratch = Scratch::new("revision");
    let path = scratch.db();
    let app = Store::open(&path).expect("opens");
    let first = app.save_preset(&preset("p", "Mine")).expect("saves");
    let (_, opened) = app.get_preset_with_revision("p").expect("reads");
    assert_eq!(opened, first);
    // Another program (the command line) writes the same preset meanwhile.
    let cli = Store::open(&path).expect("a second connection");
    let theirs = cli.save_preset(&preset("p", "Theirs")).expect("saves");
    assert!(theirs > opened);
    let err = app
        .save_preset_at(&preset("p", "Mine, edited"), opened)
        .expect_err("the app's autosave would undo theirs");
    assert_eq!(err.code(), "conflict");
    assert!(err.to_string().contains("\"p\""), "{err}");
    assert_eq!(app.get_preset("p").expect("reads").name, "Theirs");
    // Saved at the revision it now is, it goes through and counts up.
    let next = app
        .save_preset_at(&preset("p", "Mine, after all"), theirs)
        .expect("saves");
    assert_eq!(next, theirs + 1);
    // A preset deleted meanwhile is saved anew.
    app.delete_preset("p").expect("deletes");
    app.save_preset_at(&preset("p", "Back"), next)
        .expect("saved anew");
}

#[test]
fn connections_save_list_replace_delete_by_name() {
    let scratch = Scratch::new("connections");
    let store = Store::open(&scratch.db()).expect("open");
    let local = serde_json::json!({ "name": "local", "dialect": "openai-compatible" });
    let cloud = serde_json::json!({ "name": "cloud", "dialect": "openai" });
    store.save_connection("local", &local).expect("save");
    store.save_connection("cloud", &cloud).expect("save");
    let all: Vec<serde_json::Value> = store.connections().expect("list");
    assert_eq!(all, [cloud.clone(), local.clone()], "in name order");

    let moved = serde_json::json!({ "name": "local", "dialect": "anthropic" });
    store.save_connection("local", &moved).expect("replace");
    let read: serde_json::Value = store.connection("local").expect("read");
    assert_eq!(read, moved);

    store.delete_connection("local").expect("delete");
    let gone = store.connection::<serde_json::Value>("local").unwrap_err();
    assert_eq!(gone.code(), "not_found");
    assert!(gone.to_string().contains("\"local\""), "{gone}");
    let again = store.delete_connection("local").unwrap_err();
    assert_eq!(again.code(), "not_found");
    let left: Vec<serde_json::Value> = store.connections().expect("list");
    assert_eq!(left, [cloud]);
}
