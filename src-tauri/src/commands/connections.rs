//! Connections: where the app sends. The page sees each connection and whether a key is set for
//! it, never a key: a key goes from the page to the OS keychain once, when the user types it.

use std::collections::BTreeMap;

use promptloom_library::connections;
use promptloom_library::keychain::OsKeychain;
use promptloom_send::{well_known, ApiKey, Connection};
use serde::{Deserialize, Serialize};
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;
use promptloom_engine::codes;

/// A connection as the page edits it (the JSON a connection is kept as).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionDoc {
    pub name: String,
    /// `openai`, `anthropic`, `gemini`, `openai-compatible`, `llamacpp` or `koboldcpp`.
    pub dialect: String,
    pub base_url: String,
    #[serde(default)]
    pub default_model: Option<String>,
    #[serde(default)]
    pub extra_headers: BTreeMap<String, String>,
    /// Fields merged into every request body: a JSON object.
    #[serde(default)]
    pub extra_body: BTreeMap<String, serde_json::Value>,
    /// An environment variable the key is read from instead of the keychain.
    #[serde(default)]
    pub key_env: Option<String>,
    /// Timeouts in place of the defaults.
    #[serde(default)]
    pub timeouts: ConnectionTimeouts,
}

/// A connection's own timeouts in seconds, 1 to 86400; an unset one keeps its default (connect
/// 10 s, first byte 60 s, between two parts 60 s, all of the send 600 s).
#[derive(Debug, Clone, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionTimeouts {
    #[serde(default)]
    pub connect_secs: Option<u32>,
    #[serde(default)]
    pub first_byte_secs: Option<u32>,
    #[serde(default)]
    pub idle_secs: Option<u32>,
    #[serde(default)]
    pub total_secs: Option<u32>,
}

impl ConnectionDoc {
    pub(super) fn connection(&self) -> Result<Connection, AppError> {
        let value = serde_json::to_value(self)
            .map_err(|e| AppError::new(codes::INTERNAL, e.to_string()))?;
        serde_json::from_value(value).map_err(|e| {
            AppError::new(
                codes::INVALID_CONNECTION,
                format!("connection \"{}\": {e}", self.name),
            )
        })
    }

    fn of(connection: &Connection) -> Result<Self, AppError> {
        let value = serde_json::to_value(connection)
            .map_err(|e| AppError::new(codes::INTERNAL, e.to_string()))?;
        serde_json::from_value(value).map_err(|e| AppError::new(codes::INTERNAL, e.to_string()))
    }
}

/// A connection in the list: the connection, and what the page may know of its key.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionView {
    pub connection: ConnectionDoc,
    pub has_key: bool,
    /// Why the keychain could not say (none running, locked).
    pub key_problem: Option<String>,
    /// The request format whose token count this connection's API can give ("Count exactly"):
    /// its own, where its dialect has a counting endpoint.
    pub counts: Option<promptloom_engine::profiles::ProviderFormat>,
}

#[tauri::command]
#[specta::specta]
pub async fn list_connections(app: AppHandle) -> Result<Vec<ConnectionView>, AppError> {
    blocking(app, |s| {
        let listed = connections::list(&*s.store()?)?;
        listed
            .iter()
            .map(|c| {
                let (has_key, key_problem) = match connections::has_key(c, &OsKeychain) {
                    Ok(has) => (has, None),
                    Err(e) => (false, Some(e.to_string())),
                };
                Ok(ConnectionView {
                    connection: ConnectionDoc::of(c)?,
                    has_key,
                    key_problem,
                    counts: promptloom_send::CountEndpoint::of(c.dialect)
                        .and(c.dialect.provider_format()),
                })
            })
            .collect()
    })
    .await
}

/// The providers everyone knows (URL and dialect), for the editor to start from.
#[tauri::command]
#[specta::specta]
pub fn well_known_connections() -> Result<Vec<ConnectionDoc>, AppError> {
    well_known()
        .iter()
        .map(|w| ConnectionDoc::of(&w.connection()))
        .collect()
}

/// Keeps `connection` (checked first), over one of its name.
#[tauri::command]
#[specta::specta]
pub async fn save_connection(app: AppHandle, connection: ConnectionDoc) -> Result<(), AppError> {
    blocking(app, move |s| {
        let connection = connection.connection()?;
        connections::add(&*s.store()?, &connection)?;
        Ok(())
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_connection(app: AppHandle, name: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        connections::remove(&*s.store()?, &OsKeychain, &name)?;
        Ok(())
    })
    .await
}

/// Puts `key` in the OS keychain for connection `name`; the page keeps no copy.
#[tauri::command]
#[specta::specta]
pub async fn set_connection_key(app: AppHandle, name: String, key: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        connections::set_key(&*s.store()?, &OsKeychain, &name, &ApiKey::new(key))?;
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connections_timeouts_go_through_the_page_and_back() {
        let doc: ConnectionDoc = serde_json::from_value(serde_json::json!({
            "name": "slow", "dialect": "openai-compatible", "baseUrl": "http://127.0.0.1:8080/v1",
            "timeouts": {"connectSecs": null, "firstByteSecs": 300, "totalSecs": 1800}
        }))
        .expect("a doc");
        let connection = doc.connection().expect("a connection");
        assert_eq!(connection.timeouts.first_byte_secs, Some(300));
        assert_eq!(connection.timeouts.total_secs, Some(1800));
        assert_eq!(connection.timeouts.connect_secs, None);
        let back = ConnectionDoc::of(&connection).expect("a doc again");
        assert_eq!(back.timeouts.total_secs, Some(1800));
        assert_eq!(back.timeouts.idle_secs, None);

        // A doc without timeouts (every one kept before they existed) keeps the defaults.
        let old: ConnectionDoc = serde_json::from_value(serde_json::json!({
            "name": "old", "dialect": "openai", "baseUrl": "https://api.openai.com/v1"
        }))
        .expect("an old doc");
        assert!(old.connection().expect("a connection").timeouts.is_unset());
    }
}
