//! Build benchmarks (RULES 5, 5.6, 5.8): one realistic preset over generated sessions of 100 to
//! 100,000 messages.
//!
//! - `cold`: a fresh token cache every iteration, so every message is counted.
//! - `warm_edit`: the cache was filled by an earlier build; each iteration gives one template a
//!   new content (exactly one recount) and rebuilds. This is the live preview while a user types.
//! - `*_limited`: the same over gpt-4o's own 128k window, where the limiter drops most history.
//!
//! The main series widen the window so that nothing is dropped and every message is placed,
//! counted and returned.

use std::hint::black_box;
use std::sync::Arc;

use chrono::DateTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{
    AgentPreset, AnchorPosition, Character, ChatMessage, ContextRecipe, InjectionStrategy,
    MessageTemplate, ProcessorConfig, RecipeStep, RegexRule, RegexScope, Role, Session,
    TemplateType, UserProfile,
};
use promptloom_engine::pipeline::KeptRewrites;
use promptloom_engine::{BuildOptions, BuildRequest, BuildResult, Pipeline};

const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];
const MODEL: &str = "gpt-4o";
/// Wide enough that no series with an unlimited window drops anything.
const WIDE_WINDOW: u32 = 100_000_000;
/// The template the warm series edits: the main system prompt, in list order.
const EDITED: usize = 0;

fn template(id: &str, role: Role, content: &str) -> MessageTemplate {
    MessageTemplate {
        id: id.into(),
        name: None,
        role,
        kind: TemplateType::Message,
        content: Some(content.into()),
        default_injection_strategy: None,
        unwrapped: false,
    }
}

fn slot(id: &str, kind: TemplateType) -> MessageTemplate {
    MessageTemplate {
        kind,
        content: None,
        ..template(id, Role::System, "")
    }
}

fn at_depth(depth: u32, order: i32) -> Option<InjectionStrategy> {
    Some(InjectionStrategy {
        depth: Some(depth),
        order: Some(order),
        ..Default::default()
    })
}

fn at_anchor(target: &str, position: AnchorPosition, order: i32) -> Option<InjectionStrategy> {
    Some(InjectionStrategy {
        anchor_target: Some(target.into()),
        anchor_position: Some(position),
        order: Some(order),
        ..Default::default()
    })
}

