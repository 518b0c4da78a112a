//! Gemini `generateContent`: `{ systemInstruction, contents, generationConfig }`. The leading
//! system messages become `systemInstruction`; turns are `user` or `model` with `parts`: `text`
//! and `inline_data` (`mime_type` and base64 `data`).

use serde::Serialize;
use serde_json::Value;

use super::{load, split_system, to_json};
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
    generation_config: GenerationConfig,
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
struct GenerationConfig {
    max_output_tokens: u32,
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
    let body = Body {
        system_instruction: system.map(|text| SystemInstruction {
            parts: vec![TextPart { text }],
        }),
        contents,
        generation_config: GenerationConfig {
            max_output_tokens: result.tokens.reserved_reply,
        },
    };
    to_json(body)
}
