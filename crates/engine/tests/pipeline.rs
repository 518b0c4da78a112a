//! The pipeline of RULES 5 as issue 2 delivers it: the worked example as a golden build, the
//! input safety net, the token limiter, the count cache, and settings merge.

mod common;

use std::path::PathBuf;

use common::*;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{ProcessorConfig, Role};
use promptloom_engine::pipeline::{DropAction, Pipeline, SourceKind};
use promptloom_engine::{build, BuildRequest};
use serde_json::json;

fn worked_example() -> promptloom_engine::model::AgentPreset {
    let t = |id: &str, role: &str| json!({ "id": id, "role": role, "content": format!("[{id}]") });
    preset(
        json!([
            t("sys", "system"),
            { "id": "hist", "role": "system", "type": "chat_history" },
            t("note", "system"),
            t("cot", "system"),
            t("tip", "user"),
            t("wi", "system"),
        ]),
        one_recipe(json!([
            { "messageId": "sys", "enabled": true },
            { "messageId": "hist", "enabled": true },
            { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 2, "order": 100 } },
            { "messageId": "cot", "enabled": true, "injectionStrategy": { "depth": 0 } },
            { "messageId": "tip", "enabled": true, "injectionStrategy": { "depth": 2, "order": 200 } },
            { "messageId": "wi", "enabled": true,
              "injectionStrategy": { "anchorTarget": "chat_history", "anchorPosition": "before" } },
        ])),
    )
}

/// The worked example of RULES 3.8, end to end: the order of the rules, and the whole result
/// (tokens, provenance, logs) pinned in `tests/golden/worked_example.json`. Set
/// `UPDATE_GOLDEN=1` to rewrite the file after an intended change, and review the diff.
#[test]
fn worked_example_golden() {
    let session = session_of(&["u1", "a1", "u2", "a2", "u3"]);
    let r = run(&worked_example(), &session);
    assert_eq!(
        contents(&r),
        ["[sys]", "[wi]", "u1", "a1", "u2", "[tip]", "[note]", "a2", "u3", "[cot]"]
    );
    let actual = serde_json::to_string_pretty(&r).expect("serializes") + "\n";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/worked_example.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).expect("golden file written");
    }
    let expected = std::fs::read_to_string(&path).expect("golden file exists");
    assert_eq!(
        actual, expected,
        "the build differs from tests/golden/worked_example.json"
    );
}

#[test]
fn builds_are_deterministic() {
    let p = worked_example();
    let s = session_of(&["u1", "a1", "u2", "a2", "u3"]);
    let a = serde_json::to_string(&run(&p, &s)).expect("serializes");
    let b = serde_json::to_string(&run(&p, &s)).expect("serializes");
    assert_eq!(a, b);
}

#[test]
fn input_is_appended_as_the_newest_user_message() {
    let p = worked_example();
    let mut options = options();
    options.input = Some("u4".into());
    let session = session_of(&["u1", "a1"]);
    let r = try_run(&p, &session, "gpt-4o", &options).expect("builds");
    // Depth 0 follows the input; depth 2 counts it as history.
    assert_eq!(
        contents(&r),
        ["[sys]", "[wi]", "u1", "[tip]", "[note]", "a1", "u4", "[cot]"]
    );
    let input = &r.messages[6];
    assert_eq!(
        (input.role, input.source().kind),
        (Role::User, SourceKind::Input)
    );
}

#[test]
fn input_is_not_appended_when_the_session_already_ends_with_it() {
    let p = worked_example();
    let mut options = options();
    options.input = Some("  u2 ".into());
    let session = session_of(&["u1", "a1", "u2"]);
    let r = try_run(&p, &session, "gpt-4o", &options).expect("builds");
    let users = r.messages.iter().filter(|m| m.content() == "u2").count();
    assert_eq!(users, 1);
    assert!(r
        .logs
        .iter()
        .any(|l| l.message.contains("already ends with the input")));
}

fn limited(
    window: u32,
    truncate: bool,
    history: &[&str],
) -> promptloom_engine::BuildResult<'static> {
    let mut p = worked_example();
    if truncate {
        p.processors = Some(vec![ProcessorConfig {
            id: "token-limiter".into(),
            enabled: Some(true),
            priority: None,
            settings: serde_json::from_value(json!({ "truncateOverflowing": true }))
                .expect("settings"),
        }]);
    }
    let session = session_of(history);
    let mut options = options();
    options.context_window = Some(window);
    options.reserve = Some(0);
    try_run(&p, &session, "gpt-4o", &options)
        .expect("builds")
        .into_owned()
}