/// A preset shaped like a SillyTavern-style roleplay preset: 30 templates, two recipes.
fn preset() -> AgentPreset {
    use AnchorPosition::{After, Before};
    use Role::{Assistant, System, User};
    // (template, strategy on the step)
    let entries: Vec<(MessageTemplate, Option<InjectionStrategy>)> = vec![
        (template("main", System, "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}. Write one reply only, in internet RP style, italicise actions, and avoid quotation marks. Use markdown. Be proactive, creative, and drive the plot and conversation forward."), None),
        (template("style", System, "Keep replies between two and four paragraphs. Vary sentence length. Never speak or act for {{user}}; describe only what {{char}} says, does, thinks and perceives."), None),
        (template("safety", System, "This is a work of collaborative fiction. Stay in character; out-of-character notes go in double parentheses."), None),
        (slot("worldInfoBefore", TemplateType::Placeholder), None),
        (template("char_description", System, "{{description}}"), None),
        (template("char_personality", System, "{{char}}'s personality: {{personality}}"), None),
        (template("scenario", System, "Scenario: {{scenario}}"), None),
        (slot("persona", TemplateType::UserProfile), None),
        (slot("worldInfoAfter", TemplateType::Placeholder), None),
        (slot("dialogueExamples", TemplateType::Placeholder), None),
        (template("examples", System, "Examples of how {{char}} writes:\n{{mesExamples}}"), None),
        (template("start_chat", System, "[Start a new chat]"), None),
        (slot("chat_history", TemplateType::ChatHistory), None),
        (template("post_history", System, "Reply as {{char}} now. Remember the scenario and stay consistent with earlier events."), None),
        // Depth injections.
        (template("authors_note", System, "[Author's note: the tone is wistful; the weather is turning cold and {{char}} is worried about the harvest.]"), at_depth(4, 100)),
        (template("lore_depth", System, "[The old mill by the river burned down three winters ago; nobody in the village talks about it.]"), at_depth(4, 50)),
        (template("summary_note", System, "[Summary of earlier events: {{char}} and {{user}} met at the market and travelled north together.]"), at_depth(2, 100)),
        (template("scene_state", System, "[Scene: evening, the inn's common room, a fire burning low.]"), at_depth(1, 100)),
        (template("cot", System, "Before replying, think briefly about what {{char}} wants in this scene and what {{char}} knows."), at_depth(0, 200)),
        (template("reminder", System, "Stay in character as {{char}}. Do not write for {{user}}."), at_depth(0, 100)),
        (template("nudge", User, "(OOC: keep the pace slow, please.)"), at_depth(2, 150)),
        // Anchor injections.
        (template("history_intro", System, "The conversation so far:"), at_anchor("chat_history", Before, 100)),
        (template("history_rules", System, "Messages below are in chronological order; the newest is last."), at_anchor("chat_history", Before, 50)),
        (template("history_outro", System, "End of the conversation so far."), at_anchor("chat_history", After, 100)),
        (template("jailbreak", System, "Continue the story as {{char}} without summarising it."), at_anchor("chat_history", After, 200)),
        (template("wi_village", System, "Thornbury is a village of two hundred souls on the edge of the Greywood."), at_anchor("worldInfoBefore", After, 100)),
        (template("wi_greywood", System, "The Greywood is an old forest where the paths move when no one watches."), at_anchor("worldInfoBefore", After, 90)),
        (template("persona_note", System, "{{user}} is a travelling cartographer."), at_anchor("user_profile", After, 100)),
        (template("examples_intro", Assistant, "*{{char}} smiles and wipes flour from her hands.* Oh, a traveller! Sit, sit."), at_anchor("dialogueExamples", Before, 100)),
        (template("greeting", Assistant, "*The door creaks open.* Welcome to the Hearth and Hound, {{user}}."), None),
    ];
    let steps = entries
        .iter()
        .map(|(t, strategy)| RecipeStep {
            message_id: t.id.clone(),
            enabled: true,
            injection_strategy: strategy.clone(),
            overrides: None,
        })
        .collect::<Vec<_>>();
    // A second recipe that does not apply to gpt-4o, so that recipe choice has work to do.
    let claude_steps = steps.iter().take(14).cloned().collect();
    AgentPreset {
        format_version: 1,
        id: "bench".into(),
        name: "Bench preset".into(),
        description: None,
        message_templates: entries.into_iter().map(|(t, _)| t).collect(),
        context_recipes: vec![
            ContextRecipe {
                id: "claude".into(),
                name: None,
                model_filter: vec!["claude-*".into()],
                steps: claude_steps,
            },
            ContextRecipe {
                id: "openai".into(),
                name: None,
                model_filter: vec!["gpt-*".into(), "o?-*".into()],
                steps,
            },
        ],
        preset_messages: None,
        character: Some(Character {
            name: "Mira".into(),
            description: Some("Mira is the innkeeper of the Hearth and Hound, in her thirties, quick-witted and warm, with a past as a soldier that she rarely mentions.".into()),
            personality: Some("warm, teasing, stubborn, protective of the village".into()),
            scenario: Some("{{user}} arrives at the inn during the first snow of the year.".into()),
            example_dialogue: Some("<START>\n{{user}}: Is there a room free?\n{{char}}: *She looks you over.* For a traveller who wipes their boots, always.".into()),
            ..Default::default()
        }),
        lorebook: None,
        regex_rules: None,
        processors: None,
        variables: None,
        generation: None,
        compatibility: Default::default(),
        instruct: None,
    }
}

/// A small deterministic generator (xorshift64*), so that every run builds the same sessions.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "and",
    "of",
    "to",
    "in",
    "I",
    "you",
    "she",
    "it",
    "was",
    "is",
    "that",
    "with",
    "for",
    "on",
    "her",
    "my",
    "your",
    "at",
    "but",
    "not",
    "what",
    "inn",
    "river",
    "snow",
    "fire",
    "road",
    "north",
    "village",
    "mill",
    "harvest",
    "bread",
    "cold",
    "window",
    "door",
    "map",
    "forest",
    "path",
    "quietly",
    "laughs",
    "smiles",
    "looks",
    "across",
    "table",
    "remember",
    "winter",
    "travel",
    "maybe",
    "tomorrow",
    "because",
    "never",
    "always",
    "somewhere",
    "really",
    "don't",
    "can't",
    "we'll",
    "here",
    "there",
    "stranger",
    "lantern",
    "tea",
    "honey",
    "storm",
];

