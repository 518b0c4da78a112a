//! Promptloom's engine: the data model, recipe choice and assembly, macros, token counting and the
//! processor pipeline. Pure Rust: no Tauri, no SQLite, no dialogs.

pub mod assets;
mod build;
pub mod cache;
pub mod diff;
mod error;
pub mod instruct;
pub mod limits;
pub mod lorebook;
pub mod macros;
pub mod model;
pub mod pattern;
pub mod pipeline;
pub mod processors;
pub mod profiles;
pub mod providers;
pub mod recipe;
pub mod regex_pattern;
pub mod regex_rule;
pub mod said;
pub mod texts;

/// Token counting lives in its own crate, `promptloom-tokens`; the engine's modules and its
/// callers reach it here as `tokens`.
pub use promptloom_tokens as tokens;

pub use build::{build, builtin_processors};
pub use error::{codes, EngineError};
pub use pipeline::{
    BuildOptions, BuildRequest, BuildResult, GenerationType, MemoryHit, Pipeline, ReplyStart,
};
pub use said::{Said, Text};
