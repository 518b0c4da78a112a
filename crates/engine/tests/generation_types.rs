//! RULES 5.14, the kinds of generation: one test (or a few) per rule, named after it.

mod common;

use common::*;
use promptloom_engine::assets::InlineAssets;
use promptloom_engine::model::{AgentPreset, Role, Session};
use promptloom_engine::pipeline::{BuildResult, SourceKind, GENERATION_LOG};
use promptloom_engine::profiles::ProviderFormat;
use promptloom_engine::providers::request_body;
use promptloom_engine::{BuildOptions, GenerationType};
use serde_json::{json, Value};

/// main, the history with a note at depth 0, and a post-history prompt; the assembler's
/// settings as given, in `compatibility`.
fn preset_with(settings: Value, compatibility: &str) -> AgentPreset {
    preset_from(json!({
        "formatVersion": 1, "id": "t", "name": "Quill", "compatibility": compatibility,
        "messageTemplates": [
            { "id": "main", "role": "system", "content": "You are {{char}}." },
            { "id": "hist", "role": "system", "type": "chat_history" },
            { "id": "note", "role": "system", "content": "note",
              "defaultInjectionStrategy": { "depth": 0 } },
            { "id": "post", "role": "system", "content": "post" },
        ],
        "contextRecipes": one_recipe(json!([
            { "messageId": "main", "enabled": true },
            { "messageId": "hist", "enabled": true },
            { "messageId": "note", "enabled": true },
            { "messageId": "post", "enabled": true },
        ])),
        "processors": [{ "id": "injection-assembler", "settings": settings }],
    }))
}

fn native(settings: Value) -> AgentPreset {
    preset_with(settings, "native")
}

fn of_type(kind: GenerationType) -> BuildOptions {
    BuildOptions {
        generation_type: kind,
        ..options()
    }
}

fn build<'s>(
    preset: &AgentPreset,
    session: &'s Session,
    model: &str,
    options: &BuildOptions,
) -> BuildResult<'s> {
    try_run(preset, session, model, options).expect("builds")
}

fn is_generation(result: &BuildResult, i: usize) -> bool {
    let source = result.messages[i].source();
    source.kind == SourceKind::Processor && source.processor.as_deref() == Some(GENERATION_LOG)
}

const CHAT: &[&str] = &["u1", "a1", "u2", "a2"];

#[test]
fn rule_5_14_1_a_normal_build_sends_nothing_of_the_other_types() {
    let p = native(json!({ "continueNudgePrompt": "[on]", "quietPrompt": "[quiet]" }));
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &options());
    assert_eq!(
        contents(&r),
        ["You are Quill.", "u1", "a1", "u2", "a2", "note", "post"]
    );
    assert_eq!(r.reply_start, Default::default());
    assert_eq!(r.reply_start.reply_text("Hi"), "Hi");
}

#[test]
fn rule_5_14_2_continue_sends_the_reply_last_natively() {
    let p = native(json!({}));
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    // The note at depth 0 was placed after a2; a2 then moved to the very end.
    assert_eq!(
        contents(&r),
        ["You are Quill.", "u1", "a1", "u2", "note", "post", "a2"]
    );
    assert_eq!(r.messages[6].source().history_index, Some(3));
    assert!(r.reply_start.continues_last);
    assert_eq!(r.reply_start.prefill, None, "a continuation has no prefill");
    assert_eq!(
        r.reply_start.reply_text(" on"),
        " on",
        "natively joined with nothing"
    );
}

#[test]
fn rule_5_14_2_continue_with_a_nudge_closes_the_history() {
    let p = native(json!({
        "continuePrefill": false,
        "continueNudgePrompt": "[Go on from: {{lastChatMessage}}, {{user}}]",
    }));
    let s = session_of(&["u1", "a1", "u2", "  a2 "]);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(
        contents(&r),
        [
            "You are Quill.",
            "u1",
            "a1",
            "u2",
            "  a2 ",
            "note",
            "[Go on from: a2, User]",
            "post"
        ]
    );
    assert!(is_generation(&r, 6));
    assert_eq!(r.messages[6].role, Role::System);
    assert!(!r.reply_start.continues_last);
}

