//! `promptloom preview`: one build for (preset, session, model, options), printed as JSON or as
//! a listing for people (SPEC 8).

mod json;
mod text;

use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};
use clap::{Args, ValueEnum};
use promptloom_engine::model::{parse_preset, parse_session, AgentPreset, Session};
use promptloom_engine::tokens::TokenCache;
use promptloom_engine::{build, BuildOptions, BuildRequest, BuildResult};

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The agent preset (native JSON).
    #[arg(long, value_name = "FILE")]
    pub preset: PathBuf,
    /// The chat session (native JSON); without it, an empty session.
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// The model id, e.g. gpt-4o or claude-3-5-sonnet; it chooses the recipe and the profile.
    #[arg(long, value_name = "ID")]
    pub model: String,
    /// The text the user is about to send, added as the newest user message.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,
    /// Overrides the model profile's context window, in tokens.
    #[arg(long, value_name = "N")]
    pub context_window: Option<u32>,
    /// Overrides the tokens reserved for the reply.
    #[arg(long, value_name = "N")]
    pub reserve: Option<u32>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The build's timestamp for the time macros (RFC 3339); default: now. For reproducible
    /// output in tests.
    #[arg(long, value_name = "RFC3339", hide = true, value_parser = parse_timestamp)]
    pub now: Option<DateTime<FixedOffset>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object: recipe, model, messages, tokens, dropped, warnings, logs.
    Json,
    /// A listing for people.
    Text,
}

fn parse_timestamp(s: &str) -> Result<DateTime<FixedOffset>, String> {
    DateTime::parse_from_rfc3339(s).map_err(|e| format!("not an RFC 3339 timestamp: {e}"))
}

/// What a preview printed from: the inputs and the engine's result.
pub struct Preview<'a> {
    pub preset: &'a AgentPreset,
    pub model: &'a str,
    pub profile_name: String,
    pub tokenizer: String,
    pub result: &'a BuildResult,
    /// Columns of the terminal, for wrapping long lines in the text listing.
    pub width: usize,
}

pub fn run(args: &PreviewArgs) -> Result<String, CliError> {
    let preset =
        parse_preset(&read(&args.preset)?).map_err(|e| CliError::engine(&args.preset, &e))?;
    let session = match &args.session {
        Some(path) => parse_session(&read(path)?).map_err(|e| CliError::engine(path, &e))?,
        None => Session::empty("preview"),
    };
    let mut options = BuildOptions::at(
        args.now
            .unwrap_or_else(|| chrono::Local::now().fixed_offset()),
    );
    options.input = args.input.clone();
    options.context_window = args.context_window;
    options.reserve = args.reserve;

    let tokens = TokenCache::new();
    let request = BuildRequest {
        preset: &preset,
        session: &session,
        model: &args.model,
        options: &options,
        tokens: &tokens,
        profiles: &[],
    };
    // Every build error (no recipe for the model, a step naming an unknown template) is about
    // the preset.
    let result = build(&request).map_err(|e| CliError::engine(&args.preset, &e))?;
    let profile = request.profile();
    let choice = profile.tokenizer_choice();
    let preview = Preview {
        preset: &preset,
        model: &args.model,
        profile_name: profile.name.clone().unwrap_or_else(|| profile.id.clone()),
        tokenizer: format!(
            "{} ({})",
            choice.kind.as_str(),
            if choice.exact { "exact" } else { "estimate" }
        ),
        result: &result,
        width: terminal_width(),
    };
    Ok(match args.format {
        Format::Json => json::render(&result),
        Format::Text => text::render(&preview),
    })
}

fn read(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::io(path, &e))
}

/// `COLUMNS` when the shell exports it, else 100: wide enough to read, narrow enough to scan.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or(100)
}
