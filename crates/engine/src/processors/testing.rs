//! Test helpers: run one processor over given messages or history, outside a full build.

use chrono::DateTime;
use serde_json::Value;

use crate::cache::BuildCache;
use crate::model::{AgentPreset, ProcessorConfig, Role, Session};
use crate::pipeline::{
    BuildOptions, BuildRequest, BuildResult, History, PipelineContext, PipelineMessage, Placement,
    Processor, ResolvedConfig, Source, SourceKind,
};

pub fn empty_preset() -> AgentPreset {
    crate::model::parse_preset(
        r#"{"formatVersion":1,"id":"t","name":"T","messageTemplates":[],"contextRecipes":[]}"#,
    )
    .expect("empty preset")
}

pub fn empty_session() -> Session {
    crate::model::parse_session(r#"{"formatVersion":1,"id":"s","messages":[]}"#)
        .expect("empty session")
}

pub fn options() -> BuildOptions {
    BuildOptions::at(DateTime::parse_from_rfc3339("2026-11-22T10:30:00+00:00").expect("time"))
}

/// A build context for `processor` with `settings` given as a preset would give them, handed to
/// `f` with the processor's resolved config.
pub fn with_context<R>(
    processor: &dyn Processor,
    settings: &[(&str, Value)],
    session: &Session,
    options: &BuildOptions,
    f: impl for<'x> FnOnce(PipelineContext<'x, 'x>, &ResolvedConfig) -> R,
) -> R {
    let mut preset = empty_preset();
    let descriptor = processor.descriptor();
    preset.processors = Some(vec![ProcessorConfig {
        id: descriptor.id.to_string(),
        enabled: Some(true),
        priority: None,
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    }]);
    let cache = BuildCache::new();
    let request = BuildRequest {
        preset: &preset,
        session,
        kept_rewrites: None,
        model: "gpt-4o",
        options,
        cache: &cache,
        profiles: &[],
        assets: &crate::assets::InlineAssets,
    };
    let profile = request.profile();
    let compat = processor.sillytavern();
    let config = ResolvedConfig::merge(&descriptor, compat.as_ref(), &profile, &preset);
    let ctx = PipelineContext::new(&request, profile);
    assert!(
        config.notes.is_empty(),
        "settings refused: {:?}",
        config.notes
    );
    f(ctx, &config)
}

/// Template messages in list order.
pub fn messages_of(messages: &[(Role, &str)]) -> Vec<PipelineMessage<'static>> {
    messages
        .iter()
        .map(|(role, text)| {
            PipelineMessage::new(
                *role,
                *text,
                Source::new(SourceKind::Template, Placement::List),
            )
        })
        .collect()
}

/// History messages with history indices 0..n.
pub fn history_of(messages: &[(Role, &str)]) -> Vec<PipelineMessage<'static>> {
    messages
        .iter()
        .enumerate()
        .map(|(i, (role, text))| PipelineMessage::new(*role, *text, Source::history(i)))
        .collect()
}

/// Runs `processor` with `settings` over `messages` (template messages in list order) and
/// returns the finished result.
pub fn run_one(
    processor: &dyn Processor,
    settings: &[(&str, Value)],
    messages: &[(Role, &str)],
) -> BuildResult<'static> {
    run_with(processor, settings, messages_of(messages), &options())
}

/// Runs `processor` over a prepared message list with the given build options.
pub fn run_with(
    processor: &dyn Processor,
    settings: &[(&str, Value)],
    messages: Vec<PipelineMessage<'static>>,
    options: &BuildOptions,
) -> BuildResult<'static> {
    with_context(
        processor,
        settings,
        &empty_session(),
        options,
        |mut ctx, config| {
            ctx.messages = messages;
            processor.execute(&mut ctx, config).expect("processor runs");
            ctx.finish().into_owned()
        },
    )
}

/// Runs `processor` over a history of `messages` and returns the history it leaves, with the
/// finished result (its drops and logs).
pub fn run_on_history(
    processor: &dyn Processor,
    settings: &[(&str, Value)],
    messages: &[(Role, &str)],
) -> (History<'static>, BuildResult<'static>) {
    with_context(
        processor,
        settings,
        &empty_session(),
        &options(),
        |mut ctx, config| {
            for m in history_of(messages) {
                ctx.history.push(m);
            }
            processor.execute(&mut ctx, config).expect("processor runs");
            let left = std::mem::take(&mut ctx.history).into_owned();
            (left, ctx.finish().into_owned())
        },
    )
}

pub fn roles_and_contents(result: &BuildResult<'_>) -> Vec<(Role, String)> {
    result
        .messages
        .iter()
        .map(|m| (m.role, m.content().to_string()))
        .collect()
}
