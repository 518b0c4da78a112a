//! RULES 3, one test (or a few) per rule, each named after the rule it pins.

mod common;

use common::*;
use promptloom_engine::model::{AnchorPosition, Role};
use promptloom_engine::pipeline::{Placement, SourceKind};
use promptloom_engine::EngineError;
use serde_json::json;

fn msg(id: &str) -> serde_json::Value {
    json!({ "id": id, "role": "system", "content": id })
}

fn slot(id: &str, kind: &str) -> serde_json::Value {
    json!({ "id": id, "role": "system", "type": kind })
}

fn step(id: &str) -> serde_json::Value {
    json!({ "messageId": id, "enabled": true })
}

fn step_with(id: &str, strategy: serde_json::Value) -> serde_json::Value {
    json!({ "messageId": id, "enabled": true, "injectionStrategy": strategy })
}

const HISTORY: &[&str] = &["u1", "a1", "u2", "a2", "u3"];

// Rule 1: recipe choice.

fn recipes_preset(filters: &[(&str, &[&str])]) -> promptloom_engine::model::AgentPreset {
    let recipes: Vec<_> = filters
        .iter()
        .map(|(id, f)| json!({ "id": id, "modelFilter": f, "steps": [step("sys")] }))
        .collect();
    preset(json!([msg("sys")]), json!(recipes))
}

fn chosen(p: &promptloom_engine::model::AgentPreset, model: &str) -> String {
    try_run(p, &session_of(&[]), model, &options())
        .expect("a recipe matches")
        .recipe
        .expect("recipe recorded")
}

#[test]
fn rule_1_recipe_choice_exact_id_beats_every_wildcard() {
    let p = recipes_preset(&[
        ("any", &["*"]),
        ("claude", &["claude-*"]),
        ("sonnet", &["claude-3-5-sonnet"]),
    ]);
    assert_eq!(chosen(&p, "claude-3-5-sonnet"), "sonnet");
}

#[test]
fn rule_1_recipe_choice_most_specific_wildcard_wins() {
    let p = recipes_preset(&[
        ("any", &["*"]),
        ("claude", &["claude-*"]),
        ("claude35", &["claude-3-5-*"]),
        ("q", &["gpt-4?"]),
    ]);
    assert_eq!(chosen(&p, "claude-3-5-haiku"), "claude35");
    assert_eq!(chosen(&p, "claude-3-opus"), "claude");
    assert_eq!(chosen(&p, "gpt-4o"), "q", "? matches one character");
    assert_eq!(chosen(&p, "gpt-4o-mini"), "any");
}

#[test]
fn rule_1_recipe_choice_is_case_insensitive() {
    let p = recipes_preset(&[("any", &["*"]), ("gpt", &["GPT-*"])]);
    assert_eq!(chosen(&p, "gpt-4o"), "gpt");
    assert_eq!(chosen(&p, "Gpt-4O"), "gpt");
}

#[test]
fn rule_1_recipe_choice_ties_go_to_the_earlier_recipe() {
    let p = recipes_preset(&[
        ("first", &["gpt-*"]),
        ("second", &["gpt-*"]),
        ("star1", &["*"]),
        ("star2", &["*"]),
    ]);
    assert_eq!(chosen(&p, "gpt-4o"), "first");
    assert_eq!(chosen(&p, "mistral-large"), "star1");
}

#[test]
fn rule_1_recipe_choice_no_match_names_the_model_and_lists_the_filters() {
    let p = recipes_preset(&[("claude", &["claude-*"]), ("gpt", &["gpt-*", "o3"])]);
    let err = try_run(&p, &session_of(&[]), "gemini-2.5-pro", &options()).unwrap_err();
    assert!(matches!(err, EngineError::NoRecipe { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("gemini-2.5-pro"), "{text}");
    assert!(
        text.contains("claude-*") && text.contains("gpt-*") && text.contains("o3"),
        "{text}"
    );
}

// Rule 2: instantiation.

#[test]
fn rule_2_instantiation_overrides_replace_role_and_content() {
    let p = preset(
        json!([msg("sys")]),
        one_recipe(json!([
            step("sys"),
            { "messageId": "sys", "enabled": true,
              "overrides": { "content": "replaced", "role": "user" } },
        ])),
    );
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "replaced"]);
    assert_eq!(r.messages[0].role, Role::System);
    assert_eq!(r.messages[1].role, Role::User);
}

