//! What changed between two builds (RULES 9.8): this turn against the previous one, a preview
//! against the one before an edit, or two sessions or models. The messages lined up row by row
//! with each row's token difference and, inside a changed message, the changed words; the
//! stable prefix the two requests share (what a provider's prompt cache can reuse), and the first
//! difference with its cause by name.
//!
//! The module's files: `align.rs` lines the messages up, `cause.rs` names why the first
//! difference differs, `turn.rs` makes the previous turn of a session.

mod align;
mod cause;
mod turn;

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

pub use align::{source_key, LCS_CELLS};
pub use cause::Cause;
pub use turn::{previous_turn, PreviousTurn};

use crate::assets::AssetSource;
use crate::cache::BuildCache;
use crate::model::{Role, Session};
use crate::pipeline::{BuildResult, Source};
use crate::profiles::CompletionFormat;
use crate::providers::{completion_body, request_body_with, BodyOptions};
use crate::EngineError;

/// A changed message longer than this (on either side) is marked by its common head and tail
/// only, not word by word.
pub const WORD_DIFF_BYTES: usize = 256 << 10;
/// How long the word diff of one message may take; past it, what it has is coarser.
pub const WORD_DIFF_TIME: Duration = Duration::from_millis(50);

/// How a row differs: `left` and `right` are the messages only one side has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum RowKind {
    Same,
    Changed,
    Left,
    Right,
}

/// What a piece of a changed message's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ChangeOp {
    Equal,
    Delete,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TextChange {
    pub op: ChangeOp,
    pub text: String,
}

/// One row of the diff: a message of one build or both, by its index in each.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct DiffRow {
    pub kind: RowKind,
    pub left: Option<u32>,
    pub right: Option<u32>,
    /// The right message's role and source, else the left's.
    pub role: Role,
    pub source: Source,
    pub left_tokens: u32,
    pub right_tokens: u32,
    /// `right_tokens - left_tokens`.
    pub token_delta: i64,
    /// A changed message's text, piece by piece (words kept, deleted, inserted); empty for the
    /// other rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<TextChange>,
    /// The text of a message only one side has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What the two requests share from their start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StablePrefix {
    /// The right build's tokens up to the first difference, as it counts its messages.
    pub tokens: u32,
    /// The bytes the two request bodies' prompts share (RULES 9.8).
    pub bytes: u32,
}

/// Where the two requests part, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct FirstDifference {
    /// The row it falls in (an index into `messages`); absent when every message is the same
    /// and the bodies differ elsewhere.
    pub row: Option<u32>,
    /// The right build's message it falls in (for a message only the left build has: the one
    /// that took its place, or the count of messages when none did).
    pub message_index: Option<u32>,
    /// The byte of that message's text where the two part.
    pub offset: u32,
    pub source: Option<Source>,
    /// `macro:<name>`, `lorebook:<entry id>`, `depth-injection:<template id>`, `limiter`,
    /// `history`, `template` or `other`.
    pub cause: String,
}

/// A cache breakpoint of the right build, and whether what it caches is the same in the left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BreakpointCheck {
    pub message_index: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Whether every message up to and including `message_index` is the same in both builds.
    pub stable: bool,
}

/// Two builds compared (RULES 9.8).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct BuildDiff {
    pub stable_prefix: StablePrefix,
    pub first_difference: Option<FirstDifference>,
    pub messages: Vec<DiffRow>,
    pub left_tokens: u32,
    pub right_tokens: u32,
    /// The right build's cache breakpoints (RULES 5.13) and whether each one's prefix is stable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakpoints: Vec<BreakpointCheck>,
}

/// One build to compare: its result, and the session it was built from and where its
/// attachments are read (for the request body).
#[derive(Clone, Copy)]
pub struct Side<'r, 's> {
    pub result: &'r BuildResult<'s>,
    pub session: &'r Session,
    pub assets: &'r dyn AssetSource,
}

