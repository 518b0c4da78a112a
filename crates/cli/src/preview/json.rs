//! `--format json`: the one object of RULES 8.2, a thin view of the engine's `BuildResult`.

use promptloom_engine::pipeline::{BuiltMessage, DroppedItem, LogEntry, TokenSummary};
use promptloom_engine::BuildResult;
use serde::Serialize;

/// Exactly the seven keys of RULES 8.2. Messages and token figures keep the engine's own shape
/// (messages may carry `name` and `truncated`; `tokens` adds the tokenizer, window, reserve and
/// the totals by source).
#[derive(Serialize)]
struct PreviewJson<'a> {
    recipe: Option<&'a str>,
    model: &'a str,
    messages: &'a [BuiltMessage<'a>],
    tokens: &'a TokenSummary,
    dropped: &'a [DroppedItem],
    warnings: &'a [LogEntry],
    logs: &'a [LogEntry],
}

pub fn render(result: &BuildResult<'_>) -> String {
    let view = PreviewJson {
        recipe: result.recipe.as_deref(),
        model: &result.model,
        messages: &result.messages,
        tokens: &result.tokens,
        dropped: &result.dropped,
        warnings: &result.warnings,
        logs: &result.logs,
    };
    // Serialising plain data with string keys does not fail; should it ever, say so in JSON.
    let mut text = serde_json::to_string_pretty(&view)
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string());
    text.push('\n');
    text
}
