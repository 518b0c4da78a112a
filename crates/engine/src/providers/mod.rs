//! RULES 5.7: the final request per provider format, built from a finished build. Attachments are
//! read and base64-encoded only here, at the very end.
//!
//! The body types follow the providers' public API references: OpenAI Chat Completions
//! (`messages` with text, `image_url`, `input_audio` and `file` content parts), Anthropic Messages
//! (top-level `system`, `image` and `document` blocks with base64 sources) and Gemini
//! `generateContent` (`systemInstruction`, `contents` with `inline_data` parts).

mod anthropic;
mod completion;
mod gemini;
mod openai;

pub use completion::{completion_body, CompletionFormat};

use serde_json::Value;

use crate::assets::AssetSource;
use crate::model::{Attachment, AttachmentKind, Role, Session};
use crate::pipeline::{BuildResult, BuiltMessage};
use crate::profiles::{Capabilities, ProviderFormat};
use crate::said::{Said, Text};
use crate::texts;
use crate::EngineError;

/// Whether a model of this format and these capabilities takes `attachment` as it is; the error
/// says why not, in words for the preview.
pub fn accepts(
    format: ProviderFormat,
    caps: &Capabilities,
    attachment: &Attachment,
) -> Result<(), Said> {
    let mime = attachment.mime.to_ascii_lowercase();
    let refuse = |why: Text| Err(Said::from(why));
    match attachment.kind {
        AttachmentKind::Image => {
            if !caps.vision {
                return refuse(texts::NO_IMAGES);
            }
            match (format, mime.as_str()) {
                // Gemini documents PNG, JPEG, WebP, HEIC and HEIF; GIF is refused.
                (ProviderFormat::Gemini, "image/gif") => refuse(texts::GEMINI_IMAGE_TYPES),
                (_, "image/png" | "image/jpeg" | "image/jpg" | "image/gif" | "image/webp") => {
                    Ok(())
                }
                _ => refuse(texts::IMAGE_TYPES),
            }
        }
        AttachmentKind::Audio => {
            if !caps.audio {
                return refuse(texts::NO_AUDIO);
            }
            match format {
                ProviderFormat::OpenaiChat if openai::audio_format(&mime).is_some() => Ok(()),
                ProviderFormat::OpenaiChat => refuse(texts::AUDIO_TYPES),
                ProviderFormat::Gemini if mime.starts_with("audio/") => Ok(()),
                _ => refuse(texts::API_NO_AUDIO),
            }
        }
        AttachmentKind::Video => match format {
            ProviderFormat::Gemini if caps.video && mime.starts_with("video/") => Ok(()),
            _ => refuse(texts::NO_VIDEO),
        },
        AttachmentKind::Document | AttachmentKind::Text => {
            if !caps.documents {
                return refuse(texts::NO_DOCUMENTS);
            }
            let text = mime.starts_with("text/");
            match format {
                ProviderFormat::OpenaiChat if mime == "application/pdf" => Ok(()),
                ProviderFormat::OpenaiChat => refuse(texts::PDF_ONLY),
                ProviderFormat::AnthropicMessages if mime == "application/pdf" || text => Ok(()),
                ProviderFormat::AnthropicMessages => refuse(texts::PDF_OR_PLAIN_TEXT),
                ProviderFormat::Gemini if mime == "application/pdf" || text => Ok(()),
                ProviderFormat::Gemini => refuse(texts::PDF_OR_TEXT),
            }
        }
    }
}