#[test]
fn rule_5_14_2_continue_without_a_reply_warns_and_sends_nothing_of_a_continuation() {
    let p = native(json!({ "continuePrefill": false, "continueNudgePrompt": "[on]" }));
    let s = session_of(&["u1", "a1", "u2"]);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(
        contents(&r),
        ["You are Quill.", "u1", "a1", "u2", "note", "post"]
    );
    assert!(any_warning(&r, "nothing to continue"));
    assert!(!r.reply_start.continues_last);
}

#[test]
fn rule_5_14_2_continue_and_impersonate_take_no_input() {
    let p = native(json!({}));
    let s = session_of(CHAT);
    for kind in [GenerationType::Continue, GenerationType::Impersonate] {
        let options = BuildOptions {
            input: Some("u3".into()),
            ..of_type(kind)
        };
        let r = build(&p, &s, "gpt-4o", &options);
        assert!(!contents(&r).contains(&"u3".to_string()), "{kind:?}");
        assert!(r.messages.iter().all(|m| m.kind() != SourceKind::Input));
    }
}

#[test]
fn rule_5_14_2_continue_joins_with_the_postfix_when_the_reply_does_not_end_with_a_space() {
    let p = native(json!({ "continuePostfix": "doubleNewline" }));
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(r.reply_start.joiner, "\n\n");
    assert_eq!(r.reply_start.reply_text("more"), "\n\nmore");
    let s = session_of(&["u1", "a1", "u2", "a2 "]);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(r.reply_start.joiner, "", "the reply ends with a space");
}

#[test]
fn rule_5_14_2_continue_under_sillytavern_nudges_and_joins_with_a_space() {
    let p = preset_with(json!({}), "sillytavern");
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    let texts = contents(&r);
    // After the new chat opener, the history, the reply in it, the note, then the nudge.
    assert_eq!(texts[1], "[Start a new Chat]");
    assert_eq!(texts[5], "a2", "the reply stays in the history");
    assert!(
        texts[7].starts_with("[Continue the following message.") && texts[7].ends_with(": a2]"),
        "{texts:?}"
    );
    assert_eq!(texts[8], "post");
    assert_eq!(r.reply_start.joiner, " ");
}

#[test]
fn rule_5_14_3_impersonate_sends_its_prompt_last() {
    let p = native(json!({ "impersonationPrompt": "[Write as {{user}}.]" }));
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Impersonate));
    let texts = contents(&r);
    assert_eq!(texts.last().map(String::as_str), Some("[Write as User.]"));
    assert!(is_generation(&r, texts.len() - 1));
    assert_eq!(texts[texts.len() - 2], "post");

    // The native default asks for the user's message too; a blank prompt sends nothing.
    let r = build(
        &native(json!({})),
        &s,
        "gpt-4o",
        &of_type(GenerationType::Impersonate),
    );
    assert!(contents(&r)
        .last()
        .is_some_and(|t| t.contains("next message of User")));
    let p = native(json!({ "impersonationPrompt": "  " }));
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Impersonate));
    assert_eq!(contents(&r).last().map(String::as_str), Some("post"));
}

#[test]
fn rule_5_14_4_quiet_sends_the_input_as_its_prompt_last() {
    let p = native(json!({ "quietPrompt": "[Summarize {{char}}'s story.]" }));
    let s = session_of(CHAT);
    let options = BuildOptions {
        input: Some("Name three places.".into()),
        ..of_type(GenerationType::Quiet)
    };
    let r = build(&p, &s, "gpt-4o", &options);
    let texts = contents(&r);
    assert_eq!(texts.last().map(String::as_str), Some("Name three places."));
    assert_eq!(r.messages.last().map(|m| m.role), Some(Role::System));
    assert!(r.messages.iter().all(|m| m.kind() != SourceKind::Input));
    // Without an input, the preset's quiet prompt.
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Quiet));
    assert_eq!(
        contents(&r).last().map(String::as_str),
        Some("[Summarize Quill's story.]")
    );
    assert_eq!(
        r.reply_start.prefill, None,
        "a quiet request has no prefill"
    );
}

