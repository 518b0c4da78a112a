//! `promptloom preview`: one build for (preset, session, model, options), printed as JSON or as
//! a listing for people (RULES 8.1, 8.2).

mod json;
pub(crate) mod text;

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::AgentPreset;
use promptloom_engine::profiles::ProviderFormat;
use promptloom_engine::providers::{completion_body, BodyOptions, CompletionFormat};
use promptloom_engine::BuildResult;

use crate::assets::FileAssets;
use crate::count::Exact;
use crate::error::CliError;
use crate::inputs::{build_of, inputs, warn, BuildArgs};
use crate::request::request;

#[derive(Debug, Args)]
pub struct PreviewArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Show the request `promptloom send` would send through this connection: its body exactly
    /// (model, stream flag and generation settings included), in the connection's dialect.
    #[arg(long, value_name = "NAME")]
    pub connection: Option<String>,
    /// Ask this connection's provider to count the request `send` would send through it
    /// (Anthropic count_tokens, Gemini countTokens) and print its count beside ours; a count of
    /// the same request is kept in the database and not asked again. With --format text or json.
    #[arg(long, value_name = "NAME", conflicts_with = "connection")]
    pub count_exactly: Option<String>,
    /// The database the connection is kept in; default: the app's.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Show why, beside what: `macros` adds every macro expansion in order and the variables
    /// before and after the build (RULES 4.6). With --format text or json.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub trace: Option<TraceArg>,
    /// Build over this session of the database (--db) instead of a file, with its current
    /// summary and the range it covers (RULES 5.15).
    #[arg(long, value_name = "ID", conflicts_with = "session")]
    pub stored_session: Option<String>,
    /// Search the stored session's long-term memory with the input through this connection's
    /// embeddings endpoint, and place what it finds (RULES 5.15).
    #[arg(long, value_name = "NAME", requires = "stored_session")]
    pub memory: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceArg {
    /// Every macro expansion and the variables before and after.
    Macros,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object: recipe, model, messages, tokens, dropped, warnings, logs.
    Json,
    /// A listing for people.
    Text,
    /// The prompt string of a text-completion build, exactly (needs an instruct template).
    Prompt,
    /// The OpenAI Chat Completions request body.
    Openai,
    /// The Anthropic Messages request body.
    Anthropic,
    /// The Gemini generateContent request body.
    Gemini,
    /// The OpenAI Completions request body (text completion).
    OpenaiCompletions,
    /// llama.cpp's /completion request body (text completion).
    Llamacpp,
    /// KoboldCpp's /api/v1/generate request body (text completion).
    Koboldcpp,
}

/// What a preview printed from: the inputs and the engine's result.
pub struct Preview<'a> {
    pub preset: &'a AgentPreset,
    pub model: &'a str,
    /// What the build made; it also names the model profile and tokenizer it used.
    pub result: &'a BuildResult<'a>,
    /// Columns of the terminal, for wrapping long lines in the text listing.
    pub width: usize,
    /// The provider's count, when `--count-exactly` asked for it.
    pub exact: Option<&'a Exact>,
}

