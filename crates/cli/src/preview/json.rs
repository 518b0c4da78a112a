//! `--format json`: the one object of RULES 8.2, a thin view of the engine's `BuildResult`.

use promptloom_engine::macros::{TracedMacro, VariableState};
use promptloom_engine::pipeline::{
    BuiltMessage, DropAction, DroppedItem, LogEntry, LogLevel, Source, TokenSummary,
};
use promptloom_engine::BuildResult;
use serde::Serialize;

use crate::count::Exact;

/// Exactly the seven keys of RULES 8.2, `prompt` and `stop` for a text-completion build, and
/// `exactCount` with `--count-exactly`. Messages and token figures keep the engine's own shape
/// (messages may carry `name` and `truncated`; `tokens` adds the tokenizer, window, reserve and
/// the totals by source).
#[derive(Serialize)]
struct PreviewJson<'a> {
    recipe: Option<&'a str>,
    model: &'a str,
    messages: &'a [BuiltMessage<'a>],
    tokens: &'a TokenSummary,
    dropped: Vec<Dropped<'a>>,
    warnings: Vec<Log<'a>>,
    logs: Vec<Log<'a>>,
    /// A text-completion build's prompt string (RULES 5.12); absent for a chat build.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<&'a str>,
    /// Its stop sequences.
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<&'a [String]>,
    /// The provider's count, only when `--count-exactly` asked for it.
    #[serde(rename = "exactCount", skip_serializing_if = "Option::is_none")]
    exact_count: Option<ExactJson<'a>>,
    /// With `--trace macros`: every macro evaluated, in order (RULES 4.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    macros: Option<&'a [TracedMacro]>,
    /// With `--trace macros`: the variables before and after the build, and why the trace
    /// stopped when it reached a cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    variables: Option<VariablesJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VariablesJson<'a> {
    before: &'a VariableState,
    after: &'a VariableState,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_stopped: Option<String>,
}

/// `--count-exactly`'s answer: the provider's count, ours, and the difference.
#[derive(Serialize)]
struct ExactJson<'a> {
    #[serde(flatten)]
    exact: &'a Exact,
    difference: i64,
}

/// A log entry as RULES 8.2 shows it: without the code the app says it in its language by
/// (`said`), since the command line prints the English `message`.
#[derive(Serialize)]
struct Log<'a> {
    processor: &'a str,
    level: LogLevel,
    message: &'a str,
}

impl<'a> From<&'a LogEntry> for Log<'a> {
    fn from(l: &'a LogEntry) -> Self {
        Log {
            processor: &l.processor,
            level: l.level,
            message: &l.message,
        }
    }
}

/// A dropped item as RULES 8.2 shows it: with its English `reason` and without its code.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Dropped<'a> {
    processor: &'a str,
    action: DropAction,
    source: &'a Source,
    count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_history_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<u32>,
    reason: &'a str,
}

impl<'a> From<&'a DroppedItem> for Dropped<'a> {
    fn from(d: &'a DroppedItem) -> Self {
        Dropped {
            processor: &d.processor,
            action: d.action,
            source: &d.source,
            count: d.count,
            last_history_index: d.last_history_index,
            tokens: d.tokens,
            reason: &d.reason,
        }
    }
}

pub fn render(result: &BuildResult<'_>, exact: Option<&Exact>) -> String {
    let view = PreviewJson {
        recipe: result.recipe.as_deref(),
        model: &result.model,
        messages: &result.messages,
        tokens: &result.tokens,
        dropped: result.dropped.iter().map(Dropped::from).collect(),
        warnings: logs(&result.warnings),
        logs: logs(&result.logs),
        prompt: result.prompt.as_ref().map(|p| p.prompt.as_str()),
        stop: result.prompt.as_ref().map(|p| p.stop.as_slice()),
        exact_count: exact.map(|exact| ExactJson {
            exact,
            difference: exact.difference(),
        }),
        macros: result.macro_trace.as_ref().map(|t| t.expansions.as_slice()),
        variables: result.macro_trace.as_ref().map(|t| VariablesJson {
            before: &t.before,
            after: &t.after,
            trace_stopped: t.stopped.as_ref().map(ToString::to_string),
        }),
    };
    // Serialising plain data with string keys does not fail; should it ever, say so in JSON.
    let mut text = serde_json::to_string_pretty(&view)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
    text.push('\n');
    text
}

fn logs(list: &[LogEntry]) -> Vec<Log<'_>> {
    list.iter().map(Log::from).collect()
}
