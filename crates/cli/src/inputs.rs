//! What one build is made of, for `preview`, `count`, `send` and `diff` alike: the arguments
//! that name its inputs, the inputs read and checked, the build itself with the importers'
//! notes among its warnings, and those warnings on standard error.

use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};
use clap::{Args, ValueEnum};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::instruct::InstructTemplate;
use promptloom_engine::model::{AgentPreset, Session};
use promptloom_engine::pipeline::{Ephemeral, EphemeralKind, LogEntry, LogLevel};
use promptloom_engine::profiles::{profile_for_model, ModelProfile};
use promptloom_engine::tokens::{own_tokenizer, TokenizerError, TokenizerKind};
use promptloom_engine::{build, BuildOptions, BuildRequest, BuildResult, GenerationType, Said};

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::load;

/// What one build is made of, for `preview` and `send` alike.
#[derive(Debug, Args)]
pub struct BuildArgs {
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
    /// The text the user is about to send, added as the newest user message; for `--type
    /// quiet`, the quiet prompt.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,
    /// The kind of generation (RULES 5.14): the next reply, more of the last reply, the user's
    /// next message, or a one-off quiet request.
    #[arg(
        long = "type",
        value_enum,
        value_name = "TYPE",
        default_value = "normal"
    )]
    pub generation_type: TypeArg,
    /// "Start reply with": the text the reply begins with, over the preset's prefill.
    #[arg(long, value_name = "TEXT")]
    pub prefill: Option<String>,
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
    /// Text completion with this instruct template (RULES 5.12): a built-in's id (chatml, qwen,
    /// llama-3, llama-2, mistral, mistral-tekken, gemma, phi-3, deepseek, alpaca, vicuna) or a
    /// template file (native JSON, or a SillyTavern instruct template or master export).
    #[arg(long, value_name = "NAME|FILE")]
    pub instruct: Option<String>,
    /// Count with this tokenizer (RULES 5.8), as the model's own: a shipped vocabulary
    /// (o200k_base, cl100k_base, llama3, qwen, gemma3, deepseek_v3, tekken) or a tokenizer.json
    /// file. Default: the one the model id picks.
    #[arg(long, value_name = "NAME|FILE")]
    pub tokenizer: Option<String>,
    /// The build's timestamp for the time macros (RFC 3339); default: now. For reproducible
    /// output in tests.
    #[arg(long, value_name = "RFC3339", hide = true, value_parser = parse_timestamp)]
    pub now: Option<DateTime<FixedOffset>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    Normal,
    Continue,
    Impersonate,
    Quiet,
}