/// Compares `left` (the earlier, or the one compared against) with `right`.
pub fn diff(
    left: Side<'_, '_>,
    right: Side<'_, '_>,
    cache: &BuildCache,
) -> Result<BuildDiff, EngineError> {
    let (lm, rm) = (&left.result.messages, &right.result.messages);
    let pairs = align::align(lm, rm);
    let first = pairs.iter().position(|p| p.kind != RowKind::Same);

    let mut messages = Vec::with_capacity(pairs.len());
    for p in &pairs {
        let l = p.left.map(|i| &lm[i]);
        let r = p.right.map(|j| &rm[j]);
        let shown = r.or(l).expect("a row has a message");
        let (lt, rt) = (l.map_or(0, |m| m.tokens), r.map_or(0, |m| m.tokens));
        messages.push(DiffRow {
            kind: p.kind,
            left: p.left.map(|i| i as u32),
            right: p.right.map(|j| j as u32),
            role: shown.role,
            source: shown.source().into_owned(),
            left_tokens: lt,
            right_tokens: rt,
            token_delta: i64::from(rt) - i64::from(lt),
            changes: match (p.kind, l, r) {
                (RowKind::Changed, Some(l), Some(r)) => text_changes(l.content(), r.content()),
                _ => Vec::new(),
            },
            text: matches!(p.kind, RowKind::Left | RowKind::Right)
                .then(|| shown.content().to_string()),
        });
    }

    // The prompts' shared bytes, compared as the provider reads them.
    let lb = prompt_bytes(&cache_body(left)?);
    let rb = prompt_bytes(&cache_body(right)?);
    let bytes = common_prefix(&lb, &rb) as u32;

    let mut tokens: u32 = pairs[..first.unwrap_or(pairs.len())]
        .iter()
        .filter_map(|p| p.right.map(|j| rm[j].tokens))
        .sum();
    let first_difference = match first {
        Some(row) => {
            let p = pairs[row];
            let offset = match (p.kind, p.left, p.right) {
                (RowKind::Changed, Some(i), Some(j)) => {
                    let (a, b) = (lm[i].content(), rm[j].content());
                    let at = char_floor(b, common_prefix(a.as_bytes(), b.as_bytes()));
                    tokens += cache.count(right.result.tokenizer.vocabulary, &b[..at]);
                    at
                }
                _ => 0,
            };
            let message_index = p
                .right
                .or_else(|| pairs[row..].iter().find_map(|q| q.right).or(Some(rm.len())));
            Some(FirstDifference {
                row: Some(row as u32),
                message_index: message_index.map(|j| j as u32),
                offset: offset as u32,
                source: Some(messages[row].source.clone()),
                cause: cause::cause(p, left.result, right.result).to_string(),
            })
        }
        None if lb != rb => Some(FirstDifference {
            row: None,
            message_index: None,
            offset: 0,
            source: None,
            cause: Cause::Other.to_string(),
        }),
        None => None,
    };

    // A breakpoint is stable when no row up to its message differs.
    let first_unstable = first.and_then(|row| pairs[row..].iter().find_map(|q| q.right));
    let breakpoints = right
        .result
        .cache_breakpoints
        .iter()
        .map(|b| BreakpointCheck {
            message_index: b.message_index,
            depth: b.depth,
            stable: match (first, first_unstable) {
                (None, _) => true,
                (Some(_), Some(j)) => (b.message_index as usize) < j,
                (Some(_), None) => true,
            },
        })
        .collect();

    Ok(BuildDiff {
        stable_prefix: StablePrefix { tokens, bytes },
        first_difference,
        messages,
        left_tokens: left.result.tokens.total,
        right_tokens: right.result.tokens.total,
        breakpoints,
    })
}

/// The body a build's own model gets, without cache breakpoints (they move from turn to turn
/// and cache nothing themselves): its provider format's, or the text-completion prompt's.
pub fn cache_body(side: Side<'_, '_>) -> Result<Value, EngineError> {
    let result = side.result;
    let options = BodyOptions {
        cache_breakpoints: false,
        ..BodyOptions::new(&result.model, false)
    };
    if result.prompt.is_some() {
        return completion_body(CompletionFormat::OpenaiCompletions, result, &options);
    }
    request_body_with(
        result.provider_format(),
        result,
        side.session,
        side.assets,
        &options,
    )
}

/// The prompt of a request body as the provider reads it, from its start: a text-completion
/// prompt string as it is; else the tools, the system part and each message (OpenAI and
/// Anthropic `messages`, Gemini `contents`), each as its JSON. The model and the sampling
/// settings are not part of it.
pub fn prompt_bytes(body: &Value) -> Vec<u8> {
    if let Some(Value::String(prompt)) = body.get("prompt") {
        return prompt.as_bytes().to_vec();
    }
    let mut out = Vec::new();
    for key in ["tools", "system", "systemInstruction", "system_instruction"] {
        if let Some(v) = body.get(key) {
            // Writing a `Value` to a Vec cannot fail.
            let _ = serde_json::to_writer(&mut out, v);
        }
    }
    for key in ["messages", "contents"] {
        if let Some(Value::Array(items)) = body.get(key) {
            for item in items {
                let _ = serde_json::to_writer(&mut out, item);
            }
        }
    }
    out
}

/// How many bytes `a` and `b` share from their start.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 16;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn char_floor(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `old` against `new`, word by word (a CJK character is a word), in pieces of one kind each.
/// Past [`WORD_DIFF_BYTES`] or [`WORD_DIFF_TIME`], coarser: the common head and tail, and the
/// middle deleted and inserted.
pub fn text_changes(old: &str, new: &str) -> Vec<TextChange> {
    let mut out: Vec<TextChange> = Vec::new();
    let mut push = |op: ChangeOp, text: &str| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some(last) if last.op == op => last.text.push_str(text),
            _ => out.push(TextChange {
                op,
                text: text.to_string(),
            }),
        }
    };
    if old.len() > WORD_DIFF_BYTES || new.len() > WORD_DIFF_BYTES {
        let head = char_floor(new, common_prefix(old.as_bytes(), new.as_bytes()));
        let (old_rest, new_rest) = (&old[head..], &new[head..]);
        let mut tail = 0;
        let (ob, nb) = (old_rest.as_bytes(), new_rest.as_bytes());
        while tail < ob.len().min(nb.len()) && ob[ob.len() - 1 - tail] == nb[nb.len() - 1 - tail] {
            tail += 1;
        }
        while !new_rest.is_char_boundary(new_rest.len() - tail)
            || !old_rest.is_char_boundary(old_rest.len() - tail)
        {
            tail -= 1;
        }
        push(ChangeOp::Equal, &new[..head]);
        push(ChangeOp::Delete, &old_rest[..old_rest.len() - tail]);
        push(ChangeOp::Insert, &new_rest[..new_rest.len() - tail]);
        push(ChangeOp::Equal, &new_rest[new_rest.len() - tail..]);
        return out;
    }
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .deadline(Instant::now() + WORD_DIFF_TIME)
        .diff_unicode_words(old, new);
    for change in diff.iter_all_changes() {
        let op = match change.tag() {
            similar::ChangeTag::Equal => ChangeOp::Equal,
            similar::ChangeTag::Delete => ChangeOp::Delete,
            similar::ChangeTag::Insert => ChangeOp::Insert,
        };
        push(op, change.value());
    }
    out
}