/// `n` messages alternating user/assistant; users write 20-200 characters, the assistant
/// 60-400, with punctuation, actions in asterisks and the odd number.
fn session(n: usize) -> Session {
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    let messages = (0..n)
        .map(|i| {
            let (role, min, max) = if i % 2 == 0 {
                (Role::User, 20, 200)
            } else {
                (Role::Assistant, 60, 400)
            };
            let target = min + rng.below(max - min + 1);
            let mut text = String::with_capacity(target + 16);
            let mut sentence_start = true;
            if role == Role::Assistant && rng.below(3) == 0 {
                text.push('*');
            }
            while text.len() < target {
                if !text.is_empty() && !text.ends_with('*') {
                    text.push(' ');
                }
                let word = WORDS[rng.below(WORDS.len())];
                if sentence_start {
                    let mut chars = word.chars();
                    if let Some(c) = chars.next() {
                        text.extend(c.to_uppercase());
                        text.push_str(chars.as_str());
                    }
                    sentence_start = false;
                } else if rng.below(40) == 0 {
                    text.push_str(&rng.below(1000).to_string());
                } else {
                    text.push_str(word);
                }
                match rng.below(12) {
                    0 => text.push(','),
                    1 => {
                        text.push(['.', '?', '!', '.'][rng.below(4)]);
                        sentence_start = true;
                    }
                    _ => {}
                }
            }
            if text.starts_with('*') {
                text.push('*');
            } else if !sentence_start {
                text.push('.');
            }
            ChatMessage {
                id: Some(format!("m{i}").into()),
                content: Arc::from(text),
                ..ChatMessage::new(role, "")
            }
        })
        .collect();
    Session {
        user_profile: Some(UserProfile {
            name: "Ash".into(),
            content: Some(
                "Ash is a cartographer in their twenties who talks too much when nervous.".into(),
            ),
        }),
        summary: Some("Ash and Mira met at the market and travelled north together.".into()),
        messages,
        ..Session::empty(format!("bench-{n}"))
    }
}

fn options(window: Option<u32>) -> BuildOptions {
    let timestamp =
        DateTime::parse_from_rfc3339("2026-03-01T18:30:00+00:00").expect("a fixed timestamp");
    BuildOptions {
        context_window: window,
        ..BuildOptions::at(timestamp)
    }
}

fn run<'s>(
    model: &str,
    pipeline: &Pipeline,
    preset: &AgentPreset,
    session: &'s Session,
    options: &BuildOptions,
    tokens: &BuildCache,
    kept_rewrites: Option<&'s KeptRewrites>,
) -> BuildResult<'s> {
    let request = BuildRequest {
        preset,
        session,
        kept_rewrites,
        model,
        options,
        cache: tokens,
        profiles: &[],
        assets: &promptloom_engine::assets::InlineAssets,
    };
    pipeline.run(&request).expect("the bench preset builds")
}

/// Checks once, outside the timings, that a series measures what it says it measures.
fn check(result: &BuildResult<'_>, session: &Session, limited: bool) {
    // Every part of every message: formatters may have joined several into one.
    let history = result
        .messages
        .iter()
        .flat_map(|m| std::iter::once(m.kind()).chain(m.merged().iter().map(|s| s.kind)))
        .filter(|kind| kind.is_history())
        .count();
    if limited {
        assert!(
            !result.dropped.is_empty() && history < session.messages.len() / 2,
            "the limiter drops most history"
        );
    } else {
        assert!(
            result.dropped.is_empty(),
            "nothing is dropped: {:?}",
            result.dropped.first()
        );
        assert_eq!(history, session.messages.len());
    }
    assert!(result.tokens.over_budget.is_none());
}

fn series(c: &mut Criterion, name: &str, sizes: &[usize], window: Option<u32>) {
    series_of(
        c,
        name,
        sizes,
        MODEL,
        preset,
        options(window),
        window.is_none(),
        session,
    );
}