#[test]
fn rule_2_instantiation_step_strategy_replaces_the_template_default_whole() {
    // The template says depth 1 order 300; the step says anchor only. No field-by-field merge:
    // the step's strategy has no depth, so it is an anchor injection with the default order.
    let p = preset(
        json!([
            slot("hist", "chat_history"),
            { "id": "t", "role": "system", "content": "t",
              "defaultInjectionStrategy": { "depth": 1, "order": 300 } },
            { "id": "o", "role": "system", "content": "o",
              "defaultInjectionStrategy": { "anchorTarget": "chat_history", "anchorPosition": "before", "order": 200 } },
        ]),
        one_recipe(json!([
            step("hist"),
            step_with(
                "t",
                json!({ "anchorTarget": "chat_history", "anchorPosition": "before" })
            ),
            step("o"),
        ])),
    );
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    // o (order 200) before t (default order 100) at the same anchor; t is not at depth 1.
    assert_eq!(contents(&r), ["o", "t", "u1", "a1"]);
    assert_eq!(
        r.messages[1].source().placement,
        Placement::Anchor {
            target: "chat_history".into(),
            position: AnchorPosition::Before
        }
    );
}

#[test]
fn rule_2_instantiation_empty_strategy_cancels_the_template_default() {
    let p = preset(
        json!([
            msg("first"),
            slot("hist", "chat_history"),
            { "id": "t", "role": "system", "content": "t",
              "defaultInjectionStrategy": { "depth": 0 } },
        ]),
        one_recipe(json!([
            step("first"),
            step_with("t", json!({})),
            step("hist")
        ])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["first", "t", "u1"]);
    assert_eq!(r.messages[1].source().placement, Placement::List);
}

#[test]
fn rule_2_instantiation_one_template_may_serve_several_steps() {
    let p = preset(
        json!([msg("rule"), slot("hist", "chat_history")]),
        one_recipe(json!([
            step("rule"),
            step("hist"),
            step_with("rule", json!({ "depth": 1 })),
        ])),
    );
    let session = session_of(&["u1", "a1", "u2"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["rule", "u1", "a1", "rule", "u2"]);
    assert_eq!(r.messages[0].source().step_index, Some(0));
    assert_eq!(r.messages[3].source().step_index, Some(2));
}

#[test]
fn rule_2_instantiation_disabled_steps_make_nothing_and_a_disabled_slot_is_no_anchor() {
    let p = preset(
        json!([
            msg("a"),
            msg("b"),
            slot("wi", "placeholder"),
            slot("hist", "chat_history")
        ]),
        one_recipe(json!([
            step("a"),
            { "messageId": "b", "enabled": false },
            { "messageId": "wi", "enabled": false },
            step_with("a", json!({ "anchorTarget": "wi" })),
            step("hist"),
        ])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["a", "u1"]);
    assert!(
        any_warning(&r, "anchor \"wi\" is not in the recipe"),
        "{:?}",
        warnings(&r)
    );
    assert_eq!(r.dropped.len(), 1);
}

#[test]
fn rule_2_instantiation_unknown_template_names_the_recipe_and_the_step() {
    // Validation refuses it on load; a preset built in code reaches the assembler's own check.
    let text = json!({
        "formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [msg("sys")],
        "contextRecipes": [{ "id": "r1", "modelFilter": ["*"],
                             "steps": [step("sys"), step("ghost")] }],
    })
    .to_string();
    let err = promptloom_engine::model::parse_preset(&text).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("r1") && shown.contains("ghost"), "{shown}");

    let mut p = preset(json!([msg("sys")]), one_recipe(json!([step("sys")])));
    let mut ghost = p.context_recipes[0].steps[0].clone();
    ghost.message_id = "ghost".into();
    p.context_recipes[0].steps.push(ghost);
    let err = try_run(&p, &session_of(&[]), "gpt-4o", &options()).unwrap_err();
    match err {
        EngineError::UnknownTemplate {
            recipe,
            step,
            template,
        } => {
            assert_eq!(
                (recipe.as_str(), step, template.as_str()),
                ("main", 1, "ghost")
            );
        }
        other => panic!("expected UnknownTemplate, got {other:?}"),
    }
}

#[test]
fn rule_2_instantiation_empty_content_after_macros_is_not_sent() {
    let p = preset(
        json!([
            msg("sys"),
            { "id": "blank", "role": "system", "content": "  \n\t " },
            { "id": "persona", "role": "system", "content": "{{persona}}" },
        ]),
        one_recipe(json!([step("sys"), step("blank"), step("persona")])),
    );
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys"]);
    let infos: Vec<_> = r
        .logs
        .iter()
        .filter(|l| l.message.contains("empty after macros"))
        .collect();
    assert_eq!(infos.len(), 2, "{:?}", r.logs);
    assert!(infos[0].message.contains("blank") && infos[1].message.contains("persona"));
}

// Rule 3: classification.

#[test]
fn rule_3_classification_depth_wins_over_anchor_with_a_warning() {
    let p = preset(
        json!([msg("sys"), slot("hist", "chat_history"), msg("both")]),
        one_recipe(json!([
            step("sys"),
            step("hist"),
            step_with(
                "both",
                json!({ "depth": 0, "anchorTarget": "chat_history", "anchorPosition": "before" })
            ),
        ])),
    );
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "u1", "a1", "both"]);
    assert!(any_warning(&r, "depth wins"), "{:?}", warnings(&r));
}

