//! RULES 5.8: a family's vocabulary is read only when a model of that family is counted, once.
//! Alone in its test binary, so that no other test has loaded a vocabulary first.

use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{AgentPreset, Session};
use promptloom_engine::tokens::TokenizerKind;
use promptloom_engine::{build, BuildOptions, BuildRequest};

fn preview(model: &str) -> promptloom_engine::pipeline::BuildResult<'static> {
    let preset: AgentPreset = serde_json::from_value(serde_json::json!({
        "id": "p", "name": "P",
        "messageTemplates": [
            { "id": "sys", "role": "system", "content": "You keep the lighthouse." },
            { "id": "hist", "role": "system", "type": "chat_history" }
        ],
        "contextRecipes": [{ "id": "all", "name": "All", "modelFilter": ["*"],
            "steps": [{ "messageId": "sys", "enabled": true }, { "messageId": "hist", "enabled": true }] }]
    }))
    .unwrap();
    let session: Session = serde_json::from_value(serde_json::json!({
        "id": "s", "messages": [{ "role": "user", "content": "Is the lamp lit?" }]
    }))
    .unwrap();
    let cache = BuildCache::new();
    let options =
        BuildOptions::at(chrono::DateTime::parse_from_rfc3339("2026-11-24T20:00:00Z").unwrap());
    let request = BuildRequest {
        preset: &preset,
        session: &session,
        kept_rewrites: None,
        model,
        options: &options,
        cache: &cache,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    };
    build(&request).unwrap().into_owned()
}

#[test]
fn a_family_is_read_on_its_first_preview_and_no_other_is() {
    let families = [
        TokenizerKind::Llama3,
        TokenizerKind::Qwen,
        TokenizerKind::Gemma3,
        TokenizerKind::DeepseekV3,
        TokenizerKind::Tekken,
    ];
    let loaded = || families.map(|k| k.is_loaded());
    assert_eq!(loaded(), [false; 5], "nothing is read before a count");
    let gpt = preview("gpt-4o");
    assert!(gpt.tokens.exact);
    assert_eq!(
        loaded(),
        [false; 5],
        "an OpenAI model reads no other family"
    );
    let llama = preview("meta-llama/llama-3.1-70b-instruct");
    assert_eq!(llama.tokens.tokenizer, "llama3");
    assert!(llama.tokens.exact && llama.messages.iter().all(|m| m.exact));
    assert_eq!(loaded(), [true, false, false, false, false]);
    let qwen = preview("qwen3:30b");
    assert_eq!(qwen.tokens.tokenizer, "qwen");
    assert_eq!(loaded(), [true, true, false, false, false]);
    // Claude's estimate reads cl100k_base, no family.
    let claude = preview("claude-sonnet-4-5");
    assert!(!claude.tokens.exact && claude.messages.iter().all(|m| !m.exact));
    assert_eq!(claude.tokens.tokenizer, "estimate (cl100k_base × 1.11)");
    assert_eq!(loaded(), [true, true, false, false, false]);
}