/// Whether a message of `role` may carry attachments at all in `format` (RULES 5.7), the error
/// saying why not. `leading_system` is whether the message is one of the system messages that
/// open the request, which Anthropic and Gemini send as their top-level system text.
///
/// - OpenAI Chat Completions: only user messages take `image_url`, `input_audio` and `file`
///   parts; system (and developer) and tool messages take `text` parts, assistant messages `text`
///   and `refusal` parts.
/// - Anthropic Messages: images and documents go in user turns; an assistant turn carries text
///   (and the tool-use and thinking blocks the engine does not make). The top-level `system` is
///   text. A later system message and a tool message are sent as user turns.
/// - Gemini: `user` and `model` contents take text and `inlineData` parts alike;
///   `systemInstruction` is text only.
pub fn accepts_on(format: ProviderFormat, role: Role, leading_system: bool) -> Result<(), Said> {
    let refuse = |why: Text| Err(why.with("format", format.as_str()));
    match (format, role) {
        (_, Role::User) => Ok(()),
        (ProviderFormat::OpenaiChat, Role::Assistant)
        | (ProviderFormat::AnthropicMessages, Role::Assistant) => {
            refuse(texts::ASSISTANT_TEXT_ONLY)
        }
        (ProviderFormat::OpenaiChat, Role::System) => refuse(texts::SYSTEM_TEXT_ONLY),
        (ProviderFormat::OpenaiChat, Role::Tool) => refuse(texts::TOOL_TEXT_ONLY),
        (ProviderFormat::AnthropicMessages | ProviderFormat::Gemini, Role::System)
            if leading_system =>
        {
            refuse(texts::SYSTEM_FIELD_TEXT_ONLY)
        }
        _ => Ok(()),
    }
}

/// The media type a provider names for `mime`: lower case, with the common aliases made the
/// names the providers list (`image/jpg` is `image/jpeg`, `audio/mpeg` is `audio/mp3` for
/// Gemini, the WAV aliases are `audio/wav`).
pub(crate) fn media_type(format: ProviderFormat, mime: &str) -> String {
    let mime = mime.trim().to_ascii_lowercase();
    match mime.as_str() {
        "image/jpg" => "image/jpeg".into(),
        "audio/x-wav" | "audio/wave" => "audio/wav".into(),
        "audio/mpeg" if format == ProviderFormat::Gemini => "audio/mp3".into(),
        _ => mime,
    }
}

/// One attachment with its bytes, ready to encode.
pub(crate) struct Loaded<'a> {
    pub attachment: &'a Attachment,
    pub bytes: Vec<u8>,
}

impl Loaded<'_> {
    /// The bytes in base64, as every format sends them (Anthropic's plain text aside).
    pub fn base64(&self) -> String {
        crate::assets::encode(&self.bytes)
    }
}

/// What a request body of `format` sends of one message's attachments (a message after the
/// leading system ones): those the format takes on a message of `role`, and a note for each of the others. The asset resolver has already
/// made notes (with warnings) for what the profile's format refuses; this catches what a body of
/// another format (a connection's dialect that is not the profile's) cannot carry, so that such
/// a body still is one the provider takes, and says in the message what was left out.
pub(crate) fn sendable<'a>(
    format: ProviderFormat,
    role: Role,
    loaded: Vec<Loaded<'a>>,
) -> (Vec<Loaded<'a>>, String) {
    let every = Capabilities {
        vision: true,
        audio: true,
        documents: true,
        system_role: true,
        video: true,
    };
    let mut notes = String::new();
    let mut kept = Vec::with_capacity(loaded.len());
    for l in loaded {
        let a = l.attachment;
        match accepts_on(format, role, false).and_then(|()| accepts(format, &every, a)) {
            Ok(()) => kept.push(l),
            Err(why) => push_not_sent(&mut notes, a, &why),
        }
    }
    (kept, notes)
}

/// The attachments a built message carries, read through `assets`.
pub(crate) fn load<'a>(
    message: &BuiltMessage<'_>,
    session: &'a Session,
    assets: &dyn AssetSource,
) -> Result<Vec<Loaded<'a>>, EngineError> {
    message
        .attachments()
        .iter()
        .filter_map(|r| r.resolve(session))
        .map(|attachment| {
            let bytes = assets.load(attachment).map_err(|why| EngineError::Asset {
                name: attachment.name.clone(),
                message: why.to_string(),
            })?;
            Ok(Loaded { attachment, bytes })
        })
        .collect()
}

