//! Reading the providers' replies: stream events and whole JSON replies become
//! [`StreamEvent`]s, and error bodies become one line of the provider's own text.
//!
//! What is read, per dialect (after each provider's public API reference):
//!
//! - OpenAI Chat Completions: `choices[0].delta.content` (a whole reply:
//!   `choices[0].message.content`), `choices[0].finish_reason`, `usage.prompt_tokens` and
//!   `usage.completion_tokens` (in a stream, the last chunk when the body asked for
//!   `stream_options.include_usage`), and `data: [DONE]` at the end. OpenAI Completions (text
//!   completion) is the same with `choices[0].text` for the text.
//! - llama.cpp's `/completion`: `content` (in a stream, each event's piece), `stop: true` on the
//!   last with `stop_type` (`eos`, `limit`, `word`; older servers say `stopped_eos`,
//!   `stopped_limit`, `stopped_word`), `tokens_evaluated` and `tokens_predicted`. Its stream has
//!   no end marker.
//! - KoboldCpp: a whole reply is `results[0].text` (with `finish_reason`, and `prompt_tokens`
//!   and `completion_tokens` where the server reports them); a stream's `message` events carry
//!   `token` and, on the last, `finish_reason`.
//! - Anthropic Messages: `message_start` (`message.usage.input_tokens`), `content_block_delta`
//!   with a `text_delta`, `message_delta` (`delta.stop_reason`, `usage.output_tokens`),
//!   `message_stop` at the end, and `error` events; a whole reply has `content[]` text blocks,
//!   `stop_reason` and `usage`.
//! - Gemini: `candidates[0].content.parts[].text` (parts marked `thought` are left out),
//!   `candidates[0].finishReason`, `usageMetadata.promptTokenCount` and
//!   `usageMetadata.candidatesTokenCount`, and `promptFeedback.blockReason` for a refused prompt.
//!   A Gemini stream has no end marker: it ends when the connection does.
//!
//! Anything else in an event (tool calls, reasoning text, pings) is skipped.

use serde::Serialize;
use serde_json::Value;

use crate::dialect::Dialect;
use crate::error::SendError;
use crate::sse::SseEvent;
use crate::text::{escape_control, shown_prefix, ERROR_BODY_SHOWN};

/// Token counts as the provider reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

impl Usage {
    /// Takes every count `other` has; keeps the ones it lacks.
    pub fn merge(&mut self, other: Usage) {
        self.prompt_tokens = other.prompt_tokens.or(self.prompt_tokens);
        self.completion_tokens = other.completion_tokens.or(self.completion_tokens);
    }
}

/// One thing learned from the reply, in the order it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More reply text.
    Delta(String),
    /// Token counts (a count the event does not carry is `None`).
    Usage {
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
    },
    /// Why the model stopped, in the provider's words (`stop`, `end_turn`, `STOP`, `length`...).
    Finish(String),
    /// The provider reported an error in the middle of the reply.
    Error(String),
    /// The provider's end-of-stream marker (`[DONE]`, `message_stop`).
    Done,
}

/// Turns one dialect's stream events into [`StreamEvent`]s.
#[derive(Debug, Clone)]
pub struct Decoder {
    dialect: Dialect,
}

impl Decoder {
    pub fn new(dialect: Dialect) -> Self {
        Decoder { dialect }
    }

    /// The events one server-sent event carries. An event whose data is not JSON is a
    /// [`SendError::BadReply`] that shows the start of it.
    pub fn event(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, SendError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" && !matches!(self.dialect, Dialect::Gemini) {
            return Ok(vec![StreamEvent::Done]);
        }
        let value: Value = crate::pruned::from_str(data).map_err(|e| {
            SendError::bad_reply(format!(
                "an event is not JSON ({e}): {}",
                shown_prefix(data.as_bytes(), ERROR_BODY_SHOWN)
            ))
        })?;
        let mut out = Vec::new();
        match self.dialect {
            Dialect::Openai | Dialect::OpenaiCompatible => openai_chunk(&value, &mut out),
            Dialect::Anthropic => anthropic_event(event.event.as_deref(), &value, &mut out),
            Dialect::Gemini => gemini_chunk(&value, &mut out),
            Dialect::Llamacpp => llamacpp_chunk(&value, &mut out),
            Dialect::Koboldcpp => kobold_event(&value, &mut out),
        }
        Ok(out)
    }
}

