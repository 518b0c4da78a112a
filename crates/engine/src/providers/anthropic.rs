//! Anthropic Messages: `{ model, max_tokens, system, messages }`, with `stream` when streaming and
//! the generation settings `temperature`, `top_p`, `top_k` and `stop_sequences`. `max_tokens` is
//! required by the API: it is the `maxOutputTokens` setting, else the model profile's reply
//! reserve. The API has no penalties and no seed. The leading system messages
//! become the one top-level `system` text; turns are `user` or `assistant` with string content,
//! or an array of `text`, `image` and `document` blocks whose `source` is base64 with its
//! `media_type`. A system message after the first turn (the formatters were switched off) is sent
//! as a user turn, since the API has no other place for it.
//!
//! A last assistant turn, where the reply starts (RULES 5.14), goes without the white space at
//! its end, which the API refuses.
//!
//! Prompt-cache breakpoints (RULES 5.13), with `BodyOptions::cache_breakpoints`: the system text
//! becomes one `text` block, and a marked turn's text one `text` block, the last block of each
//! carrying `cache_control: {"type": "ephemeral"}`.
//!
//! The API's sources: an `image` takes base64 JPEG, PNG, GIF or WebP; a `document` takes a base64
//! PDF (`application/pdf` only) or plain text as a `text` source (`media_type: text/plain` and
//! the text itself), which is how a text attachment goes. Audio and video have no block. Images
//! and documents go in user turns only: one on an assistant turn or a leading system message
//! is left out with a note in the text (the asset resolver has made it one already when the
//! build was for this format).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::{load, media_type, reply_limit, sendable, split_system, to_json, BodyOptions};
use crate::assets::AssetSource;
use crate::model::{AttachmentKind, Role, Session};
use crate::pipeline::BuildResult;
use crate::profiles::ProviderFormat;
use crate::EngineError;

const FORMAT: ProviderFormat = ProviderFormat::AnthropicMessages;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Content<'a>>,
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
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Document {
        source: Source,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// A prompt-cache breakpoint on a block: `{"type": "ephemeral"}` (RULES 5.13).
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

impl Content<'_> {
    /// Marks the end of this content as a cache breakpoint: a text becomes one text block.
    fn mark(&mut self) {
        if let Content::Text(text) = self {
            *self = Content::Blocks(vec![Block::Text {
                text: std::mem::take(text),
                cache_control: None,
            }]);
        }
        if let Content::Blocks(blocks) = self {
            if let Some(
                Block::Text { cache_control, .. }
                | Block::Image { cache_control, .. }
                | Block::Document { cache_control, .. },
            ) = blocks.last_mut()
            {
                *cache_control = Some(EPHEMERAL);
            }
        }
    }
}

/// A `base64` source (`data` is base64), or a `text` source (`data` is the text).
#[derive(Serialize)]
struct Source {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: String,
    data: String,
}

pub(super) fn body(
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
    options: &BodyOptions<'_>,
) -> Result<Value, EngineError> {
    let (system, turns) = split_system(FORMAT, result, session);
    let mut messages = Vec::with_capacity(turns.len());
    for m in turns {
        let role = match m.role {
            Role::Assistant => "assistant",
            _ => "user",
        };
        let (loaded, notes) = sendable(FORMAT, m.role, load(m, session, assets)?);
        let text: Cow<'_, str> = if notes.is_empty() {
            Cow::Borrowed(m.content())
        } else {
            Cow::Owned(format!("{}{notes}", m.content()))
        };
        let content = if loaded.is_empty() {
            Content::Text(text)
        } else {
            let mut blocks = Vec::with_capacity(loaded.len() + 1);
            for l in loaded {
                let media = media_type(FORMAT, &l.attachment.mime);
                blocks.push(match l.attachment.kind {
                    AttachmentKind::Image => Block::Image {
                        source: Source {
                            kind: "base64",
                            data: l.base64(),
                            media_type: media,
                        },
                        cache_control: None,
                    },
                    // Plain text goes as a text source: the base64 source is for PDFs only.
                    _ if media.starts_with("text/") => Block::Document {
                        source: Source {
                            kind: "text",
                            media_type: "text/plain".into(),
                            data: String::from_utf8_lossy(&l.bytes).into_owned(),
                        },
                        cache_control: None,
                    },
                    _ => Block::Document {
                        source: Source {
                            kind: "base64",
                            data: l.base64(),
                            media_type: media,
                        },
                        cache_control: None,
                    },
                });
            }
            // Anthropic suggests the media first, then the question about it.
            if !text.is_empty() {
                blocks.push(Block::Text {
                    text,
                    cache_control: None,
                });
            }
            Content::Blocks(blocks)
        };
        messages.push(Message { role, content });
    }
    // A last assistant turn is where the reply starts (a prefill, or a reply being continued,
    // RULES 5.14); the API refuses one that ends in white space.
    if let Some(Message {
        role: "assistant",
        content: Content::Text(text),
    }) = messages.last_mut()
    {
        if text.ends_with(char::is_whitespace) {
            *text = Cow::Owned(text.trim_end().to_string());
        }
    }
    let mut system = system.map(|s| Content::Text(Cow::Owned(s)));
    // The build's marks, placed for this body whatever format the build was made for (a
    // connection of another dialect sends it too).
    let marks = match (
        &result.generation.settings.cache_breakpoints,
        options.cache_breakpoints,
    ) {
        (Some(asked), true) if result.prompt.is_none() => {
            crate::pipeline::place_breakpoints(asked, &result.messages)
        }
        _ => Vec::new(),
    };
    if !marks.is_empty() {
        let leading = result.messages.len() - turns.len();
        for mark in &marks {
            match (mark.message_index as usize).checked_sub(leading) {
                Some(turn) => messages.get_mut(turn).map(|m| m.content.mark()),
                None => system.as_mut().map(Content::mark),
            };
        }
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
