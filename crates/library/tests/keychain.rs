//! The real OS keychain (Secret Service on Linux). These tests run only under
//! `scripts/with-test-keychain`, which gives them a keychain of their own on a private D-Bus
//! session (`./dev test` runs the workspace's tests under it); elsewhere they say why they did
//! not run, so that nobody's own keychain is ever written by a test.

use promptloom_engine::model::parse_preset;
use promptloom_library::connections;
use promptloom_library::export::{self, ExportFormat};
use promptloom_library::keychain::{Keychain, OsKeychain};
use promptloom_send::{ApiKey, Connection, Dialect};
use promptloom_store::Store;

fn keychain_here() -> bool {
    if std::env::var_os("PROMPTLOOM_TEST_KEYCHAIN").is_some() {
        return true;
    }
    println!(
        "skipped: no test keychain (run under scripts/with-test-keychain, as ./dev test does)"
    );
    false
}

#[test]
fn a_key_is_set_read_replaced_and_deleted_in_the_os_keychain() {
    if !keychain_here() {
        return;
    }
    let name = format!("keychain-test-{}", std::process::id());
    let keychain = OsKeychain;
    assert!(keychain.get(&name).expect("asked").is_none());
    keychain.set(&name, &ApiKey::new("sk-first")).expect("set");
    assert_eq!(
        keychain.get(&name).expect("read").expect("a key").expose(),
        "sk-first"
    );
    keychain
        .set(&name, &ApiKey::new("sk-second"))
        .expect("replaced");
    assert_eq!(
        keychain.get(&name).expect("read").expect("a key").expose(),
        "sk-second"
    );
    assert!(keychain.delete(&name).expect("deleted"));
    assert!(keychain.get(&name).expect("asked").is_none());
    assert!(!keychain.delete(&name).expect("nothing to delete"));
}

#[test]
fn the_key_is_nowhere_in_the_database_or_an_export() {
    if !keychain_here() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("promptloom-keychain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let db = dir.join("promptloom.db");
    let secret = format!("sk-canary-{}-do-not-store", std::process::id());
    let name = format!("canary-{}", std::process::id());
    {
        let store = Store::open(&db).expect("open");
        let mut c = Connection::new(&name, Dialect::Openai, "https://api.openai.com/v1");
        c.default_model = Some("gpt-4o".into());
        connections::add(&store, &c).expect("added");
        connections::set_key(&store, &OsKeychain, &name, &ApiKey::new(&secret)).expect("kept");
        assert!(connections::has_key(&c, &OsKeychain).expect("asked"));
        let key = connections::require_key(&c, &OsKeychain)
            .expect("read")
            .expect("a key");
        assert_eq!(key.expose(), secret);
        // What prints of a key, and of errors around it, never holds it.
        assert!(!format!("{key} {key:?}").contains(&secret));

        let preset = parse_preset(include_str!("../../../presets/general-assistant.json"))
            .expect("a built-in preset");
        store.save_preset(&preset).expect("saved");
        for format in [ExportFormat::Native, ExportFormat::SillyTavernPreset] {
            let exported = export::stored(&store, &preset.id, format).expect("exported");
            assert!(!exported.text.contains(&secret), "{format:?} export");
        }
    }
    for entry in std::fs::read_dir(&dir).expect("scratch") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read");
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} holds the key",
            path.display()
        );
    }
    let store = Store::open(&db).expect("reopen");
    assert!(matches!(
        connections::remove(&store, &OsKeychain, &name).expect("removed"),
        connections::KeyRemoved::Removed
    ));
    assert!(OsKeychain.get(&name).expect("asked").is_none());
    std::fs::remove_dir_all(&dir).ok();
}
