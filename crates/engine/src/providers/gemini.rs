//! Gemini `generateContent`: `{ systemInstruction, contents, generationConfig }`. The leading
//! system messages become `systemInstruction`; turns are `user` or `model` with `parts`: `text`
//! and `inline_data` (`mime_type` and base64 `data`). The model and streaming are in the URL
//! (`models/{model}:generateContent` or `:streamGenerateContent`), not in the body; the generation
//! settings are in `generationConfig`: `maxOutputTokens` (the setting, else the model profile's
//! reply reserve), `temperature`, `topP`, `topK`, `stopSequences`, `presencePenalty`,
//! `frequencyPenalty` and `seed`.
//!
//! `user` and `model` contents both take `inline_data` parts; `systemInstruction` is text only,
//! so an attachment on a leading system message is left out with a note in that text (the asset
//! resolver has made it one already when the build was for this format). MIME types are sent
//! under the names Gemini lists (`audio/mp3`, `image/jpeg`).

use serde::Serialize;
use serde_json::Value;

use std::borrow::Cow;

use super::{load, media_type, reply_limit, sendable, split_system, to_json};
use crate::assets::AssetSource;
use crate::model::{Role, Session};
use crate::pipeline::BuildResult;
use crate::profiles::ProviderFormat;
use crate::EngineError;

const FORMAT: ProviderFormat = ProviderFormat::Gemini;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction>,
    contents: Vec<ContentItem<'a>>,
    generation_config: GenerationConfig<'a>,
}

#[derive(Serialize)]
struct SystemInstruction {
    parts: Vec<TextPart>,
}

#[derive(Serialize)]
struct TextPart {
    text: String,
}

#[derive(Serialize)]
struct ContentItem<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    InlineData { inline_data: InlineData },
}

#[derive(Serialize)]
struct InlineData {
    mime_type: String,
    data: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig<'a> {
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stop_sequences: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

pub(super) fn body(
    result: &BuildResult<'_>,
    session: &Session,
    assets: &dyn AssetSource,
) -> Result<Value, EngineError> {
    let (system, turns) = split_system(FORMAT, result, session);
    let mut contents = Vec::with_capacity(turns.len());
    for m in turns {
        let role = match m.role {
            Role::Assistant => "model",
            _ => "user",
        };
        let (loaded, notes) = sendable(FORMAT, m.role, load(m, session, assets)?);
        let mut parts = Vec::new();
        if !m.content().is_empty() || !notes.is_empty() {
            let text = if notes.is_empty() {
                Cow::Borrowed(m.content())
            } else {
                Cow::Owned(format!("{}{notes}", m.content()))
            };
            parts.push(Part::Text { text });
        }
        for l in loaded {
            parts.push(Part::InlineData {
                inline_data: InlineData {
                    mime_type: media_type(FORMAT, &l.attachment.mime),
                    data: l.base64(),
                },
            });
        }
        contents.push(ContentItem { role, parts });
    }
    let g = &result.generation.settings;
    let body = Body {
        system_instruction: system.map(|text| SystemInstruction {
            parts: vec![TextPart { text }],
        }),
        contents,
        generation_config: GenerationConfig {
            max_output_tokens: reply_limit(result),
            temperature: g.temperature,
            top_p: g.top_p,
            top_k: g.top_k,
            stop_sequences: &g.stop,
            presence_penalty: g.presence_penalty,
            frequency_penalty: g.frequency_penalty,
            seed: g.seed,
        },
    };
    to_json(body)
}
