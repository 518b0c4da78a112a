//! A chat build's count for a shipped family's model is the count of the string the family's
//! server renders (RULES 5.8): the messages through the chat template of the model's version,
//! with the BOS token the server adds. The figures in the named tests are llama.cpp's
//! (`llama-server --jinja` with the real tokenizers and chat templates); the property test
//! holds the build's count, made of the messages' own counts where no token can cross a joint,
//! to one count of the whole rendered string.

mod common;

use common::*;
use promptloom_engine::instruct::{built_in, render, Turn};
use promptloom_engine::model::Role;
use promptloom_engine::tokens::{chat_template_for_model, tokenizer_for_model};
use proptest::prelude::*;
use serde_json::json;

/// One model of each chat template a shipped family's server writes.
const MODELS: &[&str] = &[
    "llama-3-8b-instruct",
    "llama-3.1-8b-instruct",
    "qwen2.5-7b-instruct",
    "qwen3-8b",
    "gemma-3-4b-it",
    "deepseek-v3",
    "mistral-nemo-instruct-2407",
];

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// The build's messages (a message left empty is not sent), their counts and its total and
/// whether it is exact, for a preset of exactly these messages.
struct Built {
    messages: Vec<(Role, String)>,
    tokens: Vec<u32>,
    total: u32,
    exact: bool,
}

/// A preset of exactly these messages (the simple form).
fn preset_of(messages: &[(Role, String)]) -> promptloom_engine::model::AgentPreset {
    preset_from(json!({
        "formatVersion": 1,
        "id": "t",
        "name": "t",
        "presetMessages": messages
            .iter()
            .map(|(r, c)| json!({ "role": role_name(*r), "content": c }))
            .collect::<Vec<_>>(),
    }))
}

fn build(model: &str, messages: &[(Role, String)]) -> Built {
    build_with(model, messages, None)
}

/// [`build`] in text completion with the built-in template `instruct`, or in chat without one.
fn build_with(model: &str, messages: &[(Role, String)], instruct: Option<&str>) -> Built {
    let preset = preset_of(messages);
    let session = session_of(&[]);
    let mut options = options();
    options.instruct = instruct.and_then(built_in);
    let result = try_run(&preset, &session, model, &options).expect("builds");
    Built {
        messages: result
            .messages
            .iter()
            .map(|m| (m.role, m.content().to_string()))
            .collect(),
        tokens: result.messages.iter().map(|m| m.tokens).collect(),
        total: result.tokens.total,
        exact: result.tokens.exact,
    }
}

/// What the server counts: the string the model's template writes, counted whole, and the BOS
/// the server adds.
fn rendered_count(model: &str, messages: &[(Role, String)]) -> (String, u32) {
    let kind = tokenizer_for_model(model)
        .vocabulary
        .kind()
        .expect("shipped");
    let chosen = chat_template_for_model(model, kind).expect("a chat template");
    let template = built_in(chosen.id).expect("built-in");
    let now = options().timestamp;
    let template = template.dated(&now);
    let turns: Vec<Turn<'_>> = messages
        .iter()
        .map(|(role, content)| Turn {
            role: *role,
            name: None,
            content,
            unwrapped: false,
        })
        .collect();
    let prompt = render(&template, &turns).prompt;
    let bos = if template.server_adds_bos {
        kind.count(&template.bos)
    } else {
        0
    };
    let n = (kind.count(&prompt) + bos) as u32;
    (prompt, n)
}

fn m(role: Role, content: &str) -> (Role, String) {
    (role, content.to_string())
}

#[test]
fn chat_count_is_the_count_of_the_rendered_string_for_every_family() {
    let padded = [
        m(Role::System, "  padded system  "),
        m(Role::User, "\n  padded user \n"),
        m(Role::Assistant, " padded reply "),
        m(Role::User, "last "),
    ];
    let merging = [
        m(Role::System, "You are a helpful assistant."),
        m(Role::User, "\nStarts on a new line."),
        m(Role::Assistant, "4."),
        m(Role::User, "/slash first"),
    ];
    for model in MODELS {
        for messages in [&padded[..], &merging[..]] {
            let built = build(model, messages);
            assert_eq!(
                built.messages, messages,
                "{model}: the messages as they are"
            );
            let (prompt, server) = rendered_count(model, messages);
            assert_eq!(built.total, server, "{model}: {prompt:?}");
            assert!(built.exact, "{model}");
        }
    }
}

