//! Promptloom's application layer: what both front doors (the `promptloom` command and the
//! desktop shell) do with files and the store, written once so that the two cannot drift.
//!
//! - [`import`]: an imported file into the store, never over what is there: presets and sessions
//!   under free ids, world info replacing or merged into a preset's lorebook (and saying which),
//!   regex scripts without duplicate ids.
//! - [`presets`]: a starter preset, a copy, the built-ins restored.
//! - [`profiles`]: the user's own model profiles, read from a file and checked.
//! - [`sessions`]: a new chat, opening with the character's greeting when there is one.
//! - [`export`]: a preset in each format, a session, and the file name to propose.
//! - [`files`]: writing a file so that a failed write never destroys the file it replaces.
//! - [`connections`]: where a user sends, checked and kept by name; [`keychain`]: their keys, in
//!   the OS keychain only; [`send`]: the request a build makes (what is shown is what is sent)
//!   and the reply made into the session's next message; [`calibration`]: how far our prompt
//!   count has been from the provider's, per model; [`count`]: the provider's exact count of a
//!   request, asked when the user asks, kept per content; [`drafts`]: the preset the live
//!   preview builds, kept between keystrokes and changed item by item; [`lorebook_test`]: the
//!   lorebook tester's text checked and its answer read from a build.
//! - [`summary`]: a session's summary made through a connection, kept with the range it covers,
//!   and whether an update is due; [`memory`]: long-term memory, its index and its search
//!   (RULES 5.15).

pub mod calibration;
pub mod connections;
pub mod count;
pub mod drafts;
pub mod export;
pub mod files;
pub mod import;
pub mod keychain;
pub mod lorebook_test;
pub mod memory;
mod memory_index;
pub mod presets;
pub mod profiles;
pub mod send;
pub mod sessions;
pub mod summary;

pub use import::{import_into, ImportTarget, LorebookMode, Outcome, Place};
use promptloom_engine::codes;

/// What can go wrong in this layer: the store's errors, and an import that needs a preset to go
/// into.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error(transparent)]
    Store(#[from] promptloom_store::StoreError),
    /// World info or regex scripts, without a preset to go into.
    #[error("{what} goes into a preset: say which one")]
    NeedsPreset { what: &'static str },
    /// A preset with nothing to write in the format asked for.
    #[error(transparent)]
    Export(#[from] promptloom_import::ExportError),
    /// A model profile file that does not read or does not make sense.
    #[error("{file}: {problem}")]
    BadProfile { file: String, problem: String },
    /// A connection that cannot be used, or a send that failed.
    #[error(transparent)]
    Send(#[from] promptloom_send::SendError),
    #[error(transparent)]
    Keychain(#[from] keychain::KeychainError),
    #[error("connection \"{connection}\": the key is empty; nothing was kept")]
    EmptyKey { connection: String },
    /// The build cannot be made into a request body (an attachment that cannot be read).
    #[error(transparent)]
    Engine(#[from] promptloom_engine::EngineError),
    #[error("the request body does not serialize: {0}")]
    Body(String),
    #[error("session \"{session}\" has no {what}")]
    NoSuchMessage { session: String, what: String },
    /// Long-term memory that cannot be indexed or searched as asked (RULES 5.15).
    #[error("memory: {0}")]
    Memory(String),
    /// A summary that cannot be made as asked (RULES 5.15).
    #[error("summary: {0}")]
    Summary(String),
    /// An edit of the preview's draft that does not fit the draft kept (`drafts`).
    #[error("the preview's draft is out of date: {reason}")]
    StaleDraft { reason: String },
    /// An input over its cap (docs/ARCHITECTURE.md, "Limits"); nothing was done with it.
    #[error("{what}: {problem}")]
    TooLarge { what: String, problem: String },
}

impl LibraryError {
    pub fn code(&self) -> &'static str {
        match self {
            LibraryError::Store(e) => e.code(),
            LibraryError::NeedsPreset { .. } => codes::NEEDS_PRESET,
            LibraryError::Export(_) => codes::NOTHING_TO_EXPORT,
            LibraryError::BadProfile { .. } => codes::INVALID_DOCUMENT,
            LibraryError::Send(e) => e.code(),
            LibraryError::Keychain(_) => codes::KEYCHAIN,
            LibraryError::EmptyKey { .. } => codes::MISSING_KEY,
            LibraryError::Engine(e) => e.code(),
            LibraryError::Body(_) => codes::INTERNAL,
            LibraryError::NoSuchMessage { .. } => codes::NOT_FOUND,
            LibraryError::StaleDraft { .. } => codes::STALE_DRAFT,
            LibraryError::TooLarge { .. } => codes::TOO_LARGE,
            LibraryError::Memory(_) | LibraryError::Summary(_) => codes::INVALID_DOCUMENT,
        }
    }
}

/// A lower-case id from a name: letters and digits kept, the rest joined by dashes; `fallback`
/// when nothing is left.
pub fn slug(name: &str, fallback: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        fallback.to_string()
    } else {
        out
    }
}
