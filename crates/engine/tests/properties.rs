//! Property tests of the assembler's invariants (issue 2, item 4): over random recipes, histories
//! and budgets, no history message is lost or duplicated except those the limiter reports, the
//! history keeps its order, every enabled step is sent or reported, and builds are deterministic.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::*;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::{AgentPreset, ChatMessage, RegexRule, RegexScope, Role};
use promptloom_engine::pipeline::{DropAction, SourceKind};
use promptloom_engine::BuildResult;
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Placed {
    List,
    Depth(u32, i32),
    Anchor(&'static str, bool, i32),
    Both(u32),
}

#[derive(Debug, Clone)]
struct Case {
    steps: Vec<(Placed, bool)>,
    history_slot: Option<bool>, // None: no slot; Some(enabled)
    profile_slot: bool,
    history: Vec<bool>, // true: user
    window: Option<u32>,
    truncate: bool,
}

fn placed() -> impl Strategy<Value = Placed> {
    prop_oneof![
        Just(Placed::List),
        (0u32..12, -50i32..300).prop_map(|(d, o)| Placed::Depth(d, o)),
        (
            prop::sample::select(vec!["chat_history", "user_profile", "ph", "missing"]),
            any::<bool>(),
            -50i32..300
        )
            .prop_map(|(a, before, o)| Placed::Anchor(a, before, o)),
        (0u32..4).prop_map(Placed::Both),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((placed(), prop::bool::weighted(0.85)), 0..10),
        prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        any::<bool>(),
        prop::collection::vec(any::<bool>(), 0..40),
        prop_oneof![Just(None), (40u32..600).prop_map(Some)],
        any::<bool>(),
    )
        .prop_map(
            |(steps, history_slot, profile_slot, history, window, truncate)| Case {
                steps,
                history_slot,
                profile_slot,
                history,
                window,
                truncate,
            },
        )
}

fn preset_of(case: &Case) -> AgentPreset {
    let mut templates = vec![
        json!({ "id": "hist", "role": "system", "type": "chat_history" }),
        json!({ "id": "me", "role": "user", "type": "user_profile" }),
        json!({ "id": "ph", "role": "system", "type": "placeholder" }),
    ];
    let mut steps: Vec<Value> = vec![json!({ "messageId": "ph", "enabled": true })];
    if case.profile_slot {
        steps.push(json!({ "messageId": "me", "enabled": true }));
    }
    if let Some(enabled) = case.history_slot {
        steps.push(json!({ "messageId": "hist", "enabled": enabled }));
    }
    for (i, (placed, enabled)) in case.steps.iter().enumerate() {
        let id = format!("t{i}");
        templates.push(json!({ "id": id, "role": "system", "content": format!("<{id}>") }));
        let strategy = match placed {
            Placed::List => json!({}),
            Placed::Depth(d, o) => json!({ "depth": d, "order": o }),
            Placed::Anchor(a, before, o) => json!({
                "anchorTarget": a,
                "anchorPosition": if *before { "before" } else { "after" },
                "order": o,
            }),
            Placed::Both(d) => json!({ "depth": d, "anchorTarget": "ph" }),
        };
        steps.push(json!({ "messageId": id, "enabled": enabled, "injectionStrategy": strategy }));
    }
    let mut value = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": templates,
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": steps }],
    });
    if case.truncate {
        value["processors"] =
            json!([{ "id": "token-limiter", "settings": { "truncateOverflowing": true } }]);
    }
    preset_from(value)
}

fn session_of_case(case: &Case) -> promptloom_engine::model::Session {
    let messages: Vec<Value> = case
        .history
        .iter()
        .enumerate()
        .map(|(i, user)| {
            json!({
                "id": format!("m{i}"),
                "role": if *user { "user" } else { "assistant" },
                "content": format!("message {i} {}", "word ".repeat(i % 7 * 3)),
            })
        })
        .collect();
    session_from(json!({
        "formatVersion": 1, "id": "s", "title": "t",
        "userProfile": { "name": "Ann", "content": "Ann." },
        "messages": messages,
    }))
}

