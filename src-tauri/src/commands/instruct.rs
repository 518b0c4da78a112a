//! Text completion (RULES 5.12): the built-in instruct templates a preset can take, and the check
//! of the build's template against a model's own Jinja chat template.

use promptloom_engine::instruct::jinja::{JinjaCheck, SpecialTokens};
use promptloom_engine::instruct::{built_in, built_in_ids, InstructTemplate};
use tauri::AppHandle;

use super::blocking;
use super::preview::{with_build, PreviewRequest};
use crate::error::AppError;

/// The built-in instruct templates, whole, in the engine's order: choosing one stores it as the
/// preset's own.
#[tauri::command]
#[specta::specta]
pub async fn instruct_templates() -> Result<Vec<InstructTemplate>, AppError> {
    Ok(built_in_ids().filter_map(built_in).collect())
}

/// Builds `request` and renders its messages through `chat_template` (with the `bos` and `eos`
/// tokens it reads) and through the build's instruct template: both strings and the first byte
/// where they differ. A template that does not parse, loops or raises is an error in the
/// engine's words.
#[tauri::command]
#[specta::specta]
pub async fn check_chat_template(
    app: AppHandle,
    request: PreviewRequest,
    chat_template: String,
    bos: String,
    eos: String,
) -> Result<JinjaCheck, AppError> {
    blocking(app, move |s| {
        with_build(s, &request, |result, _| {
            // The build's own day: the engine's.
            let tokens = SpecialTokens {
                bos,
                eos,
                now: None,
            };
            Ok(result.check_chat_template("pasted", &chat_template, &tokens)?)
        })
    })
    .await
}
