//! API keys in the OS keychain, and only there: Secret Service on Linux, Keychain on macOS,
//! Credential Manager on Windows (the `keyring` crate). One entry per connection, under the
//! service [`SERVICE`] and the connection's name. Nothing here writes a key anywhere else, and a
//! keychain that cannot be reached is an error that says so, never a fallback to a file.

use promptloom_send::ApiKey;

/// The service name keys are kept under.
pub const SERVICE: &str = "promptloom";

/// What went wrong with the keychain. Its text never contains a key.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the OS keychain {doing}: {reason}")]
pub struct KeychainError {
    doing: &'static str,
    reason: String,
}

impl KeychainError {
    /// A failure of a keychain other than the OS's (the layer's tests use one in memory).
    pub fn new(doing: &'static str, reason: impl Into<String>) -> Self {
        KeychainError {
            doing,
            reason: reason.into(),
        }
    }
}

/// Where keys are kept. The app and the command line use [`OsKeychain`]; the trait lets the
/// layer's logic be tested without one.
pub trait Keychain {
    fn set(&self, connection: &str, key: &ApiKey) -> Result<(), KeychainError>;
    /// The key kept for `connection`, if one is.
    fn get(&self, connection: &str) -> Result<Option<ApiKey>, KeychainError>;
    /// Removes the key kept for `connection`; whether there was one.
    fn delete(&self, connection: &str) -> Result<bool, KeychainError>;
}

/// The operating system's keychain.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsKeychain;

fn entry(connection: &str, doing: &'static str) -> Result<keyring::Entry, KeychainError> {
    keyring::Entry::new(SERVICE, connection).map_err(|e| failure(doing, e))
}

const HINT: &str = "on Linux a Secret Service such as gnome-keyring or KeePassXC must be \
                    running and unlocked; Promptloom keeps keys nowhere else";

fn failure(doing: &'static str, e: keyring::Error) -> KeychainError {
    let reason = match e {
        // The platform's store could not be started: say why it could not.
        keyring::Error::NoDefaultStore => match keyring::Entry::store_status() {
            Err(why) => format!("there is no keychain here ({why}); {HINT}"),
            Ok(()) => format!("there is no keychain here; {HINT}"),
        },
        keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) => {
            format!("{e} ({HINT})")
        }
        other => other.to_string(),
    };
    KeychainError { doing, reason }
}

impl Keychain for OsKeychain {
    fn set(&self, connection: &str, key: &ApiKey) -> Result<(), KeychainError> {
        const DOING: &str = "did not keep the key";
        entry(connection, DOING)?
            .set_password(key.expose())
            .map_err(|e| failure(DOING, e))
    }

    fn get(&self, connection: &str) -> Result<Option<ApiKey>, KeychainError> {
        const DOING: &str = "did not give the key";
        match entry(connection, DOING)?.get_password() {
            Ok(key) => Ok(Some(ApiKey::new(key))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(failure(DOING, e)),
        }
    }

    fn delete(&self, connection: &str) -> Result<bool, KeychainError> {
        const DOING: &str = "did not remove the key";
        match entry(connection, DOING)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(failure(DOING, e)),
        }
    }
}
