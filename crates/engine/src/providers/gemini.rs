//! Gemini `generateContent`: `{ systemInstruction, contents, generationConfig }`. The leading
//! system messages become `systemInstruction`; turns are `user` or `model` with `parts`: `text`
//! and `inline_data` (`mime_type` and base64 `data`). The model and streaming are in the URL
//! (`models/{model}:generateContent` or `:streamGenerateContent`), not in the body; the generation
//! settings are in `generationConfig`: `maxOutputTokens` (the setting, else the model profile's
//! reply reserve), `temperature`, `topP`, `topK`, `stopSequences`, `presencePenalty`,
//! `frequencyPenalty` and `seed`.

use serde::Serialize;
use serde_json::Value;

use super::{load, reply_limit, split_system, to_json};
use crate::assets::AssetSource;
use crate::model::{Role, Session};
use crate::pipeline::BuildResult;
use crate::EngineError;

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
    Text { text: &'a str },
    InlineData { inline_data: InlineData<'a> },
}

#[derive(Serialize)]
struct InlineData<'a> {
    mime_type: &'a str,
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
    let (system, turns) = split_system(result);
    let mut contents = Vec::with_capacity(turns.len());
    for m in turns {
        let role = match m.role {
            Role::Assistant => "model",
            _ => "user",
        };
        let mut parts = Vec::new();
        if !m.content().is_empty() {
            parts.push(Part::Text { text: m.content() });
        }
        for l in load(m, session, assets)? {
            parts.push(Part::InlineData {
                inline_data: InlineData {
                    mime_type: &l.attachment.mime,
                    data: l.base64,
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
