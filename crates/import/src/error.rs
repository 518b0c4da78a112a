//! The importer's typed errors. Every message names the file and the problem (RULES 7.3);
//! `code()` is the stable code the UI and the CLI switch on.

use promptloom_engine::codes;
use promptloom_engine::EngineError;
use thiserror::Error;

/// An import that failed: nothing was produced, nothing was written.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{file}: {problem}")]
pub struct ImportError {
    /// The file's name as the user gave it (never expanded to a full path by the importer).
    pub file: String,
    pub problem: Problem,
}

impl ImportError {
    pub fn new(file: impl Into<String>, problem: Problem) -> Self {
        ImportError {
            file: file.into(),
            problem,
        }
    }

    pub fn code(&self) -> &'static str {
        self.problem.code()
    }
}

/// What was wrong with the file.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Problem {
    #[error("cannot read the file: {0}")]
    Io(String),
    #[error("the file is {size} bytes; files over {limit} bytes (50 MB) are not imported")]
    TooLarge { size: u64, limit: u64 },
    #[error("not valid JSON: {0}")]
    NotJson(String),
    #[error("wrong shape: {0}")]
    Shape(String),
    #[error("not a format Promptloom can import: {0}")]
    UnknownFormat(String),
    #[error("a PNG without a character card (no `ccv3` or `chara` text chunk)")]
    PngWithoutCard,
    #[error("the PNG is damaged or truncated: {0}")]
    BadPng(String),
    #[error("the `{chunk}` chunk's base64 does not decode: {reason}")]
    BadBase64 { chunk: String, reason: String },
    #[error("not a readable zip archive: {0}")]
    BadZip(String),
    #[error("the zip archive is too large when unpacked: {0}")]
    ZipBomb(String),
    #[error("a CHARX archive without card.json")]
    CharxWithoutCard,
    #[error("{0}")]
    Engine(EngineError),
}

impl Problem {
    pub fn code(&self) -> &'static str {
        match self {
            Problem::Io(_) => codes::IO,
            Problem::TooLarge { .. } => codes::TOO_LARGE,
            Problem::NotJson(_) => codes::NOT_JSON,
            Problem::Shape(_) => codes::BAD_SHAPE,
            Problem::UnknownFormat(_) => codes::UNKNOWN_FORMAT,
            Problem::PngWithoutCard => codes::PNG_WITHOUT_CARD,
            Problem::BadPng(_) => codes::BAD_PNG,
            Problem::BadBase64 { .. } => codes::BAD_BASE64,
            Problem::BadZip(_) => codes::BAD_ZIP,
            Problem::ZipBomb(_) => codes::ZIP_BOMB,
            Problem::CharxWithoutCard => codes::CHARX_WITHOUT_CARD,
            Problem::Engine(e) => e.code(),
        }
    }

    pub(crate) fn shape(message: impl Into<String>) -> Self {
        Problem::Shape(message.into())
    }
}

impl From<EngineError> for Problem {
    fn from(e: EngineError) -> Self {
        Problem::Engine(e)
    }
}