fn build_case(case: &Case) -> BuildResult<'static> {
    let mut options = options();
    options.context_window = case.window;
    options.reserve = case.window.map(|_| 0);
    try_run(&preset_of(case), &session_of_case(case), "gpt-4o", &options)
        .expect("builds")
        .into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn no_history_message_is_lost_or_duplicated_except_those_the_limiter_reports(case in case()) {
        let r = build_case(&case);
        let n = case.history.len() as u32;
        let sent: Vec<u32> = r
            .messages
            .iter()
            .filter(|m| m.source().kind == SourceKind::History)
            .map(|m| m.source().history_index.expect("history carries its index"))
            .collect();
        let sent_set: BTreeSet<u32> = sent.iter().copied().collect();
        prop_assert_eq!(sent_set.len(), sent.len(), "a history message was duplicated");

        let mut reported = BTreeSet::new();
        for d in r.dropped.iter().filter(|d| d.processor == "token-limiter" && d.action == DropAction::Dropped) {
            let first = d.source.history_index.expect("dropped history carries its index");
            let last = d.last_history_index.unwrap_or(first);
            prop_assert_eq!(last - first + 1, d.count);
            for i in first..=last {
                prop_assert!(reported.insert(i), "dropped twice: {}", i);
            }
        }
        prop_assert!(sent_set.is_disjoint(&reported), "sent and dropped");

        if case.history_slot == Some(true) {
            let all: BTreeSet<u32> = (0..n).collect();
            let covered: BTreeSet<u32> = sent_set.union(&reported).copied().collect();
            prop_assert_eq!(covered, all, "a history message was lost");
        } else {
            prop_assert!(sent.is_empty(), "history sent without a chat_history slot");
        }
    }

    #[test]
    fn history_order_is_kept(case in case()) {
        let r = build_case(&case);
        let sent: Vec<u32> = r
            .messages
            .iter()
            .filter_map(|m| m.source().history_index)
            .collect();
        prop_assert!(sent.windows(2).all(|w| w[0] < w[1]), "{:?}", sent);
    }

    #[test]
    fn every_enabled_step_is_sent_once_or_reported(case in case()) {
        let r = build_case(&case);
        for (i, (_, enabled)) in case.steps.iter().enumerate() {
            let id = format!("t{i}");
            let sent = r
                .messages
                .iter()
                .filter(|m| m.source().template_id.as_deref() == Some(id.as_str()))
                .count();
            let dropped = r
                .dropped
                .iter()
                .filter(|d| d.source.template_id.as_deref() == Some(id.as_str()))
                .count();
            if *enabled {
                prop_assert_eq!(sent + dropped, 1, "step {} sent {} dropped {}", id, sent, dropped);
            } else {
                prop_assert_eq!(sent + dropped, 0);
            }
        }
    }

    #[test]
    fn depth_injections_have_exactly_min_d_n_history_messages_after_them(case in case()) {
        let r = build_case(&case);
        if case.history_slot != Some(true) || !r.dropped.is_empty() {
            return Ok(()); // the limiter may have removed history after the injection
        }
        let n = case.history.len();
        for (at, m) in r.messages.iter().enumerate() {
            if let promptloom_engine::pipeline::Placement::Depth { depth } = m.source().placement {
                let after = r.messages[at + 1..]
                    .iter()
                    .filter(|m| m.source().kind == SourceKind::History)
                    .count();
                prop_assert_eq!(after, (depth as usize).min(n));
            }
        }
    }

    #[test]
    fn builds_are_deterministic(case in case()) {
        let a = serde_json::to_string(&build_case(&case)).expect("serializes");
        let b = serde_json::to_string(&build_case(&case)).expect("serializes");
        prop_assert_eq!(a, b);
    }

    #[test]
    fn the_budget_holds_unless_over_budget_is_reported(case in case()) {
        let r = build_case(&case);
        match r.tokens.over_budget {
            None => prop_assert!(r.tokens.total <= r.tokens.budget),
            Some(over) => prop_assert_eq!(r.tokens.total - r.tokens.budget, over),
        }
    }
}

