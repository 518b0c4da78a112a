//! OpenAI Chat Completions: `{ model, messages, max_completion_tokens }`, with `stream` (and
//! `stream_options.include_usage`) when streaming and the generation settings under their own
//! names: `temperature`, `top_p`, `stop`, `frequency_penalty`, `presence_penalty`, `seed`. The
//! reply limit is `max_completion_tokens`: OpenAI deprecated `max_tokens` for it, and its
//! reasoning models (o-series, GPT-5) refuse `max_tokens`. Chat Completions has no top-k.
//!
//! A message's content is a string, or an array of parts when it carries attachments: `text`,
//! `image_url` (a data URI), `input_audio` (base64 with its format, wav or mp3) and `file` (a PDF
//! as a data URI). Only user messages carry the media parts: system and tool messages take text
//! parts, assistant messages text and refusal parts, so an attachment on any other role is left
//! out with a note in the text (the asset resolver has made it one already when the build was
//! for this format).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::{load, reply_limit, sendable, to_json, BodyOptions};
use crate::assets::AssetSource;
use crate::model::{AttachmentKind, Session};
use crate::pipeline::BuildResult;
use crate::profiles::ProviderFormat;
use crate::EngineError;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    max_completion_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

#[derive(Serialize)]
pub(super) struct StreamOptions {
    /// A last chunk with the token usage of the whole request.
    pub(super) include_usage: bool,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
    InputAudio { input_audio: InputAudio },
    File { file: File<'a> },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

#[derive(Serialize)]
struct InputAudio {
    data: String,
    format: &'static str,
}

#[derive(Serialize)]
struct File<'a> {
    filename: &'a str,
    file_data: String,
}

/// The `input_audio` format for a MIME type, if Chat Completions takes it.
pub(super) fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

pub(super) fn body(
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
    options: &BodyOptions<'_>,
) -> Result<Value, EngineError> {
    let mut messages = Vec::with_capacity(result.messages.len());
    for m in &result.messages {
        let (loaded, notes) = sendable(
            ProviderFormat::OpenaiChat,
            m.role,
            load(m, session, assets)?,
        );
        let text: Cow<'_, str> = if notes.is_empty() {
            Cow::Borrowed(m.content())
        } else {
            Cow::Owned(format!("{}{notes}", m.content()))
        };
        let content = if loaded.is_empty() {
            Content::Text(text)
        } else {
            let mut parts = Vec::with_capacity(loaded.len() + 1);
            if !text.is_empty() {
                parts.push(Part::Text { text });
            }
            for l in loaded {
                let a = l.attachment;
                let base64 = l.base64();
                let data_uri = || format!("data:{};base64,{base64}", a.mime);
                parts.push(match a.kind {
                    AttachmentKind::Image => Part::ImageUrl {
                        image_url: ImageUrl { url: data_uri() },
                    },
                    AttachmentKind::Audio => Part::InputAudio {
                        input_audio: InputAudio {
                            format: audio_format(&a.mime.to_ascii_lowercase()).unwrap_or("wav"),
                            data: base64.clone(),
                        },
                    },
                    _ => Part::File {
                        file: File {
                            filename: &a.name,
                            file_data: data_uri(),
                        },
                    },
                });
            }
            Content::Parts(parts)
        };
        messages.push(Message {
            role: m.role.as_str(),
            name: m.name(),
            content,
        });
    }
    let g = &result.generation.settings;
    let body = Body {
        model: options.model,
        messages,
        max_completion_tokens: reply_limit(result),
        stream: options.stream,
        stream_options: options.stream.then_some(StreamOptions {
            include_usage: true,
        }),
        temperature: g.temperature,
        top_p: g.top_p,
        stop: &g.stop,
        frequency_penalty: g.frequency_penalty,
        presence_penalty: g.presence_penalty,
        seed: g.seed,
    };
    to_json(body)
}
