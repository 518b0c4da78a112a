//! The macro tracer (RULES 4.6): every macro of a build in order, with its place, what it was
//! given and became, the variable it changed, and the variables before and after.

mod common;

use common::{options, preset_from, session_of, try_run};
use promptloom_engine::macros::{MacroTrace, VariableScope};
use promptloom_engine::BuildOptions;
use serde_json::json;

fn traced(content: &str) -> (MacroTrace, Vec<String>) {
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "t", "name": "T",
        "character": { "name": "Ada", "description": "{{char}} keeps {{user}}'s lamp" },
        "variables": { "mood": "calm" },
        "messageTemplates": [
            { "id": "sys", "role": "system", "content": content },
            { "id": "hist", "role": "system", "type": "chat_history" },
        ],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
            { "messageId": "sys", "enabled": true },
            { "messageId": "hist", "enabled": true },
        ]}],
    }));
    let session = session_of(&["u hi"]);
    let options = BuildOptions {
        trace_macros_in_detail: true,
        ..options()
    };
    let result = try_run(&preset, &session, "gpt-4o", &options).expect("builds");
    let texts = result
        .messages
        .iter()
        .map(|m| m.content().to_string())
        .collect();
    (result.macro_trace.expect("traced"), texts)
}

#[test]
fn nested_macros_are_traced_inner_first_with_their_place_and_arguments() {
    let (trace, texts) = traced("Hi {{setvar::who::{{char}}}}{{getvar::who}}");
    assert_eq!(texts[0], "Hi Ada");
    let e = &trace.expansions;
    assert_eq!(e.len(), 3, "{e:#?}");
    assert_eq!((e[0].name.as_str(), e[0].output.as_str()), ("char", "Ada"));
    assert_eq!(e[0].offset, 18, "the inner macro's own place");
    assert_eq!(e[1].name, "setvar");
    assert_eq!(e[1].offset, 3);
    assert_eq!(e[1].written, "{{setvar::who::{{char}}}}");
    assert_eq!(e[1].arguments.as_deref(), Some("who::Ada"));
    let set = e[1].variable.as_ref().expect("a variable macro");
    assert_eq!(set.scope, VariableScope::Local);
    assert_eq!(
        (set.before.as_deref(), set.after.as_deref()),
        (None, Some("Ada"))
    );
    assert_eq!(e[2].output, "Ada");
    assert!(e
        .iter()
        .all(|x| x.position == "template:sys#0" && x.message == Some(0)));
}

#[test]
fn the_variables_before_and_after_the_build_are_both_kept() {
    let (trace, _) = traced("{{setvar::mood::stormy}}{{setglobalvar::seen::1}}{{incvar::n}}");
    assert_eq!(
        trace.before.local.get("mood").map(String::as_str),
        Some("calm")
    );
    assert!(trace.before.global.is_empty());
    assert_eq!(
        trace.after.local.get("mood").map(String::as_str),
        Some("stormy")
    );
    assert_eq!(trace.after.local.get("n").map(String::as_str), Some("1"));
    assert_eq!(
        trace.after.global.get("seen").map(String::as_str),
        Some("1")
    );
    let inc = trace.expansions[2].variable.as_ref().expect("incvar");
    assert_eq!(
        (inc.before.as_deref(), inc.after.as_deref()),
        (None, Some("1"))
    );
    let global = trace.expansions[1].variable.as_ref().expect("setglobalvar");
    assert_eq!(global.scope, VariableScope::Global);
}

#[test]
fn a_random_choice_is_traced_with_what_it_chose() {
    let (trace, texts) = traced("Weather: {{random::rain::sun::snow}}");
    let r = &trace.expansions[0];
    assert_eq!(r.name, "random");
    assert_eq!(r.arguments.as_deref(), Some("rain::sun::snow"));
    assert_eq!(texts[0], format!("Weather: {}", r.output));
    assert!(["rain", "sun", "snow"].contains(&r.output.as_str()));
}

#[test]
fn an_if_block_traces_its_condition_and_only_the_branch_taken() {
    let (trace, texts) =
        traced("A{{#if getvar::mood}}[{{getvar::mood}}]{{else}}{{user}}{{/if}} {{description}}");
    assert_eq!(texts[0], "A[calm] Ada keeps User's lamp");
    let e = &trace.expansions;
    let names: Vec<&str> = e.iter().map(|x| x.name.as_str()).collect();
    // The condition, the branch taken (never {{user}} of the other), the description's own
    // macros one level down, then the description.
    assert_eq!(names, ["getvar", "getvar", "char", "user", "description"]);
    assert_eq!(e[0].block.as_deref(), Some("if"));
    assert_eq!(e[0].offset, 1, "the condition's tag in the text as written");
    assert_eq!(
        e[1].offset, 22,
        "a macro inside a block, placed in the text as written"
    );
    assert_eq!((e[2].depth, e[4].depth), (1, 0));
    assert_eq!(e[4].output, "Ada keeps User's lamp");
}

#[test]
fn an_unknown_macro_is_traced_as_kept() {
    let (trace, _) = traced("{{nosuch::x}}");
    assert!(trace.expansions[0].kept);
    assert_eq!(trace.expansions[0].output, "{{nosuch::x}}");
}

#[test]
fn an_untraced_build_keeps_no_trace() {
    let preset = preset_from(json!({
        "formatVersion": 1, "id": "t", "name": "T",
        "messageTemplates": [{ "id": "s", "role": "system", "content": "{{char}}" }],
        "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [{ "messageId": "s", "enabled": true }] }],
    }));
    let session = session_of(&["u hi"]);
    let result = try_run(&preset, &session, "gpt-4o", &options()).expect("builds");
    assert!(result.macro_trace.is_none());
}
