//! RULES 5.12: the text-completion request bodies (OpenAI Completions, llama.cpp, KoboldCpp)
//! carry the build's prompt string exactly, its stop sequences and the generation settings each
//! format takes.

mod common;

use common::*;
use promptloom_engine::instruct::built_in;
use promptloom_engine::model::{GenerationField, GenerationSettings, Session};
use promptloom_engine::providers::{completion_body, BodyOptions, CompletionFormat};
use promptloom_engine::BuildResult;
use serde_json::{json, Value};

fn text_preset() -> promptloom_engine::model::AgentPreset {
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "You are Mara." },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    p.instruct = built_in("chatml");
    p.generation = Some(GenerationSettings {
        temperature: Some(0.7),
        top_k: Some(40),
        max_output_tokens: Some(200),
        stop: vec!["\nRosa:".into(), "<|im_end|>".into()],
        frequency_penalty: Some(0.5),
        seed: Some(7),
        extra: serde_json::from_value(json!({ "min_p": 0.05, "prompt": "not this" })).expect("map"),
        ..Default::default()
    });
    p
}

fn built(session: &Session) -> BuildResult<'_> {
    try_run(&text_preset(), session, "gpt-4o", &options()).expect("builds")
}

fn body(format: CompletionFormat, result: &BuildResult<'_>, stream: bool) -> Value {
    completion_body(format, result, &BodyOptions::new("local", stream)).expect("body")
}

// RULES 5.12: the prompt string goes as it is, with the template's stop sequences and then the
// settings' own (without repeating one).
#[test]
fn text_completion_openai_body_carries_the_prompt_string() {
    let session = session_of(&["Is the lamp lit?"]);
    let result = built(&session);
    let prompt = result.prompt.as_ref().expect("a prompt").prompt.clone();
    let b = body(CompletionFormat::OpenaiCompletions, &result, true);
    assert_eq!(
        b,
        json!({
            "model": "local",
            "prompt": prompt,
            "max_tokens": 200,
            "stream": true,
            "stream_options": { "include_usage": true },
            "temperature": 0.7,
            "stop": ["<|im_end|>", "\nRosa:"],
            "frequency_penalty": 0.5,
            "seed": 7,
            "min_p": 0.05,
        })
    );
    assert!(prompt.starts_with("<|im_start|>system\nYou are Mara.<|im_end|>\n"));
    assert!(prompt.ends_with("<|im_start|>assistant\n"));
}

#[test]
fn text_completion_llamacpp_body_names_its_own_settings() {
    let session = session_of(&["Is the lamp lit?"]);
    let result = built(&session);
    let b = body(CompletionFormat::Llamacpp, &result, false);
    assert_eq!(b["prompt"], result.prompt.as_ref().expect("prompt").prompt);
    assert_eq!(b["n_predict"], 200);
    assert_eq!(b["top_k"], 40);
    assert_eq!(b["frequency_penalty"], 0.5);
    assert_eq!(b["seed"], 7);
    assert!(b.get("stream").is_none());
    assert!(b.get("model").is_none());
}

#[test]
fn text_completion_koboldcpp_body_has_no_penalties_and_says_so() {
    let session = session_of(&["Is the lamp lit?"]);
    let result = built(&session);
    let b = body(CompletionFormat::Koboldcpp, &result, true);
    assert_eq!(b["max_length"], 200);
    assert_eq!(b["max_context_length"], result.tokens.context_window);
    assert_eq!(b["stop_sequence"], json!(["<|im_end|>", "\nRosa:"]));
    assert_eq!(b["sampler_seed"], 7);
    assert!(b.get("frequency_penalty").is_none());
    // The body does not change when streamed: KoboldCpp streams through another URL.
    assert_eq!(b, body(CompletionFormat::Koboldcpp, &result, false));
    let warned = result
        .generation
        .completion_warnings(CompletionFormat::Koboldcpp)
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        warned.contains(GenerationField::FrequencyPenalty.as_str()),
        "{warned}"
    );
    assert!(result
        .generation
        .completion_warnings(CompletionFormat::Llamacpp)
        .is_empty());
}

// A chat build has no prompt string: a text-completion body of it is a clear error.
#[test]
fn text_completion_body_of_a_chat_build_is_an_error() {
    let session = session_of(&["Hello."]);
    let mut p = text_preset();
    p.instruct = None;
    let result = try_run(&p, &session, "gpt-4o", &options()).expect("builds");
    let err = completion_body(
        CompletionFormat::Llamacpp,
        &result,
        &BodyOptions::new("m", false),
    )
    .expect_err("no prompt string");
    assert!(err.to_string().contains("instruct template"), "{err}");
}

// The body the build's own model gets: the OpenAI Completions body for a text-completion build,
// the profile's chat body otherwise.
#[test]
fn text_completion_own_body_is_the_completions_body() {
    let session = session_of(&["Is the lamp lit?"]);
    let result = built(&session);
    let own = promptloom_engine::providers::own_body(
        &result,
        &session,
        &promptloom_engine::assets::InlineAssets,
    )
    .expect("body");
    assert_eq!(
        own["prompt"],
        result.prompt.as_ref().expect("prompt").prompt
    );
    assert_eq!(own["model"], "gpt-4o");
    let mut p = text_preset();
    p.instruct = None;
    let chat = try_run(&p, &session, "gpt-4o", &options()).expect("builds");
    let own = promptloom_engine::providers::own_body(
        &chat,
        &session,
        &promptloom_engine::assets::InlineAssets,
    )
    .expect("body");
    assert!(own["messages"].is_array() && own.get("prompt").is_none());
}