#[test]
fn rule_3_classification_slots_are_always_skeleton() {
    let p = preset(
        json!([msg("sys"), slot("hist", "chat_history"), msg("end")]),
        one_recipe(json!([
            step("sys"),
            step_with("hist", json!({ "depth": 3 })),
            step("end"),
        ])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "u1", "end"]);
    assert!(any_warning(&r, "strategy is ignored"), "{:?}", warnings(&r));
}

#[test]
fn rule_3_classification_no_strategy_means_list_order() {
    let p = preset(
        json!([msg("a"), slot("hist", "chat_history"), msg("b")]),
        one_recipe(json!([step("a"), step("hist"), step("b")])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["a", "u1", "b"]);
    assert!(r.warnings.is_empty(), "{:?}", warnings(&r));
}

// Rule 4: depth.

fn depth_preset(injections: &[(&str, serde_json::Value)]) -> promptloom_engine::model::AgentPreset {
    let mut templates = vec![slot("hist", "chat_history")];
    let mut steps = vec![step("hist")];
    for (id, strategy) in injections {
        if !templates.iter().any(|t| t["id"] == *id) {
            templates.push(msg(id));
        }
        steps.push(step_with(id, strategy.clone()));
    }
    preset(json!(templates), one_recipe(json!(steps)))
}

#[test]
fn rule_4_depth_d_goes_at_index_n_minus_d() {
    for d in 0..=5usize {
        let p = depth_preset(&[("x", json!({ "depth": d }))]);
        let session = session_of(HISTORY);
        let r = run(&p, &session);
        let got = contents(&r);
        let at = got.iter().position(|c| c == "x").expect("placed");
        assert_eq!(at, HISTORY.len() - d, "depth {d}: {got:?}");
        // Exactly min(d, n) original history messages follow it.
        assert_eq!(got.len() - at - 1, d.min(HISTORY.len()));
    }
}

#[test]
fn rule_4_depth_beyond_the_history_goes_first() {
    let p = depth_preset(&[("x", json!({ "depth": 99 }))]);
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["x", "u1", "a1"]);
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["x"]);
}

#[test]
fn rule_4_depth_zero_is_after_the_newest_message() {
    let p = depth_preset(&[("x", json!({ "depth": 0 }))]);
    let session = session_of(HISTORY);
    let r = run(&p, &session);
    assert_eq!(contents(&r).last().map(String::as_str), Some("x"));
}

#[test]
fn rule_4_depth_injections_do_not_shift_each_other() {
    let p = depth_preset(&[
        ("d1", json!({ "depth": 1 })),
        ("d2", json!({ "depth": 2 })),
        ("d4", json!({ "depth": 4 })),
    ]);
    let session = session_of(HISTORY);
    let r = run(&p, &session);
    // Each counts original history messages only: d4 has four after it, d2 two, d1 one.
    assert_eq!(
        contents(&r),
        ["u1", "d4", "a1", "u2", "d2", "a2", "d1", "u3"]
    );
}

#[test]
fn rule_4_depth_same_index_orders_by_order_descending_then_step() {
    let p = depth_preset(&[
        ("low", json!({ "depth": 1, "order": 50 })),
        ("tie_a", json!({ "depth": 1 })),
        ("high", json!({ "depth": 1, "order": 300 })),
        ("tie_b", json!({ "depth": 1, "order": 100 })),
    ]);
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["u1", "high", "tie_a", "tie_b", "low", "a1"]);
    // Each stays its own message.
    assert_eq!(r.messages.len(), 6);
}

#[test]
fn rule_4_depth_without_a_chat_history_slot_is_dropped_with_a_warning() {
    let p = preset(
        json!([msg("sys"), msg("x")]),
        one_recipe(json!([step("sys"), step_with("x", json!({ "depth": 1 }))])),
    );
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        ["sys"],
        "neither history nor depth injections are sent"
    );
    assert!(
        any_warning(&r, "no enabled chat_history slot"),
        "{:?}",
        warnings(&r)
    );
    assert_eq!(r.dropped.len(), 1);
    assert_eq!(r.dropped[0].source.template_id.as_deref(), Some("x"));
}

