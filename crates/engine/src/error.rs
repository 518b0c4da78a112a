//! The engine's typed errors. Each names the thing and the problem; `code()` is the stable code the
//! UI and the CLI switch on.

use thiserror::Error;

/// Every error code a Promptloom crate gives, one list: the UI switches on these (a conflict asks
/// whose version stays), the CLI reports them, and no two crates give one code two meanings.
/// `code()` of each crate's error and the shell's own errors use these names only.
pub mod codes {
    // Reading documents (the engine, the importers).
    /// The text is not JSON.
    pub const NOT_JSON: &str = "not_json";
    /// JSON of the wrong shape for what it claims to be.
    pub const BAD_SHAPE: &str = "bad_shape";
    /// A document written by a newer Promptloom.
    pub const NEWER_FORMAT: &str = "newer_format";
    /// A document that reads but breaks a rule (validation), stored or about to be.
    pub const INVALID_DOCUMENT: &str = "invalid_document";
    /// A recipe step names a template the preset does not have.
    pub const UNKNOWN_TEMPLATE: &str = "unknown_template";
    /// No recipe of the preset applies to the model.
    pub const NO_RECIPE: &str = "no_recipe";
    /// A processor could not run.
    pub const PROCESSOR: &str = "processor";
    /// An attachment's bytes could not be had.
    pub const ASSET: &str = "asset";

    // Files.
    /// A file or folder could not be read or written.
    pub const IO: &str = "io";
    /// A file over the size the importers read.
    pub const TOO_LARGE: &str = "too_large";
    /// A file of no format Promptloom imports.
    pub const UNKNOWN_FORMAT: &str = "unknown_format";
    pub const PNG_WITHOUT_CARD: &str = "png_without_card";
    /// A PNG that is damaged, truncated, or whose card chunk does not inflate within its limit.
    pub const BAD_PNG: &str = "bad_png";
    pub const BAD_BASE64: &str = "bad_base64";
    pub const BAD_ZIP: &str = "bad_zip";
    /// An archive that unpacks past its limits.
    pub const ZIP_BOMB: &str = "zip_bomb";
    pub const CHARX_WITHOUT_CARD: &str = "charx_without_card";

    // The store.
    /// SQLite refused an operation (a lock held by another program, a full disk...).
    pub const DATABASE: &str = "database";
    /// A database written by a newer Promptloom; nothing was changed.
    pub const NEWER_SCHEMA: &str = "newer_schema";
    /// A file that is not a Promptloom database, or a damaged one; nothing was changed.
    pub const CORRUPT_DATABASE: &str = "corrupt_database";
    /// No preset, session, profile or chosen file with that id.
    pub const NOT_FOUND: &str = "not_found";
    pub const BACKUP_FAILED: &str = "backup_failed";
    /// Another program saved the row since it was read; nothing was written.
    pub const CONFLICT: &str = "conflict";

    // The application layer and the shell.
    /// World info or regex scripts without a preset to go into.
    pub const NEEDS_PRESET: &str = "needs_preset";
    /// A preset with nothing to write in the export format asked for.
    pub const NOTHING_TO_EXPORT: &str = "nothing_to_export";
    /// A name that cannot be used (empty).
    pub const INVALID_NAME: &str = "invalid_name";
    /// Something in the app itself failed (a poisoned lock, a lost background task).
    pub const INTERNAL: &str = "internal";

    // Sending a request to a provider (crates/send).
    /// A dialect name that is not one of the known ones.
    pub const UNKNOWN_DIALECT: &str = "unknown_dialect";
    /// A connection that cannot be used: a bad URL, header or name, or no model where one is needed.
    pub const INVALID_CONNECTION: &str = "invalid_connection";
    /// The provider needs an API key and none was given; nothing was sent.
    pub const MISSING_KEY: &str = "missing_key";
    /// The OS keychain cannot be reached or refused; no key is kept anywhere else.
    pub const KEYCHAIN: &str = "keychain";
    /// The provider answered with an HTTP error status.
    pub const HTTP_STATUS: &str = "http_status";
    /// The provider reported an error inside an otherwise successful reply.
    pub const PROVIDER_ERROR: &str = "provider_error";
    /// The provider could not be reached, or the connection failed.
    pub const NETWORK: &str = "network";
    /// The provider took too long: to connect, to answer, or between two parts of a reply.
    pub const TIMEOUT: &str = "timeout";
    /// A reply that cannot be read (not the provider's format).
    pub const BAD_REPLY: &str = "bad_reply";
    /// A reply, or one event of it, over its size cap.
    pub const REPLY_TOO_LARGE: &str = "reply_too_large";
    /// The connection closed before the reply was complete.
    pub const REPLY_CUT_SHORT: &str = "reply_cut_short";
    /// A reply arrived but could not be stored in its session; it was kept in a file.
    pub const REPLY_NOT_STORED: &str = "reply_not_stored";