/// The events of a reply that was not streamed: its text as one `Delta`, then `Finish` and
/// `Usage` when the reply has them. A body that is not JSON, or JSON of none of the shapes, is a
/// [`SendError::BadReply`]; an `error` object in it is a [`SendError::Provider`].
pub fn decode_full(dialect: Dialect, body: &[u8]) -> Result<Vec<StreamEvent>, SendError> {
    let value: Value = crate::pruned::from_slice(body).map_err(|e| {
        SendError::bad_reply(format!(
            "the reply is not JSON ({e}): {}",
            shown_prefix(body, ERROR_BODY_SHOWN)
        ))
    })?;
    if let Some(message) = error_message(&value) {
        return Err(SendError::Provider { message });
    }
    let mut out = Vec::new();
    let text = match dialect {
        Dialect::Openai | Dialect::OpenaiCompatible => {
            let choice = value.pointer("/choices/0");
            if let Some(reason) = choice.and_then(|c| str_at(c, "/finish_reason")) {
                out.push(StreamEvent::Finish(reason.to_string()));
            }
            push_usage(
                &mut out,
                &value,
                "/usage/prompt_tokens",
                "/usage/completion_tokens",
            );
            choice.map(|c| {
                str_at(c, "/message/content")
                    .or_else(|| str_at(c, "/text"))
                    .unwrap_or_default()
                    .to_string()
            })
        }
        Dialect::Llamacpp => {
            let mut events = Vec::new();
            llamacpp_chunk(&value, &mut events);
            value.get("content").and_then(Value::as_str).map(|_| {
                let mut text = String::new();
                for e in events {
                    match e {
                        StreamEvent::Delta(t) => text.push_str(&t),
                        other => out.push(other),
                    }
                }
                text
            })
        }
        Dialect::Koboldcpp => value.pointer("/results/0").map(|r| {
            if let Some(reason) = str_at(r, "/finish_reason") {
                out.push(StreamEvent::Finish(reason.to_string()));
            }
            push_usage(&mut out, r, "/prompt_tokens", "/completion_tokens");
            str_at(r, "/text").unwrap_or_default().to_string()
        }),
        Dialect::Anthropic => {
            if let Some(reason) = str_at(&value, "/stop_reason") {
                out.push(StreamEvent::Finish(reason.to_string()));
            }
            push_usage(
                &mut out,
                &value,
                "/usage/input_tokens",
                "/usage/output_tokens",
            );
            value
                .get("content")
                .and_then(Value::as_array)
                .map(|blocks| {
                    blocks
                        .iter()
                        .filter(|b| str_at(b, "/type") == Some("text"))
                        .filter_map(|b| str_at(b, "/text"))
                        .collect()
                })
        }
        Dialect::Gemini => {
            let mut events = Vec::new();
            gemini_chunk(&value, &mut events);
            let has_shape = value.get("candidates").is_some()
                || value.get("promptFeedback").is_some()
                || value.get("usageMetadata").is_some();
            let mut text = String::new();
            for e in events {
                match e {
                    StreamEvent::Delta(t) => text.push_str(&t),
                    other => out.push(other),
                }
            }
            has_shape.then_some(text)
        }
    };
    let Some(text) = text else {
        return Err(SendError::bad_reply(format!(
            "the reply is JSON but not a {dialect} reply: {}",
            shown_prefix(body, ERROR_BODY_SHOWN)
        )));
    };
    out.insert(0, StreamEvent::Delta(text));
    Ok(out)
}

/// The provider's own error text from an error body: `error.message` (OpenAI, Anthropic,
/// Gemini), `error` as a string or a top-level `message` (some local servers); otherwise the
/// first 500 bytes of the body. Escaped, one line.
pub fn provider_error_text(body: &[u8]) -> String {
    if let Ok(value) = crate::pruned::from_slice(body) {
        if let Some(message) = error_message(&value) {
            return message;
        }
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return "(the reply had no body)".to_string();
    }
    shown_prefix(body, ERROR_BODY_SHOWN)
}

/// An error object's message, when `value` is one; capped and escaped.
fn error_message(value: &Value) -> Option<String> {
    // Gemini's stream sends errors as a list with one object.
    let value = match value {
        Value::Array(items) if items.len() == 1 => &items[0],
        v => v,
    };
    let text = match value.get("error") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(e @ Value::Object(_)) => str_at(e, "/message").or_else(|| str_at(e, "/type")),
        _ => None,
    }
    .or_else(|| {
        (value.get("type").and_then(Value::as_str) == Some("error"))
            .then(|| str_at(value, "/message"))
            .flatten()
    })?;
    Some(shown_prefix(text.as_bytes(), 2000))
}

fn str_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