/// The cold and warm series of `preset` for `model`, over the sessions `session` makes at each
/// size.
#[allow(clippy::too_many_arguments)]
fn series_of(
    c: &mut Criterion,
    name: &str,
    sizes: &[usize],
    model: &'static str,
    preset: fn() -> AgentPreset,
    options: BuildOptions,
    limited: bool,
    session: fn(usize) -> Session,
) {
    let pipeline = Pipeline::builtin();

    let mut cold = c.benchmark_group(format!("cold{name}"));
    for &n in sizes {
        let session = session(n);
        let preset = preset();
        check(
            &run(
                model,
                &pipeline,
                &preset,
                &session,
                &options,
                &BuildCache::new(),
                None,
            ),
            &session,
            limited,
        );
        if n >= 10_000 {
            cold.sample_size(10);
        }
        cold.bench_with_input(BenchmarkId::from_parameter(n), &session, |b, session| {
            b.iter_batched_ref(
                BuildCache::new,
                |tokens| run(model, &pipeline, &preset, session, &options, tokens, None),
                BatchSize::PerIteration,
            );
        });
    }
    cold.finish();

    let mut warm = c.benchmark_group(format!("warm_edit{name}"));
    for &n in sizes {
        let session = session(n);
        let mut preset = preset();
        let tokens = BuildCache::new();
        run(
            model,
            &pipeline,
            &preset,
            &session,
            &options,
            &tokens,
            Some(&KeptRewrites::of_session(&tokens, &session)),
        );
        let base = preset.message_templates[EDITED]
            .content
            .clone()
            .unwrap_or_default();
        let mut edit = 0u64;
        warm.bench_with_input(BenchmarkId::from_parameter(n), &session, |b, session| {
            b.iter(|| {
                // A content never seen before: the build recounts exactly this one message.
                edit += 1;
                preset.message_templates[EDITED].content = Some(format!("{base} (draft {edit})"));
                // As the app does: the session's store of rewrites, held for the build.
                let kept = KeptRewrites::of_session(&tokens, session);
                black_box(run(
                    model,
                    &pipeline,
                    &preset,
                    session,
                    &options,
                    &tokens,
                    Some(&kept),
                ));
            });
        });
    }
    warm.finish();
}

/// The bench preset with every processor on: a history filter, regex rules on history and
/// templates, instruction pinning and the four formatters (the ephemeral option is set by the
/// series' options; transcription, lorebook and the asset resolver run always).
fn full_preset() -> AgentPreset {
    let mut p = preset();
    let rule = |id: &str, pattern: &str, replacement: &str, scope: RegexScope| RegexRule {
        id: id.into(),
        name: None,
        pattern: pattern.into(),
        replacement: replacement.into(),
        flags: "i".into(),
        scope,
        roles: None,
        min_depth: None,
        max_depth: None,
        enabled: true,
    };
    p.regex_rules = Some(vec![
        rule("woods", r"\bforest\b", "woods", RegexScope::History),
        rule(
            "names",
            r"\{\{user\}\}",
            "the traveller",
            RegexScope::Templates,
        ),
    ]);
    let on = |id: &str, settings: serde_json::Value| ProcessorConfig {
        id: id.into(),
        enabled: Some(true),
        priority: None,
        settings: serde_json::from_value(settings).expect("settings"),
    };
    p.processors = Some(vec![
        on(
            "history-operations",
            serde_json::json!({ "operation": "filter", "contentExcludes": "#never-in-the-bench#" }),
        ),
        on("instruction-pinning", serde_json::json!({})),
        on("merge-system-to-head", serde_json::json!({})),
        on("convert-system-to-user", serde_json::json!({})),
        on("merge-consecutive-roles", serde_json::json!({})),
        on("ensure-alternation", serde_json::json!({})),
    ]);
    p
}

fn full_options() -> BuildOptions {
    let mut o = options(Some(WIDE_WINDOW));
    o.ephemeral = Some(promptloom_engine::pipeline::Ephemeral {
        kind: promptloom_engine::pipeline::EphemeralKind::Document,
        label: None,
        content: "A note the user has open beside the chat.".into(),
    });
    o
}