    // The app's live preview.
    /// An edit of the preview's draft that does not fit the draft the shell keeps: the UI sends
    /// the whole preset instead.
    pub const STALE_DRAFT: &str = "stale_draft";

    /// All of them, for the test that holds them distinct.
    pub const ALL: &[&str] = &[
        NOT_JSON,
        BAD_SHAPE,
        NEWER_FORMAT,
        INVALID_DOCUMENT,
        UNKNOWN_TEMPLATE,
        NO_RECIPE,
        PROCESSOR,
        ASSET,
        IO,
        TOO_LARGE,
        UNKNOWN_FORMAT,
        PNG_WITHOUT_CARD,
        BAD_PNG,
        BAD_BASE64,
        BAD_ZIP,
        ZIP_BOMB,
        CHARX_WITHOUT_CARD,
        DATABASE,
        NEWER_SCHEMA,
        CORRUPT_DATABASE,
        NOT_FOUND,
        BACKUP_FAILED,
        CONFLICT,
        NEEDS_PRESET,
        NOTHING_TO_EXPORT,
        INVALID_NAME,
        INTERNAL,
        UNKNOWN_DIALECT,
        INVALID_CONNECTION,
        MISSING_KEY,
        KEYCHAIN,
        HTTP_STATUS,
        PROVIDER_ERROR,
        NETWORK,
        TIMEOUT,
        BAD_REPLY,
        REPLY_TOO_LARGE,
        REPLY_CUT_SHORT,
        REPLY_NOT_STORED,
        STALE_DRAFT,
    ];

    #[cfg(test)]
    mod tests {
        #[test]
        fn every_code_is_distinct_and_snake_case() {
            let mut seen = std::collections::HashSet::new();
            for code in super::ALL {
                assert!(seen.insert(code), "{code} twice");
                assert!(
                    code.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                    "{code}"
                );
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum EngineError {
    /// The text is not JSON at all.
    #[error("not valid JSON: {0}")]
    NotJson(String),
    /// JSON of the wrong shape; `path` is where (`contextRecipes[0].steps[2].enabled`).
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
    #[error("formatVersion {found} was written by a newer Promptloom; this build reads version {supported}")]
    NewerFormat { found: u32, supported: u32 },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("recipe \"{recipe}\" step {step}: unknown template \"{template}\"")]
    UnknownTemplate {
        recipe: String,
        step: usize,
        template: String,
    },
    #[error("no recipe matches model \"{model}\"; the recipes' model filters are: {filters}")]
    NoRecipe { model: String, filters: String },
    #[error("processor \"{processor}\": {message}")]
    Processor { processor: String, message: String },
    /// An attachment's bytes could not be had (a missing file, base64 that does not decode).
    #[error("attachment \"{name}\": {message}")]
    Asset { name: String, message: String },
}

impl EngineError {
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::NotJson(_) => codes::NOT_JSON,
            EngineError::Shape { .. } => codes::BAD_SHAPE,
            EngineError::NewerFormat { .. } => codes::NEWER_FORMAT,
            EngineError::Invalid { .. } => codes::INVALID_DOCUMENT,
            EngineError::UnknownTemplate { .. } => codes::UNKNOWN_TEMPLATE,
            EngineError::NoRecipe { .. } => codes::NO_RECIPE,
            EngineError::Processor { .. } => codes::PROCESSOR,
            EngineError::Asset { .. } => codes::ASSET,
        }
    }

    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        EngineError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}