impl TypeArg {
    pub fn generation_type(self) -> GenerationType {
        match self {
            TypeArg::Normal => GenerationType::Normal,
            TypeArg::Continue => GenerationType::Continue,
            TypeArg::Impersonate => GenerationType::Impersonate,
            TypeArg::Quiet => GenerationType::Quiet,
        }
    }
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

/// The inputs of a build, read and checked: nothing is built or sent when one is bad.
pub struct Inputs {
    pub preset: AgentPreset,
    pub session: Session,
    pub options: BuildOptions,
    /// What the importers could not map, by file: warnings of the build.
    notes: Vec<(PathBuf, String)>,
}

/// The type's options that make no sense together (RULES 8.1): a continuation or the user's own
/// next message takes no input, and neither a continuation nor a quiet request a prefill.
fn check_type(args: &BuildArgs) -> Result<(), CliError> {
    let kind = args.generation_type.generation_type();
    let refuse = |option: &str| CliError::BadInput {
        file: "--type".into(),
        problem: format!("a {} build takes no {option}", kind.as_str()),
    };
    if matches!(kind, GenerationType::Continue | GenerationType::Impersonate)
        && args.input.is_some()
    {
        return Err(refuse("--input"));
    }
    if matches!(kind, GenerationType::Continue | GenerationType::Quiet) && args.prefill.is_some() {
        return Err(refuse("--prefill"));
    }
    Ok(())
}

pub fn inputs(args: &BuildArgs) -> Result<Inputs, CliError> {
    check_type(args)?;
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
    options.generation_type = args.generation_type.generation_type();
    options.prefill = args.prefill.clone();
    if let Some(name) = args.instruct.as_deref() {
        let loaded = instruct_template(name)?;
        note(Path::new(name), loaded.notes);
        options.instruct = Some(loaded.value);
    }
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
    Ok(Inputs {
        preset,
        session,
        options,
        notes,
    })
}

impl Inputs {
    /// The same preset and build options over `session`, at `timestamp`, without the pending
    /// input: the other side of a diff.
    pub fn other(
        &self,
        session: Session,
        timestamp: DateTime<FixedOffset>,
        input: Option<String>,
    ) -> Inputs {
        let mut options = self.options.clone();
        options.timestamp = timestamp;
        options.input = input;
        Inputs {
            preset: self.preset.clone(),
            session,
            options,
            notes: Vec::new(),
        }
    }
}

/// The model's profile, made to count with `tokenizer` (`--tokenizer`): a shipped vocabulary's
/// name, else a tokenizer.json file, read now so that a bad one is an error naming it.
fn profile_counting_with(model: &str, tokenizer: &str) -> Result<ModelProfile, CliError> {
    let mut profile = profile_for_model(model, &[]);
    profile.patterns = vec![model.to_string()];
    profile.tokenizer_exact = true;
    if let Some(kind) = TokenizerKind::ALL
        .into_iter()
        .find(|k| k.as_str() == tokenizer)
    {
        profile.tokenizer = Some(kind);
        return Ok(profile);
    }
    let file = Path::new(tokenizer);
    if !file.exists() {
        let names = TokenizerKind::ALL.map(|k| k.as_str()).join(", ");
        return Err(CliError::bad_input(
            file,
            format!("no such file, and not a tokenizer name ({names})"),
        ));
    }
    own_tokenizer(file)
        .map_err(|TokenizerError::Invalid { problem, .. }| CliError::bad_input(file, problem))?;
    profile.tokenizer_file = Some(file.display().to_string());
    Ok(profile)
}

/// The build of `inputs`, with what the importers could not map among its warnings.
pub fn build_of<'a>(
    args: &BuildArgs,
    inputs: &'a Inputs,
    assets: &'a FileAssets,
    cache: &'a BuildCache,
) -> Result<BuildResult<'a>, CliError> {
    let profiles: Vec<ModelProfile> = match args.tokenizer.as_deref() {
        Some(tokenizer) => vec![profile_counting_with(&args.model, tokenizer)?],
        None => Vec::new(),
    };
    let request = BuildRequest {
        preset: &inputs.preset,
        session: &inputs.session,
        kept_rewrites: None,
        model: &args.model,
        options: &inputs.options,
        cache,
        profiles: &profiles,
        assets,
    };
    // Every build error (no recipe for the model, a step naming an unknown template) is about
    // the preset.
    let mut result = build(&request).map_err(|e| CliError::engine(&args.preset, &e))?;
    for (path, text) in &inputs.notes {
        let message = format!("{}: {text}", path.display());
        result.warnings.push(LogEntry {
            processor: "import".into(),
            level: LogLevel::Warning,
            // Only the app says codes in another language; these notes stay here.
            said: Said::plain(&message),
            message,
        });
    }
    Ok(result)
}

/// The build's warnings on standard error, where a body on standard output leaves them.
pub fn warn(result: &BuildResult<'_>) {
    for w in &result.warnings {
        eprintln!(
            "promptloom: warning: [{}] {}",
            w.processor,
            crate::terminal::escape(&w.message)
        );
    }
}

/// `--instruct NAME|FILE`: a built-in template by its id, else a template file: Promptloom's own
/// JSON, or a SillyTavern instruct template or master export (what its importer could not map
/// comes back as notes).
fn instruct_template(name: &str) -> Result<load::Loaded<InstructTemplate>, CliError> {
    if let Some(template) = promptloom_engine::instruct::built_in(name) {
        return Ok(load::Loaded {
            value: template,
            notes: Vec::new(),
        });
    }
    let path = Path::new(name);
    if !path.exists() {
        let ids: Vec<&str> = promptloom_engine::instruct::built_in_ids().collect();
        return Err(CliError::BadInput {
            file: "--instruct".into(),
            problem: format!(
                "\"{name}\" is neither a built-in template ({}) nor a file",
                ids.join(", ")
            ),
        });
    }
    let reported = promptloom_import::instruct_template_file(path)
        .map_err(|e| CliError::bad_input(path, e.problem))?;
    Ok(load::Loaded {
        value: reported.value,
        notes: reported
            .report
            .items
            .iter()
            .map(ToString::to_string)
            .collect(),
    })
}