fn long_history(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let who = if i % 2 == 0 { "u" } else { "a" };
            format!("{who}{i} {}", "lorem ipsum dolor sit amet ".repeat(8))
        })
        .collect()
}

#[test]
fn token_limiter_drops_oldest_history_first_and_keeps_templates() {
    let history = long_history(40);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let full = limited(1_000_000, false, &refs);
    assert!(full.dropped.is_empty());
    let window = full.tokens.total / 2;
    let r = limited(window, false, &refs);
    assert!(r.tokens.total <= window, "{} > {window}", r.tokens.total);
    assert_eq!(r.tokens.over_budget, None);
    // Every template message is still there, depth injections included.
    for id in ["[sys]", "[wi]", "[tip]", "[note]", "[cot]"] {
        assert!(contents(&r).iter().any(|c| c == id), "{id} kept");
    }
    // What is kept of the history is a suffix of it, in order.
    let kept: Vec<u32> = r
        .messages
        .iter()
        .filter_map(|m| m.source().history_index)
        .collect();
    let first = kept[0];
    assert_eq!(kept, (first..40).collect::<Vec<_>>());
    // The drop is reported as one run of the oldest messages, with the reason.
    assert_eq!(r.dropped.len(), 1);
    let d = &r.dropped[0];
    assert_eq!(d.action, DropAction::Dropped);
    assert_eq!(d.source.history_index, Some(0));
    assert_eq!(d.count, first);
    assert_eq!(d.last_history_index, Some(first - 1));
    assert!(d.reason.contains("budget"));
}

#[test]
fn token_limiter_never_drops_the_newest_user_message() {
    let history = long_history(6);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    // A window that holds the templates and little else.
    let bare = limited(1_000_000, false, &[]).tokens.total;
    let r = limited(bare + 5, false, &refs);
    let kept: Vec<_> = r
        .messages
        .iter()
        .filter(|m| m.source().kind == SourceKind::History)
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        kept[0].source().history_index,
        Some(4),
        "u4 is the newest user message"
    );
    assert!(
        r.tokens.over_budget.is_some(),
        "and the overflow is reported"
    );
}

#[test]
fn token_limiter_reports_over_budget_when_the_fixed_part_does_not_fit() {
    let r = limited(10, false, &["u1", "a1"]);
    let over = r.tokens.over_budget.expect("over budget");
    assert_eq!(over, r.tokens.total - 10);
    assert!(!r.messages.is_empty(), "messages are still returned");
    assert!(r
        .warnings
        .iter()
        .any(|w| w.message.contains("over budget by")));
}

#[test]
fn token_limiter_truncate_overflowing_cuts_the_oldest_kept_message() {
    let history = long_history(20);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let full = limited(1_000_000, false, &refs).tokens.total;
    let window = full / 2;
    let plain = limited(window, false, &refs);
    let cut = limited(window, true, &refs);
    assert!(cut.tokens.total <= window);
    assert!(cut.tokens.total >= plain.tokens.total);
    let truncated: Vec<_> = cut.messages.iter().filter(|m| m.truncated()).collect();
    assert_eq!(truncated.len(), 1);
    let t = truncated[0];
    let original = &history[t.source().history_index.expect("history") as usize];
    assert!(original.ends_with(t.content()) && t.content().len() < original.len());
    assert!(cut
        .dropped
        .iter()
        .any(|d| d.action == DropAction::Truncated
            && d.source.history_index == t.source().history_index));
}

