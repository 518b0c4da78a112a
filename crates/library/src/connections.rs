//! Connections: where a user sends, kept in the store by name, checked before they are kept. The
//! key of a connection is in the OS keychain (see [`crate::keychain`]) or in an environment
//! variable the connection names; never in the store, an export or a log.

use promptloom_send::{ApiKey, Connection, SendError};
use promptloom_store::Store;

use crate::keychain::{Keychain, KeychainError};
use crate::LibraryError;

/// Keeps `connection` after checking it (a name, an http(s) URL, valid headers), over one of the
/// same name; says whether it replaced one.
pub fn add(store: &Store, connection: &Connection) -> Result<bool, LibraryError> {
    connection.validate()?;
    let replaced = store.connection::<Connection>(&connection.name).is_ok();
    store.save_connection(&connection.name, connection)?;
    Ok(replaced)
}

/// Every connection, in name order.
pub fn list(store: &Store) -> Result<Vec<Connection>, LibraryError> {
    Ok(store.connections()?)
}

/// The connection called `name`.
pub fn get(store: &Store, name: &str) -> Result<Connection, LibraryError> {
    Ok(store.connection(name)?)
}

/// What became of a removed connection's key.
#[derive(Debug)]
pub enum KeyRemoved {
    Removed,
    NoneKept,
    /// The keychain could not be reached: a key kept there, if any, is still there.
    NotReached(KeychainError),
}

/// Removes the connection called `name`, then the key kept for it. The connection goes first and
/// goes even when the keychain cannot be reached (a connection with an environment variable
/// never needed one); what became of the key is said.
pub fn remove(
    store: &Store,
    keychain: &dyn Keychain,
    name: &str,
) -> Result<KeyRemoved, LibraryError> {
    store.delete_connection(name)?;
    Ok(match keychain.delete(name) {
        Ok(true) => KeyRemoved::Removed,
        Ok(false) => KeyRemoved::NoneKept,
        Err(e) => KeyRemoved::NotReached(e),
    })
}

/// Keeps `key` in the keychain for the connection called `name`, which must exist.
pub fn set_key(
    store: &Store,
    keychain: &dyn Keychain,
    name: &str,
    key: &ApiKey,
) -> Result<(), LibraryError> {
    get(store, name)?;
    if key.is_empty() {
        return Err(LibraryError::EmptyKey {
            connection: name.to_string(),
        });
    }
    keychain.set(name, key)?;
    Ok(())
}

/// Whether a key is set for `connection`: in its environment variable or in the keychain. What
/// the UI learns of a key, and all it learns.
pub fn has_key(connection: &Connection, keychain: &dyn Keychain) -> Result<bool, LibraryError> {
    Ok(key_for(connection, keychain)?.is_some())
}

/// The key to send with: from the environment variable the connection names, when it names one
/// (scripts and CI; the keychain is then not asked), else the keychain's entry.
pub fn key_for(
    connection: &Connection,
    keychain: &dyn Keychain,
) -> Result<Option<ApiKey>, LibraryError> {
    if connection.key_env.is_some() {
        return Ok(connection.key_from_env());
    }
    keychain.get(&connection.name).map_err(LibraryError::from)
}

/// [`key_for`], required where the dialect needs a key: an error before anything is sent.
pub fn require_key(
    connection: &Connection,
    keychain: &dyn Keychain,
) -> Result<Option<ApiKey>, LibraryError> {
    let key = match key_for(connection, keychain) {
        Ok(key) => key,
        // A local server that takes no key is reached without a keychain, too.
        Err(_) if !connection.dialect.needs_key() => None,
        Err(e) => return Err(e),
    };
    if key.is_none() && connection.dialect.needs_key() {
        return Err(SendError::MissingKey {
            connection: connection.name.clone(),
            dialect: connection.dialect.to_string(),
            key_env: connection.key_env.clone(),
        }
        .into());
    }
    Ok(key)
}
