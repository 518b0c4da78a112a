//! `promptloom lorebook test`: every entry of the lorebook, fired or not, and why (RULES 6.6,
//! 8.7), for a pasted text, a session, or a session and the message about to be sent. The text
//! is the build's pending input over an empty chat; the build is the preview's, so the history
//! processors, the scan depth and the budget are those the preview applies.

use std::fmt::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::limits::LOREBOOK_TEST_TEXT_BYTES;
use promptloom_engine::lorebook::tester::{EntryVerdict, KeyPlace, PlaceKind, VerdictCode};
use promptloom_engine::model::Session;
use serde::Serialize;

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::inputs::{build_of, inputs, BuildArgs, TypeArg};

#[derive(Debug, Args)]
pub struct LorebookArgs {
    #[command(subcommand)]
    command: LorebookCommand,
}

#[derive(Debug, Subcommand)]
enum LorebookCommand {
    /// Every entry of the lorebook for a text (or a session): fired or not, and why.
    Test(TestArgs),
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The preset whose lorebook is tested (native JSON, a SillyTavern preset, or a card).
    #[arg(long, value_name = "FILE")]
    preset: PathBuf,
    /// A character card (or native preset) laid over the preset, its lorebook too.
    #[arg(long, value_name = "FILE")]
    character: Option<PathBuf>,
    /// The text to test, as the message about to be sent over an empty chat; `-` reads it from
    /// standard input.
    #[arg(
        long,
        value_name = "TEXT",
        conflicts_with = "session",
        required_unless_present = "session"
    )]
    text: Option<String>,
    /// A chat session (native JSON or a SillyTavern chat) whose messages the lorebook reads.
    #[arg(long, value_name = "FILE")]
    session: Option<PathBuf>,
    /// With --session: the message about to be sent, read as the newest message.
    #[arg(long, value_name = "TEXT", requires = "session")]
    input: Option<String>,
    /// The model the build is for: it sets the budget the lorebook gets a share of. Default: the
    /// preset's first recipe's model when it names one exactly, else gpt-4o.
    #[arg(long, value_name = "ID")]
    model: Option<String>,
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    format: TestFormat,
    /// The build's timestamp (RFC 3339), for reproducible output in tests.
    #[arg(long, value_name = "RFC3339", hide = true)]
    now: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TestFormat {
    /// A listing for people.
    Text,
    /// One JSON object: `entries`, `budget`, `warnings`.
    Json,
}

pub fn run(args: &LorebookArgs) -> Result<String, CliError> {
    match &args.command {
        LorebookCommand::Test(test) => run_test(test),
    }
}

/// The tester's answer as `--format json` prints it: each entry with its code and the English.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TestJson<'a> {
    entries: Vec<VerdictJson<'a>>,
    /// The lorebook's share of the context, in tokens.
    budget: u32,
    /// The build's warnings that concern the lorebook (caps reached, keys refused).
    warnings: Vec<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VerdictJson<'a> {
    entry_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    fired: bool,
    reason: VerdictCode,
    why: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    place: Option<&'a KeyPlace>,
    #[serde(skip_serializing_if = "Option::is_none")]
    step: Option<u32>,
    tokens: u32,
}