/// A history message that went in exactly as stored refers to the session instead of copying it
/// (what makes a rebuild over a long session cheap); it reads and serialises like any other.
#[test]
fn history_that_went_in_as_stored_reads_like_any_message_and_says_so() {
    let mut p = worked_example();
    p.regex_rules = Some(vec![promptloom_engine::model::RegexRule {
        id: "u2".into(),
        name: None,
        pattern: "^u2$".into(),
        replacement: "u2, rewritten".into(),
        flags: String::new(),
        scope: promptloom_engine::model::RegexScope::History,
        roles: None,
        min_depth: None,
        max_depth: None,
        enabled: true,
    }]);
    let session = session_of(&["u1", "a1", "u2", "a2", "u3"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        [
            "[sys]",
            "[wi]",
            "u1",
            "a1",
            "u2, rewritten",
            "[tip]",
            "[note]",
            "a2",
            "u3",
            "[cot]"
        ]
    );
    let stored: Vec<_> = r.messages.iter().map(|m| m.stored_index()).collect();
    assert_eq!(
        stored,
        [
            None,
            None,
            Some(0),
            Some(1),
            None,
            None,
            None,
            Some(3),
            Some(4),
            None
        ]
    );
    for m in &r.messages {
        let source = m.source();
        if let Some(h) = source.history_index {
            let at = &session.messages[h as usize];
            assert_eq!(source.kind, SourceKind::History);
            assert_eq!(source.message_id, at.id, "history #{h} names its stored id");
            assert_eq!(m.role, at.role);
        }
        if let Some(h) = m.stored_index() {
            assert_eq!(m.content(), &*session.messages[h as usize].content);
        }
    }
    let owned = r.clone().into_owned();
    assert!(owned.messages.iter().all(|m| m.stored_index().is_none()));
    assert_eq!(owned, r, "the same messages, standing alone");
    assert_eq!(
        serde_json::to_value(&owned).expect("serialises"),
        serde_json::to_value(&r).expect("serialises")
    );
}

#[test]
fn rebuilding_after_one_template_edit_recounts_one_message() {
    let mut p = worked_example();
    let history = long_history(200);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let s = session_of(&refs);
    let cache = BuildCache::new();
    let build_with = |p: &promptloom_engine::model::AgentPreset| run_cached(p, &s, &cache);
    build_with(&p);
    let (_, misses_before) = cache.stats();
    p.message_templates[0].content = Some("[sys] edited".into());
    let r = build_with(&p);
    let (_, misses_after) = cache.stats();
    assert_eq!(misses_after - misses_before, 1);
    assert_eq!(r.messages[0].content(), "[sys] edited");
}

#[test]
fn token_counts_include_the_openai_chat_overhead() {
    let session = session_of(&["u1"]);
    let r = run(&worked_example(), &session);
    let kind = promptloom_engine::tokens::TokenizerKind::O200kBase;
    for m in &r.messages {
        assert_eq!(
            m.tokens as usize,
            // OpenAI's recipe: 3 per message, plus its fields' tokens: the content and the role.
            kind.count(m.content()) + 3 + kind.count(m.role.as_str()),
            "{}",
            m.content()
        );
    }
    let sum: u32 = r.messages.iter().map(|m| m.tokens).sum();
    assert_eq!(r.tokens.total, sum + 3, "3 tokens prime the reply");
    assert!(r.tokens.exact);
    for kind in [
        promptloom_engine::tokens::TokenizerKind::O200kBase,
        promptloom_engine::tokens::TokenizerKind::Cl100kBase,
    ] {
        for role in ["system", "user", "assistant", "tool"] {
            assert_eq!(
                kind.count(role),
                1,
                "{role} is one token in {}",
                kind.as_str()
            );
        }
    }
    let session = session_of(&["u1"]);
    let estimate =
        try_run(&worked_example(), &session, "claude-3-5-sonnet", &options()).expect("builds");
    assert!(!estimate.tokens.exact);
    assert!(estimate.tokens.tokenizer.contains("estimate"));
}

#[test]
fn preset_settings_replace_the_model_profile_settings_whole() {
    let pipeline = Pipeline::builtin();
    let mut p = worked_example();
    let profile = promptloom_engine::profiles::profile_for_model("gpt-4o", &[]);
    let limiter = |configs: &[promptloom_engine::pipeline::ResolvedConfig]| {
        configs
            .iter()
            .find(|c| c.id == "token-limiter")
            .expect("limiter")
            .clone()
    };
    let default = limiter(&pipeline.resolve(&p, &profile));
    assert!(!default.bool("truncateOverflowing"));
    p.processors = Some(vec![ProcessorConfig {
        id: "token-limiter".into(),
        enabled: Some(false),
        priority: None,
        settings: serde_json::from_value(json!({ "truncateOverflowing": true })).expect("map"),
    }]);
    let merged = limiter(&pipeline.resolve(&p, &profile));
    assert!(!merged.enabled);
    assert!(merged.bool("truncateOverflowing"));
    // A disabled limiter drops nothing, whatever the window.
    let mut options = options();
    options.context_window = Some(20);
    let session = session_of(&["u1", "a1", "u2"]);
    let r = try_run(&p, &session, "gpt-4o", &options).expect("builds");
    assert!(r.dropped.is_empty());
    assert!(r.tokens.over_budget.is_some());
}

#[test]
fn pipeline_runs_in_priority_order_and_lists_its_processors() {
    let ids: Vec<_> = Pipeline::builtin()
        .descriptors()
        .into_iter()
        .map(|d| (d.id, d.priority))
        .collect();
    assert_eq!(
        ids,
        [
            ("session-loader", 100),
            ("history-operations", 150),
            ("memory", 160),
            ("regex-processor", 200),
            ("transcription-processor", 250),
            ("lorebook", 280),
            ("authors-note", 290),
            ("character-note", 295),
            ("injection-assembler", 300),
            ("ephemeral-injection", 350),
            ("token-limiter", 400),
            ("instruction-pinning", 450),
            ("squash-system-messages", 480),
            ("merge-system-to-head", 500),
            ("convert-system-to-user", 600),
            ("merge-consecutive-roles", 700),
            ("ensure-alternation", 800),
            ("asset-resolver", 10000),
        ]
    );
    let session = session_of(&["u1"]);
    let r = run(&worked_example(), &session);
    let order: Vec<&str> = r.logs.iter().map(|l| l.processor.as_str()).collect();
    let first = |id: &str| order.iter().position(|p| *p == id).expect("logged");
    assert!(first("session-loader") < first("injection-assembler"));
    assert!(first("injection-assembler") < first("token-limiter"));
}

#[test]
fn macros_in_a_build_read_the_build_timestamp_and_the_session_seed() {
    let p = preset(
        json!([{ "id": "sys", "role": "system",
                 "content": "{{date}} {{weekday}} {{random::a::b::c::d::e::f::g::h}}{{setvar::n::1}}{{addvar::n::2}}" }]),
        one_recipe(json!([{ "messageId": "sys", "enabled": true }])),
    );
    let s = session_of(&["u1"]);
    let first = run(&p, &s);
    let text = &first.messages[0].content();
    assert!(text.starts_with("November 22, 2026 Sunday "), "{text}");
    assert_eq!(first.variables.get("n").map(String::as_str), Some("3"));
    // The same build again: the same choice, so the live preview does not flicker.
    assert_eq!(run(&p, &s).messages[0].content(), *text);
    // Another timestamp changes the date and nothing else.
    let mut later = options();
    later.timestamp =
        chrono::DateTime::parse_from_rfc3339("2026-11-23T09:00:00+00:00").expect("time");
    let next = try_run(&p, &s, "gpt-4o", &later).expect("builds");
    assert_eq!(
        next.messages[0].content(),
        text.replace("November 22, 2026 Sunday", "November 23, 2026 Monday")
    );
}

fn proportional_preset(system_words: usize) -> promptloom_engine::model::AgentPreset {
    let mut p = preset(
        json!([
            { "id": "main", "role": "system", "content": "rule ".repeat(system_words) },
            { "id": "sum", "role": "system", "content": "Summary so far: {{summary}}" },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ]),
        one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "sum", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ])),
    );
    p.processors = Some(vec![ProcessorConfig {
        id: "token-limiter".into(),
        enabled: None,
        priority: None,
        settings: serde_json::from_value(json!({ "strategy": "proportional" })).expect("map"),
    }]);
    p
}