#[test]
fn rule_5_14_5_the_prefill_is_the_last_assistant_message_and_starts_the_reply() {
    let p = native(json!({ "assistantPrefill": "Preset says" }));
    let s = session_of(&["u1"]);
    let r = build(&p, &s, "gpt-4o", &options());
    let last = r.messages.last().expect("messages");
    assert_eq!(
        (last.role, last.content()),
        (Role::Assistant, "Preset says")
    );
    assert!(is_generation(&r, r.messages.len() - 1));
    assert_eq!(r.reply_start.reply_text(", hello"), "Preset says, hello");

    // "Start reply with" replaces the preset's; for impersonate, the preset's own other one.
    let own = BuildOptions {
        prefill: Some("I think".into()),
        ..options()
    };
    let r = build(&p, &s, "gpt-4o", &own);
    assert_eq!(contents(&r).last().map(String::as_str), Some("I think"));
    let p = native(json!({ "assistantPrefill": "A", "assistantImpersonation": "{{user}}:" }));
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Impersonate));
    assert_eq!(r.reply_start.prefill.as_deref(), Some("User:"));
}

#[test]
fn rule_5_14_5_the_prefill_comes_after_every_formatter_and_anthropic_drops_its_end_space() {
    let p = native(json!({}));
    let s = session_of(&["u1"]);
    let options = BuildOptions {
        prefill: Some("<thinking> ".into()),
        ..options()
    };
    let r = build(&p, &s, "claude-3-5-sonnet", &options);
    assert_eq!(r.provider_format(), ProviderFormat::AnthropicMessages);
    assert_eq!(contents(&r).last().map(String::as_str), Some("<thinking>"));
    let body = request_body(ProviderFormat::AnthropicMessages, &r, &s, &InlineAssets).unwrap();
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(
        messages.last(),
        Some(&json!({ "role": "assistant", "content": "<thinking>" }))
    );
    assert_eq!(r.reply_start.reply_text(" Hm"), "<thinking> Hm");
}

#[test]
fn rule_5_14_5_under_sillytavern_the_prefill_goes_to_anthropic_only() {
    let p = preset_with(json!({ "assistantPrefill": "Sure," }), "sillytavern");
    let s = session_of(&["u1"]);
    let r = build(&p, &s, "gpt-4o", &options());
    assert_ne!(contents(&r).last().map(String::as_str), Some("Sure,"));
    assert_eq!(r.reply_start.prefill, None);
    let r = build(&p, &s, "claude-3-5-sonnet", &options());
    assert_eq!(r.reply_start.prefill.as_deref(), Some("Sure,"));
}

fn chatml() -> BuildOptions {
    BuildOptions {
        instruct: promptloom_engine::instruct::built_in("chatml"),
        ..options()
    }
}

#[test]
fn rule_5_14_5_text_completion_writes_the_prefill_after_the_reply_prefix() {
    let p = native(json!({}));
    let s = session_of(&["u1"]);
    let options = BuildOptions {
        prefill: Some("Sure, ".into()),
        ..chatml()
    };
    let r = build(&p, &s, "gpt-4o", &options);
    let prompt = &r.prompt.as_ref().expect("text completion").prompt;
    assert!(
        prompt.ends_with("post<|im_end|>\n<|im_start|>assistant\nSure, "),
        "{prompt:?}"
    );
}

