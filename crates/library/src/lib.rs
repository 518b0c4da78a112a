//! Promptloom's application layer: what both front doors (the `promptloom` command and the
//! desktop shell) do with files and the store, written once so that the two cannot drift.
//!
//! - [`import`]: an imported file into the store, never over what is there: presets and sessions
//!   under free ids, world info replacing or merged into a preset's lorebook (and saying which),
//!   regex scripts without duplicate ids.
//! - [`files`]: writing a file so that a failed write never destroys the file it replaces.

pub mod files;
pub mod import;

pub use import::{import_into, ImportTarget, LorebookMode, Outcome, Place, RegexHome};

/// What can go wrong in this layer: the store's errors, and an import that needs a preset to go
/// into.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(transparent)]
    Store(#[from] promptloom_store::StoreError),
    /// World info or regex scripts, without a preset to go into.
    #[error("{what} goes into a preset: say which one")]
    NeedsPreset { what: &'static str },
}

impl LibraryError {
    pub fn code(&self) -> &'static str {
        match self {
            LibraryError::Store(e) => e.code(),
            LibraryError::NeedsPreset { .. } => "needs_preset",
        }
    }
}