pub fn run(preview: &PreviewArgs) -> Result<String, CliError> {
    let args = &preview.build;
    if preview.count_exactly.is_some() && !matches!(preview.format, Format::Text | Format::Json) {
        return Err(CliError::BadInput {
            file: "--count-exactly".into(),
            problem: "the provider's count is printed beside the listing or in the JSON: use \
                      --format text or --format json"
                .into(),
        });
    }
    if preview.trace.is_some() && !matches!(preview.format, Format::Text | Format::Json) {
        return Err(CliError::BadInput {
            file: "--trace".into(),
            problem: "the macro trace is printed in the listing or the JSON: use --format text \
                      or --format json"
                .into(),
        });
    }
    let mut inputs = inputs(args)?;
    inputs.options.trace_macros_in_detail = preview.trace == Some(TraceArg::Macros);
    if let Some(id) = &preview.stored_session {
        crate::memory::stored_inputs(
            &mut inputs,
            preview.db.as_deref(),
            id,
            preview.memory.as_deref(),
        )?;
    }
    let assets = FileAssets::new(args.session.as_deref());
    let tokens = BuildCache::new();
    let result = build_of(args, &inputs, &assets, &tokens)?;
    let session = &inputs.session;
    let preset = &inputs.preset;
    if let Some(name) = &preview.connection {
        let request = request(preview.db.as_deref(), name, args, &result, session, &assets)?;
        if let Some(format) = body_format(preview.format) {
            if format.name() != request.format {
                return Err(CliError::BadInput {
                    file: format!("connection {name}"),
                    problem: format!(
                        "it would send {}; --format {} is not what it would send",
                        request.format,
                        format.name()
                    ),
                });
            }
        }
        warn(&result);
        return Ok(request.body);
    }
    let about = || args.session.as_deref().unwrap_or(&args.preset);
    if let Some(format) = body_format(preview.format) {
        let body = match format {
            BodyFormat::Chat(format) => {
                promptloom_engine::providers::request_body(format, &result, session, &assets)
            }
            BodyFormat::Completion(format) => {
                for said in result.generation.completion_warnings(format) {
                    eprintln!("promptloom: warning: [{}] {said}", format.as_str());
                }
                completion_body(format, &result, &BodyOptions::new(&result.model, false))
            }
        }
        .map_err(|e| CliError::engine(about(), &e))?;
        // The body is all that goes to standard output; what the build warned about (an
        // attachment left out, a rule that hit its cap) goes to standard error.
        warn(&result);
        let mut text =
            serde_json::to_string_pretty(&body).map_err(|e| CliError::Output(e.to_string()))?;
        text.push('\n');
        return Ok(text);
    }
    if preview.format == Format::Prompt {
        let prompt = result.prompt.as_ref().ok_or_else(|| CliError::BadInput {
            file: args.preset.display().to_string(),
            problem: "--format prompt needs text completion: give --instruct NAME|FILE, or a \
                      preset or model profile with an instruct template"
                .into(),
        })?;
        warn(&result);
        // Exactly the string, for a pipe or a file; on a terminal, with its control
        // characters shown as escapes like everything else printed there.
        return Ok(if std::io::stdout().is_terminal() {
            crate::terminal::escape(&prompt.prompt).into_owned()
        } else {
            prompt.prompt.clone()
        });
    }
    let exact = preview
        .count_exactly
        .as_deref()
        .map(|name| {
            crate::count::exactly(preview.db.as_deref(), name, args, &result, session, &assets)
        })
        .transpose()?;
    let listing = Preview {
        preset,
        model: &args.model,
        result: &result,
        width: terminal_width(),
        exact: exact.as_ref(),
    };
    Ok(match preview.format {
        Format::Json => json::render(&result, exact.as_ref()),
        _ => crate::terminal::escape(&text::render(&listing)).into_owned(),
    })
}

/// A request body format `--format` can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyFormat {
    Chat(ProviderFormat),
    Completion(CompletionFormat),
}

impl BodyFormat {
    fn name(self) -> &'static str {
        match self {
            BodyFormat::Chat(f) => f.as_str(),
            BodyFormat::Completion(f) => f.as_str(),
        }
    }
}

fn body_format(format: Format) -> Option<BodyFormat> {
    match format {
        Format::Openai => Some(BodyFormat::Chat(ProviderFormat::OpenaiChat)),
        Format::Anthropic => Some(BodyFormat::Chat(ProviderFormat::AnthropicMessages)),
        Format::Gemini => Some(BodyFormat::Chat(ProviderFormat::Gemini)),
        Format::OpenaiCompletions => {
            Some(BodyFormat::Completion(CompletionFormat::OpenaiCompletions))
        }
        Format::Llamacpp => Some(BodyFormat::Completion(CompletionFormat::Llamacpp)),
        Format::Koboldcpp => Some(BodyFormat::Completion(CompletionFormat::Koboldcpp)),
        Format::Json | Format::Text | Format::Prompt => None,
    }
}

/// `COLUMNS` when the shell exports it, else 100: wide enough to read, narrow enough to scan.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or(100)
}
