//! The one error that crosses to the UI: `{ code, message }`, with a stable code the UI can switch
//! on. Every crate's typed error maps onto it here and nowhere else.

use promptloom_engine::codes;
use promptloom_engine::EngineError;
use promptloom_store::StoreError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    pub code: String,
    pub message: String,
}

impl AppError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        AppError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        AppError::new(e.code(), e.to_string())
    }
}

impl From<EngineError> for AppError {
    fn from(e: EngineError) -> Self {
        AppError::new(e.code(), e.to_string())
    }
}

impl From<promptloom_import::ImportError> for AppError {
    fn from(e: promptloom_import::ImportError) -> Self {
        AppError::new(e.code(), e.to_string())
    }
}

impl From<promptloom_library::LibraryError> for AppError {
    fn from(e: promptloom_library::LibraryError) -> Self {
        AppError::new(e.code(), e.to_string())
    }
}

impl From<tauri::Error> for AppError {
    fn from(e: tauri::Error) -> Self {
        AppError::new(codes::INTERNAL, e.to_string())
    }
}
