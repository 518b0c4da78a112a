//! `promptloom preview`: one build for (preset, session, model, options), printed as JSON or as
//! a listing for people (RULES 8.1, 8.2).

mod json;
mod text;

use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};
use clap::{Args, ValueEnum};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::AgentPreset;
use promptloom_engine::pipeline::{Ephemeral, EphemeralKind, LogEntry, LogLevel};
use promptloom_engine::profiles::ProviderFormat;
use promptloom_engine::{build, BuildOptions, BuildRequest, BuildResult, Said};

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::load;

#[derive(Debug, Args)]
pub struct PreviewArgs {
    /// The agent preset: native JSON, a SillyTavern preset, or a character card (PNG, JSON,
    /// CHARX), which becomes a preset with a SillyTavern-like recipe.
    #[arg(long, value_name = "FILE")]
    pub preset: PathBuf,
    /// The chat session: native JSON or a SillyTavern chat (JSONL); without it, an empty
    /// session (starting with the character's greeting, if there is one).
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// A character card (or a native preset) whose character and lorebook are laid over the
    /// preset for this build.
    #[arg(long, value_name = "FILE")]
    pub character: Option<PathBuf>,
    /// The model id, e.g. gpt-4o or claude-3-5-sonnet; it chooses the recipe and the profile.
    #[arg(long, value_name = "ID")]
    pub model: String,
    /// The text the user is about to send, added as the newest user message.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,
    /// One-turn content put before the last user message for this build only.
    #[arg(long, value_name = "TEXT", requires = "ephemeral_kind")]
    pub ephemeral: Option<String>,
    /// The kind of the ephemeral content: its start and end markers.
    #[arg(long, value_enum, value_name = "KIND", requires = "ephemeral")]
    pub ephemeral_kind: Option<EphemeralArg>,
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
    /// The OpenAI Chat Completions request body.
    Openai,
    /// The Anthropic Messages request body.
    Anthropic,
    /// The Gemini generateContent request body.
    Gemini,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EphemeralArg {
    Document,
    Quote,
    Custom,
}

fn parse_timestamp(s: &str) -> Result<DateTime<FixedOffset>, String> {
    DateTime::parse_from_rfc3339(s).map_err(|e| format!("not an RFC 3339 timestamp: {e}"))
}

/// What a preview printed from: the inputs and the engine's result.
pub struct Preview<'a> {
    pub preset: &'a AgentPreset,
    pub model: &'a str,
    /// What the build made; it also names the model profile and tokenizer it used.
    pub result: &'a BuildResult<'a>,
    /// Columns of the terminal, for wrapping long lines in the text listing.
    pub width: usize,
}

pub fn run(args: &PreviewArgs) -> Result<String, CliError> {
    let mut notes: Vec<(PathBuf, String)> = Vec::new();
    let mut note = |path: &Path, items: Vec<String>| {
        notes.extend(items.into_iter().map(|n| (path.to_path_buf(), n)));
    };
    let loaded = load::preset(&args.preset)?;
    note(&args.preset, loaded.notes);
    let mut preset = loaded.value;
    if let Some(path) = &args.character {
        let card = load::character(path)?;
        note(path, card.notes);
        preset = promptloom_import::overlay_character(preset, &card.value);
    }
    let session = match &args.session {
        Some(path) => {
            let loaded = load::session(path)?;
            note(path, loaded.notes);
            loaded.value
        }
        None => promptloom_library::sessions::new_chat("preview", None, Some(&preset)),
    };
    let mut options = BuildOptions::at(
        args.now
            .unwrap_or_else(|| chrono::Local::now().fixed_offset()),
    );
    options.input = args.input.clone();
    options.context_window = args.context_window;
    options.reserve = args.reserve;
    options.ephemeral = match (args.ephemeral_kind, &args.ephemeral) {
        (Some(kind), Some(content)) => Some(Ephemeral {
            kind: match kind {
                EphemeralArg::Document => EphemeralKind::Document,
                EphemeralArg::Quote => EphemeralKind::Quote,
                EphemeralArg::Custom => EphemeralKind::Custom,
            },
            label: None,
            content: content.clone(),
        }),
        _ => None,
    };

    let assets = FileAssets::new(args.session.as_deref());
    let tokens = BuildCache::new();
    let request = BuildRequest {
        preset: &preset,
        session: &session,
        model: &args.model,
        options: &options,
        cache: &tokens,
        profiles: &[],
        assets: &assets,
    };
    // Every build error (no recipe for the model, a step naming an unknown template) is about
    // the preset.
    let mut result = build(&request).map_err(|e| CliError::engine(&args.preset, &e))?;
    // What the importers could not map is a warning of this preview.
    for (path, text) in notes {
        let message = format!("{}: {text}", path.display());
        result.warnings.push(LogEntry {
            processor: "import".into(),
            level: LogLevel::Warning,
            // Only the app says codes in another language; these notes stay here.
            said: Said::plain(&message),
            message,
        });
    }
    let provider = match args.format {
        Format::Openai => Some(ProviderFormat::OpenaiChat),
        Format::Anthropic => Some(ProviderFormat::AnthropicMessages),
        Format::Gemini => Some(ProviderFormat::Gemini),
        Format::Json | Format::Text => None,
    };
    if let Some(format) = provider {
        let body = promptloom_engine::providers::request_body(format, &result, &session, &assets)
            .map_err(|e| {
            let file = args.session.as_deref().unwrap_or(&args.preset);
            CliError::engine(file, &e)
        })?;
        // The body is all that goes to standard output; what the build warned about (an
        // attachment left out, a rule that hit its cap) goes to standard error.
        for w in &result.warnings {
            eprintln!(
                "promptloom: warning: [{}] {}",
                w.processor,
                crate::terminal::escape(&w.message)
            );
        }
        let mut text =
            serde_json::to_string_pretty(&body).map_err(|e| CliError::Output(e.to_string()))?;
        text.push('\n');
        return Ok(text);
    }
    let preview = Preview {
        preset: &preset,
        model: &args.model,
        result: &result,
        width: terminal_width(),
    };
    Ok(match args.format {
        Format::Json => json::render(&result),
        _ => crate::terminal::escape(&text::render(&preview)).into_owned(),
    })
}

/// `COLUMNS` when the shell exports it, else 100: wide enough to read, narrow enough to scan.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or(100)
}
