//! Promptloom's engine: the data model, recipe choice and assembly, macros, token counting and the
//! processor pipeline. Pure Rust: no Tauri, no SQLite, no dialogs (STYLE.md).

mod error;
pub mod model;
pub mod regex_rule;

pub use error::EngineError;