/// An edit of the session or the preset between two builds.
#[derive(Debug, Clone)]
enum Edit {
    Text(usize, &'static str),
    Role(usize, Role),
    Append(Role, &'static str),
    Remove(usize),
    Rules(Vec<RegexRule>),
    DefaultRules(bool),
    HistoryFilter(bool),
    /// In place, keeping the text: a name, an id, an attachment.
    Name(usize, Option<&'static str>),
    Id(usize, &'static str),
    Attach(usize),
    /// The session loader's `names`: `none` when true.
    Unnamed(bool),
    /// Nothing: a rebuild over the same stored texts.
    Same,
}

const TEXTS: [&str; 6] = [
    "u Bob sees the fog",
    "a the forest is quiet",
    "Bob and bob",
    "u what now?",
    "a FOG over the forest",
    "",
];

fn role() -> impl Strategy<Value = Role> {
    prop::sample::select(vec![Role::User, Role::Assistant, Role::System])
}

fn history_rule() -> impl Strategy<Value = RegexRule> {
    (
        prop::sample::select(vec!["Bob", "^u", "forest", "fog", "(o+)"]),
        prop::sample::select(vec!["Robert", "U", "", "[$1]"]),
        prop::sample::select(vec!["", "i"]),
        prop::option::of(prop::sample::select(vec![Role::User, Role::Assistant])),
        // Mostly none: rules without depth limits are what a rebuild replays (RULES 5.2).
        prop::option::weighted(0.2, 0u32..3),
        prop::option::weighted(0.2, 0u32..3),
    )
        .prop_map(|(pattern, replacement, flags, role, min, max)| RegexRule {
            id: format!("{pattern}->{replacement}"),
            name: None,
            pattern: pattern.into(),
            replacement: replacement.into(),
            flags: flags.into(),
            scope: RegexScope::History,
            roles: role.map(|r| vec![r]),
            min_depth: min,
            max_depth: max,
            enabled: true,
        })
}

fn edit() -> impl Strategy<Value = Edit> {
    let text = prop::sample::select(TEXTS.to_vec());
    prop_oneof![
        (0usize..12, text.clone()).prop_map(|(i, t)| Edit::Text(i, t)),
        (0usize..12, role()).prop_map(|(i, r)| Edit::Role(i, r)),
        (role(), text).prop_map(|(r, t)| Edit::Append(r, t)),
        (0usize..12).prop_map(Edit::Remove),
        prop::collection::vec(history_rule(), 0..4).prop_map(Edit::Rules),
        any::<bool>().prop_map(Edit::DefaultRules),
        any::<bool>().prop_map(Edit::HistoryFilter),
        (
            0usize..12,
            prop::option::of(prop::sample::select(vec!["Bob", "Ann"]))
        )
            .prop_map(|(i, n)| Edit::Name(i, n)),
        (0usize..12, prop::sample::select(vec!["m1", "m2"])).prop_map(|(i, id)| Edit::Id(i, id)),
        (0usize..12).prop_map(Edit::Attach),
        any::<bool>().prop_map(Edit::Unnamed),
        Just(Edit::Same),
    ]
}

fn cached_preset(
    rules: &[RegexRule],
    default_rules: bool,
    filter: bool,
    unnamed: bool,
) -> AgentPreset {
    let mut p = preset_from(json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            { "id": "sys", "role": "system", "content": "Be brief." },
            { "id": "hist", "role": "system", "type": "chat_history" },
            { "id": "note", "role": "system", "content": "[note]" }
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "sys", "enabled": true },
            { "messageId": "hist", "enabled": true },
            { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 1 } }
        ]}],
        "processors": [
            { "id": "session-loader", "settings": { "names": if unnamed { "none" } else { "keep" } } },
            { "id": "regex-processor", "settings": { "defaultRules": default_rules } },
            { "id": "history-operations", "enabled": filter,
              "settings": { "operation": "filter", "contentExcludes": "quiet" } }
        ]
    }));
    p.regex_rules = Some(rules.to_vec());
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// What a rebuild takes from the cache (counts by stored position, what the history rules
    /// made of each stored message) never changes what a build gives: after any edits, a build
    /// through a cache earlier builds filled equals one through a fresh cache.
    #[test]
    fn a_filled_cache_builds_what_a_fresh_one_builds(
        start in prop::collection::vec((role(), prop::sample::select(TEXTS.to_vec())), 0..10),
        rules in prop::collection::vec(history_rule(), 0..4),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let mut session = session_from(json!({ "formatVersion": 1, "id": "s", "messages": [] }));
        session.messages = start.iter().map(|(r, t)| ChatMessage::new(*r, t)).collect();
        let (mut rules, mut default_rules, mut filter, mut unnamed) = (rules, true, false, false);
        let cache = BuildCache::new();
        let preset = cached_preset(&rules, default_rules, filter, unnamed);
        run_cached(&preset, &session, &cache);
        for edit in edits {
            let n = session.messages.len();
            match edit {
                Edit::Text(i, t) if i < n => session.messages[i].content = Arc::from(t),
                Edit::Role(i, r) if i < n => session.messages[i].role = r,
                Edit::Append(r, t) => session.messages.push(ChatMessage::new(r, t)),
                Edit::Remove(i) if i < n => {
                    session.messages.remove(i);
                }
                Edit::Rules(r) => rules = r,
                Edit::DefaultRules(on) => default_rules = on,
                Edit::HistoryFilter(on) => filter = on,
                Edit::Name(i, name) if i < n => session.messages[i].name = name.map(Arc::from),
                Edit::Id(i, id) if i < n => session.messages[i].id = Some(Arc::from(id)),
                Edit::Attach(i) if i < n => session.messages[i].attachments.push(dot_png()),
                Edit::Unnamed(on) => unnamed = on,
                _ => {}
            }
            let preset = cached_preset(&rules, default_rules, filter, unnamed);
            let warm = serde_json::to_value(run_cached(&preset, &session, &cache)).expect("serialises");
            let fresh = serde_json::to_value(run_cached(&preset, &session, &BuildCache::new()))
                .expect("serialises");
            prop_assert_eq!(warm, fresh);
        }
    }
}