// Rule 5: anchors.

#[test]
fn rule_5_anchors_before_and_after_the_chat_history_block_with_its_depth_injections() {
    let p = preset(
        json!([
            msg("sys"),
            slot("hist", "chat_history"),
            msg("pre"),
            msg("post"),
            msg("deep"),
            msg("end")
        ]),
        one_recipe(json!([
            step("sys"),
            step("hist"),
            step("end"),
            step_with("post", json!({ "anchorTarget": "chat_history" })),
            step_with(
                "pre",
                json!({ "anchorTarget": "chat_history", "anchorPosition": "before" })
            ),
            step_with("deep", json!({ "depth": 9 })),
        ])),
    );
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        ["sys", "pre", "deep", "u1", "a1", "post", "end"]
    );
}

#[test]
fn rule_5_anchors_by_slot_type_or_by_template_id() {
    let p = preset(
        json!([
            msg("sys"),
            { "id": "me", "role": "user", "type": "user_profile" },
            slot("lore", "placeholder"),
            { "id": "history", "role": "system", "type": "chat_history" },
            msg("a"), msg("b"), msg("c"), msg("d"),
        ]),
        one_recipe(json!([
            step("sys"),
            step("me"),
            step("lore"),
            step("history"),
            step_with(
                "a",
                json!({ "anchorTarget": "user_profile", "anchorPosition": "before" })
            ),
            step_with("b", json!({ "anchorTarget": "me" })),
            step_with("c", json!({ "anchorTarget": "lore" })),
            step_with(
                "d",
                json!({ "anchorTarget": "history", "anchorPosition": "before" })
            ),
        ])),
    );
    let mut session = session_of(&["u1"]);
    session.user_profile = Some(promptloom_engine::model::UserProfile {
        name: "Ann".into(),
        content: Some("Ann likes tea.".into()),
    });
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        ["sys", "a", "Ann likes tea.", "b", "c", "d", "u1"]
    );
}

#[test]
fn rule_5_anchors_same_side_orders_by_order_descending_then_step() {
    let p = preset(
        json!([
            slot("hist", "chat_history"),
            msg("x"),
            msg("y"),
            msg("z"),
            msg("w")
        ]),
        one_recipe(json!([
            step("hist"),
            step_with("x", json!({ "anchorTarget": "chat_history", "order": 10 })),
            step_with(
                "y",
                json!({ "anchorTarget": "chat_history", "anchorPosition": "after" })
            ),
            step_with("z", json!({ "anchorTarget": "chat_history", "order": 500 })),
            step_with("w", json!({ "anchorTarget": "chat_history", "order": 100 })),
        ])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["u1", "z", "y", "w", "x"]);
}

#[test]
fn rule_5_anchors_missing_target_drops_the_injection_with_a_warning_naming_it() {
    let p = preset(
        json!([msg("sys"), slot("hist", "chat_history"), msg("x")]),
        one_recipe(json!([
            step("sys"),
            step("hist"),
            step_with("x", json!({ "anchorTarget": "worldInfoBefore" })),
        ])),
    );
    let session = session_of(&["u1"]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "u1"]);
    assert!(any_warning(&r, "worldInfoBefore"), "{:?}", warnings(&r));
    assert_eq!(r.dropped.len(), 1);
    assert!(r.dropped[0].reason.contains("worldInfoBefore"));
}

#[test]
fn rule_5_anchors_a_message_template_is_no_anchor() {
    let p = preset(
        json!([msg("sys"), msg("x")]),
        one_recipe(json!([
            step("sys"),
            step_with("x", json!({ "anchorTarget": "sys" }))
        ])),
    );
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys"]);
    assert!(any_warning(&r, "anchor \"sys\" is not in the recipe"));
}

#[test]
fn rule_5_anchors_a_second_chat_history_or_same_slot_is_ignored_with_a_warning() {
    let p = preset(
        json!([
            slot("hist", "chat_history"),
            slot("hist2", "chat_history"),
            slot("ph", "placeholder"),
            msg("x"),
        ]),
        one_recipe(json!([
            step("ph"),
            step("hist"),
            step("ph"),
            step("hist2"),
            step_with("x", json!({ "anchorTarget": "ph" })),
        ])),
    );
    let session = session_of(&["u1", "a1"]);
    let r = run(&p, &session);
    assert_eq!(
        contents(&r),
        ["x", "u1", "a1"],
        "history sent once, anchor at the first ph"
    );
    let second: Vec<_> = warnings(&r)
        .into_iter()
        .filter(|w| w.contains("second"))
        .collect();
    assert_eq!(second.len(), 2, "{second:?}");
}