/// The leading system messages joined into one text (for the APIs with a top-level system
/// field), and the messages after them. That field takes text only: an attachment on a leading
/// system message is named there in a note instead (the asset resolver has made it one already
/// when the build was for `format`).
pub(crate) fn split_system<'r, 's>(
    format: ProviderFormat,
    result: &'r BuildResult<'s>,
    session: &Session,
) -> (Option<String>, &'r [BuiltMessage<'s>]) {
    let leading = result
        .messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let system = (leading > 0).then(|| {
        result.messages[..leading]
            .iter()
            .map(|m| {
                let mut text = m.content().to_string();
                if let Err(why) = accepts_on(format, Role::System, true) {
                    for a in m.attachments().iter().filter_map(|r| r.resolve(session)) {
                        push_not_sent(&mut text, a, &why);
                    }
                }
                text
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    });
    (system, &result.messages[leading..])
}

pub(crate) fn to_json(body: impl serde::Serialize) -> Result<Value, EngineError> {
    serde_json::to_value(body).map_err(|e| EngineError::Processor {
        processor: "asset-resolver".into(),
        message: format!("the request body does not serialize: {e}"),
    })
}

/// What a request body carries besides the build: the model it names and whether the reply is
/// streamed (RULES 5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyOptions<'a> {
    /// The model id the body names (OpenAI, Anthropic). Gemini names it in the URL instead.
    pub model: &'a str,
    /// Ask for the reply as a stream: `stream: true` (OpenAI, Anthropic), with
    /// `stream_options.include_usage` for OpenAI. Gemini streams through another URL
    /// (`streamGenerateContent`), so its body does not change.
    pub stream: bool,
    /// Mark the prompt-cache breakpoints the build's `cacheBreakpoints` setting asks for
    /// (Anthropic only; RULES 5.13). A body is compared turn to turn without them.
    pub cache_breakpoints: bool,
}

impl<'a> BodyOptions<'a> {
    /// The body Send sends for `model`: its breakpoints marked.
    pub fn new(model: &'a str, stream: bool) -> Self {
        BodyOptions {
            model,
            stream,
            cache_breakpoints: true,
        }
    }
}

/// The request body a build would send for `format`: the build's model, not streamed.
pub fn request_body(
    format: ProviderFormat,
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
) -> Result<Value, EngineError> {
    request_body_with(
        format,
        result,
        session,
        assets,
        &BodyOptions::new(&result.model, false),
    )
}

/// The body the build's own model would get: its profile's provider format, or for a
/// text-completion build (RULES 5.12) the OpenAI Completions body with its prompt string (the
/// format most local servers take). Not streamed.
pub fn own_body(
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
) -> Result<Value, EngineError> {
    if result.prompt.is_some() {
        let options = BodyOptions::new(&result.model, false);
        return completion_body(CompletionFormat::OpenaiCompletions, result, &options);
    }
    request_body(result.provider_format(), result, session, assets)
}

/// The whole request body for `format`: the messages, the model and stream flag of `options`,
/// and the build's generation settings (`result.generation`) in the format's own names. A
/// setting the format has no place for is left out; the build warned about it when `format` is
/// the profile's (RULES 5.10). The keys of `extra` are written last, at the top level, over
/// anything of the same name, except the keys the engine writes itself
/// ([`crate::model::RESERVED_EXTRA_KEYS`], refused when a preset or profile is read).
pub fn request_body_with(
    format: ProviderFormat,
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
    options: &BodyOptions<'_>,
) -> Result<Value, EngineError> {
    let mut body = match format {
        ProviderFormat::OpenaiChat => openai::body(result, session, assets, options),
        ProviderFormat::AnthropicMessages => anthropic::body(result, session, assets, options),
        ProviderFormat::Gemini => gemini::body(result, session, assets),
    }?;
    with_extra(&mut body, result);
    Ok(body)
}

/// Writes the generation settings' `extra` keys at the top level of `body`, over anything of the
/// same name, but for [`crate::model::RESERVED_EXTRA_KEYS`] (chat and text completion alike).
pub(crate) fn with_extra(body: &mut Value, result: &BuildResult<'_>) {
    if let Value::Object(map) = body {
        for (key, value) in &result.generation.settings.extra {
            if !crate::model::RESERVED_EXTRA_KEYS.contains(&key.as_str()) {
                map.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The reply limit a body carries: the generation setting when there is one, else the model
/// profile's reply reserve.
pub(crate) fn reply_limit(result: &BuildResult<'_>) -> u32 {
    result
        .generation
        .settings
        .max_output_tokens
        .unwrap_or(result.tokens.reserved_reply)
}

/// The note that stands in a message for an attachment left out of it, and why (the asset
/// resolver's and the body builders' alike).
pub(crate) fn push_not_sent(text: &mut String, a: &Attachment, why: &Said) {
    use std::fmt::Write as _;
    let _ = write!(
        text,
        "\n\n[Attachment \"{}\" ({}) not sent: {why}]",
        a.name, a.mime
    );
}
