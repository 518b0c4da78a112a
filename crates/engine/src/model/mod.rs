//! The data model of RULES 2: JSON, camelCase, `formatVersion: 1`.

mod anchors;
mod generation;
pub mod instruct;
mod lorebook;
mod preset;
mod session;
mod simple;
mod validate;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

pub use anchors::available_anchors;
pub use generation::*;
pub use lorebook::*;
pub use preset::*;
pub use session::*;
pub use simple::{canonicalize, SIMPLE_RECIPE_ID};
pub use validate::{validate_preset, validate_session};

use crate::EngineError;

/// The document format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Dense index for per-role tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a JSON document, refusing text that is not JSON.
pub fn parse_json_value(text: &str) -> Result<serde_json::Value, EngineError> {
    serde_json::from_str(text).map_err(|e| EngineError::NotJson(e.to_string()))
}

/// Converts a JSON value into `T`, naming the JSON path of a shape error.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, EngineError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        EngineError::Shape {
            path: if path == "." { "document".into() } else { path },
            message: err.into_inner().to_string(),
        }
    })
}

/// Checks that a document is an object whose `formatVersion` this build can read.
pub fn check_document(value: &serde_json::Value) -> Result<(), EngineError> {
    let Some(object) = value.as_object() else {
        return Err(EngineError::Shape {
            path: "document".into(),
            message: "expected a JSON object".into(),
        });
    };
    match object.get("formatVersion") {
        None => Ok(()),
        Some(v) => match v.as_u64() {
            Some(found) if found <= u64::from(FORMAT_VERSION) => Ok(()),
            Some(found) => Err(EngineError::NewerFormat {
                found: u32::try_from(found).unwrap_or(u32::MAX),
                supported: FORMAT_VERSION,
            }),
            None => Err(EngineError::Shape {
                path: "formatVersion".into(),
                message: format!("expected a whole number, found {v}"),
            }),
        },
    }
}

/// Reads a native preset: parse, convert the simple form (RULES 2.1), validate.
pub fn parse_preset(text: &str) -> Result<AgentPreset, EngineError> {
    preset_from_value(parse_json_value(text)?)
}

pub fn preset_from_value(value: serde_json::Value) -> Result<AgentPreset, EngineError> {
    check_document(&value)?;
    let preset = canonicalize(from_value(value)?);
    validate_preset(&preset)?;
    Ok(preset)
}

/// Reads a native session and validates it.
pub fn parse_session(text: &str) -> Result<Session, EngineError> {
    session_from_value(parse_json_value(text)?)
}

pub fn session_from_value(value: serde_json::Value) -> Result<Session, EngineError> {
    check_document(&value)?;
    let session: Session = from_value(value)?;
    validate_session(&session)?;
    Ok(session)
}
