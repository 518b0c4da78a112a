//! Connections and their keys, through the application layer: checked before they are kept, a
//! key only ever in the keychain (or the environment variable a connection names), and a missing
//! key said before anything is sent. The keychain here is one in memory; `keychain.rs` runs the
//! real one.

use std::cell::RefCell;
use std::collections::BTreeMap;

use promptloom_library::connections;
use promptloom_library::keychain::{Keychain, KeychainError};
use promptloom_library::LibraryError;
use promptloom_send::{ApiKey, Connection, Dialect};
use promptloom_store::Store;

#[derive(Default)]
struct Memory(RefCell<BTreeMap<String, String>>);

impl Keychain for Memory {
    fn set(&self, connection: &str, key: &ApiKey) -> Result<(), KeychainError> {
        self.0
            .borrow_mut()
            .insert(connection.into(), key.expose().into());
        Ok(())
    }
    fn get(&self, connection: &str) -> Result<Option<ApiKey>, KeychainError> {
        Ok(self.0.borrow().get(connection).map(ApiKey::new))
    }
    fn delete(&self, connection: &str) -> Result<bool, KeychainError> {
        Ok(self.0.borrow_mut().remove(connection).is_some())
    }
}

fn store() -> Store {
    Store::open_in_memory().expect("store")
}

#[test]
fn a_connection_is_checked_before_it_is_kept_and_replaces_one_of_its_name() {
    let store = store();
    let local = Connection::new(
        "local",
        Dialect::OpenaiCompatible,
        "http://127.0.0.1:8080/v1",
    );
    assert!(!connections::add(&store, &local).expect("added"));
    assert!(connections::add(&store, &local).expect("replaced"));

    for (url, why) in [("ftp://example.com", "http"), ("not a url", "URL")] {
        let bad = Connection::new("bad", Dialect::Openai, url);
        let e = connections::add(&store, &bad).unwrap_err();
        assert_eq!(e.code(), "invalid_connection", "{e}");
        assert!(e.to_string().contains(why), "{url}: {e}");
    }
    let mut headers = Connection::new("h", Dialect::Openai, "https://api.openai.com/v1");
    headers
        .extra_headers
        .insert("bad header".into(), "x".into());
    assert_eq!(
        connections::add(&store, &headers).unwrap_err().code(),
        "invalid_connection"
    );

    let names: Vec<String> = connections::list(&store)
        .expect("list")
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["local"], "nothing refused was kept");
}

#[test]
fn a_key_goes_to_the_keychain_and_leaves_with_its_connection() {
    let store = store();
    let keychain = Memory::default();
    let openai = Connection::new("work", Dialect::Openai, "https://api.openai.com/v1");
    connections::add(&store, &openai).expect("added");

    let missing = connections::require_key(&openai, &keychain).unwrap_err();
    assert_eq!(missing.code(), "missing_key");
    assert!(missing.to_string().contains("\"work\""), "{missing}");
    assert!(!connections::has_key(&openai, &keychain).expect("asked"));

    let key = ApiKey::new("sk-secret-123\n");
    connections::set_key(&store, &keychain, "work", &key).expect("kept");
    assert_eq!(keychain.0.borrow()["work"], "sk-secret-123", "trimmed");
    assert!(connections::has_key(&openai, &keychain).expect("asked"));
    let found = connections::require_key(&openai, &keychain).expect("found");
    assert_eq!(
        found.map(|k| k.expose().to_string()).as_deref(),
        Some("sk-secret-123")
    );

    // No key for a connection that does not exist, and no empty key.
    let e = connections::set_key(&store, &keychain, "nope", &key).unwrap_err();
    assert_eq!(e.code(), "not_found");
    let e = connections::set_key(&store, &keychain, "work", &ApiKey::new("  ")).unwrap_err();
    assert!(matches!(e, LibraryError::EmptyKey { .. }), "{e}");

    assert!(matches!(
        connections::remove(&store, &keychain, "work").expect("removed"),
        connections::KeyRemoved::Removed
    ));
    assert!(
        keychain.0.borrow().is_empty(),
        "the key left with its connection"
    );
    assert_eq!(
        connections::remove(&store, &keychain, "work")
            .unwrap_err()
            .code(),
        "not_found"
    );
}

#[test]
fn a_key_comes_from_the_variable_a_connection_names_else_the_keychain() {
    let keychain = Memory::default();
    let mut c = Connection::new("env", Dialect::Anthropic, "https://api.anthropic.com");
    c.key_env = Some("PROMPTLOOM_TEST_KEY_ENV_FIRST".into());
    keychain
        .set("env", &ApiKey::new("from-keychain"))
        .expect("set");
    // SAFETY: this test alone reads or writes this variable.
    unsafe { std::env::set_var("PROMPTLOOM_TEST_KEY_ENV_FIRST", "from-env") };
    let key = connections::require_key(&c, &keychain).expect("key");
    assert_eq!(
        key.map(|k| k.expose().to_string()).as_deref(),
        Some("from-env")
    );
    unsafe { std::env::remove_var("PROMPTLOOM_TEST_KEY_ENV_FIRST") };
    // A connection that names a variable takes its key from there only.
    let e = connections::require_key(&c, &keychain).unwrap_err();
    assert_eq!(e.code(), "missing_key");
    assert!(
        e.to_string().contains("PROMPTLOOM_TEST_KEY_ENV_FIRST"),
        "{e}"
    );
    c.key_env = None;
    let key = connections::require_key(&c, &keychain).expect("key");
    assert_eq!(
        key.map(|k| k.expose().to_string()).as_deref(),
        Some("from-keychain")
    );

    let local = Connection::new(
        "llama",
        Dialect::OpenaiCompatible,
        "http://127.0.0.1:8080/v1",
    );
    assert!(connections::require_key(&local, &keychain)
        .expect("no key needed")
        .is_none());
}

/// A keychain that cannot be reached (no Secret Service running).
struct Unreachable;

impl Keychain for Unreachable {
    fn set(&self, _: &str, _: &ApiKey) -> Result<(), KeychainError> {
        Err(unreachable_error())
    }
    fn get(&self, _: &str) -> Result<Option<ApiKey>, KeychainError> {
        Err(unreachable_error())
    }
    fn delete(&self, _: &str) -> Result<bool, KeychainError> {
        Err(unreachable_error())
    }
}

fn unreachable_error() -> KeychainError {
    KeychainError::new("did not give the key", "there is no keychain here")
}

#[test]
fn without_a_keychain_a_keyless_server_is_reached_and_a_keyed_one_is_refused_clearly() {
    let local = Connection::new(
        "llama",
        Dialect::OpenaiCompatible,
        "http://127.0.0.1:8080/v1",
    );
    assert!(connections::require_key(&local, &Unreachable)
        .expect("no key needed")
        .is_none());
    let openai = Connection::new("work", Dialect::Openai, "https://api.openai.com/v1");
    let e = connections::require_key(&openai, &Unreachable).unwrap_err();
    assert_eq!(e.code(), "keychain");
    assert!(e.to_string().contains("there is no keychain here"), "{e}");
    // Removing a connection goes on without the keychain and says what became of the key.
    let store = store();
    connections::add(&store, &openai).expect("added");
    assert!(matches!(
        connections::remove(&store, &Unreachable, "work").expect("removed"),
        connections::KeyRemoved::NotReached(_)
    ));
}