#[test]
fn rule_5_14_2_text_completion_continues_the_reply_after_the_reply_prefix() {
    // Even with the nudge asked for: text completion has the reply itself.
    let p = native(json!({ "continuePrefill": false, "continueNudgePrompt": "[on]" }));
    let s = session_of(CHAT);
    let options = BuildOptions {
        generation_type: GenerationType::Continue,
        ..chatml()
    };
    let r = build(&p, &s, "gpt-4o", &options);
    let prompt = &r.prompt.as_ref().expect("text completion").prompt;
    assert!(
        prompt.ends_with("post<|im_end|>\n<|im_start|>assistant\na2"),
        "{prompt:?}"
    );
    assert!(!prompt.contains("[on]"));
    assert_eq!(
        r.reply_start.joiner, "",
        "text completion joins with nothing"
    );
}

#[test]
fn rule_5_14_3_text_completion_impersonation_ends_with_the_user_prefix() {
    let p = native(json!({ "impersonationPrompt": "[as {{user}}]" }));
    let s = session_of(CHAT);
    let options = BuildOptions {
        generation_type: GenerationType::Impersonate,
        ..chatml()
    };
    let r = build(&p, &s, "gpt-4o", &options);
    let prompt = &r.prompt.as_ref().expect("text completion").prompt;
    assert!(
        prompt.ends_with("<|im_start|>system\n[as User]<|im_end|>\n<|im_start|>user\n"),
        "{prompt:?}"
    );
}

#[test]
fn rule_5_14_6_an_anthropic_body_sends_its_last_assistant_message_without_end_space() {
    let p = native(json!({}));
    let s = session_of(&["u1", "a1", "u2", "a2 \n"]);
    let r = build(
        &p,
        &s,
        "claude-3-5-sonnet",
        &of_type(GenerationType::Continue),
    );
    let body = request_body(ProviderFormat::AnthropicMessages, &r, &s, &InlineAssets).unwrap();
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(
        messages.last(),
        Some(&json!({ "role": "assistant", "content": "a2" }))
    );
}

/// A processor that runs after the assembler (instruction pinning adds its closing message at
/// the end) never puts anything after the reply being continued: it stays last.
#[test]
fn rule_5_14_2_the_continued_reply_stays_last_after_every_processor() {
    let mut p = native(json!({}));
    p.processors.get_or_insert_with(Vec::new).push(
        serde_json::from_value(json!({ "id": "instruction-pinning", "enabled": true }))
            .expect("config"),
    );
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    let last = r.messages.last().expect("messages");
    assert_eq!((last.role, last.content()), (Role::Assistant, "a2"));
    assert_eq!(r.reply_start.continued, Some(3));
    assert!(
        r.messages
            .iter()
            .any(|m| m.source().processor.as_deref() == Some("instruction-pinning")),
        "the pinned instruction is still sent, before the reply"
    );
}

/// A reply a processor took out (here the history filter) is not continued: the build says so
/// and names no reply, so a front door sends nothing.
#[test]
fn rule_5_14_2_a_continued_reply_a_processor_removed_is_not_continued() {
    let mut p = native(json!({}));
    p.processors.get_or_insert_with(Vec::new).push(
        serde_json::from_value(json!({
            "id": "history-operations", "enabled": true,
            "settings": { "operation": "filter", "contentExcludes": "a2" }
        }))
        .expect("config"),
    );
    let s = session_of(CHAT);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(r.reply_start.continued, None);
    assert!(!r.reply_start.continues_last);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("nothing to continue")),
        "{:?}",
        r.warnings
    );
}

/// A reply a formatter joined into another message is not the reply as stored any more: the
/// finished build continues nothing and says why.
#[test]
fn rule_5_14_2_a_continued_reply_joined_into_another_is_not_continued() {
    // The nudge keeps the reply in its place, next to the one before it.
    let mut p = native(json!({ "continuePrefill": false }));
    p.processors.get_or_insert_with(Vec::new).push(
        serde_json::from_value(json!({ "id": "merge-consecutive-roles", "enabled": true }))
            .expect("config"),
    );
    let s = session_of(&["u1", "a1", "a2"]);
    let r = build(&p, &s, "gpt-4o", &of_type(GenerationType::Continue));
    assert_eq!(r.reply_start.continued, None);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("not in the finished context")),
        "{:?}",
        r.warnings
    );
}
