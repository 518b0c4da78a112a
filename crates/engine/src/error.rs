//! The engine's typed errors. Each names the thing and the problem; `code()` is the stable code the
//! UI and the CLI switch on.

use thiserror::Error;

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
            EngineError::NotJson(_) => "not_json",
            EngineError::Shape { .. } => "bad_shape",
            EngineError::NewerFormat { .. } => "newer_format",
            EngineError::Invalid { .. } => "invalid",
            EngineError::UnknownTemplate { .. } => "unknown_template",
            EngineError::NoRecipe { .. } => "no_recipe",
            EngineError::Processor { .. } => "processor",
            EngineError::Asset { .. } => "asset",
        }
    }

    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        EngineError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}
