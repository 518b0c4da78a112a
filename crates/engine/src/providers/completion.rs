//! Text completion (RULES 5.12): the request bodies that carry a build's prompt string.
//!
//! - OpenAI Completions (`POST /v1/completions`, which llama.cpp, vLLM, Ollama and
//!   text-generation-webui also serve): `{ model, prompt, max_tokens, stop, ... }`, the sampler
//!   settings under the Chat Completions names; no top-k.
//! - llama.cpp's own `POST /completion`: `{ prompt, n_predict, stop, ... }` with `top_k`,
//!   `frequency_penalty`, `presence_penalty` and `seed` under those names.
//! - KoboldCpp's `POST /api/v1/generate` (the KoboldAI API): `{ prompt, max_length,
//!   max_context_length, stop_sequence, sampler_seed, ... }`; it has no frequency or presence
//!   penalty (its repetition penalty is another measure).
//!
//! The stop sequences are the template's, then the generation settings' that are not among them.
//! Attachments are not sent: a prompt string is text.

use serde::Serialize;
use serde_json::Value;

use super::openai::StreamOptions;
use super::{reply_limit, to_json, with_extra, BodyOptions};
use crate::pipeline::BuildResult;
pub use crate::profiles::CompletionFormat;
use crate::EngineError;

#[derive(Serialize)]
struct OpenaiBody<'a> {
    model: &'a str,
    prompt: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

#[derive(Serialize)]
struct LlamacppBody<'a> {
    prompt: &'a str,
    n_predict: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

#[derive(Serialize)]
struct KoboldBody<'a> {
    prompt: &'a str,
    max_length: u32,
    max_context_length: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_k: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequence: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sampler_seed: Option<i64>,
}

/// The request body of a text-completion build in `format`: its prompt string, the model and
/// stream flag of `options` (KoboldCpp streams through another URL, so its body does not
/// change), the generation settings the format takes, then the settings' `extra` keys at the top
/// level (but for [`crate::model::RESERVED_EXTRA_KEYS`]). A chat build (no prompt string) is an
/// error: it has no instruct template.
pub fn completion_body(
    format: CompletionFormat,
    result: &BuildResult<'_>,
    options: &BodyOptions<'_>,
) -> Result<Value, EngineError> {
    let prompt = result.prompt.as_ref().ok_or_else(|| {
        EngineError::invalid(
            format!("the {} request body", format.as_str()),
            "needs a prompt string: the build has no instruct template (text completion is off)",
        )
    })?;
    let g = &result.generation.settings;
    let stop: Vec<&str> = {
        let mut stop: Vec<&str> = prompt.stop.iter().map(String::as_str).collect();
        for s in &g.stop {
            if !stop.contains(&s.as_str()) {
                stop.push(s);
            }
        }
        stop
    };
    let limit = reply_limit(result);
    let mut body = match format {
        CompletionFormat::OpenaiCompletions => to_json(OpenaiBody {
            model: options.model,
            prompt: &prompt.prompt,
            max_tokens: limit,
            stream: options.stream,
            stream_options: options.stream.then_some(StreamOptions {
                include_usage: true,
            }),
            temperature: g.temperature,
            top_p: g.top_p,
            stop,
            frequency_penalty: g.frequency_penalty,
            presence_penalty: g.presence_penalty,
            seed: g.seed,
        }),
        CompletionFormat::Llamacpp => to_json(LlamacppBody {
            prompt: &prompt.prompt,
            n_predict: limit,
            stream: options.stream,
            temperature: g.temperature,
            top_p: g.top_p,
            top_k: g.top_k,
            stop,
            frequency_penalty: g.frequency_penalty,
            presence_penalty: g.presence_penalty,
            seed: g.seed,
        }),
        CompletionFormat::Koboldcpp => to_json(KoboldBody {
            prompt: &prompt.prompt,
            max_length: limit,
            max_context_length: result.tokens.context_window,
            temperature: g.temperature,
            top_p: g.top_p,
            top_k: g.top_k,
            stop_sequence: stop,
            sampler_seed: g.seed,
        }),
    }?;
    with_extra(&mut body, result);
    Ok(body)
}