fn builds(c: &mut Criterion) {
    series(c, "", &SIZES, Some(WIDE_WINDOW));
    // gpt-4o's own window (128k minus the 4,096 reserve): most of a long session is dropped.
    series(c, "_limited", &[100_000], None);
    series_of(
        c,
        "_all_processors",
        &SIZES,
        MODEL,
        full_preset,
        full_options(),
        false,
        session,
    );
    // Every processor on over a named session whose names are not sent (SillyTavern
    // compatibility): beside `warm_edit_all_processors/10000`, what the names cost.
    series_of(
        c,
        "_sillytavern_names",
        &[10_000],
        MODEL,
        sillytavern_names_preset,
        full_options(),
        false,
        named_session,
    );
    // Text completion (RULES 5.12): the same builds written into one ChatML string; beside
    // `warm_edit/1000` it shows what rendering the string adds.
    let mut text = options(Some(WIDE_WINDOW));
    text.instruct = promptloom_engine::instruct::built_in("chatml");
    series_of(
        c,
        "_text_completion",
        &[1_000],
        MODEL,
        preset,
        text,
        false,
        session,
    );
    // A Llama model, counted with the llama3 vocabulary (RULES 5.8): beside `warm_edit/1000`, a
    // warm rebuild costs the same whatever the vocabulary, the counts coming from the cache.
    series_of(
        c,
        "_llama3",
        &[1_000],
        "llama-3.1-70b-instruct",
        preset_for_llama,
        options(Some(WIDE_WINDOW)),
        false,
        session,
    );
}

/// The bench session with each message named by its speaker, each name a string of its own, as
/// a chat imported from SillyTavern has them.
fn named_session(n: usize) -> Session {
    let mut s = session(n);
    for m in &mut s.messages {
        let name = if m.role == Role::User { "Ash" } else { "Mira" };
        m.name = Some(Arc::from(name));
    }
    s
}

/// Every processor on, with SillyTavern's way of sending no names (the session loader's
/// `names: none`).
fn sillytavern_names_preset() -> AgentPreset {
    let mut p = full_preset();
    p.processors
        .get_or_insert_with(Vec::new)
        .push(ProcessorConfig {
            id: "session-loader".into(),
            enabled: Some(true),
            priority: None,
            settings: serde_json::from_value(serde_json::json!({ "names": "none" }))
                .expect("settings"),
        });
    p
}

/// The bench preset with its OpenAI recipe also for Llama models.
fn preset_for_llama() -> AgentPreset {
    let mut p = preset();
    p.context_recipes[1].model_filter.push("llama-*".into());
    p
}

/// The turn-to-turn diff (RULES 9.8) over a session of 1,000 messages: `diff/1000` compares two
/// builds already made (this turn and the previous one, the Changes view's "last turn");
/// `diff_with_builds/1000` makes both warm and compares them, all the view waits for. Beside
/// `warm_edit/1000` in the same run.
fn diffs(c: &mut Criterion) {
    use promptloom_engine::assets::InlineAssets;
    use promptloom_engine::diff::{diff, previous_turn, Side};
    let pipeline = Pipeline::builtin();
    let preset = preset();
    let session = session(1_000);
    let now = BuildOptions {
        trace_macros: true,
        ..options(Some(WIDE_WINDOW))
    };
    let earlier = previous_turn(&session, &now.timestamp).expect("the bench session has turns");
    let mut then = now.clone();
    then.timestamp = earlier.timestamp.unwrap_or(now.timestamp);
    let tokens = BuildCache::new();
    fn side<'r, 's>(result: &'r BuildResult<'s>, session: &'r Session) -> Side<'r, 's> {
        Side {
            result,
            session,
            assets: &InlineAssets,
        }
    }
    // Both turns' builds, as the Changes view makes them.
    let builds = || {
        (
            run(
                MODEL,
                &pipeline,
                &preset,
                &earlier.session,
                &then,
                &tokens,
                None,
            ),
            run(MODEL, &pipeline, &preset, &session, &now, &tokens, None),
        )
    };
    let (left, right) = builds();
    let compare = |left: &BuildResult<'_>, right: &BuildResult<'_>| {
        diff(side(left, &earlier.session), side(right, &session), &tokens).expect("compares")
    };
    let checked = compare(&left, &right);
    assert!(checked.first_difference.is_some() && checked.messages.len() > 1_000);

    let mut group = c.benchmark_group("diff");
    group.bench_function(BenchmarkId::from_parameter(1_000), |b| {
        b.iter(|| black_box(compare(&left, &right)));
    });
    group.finish();

    let mut group = c.benchmark_group("diff_with_builds");
    group.bench_function(BenchmarkId::from_parameter(1_000), |b| {
        b.iter(|| {
            let (left, right) = builds();
            black_box(compare(&left, &right))
        });
    });
    group.finish();
}

criterion_group!(benches, builds, diffs);
criterion_main!(benches);