fn run_test(test: &TestArgs) -> Result<String, CliError> {
    let text = match test.text.as_deref() {
        Some("-") => Some(standard_input()?),
        other => other.map(str::to_string),
    };
    if let Some(text) = &text {
        if text.len() > LOREBOOK_TEST_TEXT_BYTES {
            return Err(CliError::BadInput {
                file: "--text".into(),
                problem: format!(
                    "the text is {} bytes; at most {} MB is tested",
                    text.len(),
                    LOREBOOK_TEST_TEXT_BYTES >> 20
                ),
            });
        }
    }
    let now = match &test.now {
        Some(s) => {
            Some(
                chrono::DateTime::parse_from_rfc3339(s).map_err(|e| CliError::BadInput {
                    file: "--now".into(),
                    problem: format!("not an RFC 3339 timestamp: {e}"),
                })?,
            )
        }
        None => None,
    };
    let mut args = BuildArgs {
        preset: test.preset.clone(),
        session: test.session.clone(),
        character: test.character.clone(),
        model: test.model.clone().unwrap_or_default(),
        input: text.clone().or_else(|| test.input.clone()),
        generation_type: TypeArg::Normal,
        prefill: None,
        ephemeral: None,
        ephemeral_kind: None,
        context_window: None,
        reserve: None,
        instruct: None,
        tokenizer: None,
        now,
    };
    let mut inputs = inputs(&args)?;
    if args.model.is_empty() {
        args.model = default_model(&inputs.preset);
    }
    if test.text.is_some() {
        // The pasted text alone: no greeting, no history.
        inputs.session = Session::empty("lorebook-test");
    }
    inputs.options.explain_lorebook = true;
    let assets = FileAssets::new(args.session.as_deref());
    let cache = BuildCache::new();
    let result = build_of(&args, &inputs, &assets, &cache)?;
    let answer = promptloom_library::lorebook_test::answer_of(&result);
    let verdicts: &[EntryVerdict] = &answer.entries;
    let budget = answer.budget;
    let warnings: Vec<&str> = answer.warnings.iter().map(|w| w.message.as_str()).collect();
    Ok(match test.format {
        TestFormat::Json => {
            let view = TestJson {
                entries: verdicts
                    .iter()
                    .map(|v| VerdictJson {
                        entry_id: &v.entry_id,
                        name: v.name.as_deref(),
                        fired: v.fired,
                        reason: v.reason,
                        why: &v.why,
                        key: v.key.as_deref(),
                        place: v.place.as_ref(),
                        step: v.step,
                        tokens: v.tokens,
                    })
                    .collect(),
                budget,
                warnings,
            };
            let mut text =
                serde_json::to_string_pretty(&view).map_err(|e| CliError::Output(e.to_string()))?;
            text.push('\n');
            text
        }
        TestFormat::Text => {
            crate::terminal::escape(&listing(verdicts, budget, &warnings)).into_owned()
        }
    })
}

/// The text of `--text -`: standard input, read to one byte past the cap (so that a longer text
/// is refused without reading it all).
fn standard_input() -> Result<String, CliError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let cap = LOREBOOK_TEST_TEXT_BYTES as u64 + 1;
    std::io::stdin()
        .lock()
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::BadInput {
            file: "--text -".into(),
            problem: format!("cannot read standard input: {e}"),
        })?;
    if bytes.len() > LOREBOOK_TEST_TEXT_BYTES {
        return Err(CliError::BadInput {
            file: "--text -".into(),
            problem: format!(
                "the text is over {} MB; at most that is tested",
                LOREBOOK_TEST_TEXT_BYTES >> 20
            ),
        });
    }
    String::from_utf8(bytes).map_err(|_| CliError::BadInput {
        file: "--text -".into(),
        problem: "standard input is not UTF-8 text".into(),
    })
}

/// The model a test builds for without `--model`: the first recipe's first model filter when it
/// names one model exactly, else gpt-4o.
fn default_model(preset: &promptloom_engine::model::AgentPreset) -> String {
    preset
        .context_recipes
        .first()
        .and_then(|r| r.model_filter.first())
        .filter(|f| !f.contains(['*', '?', '[']))
        .cloned()
        .unwrap_or_else(|| "gpt-4o".to_string())
}

fn listing(verdicts: &[EntryVerdict], budget: u32, warnings: &[&str]) -> String {
    let mut out = String::new();
    let fired = verdicts.iter().filter(|v| v.fired).count();
    let _ = writeln!(
        out,
        "{fired} of {} entries fired; the lorebook's budget is {budget} tokens\n",
        verdicts.len()
    );
    if verdicts.is_empty() {
        out.push_str("(the preset has no lorebook entries)\n");
    }
    for v in verdicts {
        let mark = if v.fired { "fired" } else { "not fired" };
        let name = v
            .name
            .as_deref()
            .map_or_else(String::new, |n| format!(" ({n})"));
        let _ = writeln!(out, "{}{name}: {mark}, {} tokens", v.entry_id, v.tokens);
        let code = serde_json::to_value(v.reason)
            .ok()
            .and_then(|c| c.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut line = format!("  [{code}] {}", v.why);
        if let Some(place) = &v.place {
            let _ = write!(
                line,
                " (at byte {} of {})",
                place.offset,
                place_words(place)
            );
        }
        if let Some(step) = v.step {
            let _ = write!(line, ", recursion step {step}");
        }
        let _ = writeln!(out, "{line}");
    }
    if !warnings.is_empty() {
        out.push_str("\nWarnings\n");
        for w in warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out
}

fn place_words(place: &KeyPlace) -> String {
    match (place.kind, place.history_index, &place.entry) {
        (PlaceKind::History, Some(i), _) => format!("history #{i}"),
        (PlaceKind::Entry, _, Some(e)) => format!("entry \"{e}\""),
        _ => "the input".to_string(),
    }
}