/// A message's count is what its turn costs as written: trimmed where the template trims, and
/// counted with its affixes where a token crosses the joint.
#[test]
fn chat_message_count_is_its_turn_as_the_template_writes_it() {
    let kind = tokenizer_for_model("llama-3-8b-instruct")
        .vocabulary
        .kind()
        .expect("llama3");
    let tokens = build(
        "llama-3-8b-instruct",
        &[m(Role::User, "\n  padded user \n")],
    )
    .tokens;
    let turn = "<|start_header_id|>user<|end_header_id|>\n\npadded user<|eot_id|>";
    assert_eq!(tokens[0] as usize, kind.count(turn));

    let tekken = tokenizer_for_model("mistral-nemo-instruct-2407")
        .vocabulary
        .kind()
        .expect("tekken");
    // Tekken's system text ends in "\n\n": "." and "\n\n" are one token.
    let tokens = build(
        "mistral-nemo-instruct-2407",
        &[m(Role::System, "Be brief."), m(Role::User, "Hi")],
    )
    .tokens;
    assert_eq!(tokens[0] as usize, tekken.count("Be brief.\n\n"));
    assert!(tekken.count("Be brief.\n\n") < tekken.count("Be brief.") + tekken.count("\n\n"));
}

fn message() -> impl Strategy<Value = (Role, String)> {
    let role = prop_oneof![Just(Role::System), Just(Role::User), Just(Role::Assistant)];
    let fragment = prop_oneof![
        Just("Hello"),
        Just(" world"),
        Just("."),
        Just("\n"),
        Just("\n\n"),
        Just("  "),
        Just("\t"),
        Just("/"),
        Just("你好"),
        Just("🚀"),
        Just("<|im_end|>"),
        Just("[INST]"),
        Just("'s"),
        Just("123"),
    ];
    (role, prop::collection::vec(fragment, 0..8)).prop_map(|(r, f)| (r, f.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    // Whatever the messages, the build's total is one count of the rendered string.
    #[test]
    fn chat_total_equals_one_count_of_the_rendered_string(
        messages in prop::collection::vec(message(), 1..6),
        which in 0..MODELS.len(),
    ) {
        let model = MODELS[which];
        let built = build(model, &messages);
        let (prompt, server) = rendered_count(model, &built.messages);
        prop_assert_eq!(built.total, server, "{}: {:?}", model, prompt);
    }
}

/// The conversations of the llama.cpp check, and what `llama-server --jinja` counted for each
/// (`usage.prompt_tokens` in chat, `tokens_evaluated` for the text-completion string; the two
/// agree) with the real tokenizer and chat template of each model (the BOS the server adds
/// included).
#[test]
fn chat_and_text_completion_counts_are_llama_cpps() {
    let sys = "You are a helpful assistant.";
    let multi_turn = [
        m(Role::System, sys),
        m(Role::User, "What is 2+2?"),
        m(Role::Assistant, "4."),
        m(Role::User, "And 3+3?"),
    ];
    let padded = [
        m(Role::System, "  padded system  "),
        m(Role::User, "\n  padded user \n"),
        m(Role::Assistant, " padded reply "),
        m(Role::User, "last "),
    ];
    let no_system = [
        m(Role::User, "Hi"),
        m(Role::Assistant, "Hello! How can I help?"),
        m(Role::User, "Tell me a joke."),
    ];
    // (model, its instruct template, multi-turn, padded, no system)
    let servers = [
        ("llama-3-8b-instruct", "llama-3", 46, 35, 33),
        ("llama-3.1-8b-instruct", "llama-3.1", 66, 55, 58),
        ("qwen2.5-7b-instruct", "qwen-2.5", 44, 36, 52),
        ("qwen3-8b", "qwen", 44, 36, 31),
        ("deepseek-v3", "deepseek", 27, 20, 19),
        ("mistral-nemo-instruct-2407", "mistral-tekken", 27, 22, 19),
        ("gemma-3-4b-it", "gemma", 41, 29, 32),
    ];
    for (model, instruct, a, b, c) in servers {
        for (messages, server) in [(&multi_turn[..], a), (&padded[..], b), (&no_system[..], c)] {
            let built = build(model, messages);
            assert_eq!(built.total, server, "{model} chat: {messages:?}");
            assert!(built.exact, "{model}");
            let text = build_with(model, messages, Some(instruct)).total;
            assert_eq!(text, server, "{model} text completion: {messages:?}");
        }
    }
}

/// A model whose own chat template was not checked is counted with its family's nearest, and
/// its counts are labelled estimates with the reason.
#[test]
fn a_model_whose_chat_template_was_not_checked_is_an_estimate_that_says_why() {
    let preset = preset_from(json!({
        "formatVersion": 1,
        "id": "t",
        "name": "t",
        "presetMessages": [{ "role": "system", "content": "Think." }, { "role": "user", "content": "Hi" }],
    }));
    let session = session_of(&[]);
    let checked = try_run(&preset, &session, "qwen3-8b", &options()).expect("builds");
    assert!(checked.tokens.exact);
    let other = try_run(&preset, &session, "qwq-32b", &options()).expect("builds");
    assert!(!other.tokens.exact);
    assert!(other.messages.iter().all(|m| !m.exact));
    assert_eq!(
        other.tokens.total, checked.tokens.total,
        "the same template's count"
    );
    let said: Vec<&str> = other.logs.iter().map(|l| l.message.as_str()).collect();
    assert!(
        said.iter().any(
            |l| l.contains("qwq-32b's own chat template was not checked") && l.contains("\"qwen\"")
        ),
        "{said:?}"
    );
}