fn proportional_run(system_words: usize, window: u32) -> promptloom_engine::BuildResult<'static> {
    let history = long_history(60);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let mut session = session_of(&refs);
    session.summary = Some("they met ".repeat(200));
    let mut options = options();
    options.context_window = Some(window);
    options.reserve = Some(0);
    try_run(
        &proportional_preset(system_words),
        &session,
        "gpt-4o",
        &options,
    )
    .expect("builds")
    .into_owned()
}

#[test]
fn token_limiter_proportional_cuts_each_section_to_its_share() {
    let window = 2_000;
    let r = proportional_run(1_000, window);
    assert!(r.tokens.total <= window, "{} > {window}", r.tokens.total);
    // System 20% and summary 10% of the budget, each cut at its head.
    let main = &r.messages[0];
    assert!(
        main.truncated() && main.tokens <= window / 5,
        "{}",
        main.tokens
    );
    assert!(main.content().starts_with("rule rule"));
    let summary = &r.messages[1];
    assert!(
        summary.truncated() && summary.tokens <= window / 10,
        "{}",
        summary.tokens
    );
    let cuts: Vec<_> = r
        .dropped
        .iter()
        .filter(|d| d.action == DropAction::Truncated)
        .map(|d| d.reason.as_str())
        .collect();
    assert!(cuts.iter().any(|c| c.contains("System share")), "{cuts:?}");
    assert!(cuts.iter().any(|c| c.contains("Summary share")), "{cuts:?}");
    // History fills what is left, newest kept.
    let last = r.messages.last().expect("last");
    assert_eq!(last.source().history_index, Some(59));
}