// Rule 6: slots.

#[test]
fn rule_6_slots_user_profile_becomes_one_message_with_the_slot_role_and_macros_applied() {
    let p = preset(
        json!([msg("sys"), { "id": "persona", "role": "user", "type": "user_profile" }]),
        one_recipe(json!([step("sys"), step("persona")])),
    );
    let mut session = session_of(&[]);
    session.user_profile = Some(promptloom_engine::model::UserProfile {
        name: "Ann".into(),
        content: Some("{{user}} is a botanist.".into()),
    });
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "Ann is a botanist."]);
    assert_eq!(r.messages[1].role, Role::User);
    assert_eq!(r.messages[1].source().kind, SourceKind::Profile);
}

#[test]
fn rule_6_slots_empty_profile_sends_nothing_but_its_anchor_holds() {
    let p = preset(
        json!([
            msg("sys"),
            slot("persona", "user_profile"),
            msg("after"),
            msg("end")
        ]),
        one_recipe(json!([
            step("sys"),
            step("persona"),
            step("end"),
            step_with("after", json!({ "anchorTarget": "user_profile" })),
        ])),
    );
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "after", "end"]);
    let mut session = session_of(&[]);
    session.user_profile = Some(promptloom_engine::model::UserProfile {
        name: "Ann".into(),
        content: Some("   ".into()),
    });
    assert_eq!(contents(&run(&p, &session)), ["sys", "after", "end"]);
}

#[test]
fn rule_6_slots_placeholder_produces_no_message() {
    let p = preset(
        json!([msg("a"), slot("ph", "placeholder"), msg("b")]),
        one_recipe(json!([step("a"), step("ph"), step("b")])),
    );
    let session = session_of(&[]);
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["a", "b"]);
}

// Rule 7: provenance.

#[test]
fn rule_7_provenance_on_every_message() {
    let p = preset(
        json!([
            msg("sys"),
            slot("persona", "user_profile"),
            slot("hist", "chat_history"),
            msg("note"),
            msg("wi"),
        ]),
        one_recipe(json!([
            step("sys"),
            step("persona"),
            step("hist"),
            step_with("note", json!({ "depth": 1 })),
            step_with(
                "wi",
                json!({ "anchorTarget": "chat_history", "anchorPosition": "before" })
            ),
        ])),
    );
    let mut session = session_of(&["u1", "a1"]);
    session.user_profile = Some(promptloom_engine::model::UserProfile {
        name: "Ann".into(),
        content: Some("Ann.".into()),
    });
    let r = run(&p, &session);
    assert_eq!(contents(&r), ["sys", "Ann.", "wi", "u1", "note", "a1"]);
    let s: Vec<_> = r.messages.iter().map(|m| m.source().into_owned()).collect();

    assert_eq!(s[0].kind, SourceKind::Template);
    assert_eq!(
        (s[0].template_id.as_deref(), s[0].step_index),
        (Some("sys"), Some(0))
    );
    assert_eq!(s[0].placement, Placement::List);

    assert_eq!(s[1].kind, SourceKind::Profile);
    assert_eq!(
        (s[1].template_id.as_deref(), s[1].step_index),
        (Some("persona"), Some(1))
    );

    assert_eq!(s[2].kind, SourceKind::Template);
    assert_eq!(
        s[2].placement,
        Placement::Anchor {
            target: "chat_history".into(),
            position: AnchorPosition::Before
        }
    );
    assert_eq!(s[2].step_index, Some(4));

    for (i, at) in [(0u32, 3usize), (1, 5)] {
        assert_eq!(s[at].kind, SourceKind::History);
        assert_eq!(s[at].history_index, Some(i));
        assert_eq!(s[at].message_id.as_deref(), Some(format!("m{i}").as_str()));
        assert_eq!(s[at].template_id, None);
    }

    assert_eq!(s[4].placement, Placement::Depth { depth: 1 });
    assert_eq!(s[4].template_id.as_deref(), Some("note"));
    assert_eq!(s[4].step_index, Some(3));

    // The provenance reaches the JSON output under `source`.
    let json = serde_json::to_value(&r.messages[4]).expect("serializes");
    assert_eq!(json["source"]["kind"], "template");
    assert_eq!(json["source"]["placement"]["mode"], "depth");
    assert_eq!(json["source"]["placement"]["depth"], 1);
    let json = serde_json::to_value(&r.messages[3]).expect("serializes");
    assert_eq!(json["source"]["kind"], "history");
    assert_eq!(json["source"]["historyIndex"], 0);
    assert_eq!(json["source"]["messageId"], "m0");
}
