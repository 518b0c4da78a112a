//! Anthropic Messages: `{ model, max_tokens, system, messages }`, with `stream` when streaming and
//! the generation settings `temperature`, `top_p`, `top_k` and `stop_sequences`. `max_tokens` is
//! required by the API: it is the `maxOutputTokens` setting, else the model profile's reply
//! reserve. The API has no penalties and no seed. The leading system messages
//! become the one top-level `system` text; turns are `user` or `assistant` with string content,
//! or an array of `text`, `image` and `document` blocks whose `source` is base64 with its
//! `media_type`. A system message after the first turn (the formatters were switched off) is sent
//! as a user turn, since the API has no other place for it.

use serde::Serialize;
use serde_json::Value;

use super::{load, reply_limit, split_system, to_json, BodyOptions};
use crate::assets::AssetSource;
use crate::model::{AttachmentKind, Role, Session};
use crate::pipeline::BuildResult;
use crate::EngineError;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text { text: &'a str },
    Image { source: Source<'a> },
    Document { source: Source<'a> },
}

#[derive(Serialize)]
struct Source<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: String,
}

pub(super) fn body(
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
    options: &BodyOptions<'_>,
) -> Result<Value, EngineError> {
    let (system, turns) = split_system(result);
    let mut messages = Vec::with_capacity(turns.len());
    for m in turns {
        let role = match m.role {
            Role::Assistant => "assistant",
            _ => "user",
        };
        let loaded = load(m, session, assets)?;
        let content = if loaded.is_empty() {
            Content::Text(m.content())
        } else {
            let mut blocks = Vec::with_capacity(loaded.len() + 1);
            for l in loaded {
                let source = Source {
                    kind: "base64",
                    media_type: &l.attachment.mime,
                    data: l.base64,
                };
                blocks.push(match l.attachment.kind {
                    AttachmentKind::Image => Block::Image { source },
                    _ => Block::Document { source },
                });
            }
            // Anthropic suggests the media first, then the question about it.
            if !m.content().is_empty() {
                blocks.push(Block::Text { text: m.content() });
            }
            Content::Blocks(blocks)
        };
        messages.push(Message { role, content });
    }
    let g = &result.generation.settings;
    let body = Body {
        model: options.model,
        max_tokens: reply_limit(result),
        system,
        messages,
        stream: options.stream,
        temperature: g.temperature,
        top_p: g.top_p,
        top_k: g.top_k,
        stop_sequences: &g.stop,
    };
    to_json(body)
}