#[test]
fn token_limiter_proportional_hands_unused_shares_to_history() {
    let window = 2_000;
    let r = proportional_run(5, window);
    assert!(!r.messages[0].truncated());
    let history: u32 = r
        .messages
        .iter()
        .filter(|m| m.source().kind == SourceKind::History)
        .map(|m| m.tokens)
        .sum();
    // More than history's own 55% (+ the input's 5%): the system share was barely used.
    assert!(history > window * 60 / 100, "history {history} of {window}");
    assert!(r.tokens.total <= window);
}

#[test]
fn settings_record_their_origin_for_the_ui() {
    use promptloom_engine::pipeline::SettingOrigin;
    let pipeline = Pipeline::builtin();
    let claude = promptloom_engine::profiles::profile_for_model("claude-3-5-sonnet", &[]);
    let mut p = worked_example();
    let find = |configs: Vec<promptloom_engine::pipeline::ResolvedConfig>, id: &str| {
        configs.into_iter().find(|c| c.id == id).expect("processor")
    };
    let convert = find(pipeline.resolve(&p, &claude), "convert-system-to-user");
    assert!(convert.enabled);
    assert_eq!(convert.origin, SettingOrigin::Model);
    assert_eq!(convert.origins.get("prefix"), Some(&SettingOrigin::Default));
    let gpt = promptloom_engine::profiles::profile_for_model("gpt-4o", &[]);
    let convert = find(pipeline.resolve(&p, &gpt), "convert-system-to-user");
    assert!(!convert.enabled);
    assert_eq!(convert.origin, SettingOrigin::Default);

    p.processors = Some(vec![ProcessorConfig {
        id: "convert-system-to-user".into(),
        enabled: Some(true),
        priority: None,
        settings: serde_json::from_value(json!({ "prefix": "[sys] " })).expect("map"),
    }]);
    let convert = find(pipeline.resolve(&p, &claude), "convert-system-to-user");
    assert_eq!(convert.origin, SettingOrigin::Preset);
    assert_eq!(convert.origins.get("prefix"), Some(&SettingOrigin::Preset));
    assert_eq!(convert.str("prefix"), "[sys] ");
}

#[test]
fn a_user_profile_replaces_the_builtin_one_for_its_models() {
    let mut mine = promptloom_engine::profiles::profile_for_model("gpt-4o", &[]);
    mine.id = "my-small-gpt".into();
    mine.patterns = vec!["gpt-4o".into()];
    mine.context_window = 60;
    mine.reserved_reply = 10;
    let history = long_history(10);
    let refs: Vec<&str> = history.iter().map(String::as_str).collect();
    let s = session_of(&refs);
    let options = options();
    let cache = BuildCache::new();
    let r = build(&BuildRequest {
        preset: &worked_example(),
        session: &s,
        kept_rewrites: None,
        model: "gpt-4o",
        options: &options,
        cache: &cache,
        profiles: std::slice::from_ref(&mine),
        assets: &promptloom_engine::assets::InlineAssets,
    })
    .expect("builds");
    assert_eq!(r.profile, "my-small-gpt");
    assert_eq!(r.tokens.budget, 50);
    assert!(!r.dropped.is_empty());
}

