//! RULES 5.8: a model profile's own tokenizer file in a build. The vocabularies themselves are
//! tested in the promptloom-tokens crate (crates/tokens/tests/vocabularies.rs).

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "promptloom-tokenizers-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// A profile's own tokenizer file that cannot be read: the build warns, naming it, and counts
// with the id's estimate, labelled as one.
#[test]
fn a_profile_whose_tokenizer_file_is_bad_warns_and_counts_an_estimate() {
    use promptloom_engine::cache::BuildCache;
    use promptloom_engine::model::{AgentPreset, Session};
    use promptloom_engine::profiles::profile_for_model;
    use promptloom_engine::{build, BuildOptions, BuildRequest};

    let dir = tempdir();
    let bad = dir.join("not-a-tokenizer.json");
    std::fs::write(&bad, "{}").unwrap();
    let mut profile = profile_for_model("llama3.1:8b", &[]);
    profile.id = "mine".into();
    profile.patterns = vec!["llama3.1:8b".into()];
    profile.tokenizer_file = Some(bad.display().to_string());
    let preset: AgentPreset = serde_json::from_value(serde_json::json!({
        "id": "p", "name": "P",
        "messageTemplates": [{ "id": "sys", "role": "system", "content": "You keep the lighthouse." }],
        "contextRecipes": [{ "id": "all", "modelFilter": ["*"],
            "steps": [{ "messageId": "sys", "enabled": true }] }]
    }))
    .unwrap();
    let session = Session::empty("s");
    let options =
        BuildOptions::at(chrono::DateTime::parse_from_rfc3339("2026-11-24T20:00:00Z").unwrap());
    let cache = BuildCache::new();
    let profiles = [profile];
    let request = BuildRequest {
        preset: &preset,
        session: &session,
        kept_rewrites: None,
        model: "llama3.1:8b",
        options: &options,
        cache: &cache,
        profiles: &profiles,
        assets: &promptloom_engine::assets::InlineAssets,
    };
    let result = build(&request).unwrap();
    let warning = result
        .warnings
        .iter()
        .find(|w| w.processor == "tokens")
        .expect("a warning about the tokenizer");
    assert!(
        warning.message.contains("not-a-tokenizer.json")
            && warning.message.contains("estimate (llama3)"),
        "{}",
        warning.message
    );
    assert_eq!(result.tokens.tokenizer, "estimate (llama3)");
    assert!(!result.tokens.exact);
}
