//! A build: the built-in processors of RULES 5.1 registered on the framework of `pipeline/`, and
//! the entry point that runs them.
//!
//! This module sits above both `pipeline/` (the framework: the `Processor` trait, the registry,
//! the context and the result) and `processors/` (the built-in processors, which implement the
//! trait). The framework knows none of its processors; this is the one place that lists them.

use crate::lorebook::Lorebook;
use crate::pipeline::{BuildRequest, BuildResult, Pipeline, Processor};
use crate::processors::{
    AssetResolver, AuthorsNote, CharacterNote, ConvertSystemToUser, EnsureAlternation,
    EphemeralInjection, HistoryOperations, InjectionAssembler, InstructionPinning, Memory,
    MergeConsecutiveRoles, MergeSystemToHead, RegexProcessor, SessionLoader, SquashSystemMessages,
    TokenLimiter, TranscriptionProcessor,
};
use crate::EngineError;

/// Every built-in processor, in registration order (RULES 5.1).
pub fn builtin_processors() -> Vec<Box<dyn Processor>> {
    vec![
        Box::new(SessionLoader),
        Box::new(HistoryOperations),
        Box::new(Memory),
        Box::new(RegexProcessor),
        Box::new(TranscriptionProcessor),
        Box::new(Lorebook),
        Box::new(AuthorsNote),
        Box::new(CharacterNote),
        Box::new(InjectionAssembler),
        Box::new(EphemeralInjection),
        Box::new(TokenLimiter),
        Box::new(InstructionPinning),
        Box::new(SquashSystemMessages),
        Box::new(MergeSystemToHead),
        Box::new(ConvertSystemToUser),
        Box::new(MergeConsecutiveRoles),
        Box::new(EnsureAlternation),
        Box::new(AssetResolver),
    ]
}

impl Pipeline {
    /// Every built-in processor; an embedder registers its plugins on top (RULES 5.1).
    pub fn builtin() -> Self {
        let mut pipeline = Pipeline::empty();
        for p in builtin_processors() {
            pipeline.register(p);
        }
        pipeline
    }
}

/// The built-in pipeline.
impl Default for Pipeline {
    fn default() -> Self {
        Self::builtin()
    }
}

/// Runs the built-in pipeline once. The pipeline itself (its processors and their descriptors) is
/// made on the first build and shared by every later one: the live preview builds on every
/// keystroke.
pub fn build<'s>(request: &BuildRequest<'_, 's>) -> Result<BuildResult<'s>, EngineError> {
    static BUILTIN: std::sync::LazyLock<Pipeline> = std::sync::LazyLock::new(Pipeline::builtin);
    BUILTIN.run(request)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::DateTime;

    use super::*;
    use crate::cache::BuildCache;
    use crate::model::{parse_preset, parse_session, Session};
    use crate::pipeline::BuildOptions;

    const PRESET: &str = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "You are {{char}}."},
            {"id": "hist", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true}, {"messageId": "hist", "enabled": true}]}]}"#;

    const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "Hello there."},
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "Tell me about the mill."}]}"#;

    #[test]
    fn a_rebuild_counts_history_from_the_kept_counts_and_recounts_only_changed_text() {
        let preset = parse_preset(PRESET).unwrap();
        let mut session = parse_session(SESSION).unwrap();
        let options =
            BuildOptions::at(DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap());
        let tokens = BuildCache::new();
        let build = |session: &Session| {
            build(&BuildRequest {
                assets: &crate::assets::InlineAssets,
                preset: &preset,
                session,
                kept_rewrites: None,
                model: "gpt-4o",
                options: &options,
                cache: &tokens,
                profiles: &[],
            })
            .unwrap()
            .into_owned()
        };
        let first = build(&session);
        assert_eq!(
            tokens.stats(),
            (0, 4),
            "one template and three history texts counted"
        );
        let second = build(&session);
        assert_eq!(second.messages, first.messages);
        assert_eq!(tokens.stats(), (4, 4), "nothing counted again");

        // New text in the same place is counted, never read from the kept counts.
        session.messages[1].content = Arc::from("Hi! How can I help you today, traveller?");
        let third = build(&session);
        assert_eq!(tokens.stats(), (7, 5));
        let expected = crate::tokens::TokenizerKind::O200kBase.count(&session.messages[1].content)
            as u32
            + crate::tokens::MessageOverhead::OPENAI_CHAT.per_message;
        assert_eq!(third.messages[2].tokens, expected);
        assert_ne!(third.messages[2].tokens, first.messages[2].tokens);
    }

    #[test]
    fn the_builtin_pipeline_registers_every_builtin_processor_in_priority_order() {
        let listed: Vec<&str> = builtin_processors()
            .iter()
            .map(|p| p.descriptor().id)
            .collect();
        assert_eq!(
            listed,
            [
                "session-loader",
                "history-operations",
                "memory",
                "regex-processor",
                "transcription-processor",
                "lorebook",
                "authors-note",
                "character-note",
                "injection-assembler",
                "ephemeral-injection",
                "token-limiter",
                "instruction-pinning",
                "squash-system-messages",
                "merge-system-to-head",
                "convert-system-to-user",
                "merge-consecutive-roles",
                "ensure-alternation",
                "asset-resolver",
            ]
        );
        let registered: Vec<&str> = Pipeline::builtin()
            .descriptors()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(
            registered, listed,
            "registered in the order listed (RULES 5.1)"
        );
        let default: Vec<&str> = Pipeline::default()
            .descriptors()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(default, listed, "the default pipeline is the built-in one");
        assert!(Pipeline::empty().descriptors().is_empty());
    }

    #[test]
    fn a_build_carries_the_profile_tokenizer_and_format_it_used() {
        let preset = parse_preset(PRESET).unwrap();
        let session = parse_session(SESSION).unwrap();
        let mut options =
            BuildOptions::at(DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z").unwrap());
        options.context_window = Some(5_000);
        options.reserve = Some(700);
        let cache = BuildCache::new();
        for model in [
            "gpt-4o",
            "claude-3-5-sonnet",
            "gemini-1.5-pro",
            "some-local-model",
        ] {
            let request = BuildRequest {
                assets: &crate::assets::InlineAssets,
                preset: &preset,
                session: &session,
                kept_rewrites: None,
                model,
                options: &options,
                cache: &cache,
                profiles: &[],
            };
            let result = build(&request).unwrap();
            let profile = request.profile();
            assert_eq!(result.model_profile, profile, "{model}");
            assert_eq!(result.profile, profile.id);
            assert_eq!(result.model_profile.context_window, 5_000);
            assert_eq!(result.model_profile.reserved_reply, 700);
            assert_eq!(result.provider_format(), profile.provider_format);
            assert_eq!(result.tokenizer, profile.tokenizer_choice(model));
            assert_eq!(result.tokens.tokenizer, result.tokenizer.label());
            assert_eq!(result.tokens.exact, result.tokenizer.exact);
            // The wire form is unchanged: what the result carries for callers is not sent.
            let json = serde_json::to_value(&result).unwrap();
            assert!(json.get("modelProfile").is_none() && json.get("tokenizer").is_none());
            assert_eq!(json["profile"], profile.id.as_str());
        }
    }
}