#[test]
fn the_pipeline_panel_stages_are_the_run_order_with_settings_and_the_profile_config() {
    use promptloom_engine::profiles::profile_for_model;
    let pipeline = Pipeline::builtin();
    let mut p = worked_example();
    p.processors = Some(vec![ProcessorConfig {
        id: "token-limiter".into(),
        enabled: Some(false),
        priority: Some(5),
        settings: Default::default(),
    }]);
    let claude = profile_for_model("claude-3-5-sonnet", &[]);
    let stages = pipeline.stages(&p, "claude-3-5-sonnet", &[]);
    let resolved = pipeline.resolve(&p, &claude);
    assert_eq!(stages.len(), pipeline.descriptors().len());
    assert_eq!(
        stages
            .iter()
            .map(|s| s.resolved.clone())
            .collect::<Vec<_>>(),
        resolved,
        "each stage runs with what a build resolves, in the order it runs"
    );
    assert_eq!(
        stages[0].resolved.id, "token-limiter",
        "a preset's priority moves it"
    );
    for stage in &stages {
        assert_eq!(stage.descriptor.id, stage.resolved.id);
        assert_eq!(
            stage.model_config,
            claude
                .processors
                .iter()
                .find(|c| c.id == stage.resolved.id)
                .cloned(),
            "{}: the profile's own config, which a reset goes back to",
            stage.resolved.id
        );
    }
    let convert = stages
        .iter()
        .find(|s| s.resolved.id == "convert-system-to-user")
        .expect("stage");
    assert!(convert.model_config.is_some() && convert.resolved.enabled);

    // A user profile for the model is the one the stages are resolved with.
    let mut mine = profile_for_model("gpt-4o", &[]);
    mine.id = "mine".into();
    mine.patterns = vec!["claude-3-5-sonnet".into()];
    let stages = pipeline.stages(&p, "claude-3-5-sonnet", std::slice::from_ref(&mine));
    assert!(stages.iter().all(|s| s.model_config.is_none()));
    assert_eq!(
        stages
            .iter()
            .map(|s| s.resolved.clone())
            .collect::<Vec<_>>(),
        pipeline.resolve(&p, &mine)
    );
    // The wire shape the UI's bindings show.
    let json = serde_json::to_value(&stages[0]).expect("serialises");
    let keys: Vec<&str> = json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["descriptor", "modelConfig", "resolved", "sillytavern"]
    );
}

/// RULES 5.11: under SillyTavern compatibility a processor starts from its SillyTavern
/// behaviour (origin `compatibility`); the preset's config still wins key by key over it, and a
/// native preset never sees it.
#[test]
fn sillytavern_compatibility_is_a_settings_layer_under_the_preset() {
    use promptloom_engine::model::Compatibility;
    use promptloom_engine::pipeline::{
        CompatDefaults, ConfigField, PipelineContext, Processor, ProcessorDescriptor,
        ResolvedConfig, SettingOrigin,
    };
    struct Probe;
    impl Processor for Probe {
        fn descriptor(&self) -> ProcessorDescriptor {
            ProcessorDescriptor {
                id: "probe",
                name: "Probe",
                description: "",
                priority: 900,
                is_core: false,
                default_enabled: false,
                config_fields: vec![
                    ConfigField::boolean("joined", "Joined", false),
                    ConfigField::text("format", "Format", "{0}"),
                ],
            }
        }
        fn sillytavern(&self) -> Option<CompatDefaults> {
            Some(
                CompatDefaults::new(promptloom_engine::texts::PLAIN.with("text", "probe"))
                    .enabled(true)
                    .set("joined", true),
            )
        }
        fn execute(
            &self,
            _: &mut PipelineContext<'_, '_>,
            _: &ResolvedConfig,
        ) -> Result<(), promptloom_engine::EngineError> {
            Ok(())
        }
    }
    let mut pipeline = Pipeline::empty();
    pipeline.register(Box::new(Probe));
    let profile = promptloom_engine::profiles::profile_for_model("gpt-4o", &[]);
    let probe = |p: &promptloom_engine::model::AgentPreset| pipeline.resolve(p, &profile).remove(0);

    let mut p = worked_example();
    let native = probe(&p);
    assert!(!native.enabled);
    assert!(!native.bool("joined"));
    assert_eq!(native.origin, SettingOrigin::Default);

    p.compatibility = Compatibility::Sillytavern;
    let st = probe(&p);
    assert!(st.enabled);
    assert!(st.bool("joined"));
    assert_eq!(st.origin, SettingOrigin::Compatibility);
    assert_eq!(st.origins["joined"], SettingOrigin::Compatibility);
    assert_eq!(st.origins["format"], SettingOrigin::Default);

    // The preset sets one setting: the other keeps its SillyTavern value, and so does `enabled`.
    p.processors = Some(vec![ProcessorConfig {
        id: "probe".into(),
        enabled: None,
        priority: None,
        settings: serde_json::from_value(json!({ "format": "[{0}]" })).expect("map"),
    }]);
    let mixed = probe(&p);
    assert!(mixed.enabled);
    assert_eq!(mixed.origin, SettingOrigin::Compatibility);
    assert!(mixed.bool("joined"));
    assert_eq!(mixed.str("format"), "[{0}]");
    assert_eq!(mixed.origins["format"], SettingOrigin::Preset);

    // The preset switches it off: the preset's word wins.
    p.processors.as_mut().expect("configs")[0].enabled = Some(false);
    let off = probe(&p);
    assert!(!off.enabled);
    assert_eq!(off.origin, SettingOrigin::Preset);
    assert_eq!(pipeline.sillytavern_changes().len(), 1);
}