fn push_usage(out: &mut Vec<StreamEvent>, value: &Value, prompt: &str, completion: &str) {
    let prompt_tokens = value.pointer(prompt).and_then(Value::as_u64);
    let completion_tokens = value.pointer(completion).and_then(Value::as_u64);
    if prompt_tokens.is_some() || completion_tokens.is_some() {
        out.push(StreamEvent::Usage {
            prompt_tokens,
            completion_tokens,
        });
    }
}

fn push_text(out: &mut Vec<StreamEvent>, text: Option<&str>) {
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        out.push(StreamEvent::Delta(t.to_string()));
    }
}

fn openai_chunk(value: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(message) = error_message(value) {
        out.push(StreamEvent::Error(message));
        return;
    }
    if let Some(choice) = value.pointer("/choices/0") {
        push_text(
            out,
            str_at(choice, "/delta/content").or_else(|| str_at(choice, "/text")),
        );
        if let Some(reason) = str_at(choice, "/finish_reason") {
            out.push(StreamEvent::Finish(reason.to_string()));
        }
    }
    push_usage(
        out,
        value,
        "/usage/prompt_tokens",
        "/usage/completion_tokens",
    );
}

fn anthropic_event(name: Option<&str>, value: &Value, out: &mut Vec<StreamEvent>) {
    let kind = str_at(value, "/type").or(name).unwrap_or_default();
    match kind {
        // Its output count is a placeholder; the real one comes with `message_delta`.
        "message_start" => {
            if let Some(input) = value
                .pointer("/message/usage/input_tokens")
                .and_then(Value::as_u64)
            {
                out.push(StreamEvent::Usage {
                    prompt_tokens: Some(input),
                    completion_tokens: None,
                });
            }
        }
        "content_block_start" if str_at(value, "/content_block/type") == Some("text") => {
            push_text(out, str_at(value, "/content_block/text"));
        }
        "content_block_delta" if str_at(value, "/delta/type") == Some("text_delta") => {
            push_text(out, str_at(value, "/delta/text"));
        }
        "message_delta" => {
            if let Some(reason) = str_at(value, "/delta/stop_reason") {
                out.push(StreamEvent::Finish(reason.to_string()));
            }
            push_usage(out, value, "/usage/input_tokens", "/usage/output_tokens");
        }
        "message_stop" => out.push(StreamEvent::Done),
        "error" => out.push(StreamEvent::Error(
            error_message(value).unwrap_or_else(|| "an error without a message".to_string()),
        )),
        _ => {}
    }
}

fn gemini_chunk(value: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(message) = error_message(value) {
        out.push(StreamEvent::Error(message));
        return;
    }
    if let Some(candidate) = value.pointer("/candidates/0") {
        if let Some(parts) = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
        {
            for part in parts {
                if part.get("thought").and_then(Value::as_bool) != Some(true) {
                    push_text(out, str_at(part, "/text"));
                }
            }
        }
        if let Some(reason) = str_at(candidate, "/finishReason") {
            out.push(StreamEvent::Finish(reason.to_string()));
        }
    } else if let Some(reason) = str_at(value, "/promptFeedback/blockReason") {
        out.push(StreamEvent::Finish(format!(
            "prompt blocked: {}",
            escape_control(reason)
        )));
    }
    push_usage(
        out,
        value,
        "/usageMetadata/promptTokenCount",
        "/usageMetadata/candidatesTokenCount",
    );
}

fn llamacpp_chunk(value: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(message) = error_message(value) {
        out.push(StreamEvent::Error(message));
        return;
    }
    push_text(out, str_at(value, "/content"));
    if value.get("stop").and_then(Value::as_bool) == Some(true) {
        let flag = |name: &str| value.get(name).and_then(Value::as_bool) == Some(true);
        let reason = str_at(value, "/stop_type")
            .filter(|t| !t.is_empty() && *t != "none")
            .or(if flag("stopped_eos") {
                Some("eos")
            } else if flag("stopped_limit") {
                Some("limit")
            } else if flag("stopped_word") {
                Some("word")
            } else {
                None
            });
        if let Some(reason) = reason {
            out.push(StreamEvent::Finish(reason.to_string()));
        }
        push_usage(out, value, "/tokens_evaluated", "/tokens_predicted");
    }
}

fn kobold_event(value: &Value, out: &mut Vec<StreamEvent>) {
    if let Some(message) = error_message(value) {
        out.push(StreamEvent::Error(message));
        return;
    }
    push_text(out, str_at(value, "/token"));
    if let Some(reason) = str_at(value, "/finish_reason").filter(|r| !r.is_empty()) {
        out.push(StreamEvent::Finish(reason.to_string()));
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
