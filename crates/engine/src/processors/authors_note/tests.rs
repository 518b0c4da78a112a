//! The author's note in whole builds (RULES 5.11.2), each against the SillyTavern function it
//! follows.

use serde_json::{json, Value};

use crate::model::{parse_preset, parse_session, Role};
use crate::pipeline::DroppedItem;
use crate::processors::full_build::build_full;

/// A SillyTavern-like preset: the main prompt, then the chat history; with `entries` in its
/// lorebook, in `compatibility`.
fn preset(compatibility: &str, entries: Value) -> crate::model::AgentPreset {
    let preset = json!({"formatVersion": 1, "id": "p", "name": "Bob",
        "compatibility": compatibility,
        "messageTemplates": [
            {"id": "main", "role": "system", "content": "Main."},
            {"id": "hist", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "main", "enabled": true}, {"messageId": "hist", "enabled": true}]}],
        "lorebook": {"entries": entries}});
    parse_preset(&preset.to_string()).expect("preset")
}

/// A session of `turns` user/assistant pairs with `note` (none when null).
fn session(turns: usize, note: Value) -> crate::model::Session {
    let mut messages = Vec::new();
    for i in 1..=turns {
        messages.push(json!({"role": "user", "content": format!("u{i}")}));
        messages.push(json!({"role": "assistant", "content": format!("a{i}")}));
    }
    let mut session = json!({"formatVersion": 1, "id": "s", "messages": messages});
    if !note.is_null() {
        session["authorsNote"] = note;
    }
    parse_session(&session.to_string()).expect("session")
}

struct Built {
    messages: Vec<(Role, String)>,
    dropped: Vec<DroppedItem>,
}

fn build(
    preset: &crate::model::AgentPreset,
    session: &crate::model::Session,
    input: Option<&str>,
) -> Built {
    let result = build_full(preset, session, |o| o.input = input.map(str::to_string));
    Built {
        messages: result
            .messages
            .iter()
            .map(|m| (m.role, m.content().to_string()))
            .collect(),
        dropped: result.dropped.clone(),
    }
}

fn texts(built: &Built) -> Vec<&str> {
    built.messages.iter().map(|(_, t)| t.as_str()).collect()
}

fn entry(id: &str, content: &str, side: &str, order: i32) -> Value {
    json!({"id": id, "constant": true, "content": content,
           "strategy": {"anchorTarget": "authorsNote", "anchorPosition": side, "order": order}})
}

// authors-note.js, setFloatingPrompt() with position 1 (in chat), and openai.js,
// populateChatCompletion(): the note goes into the chat `depth` messages from its end, with its
// role, its macros expanded. Natively the processor is off and nothing is placed.
#[test]
fn authors_note_in_the_chat_stands_at_its_depth_with_its_role() {
    let note = json!({"content": "Note for {{char}}.", "position": "in_chat", "depth": 1,
                      "role": "user", "interval": 1});
    let s = session(2, note);
    let built = build(&preset("sillytavern", json!([])), &s, None);
    assert_eq!(
        texts(&built),
        [
            "Main.",
            "[Start a new Chat]",
            "u1",
            "a1",
            "u2",
            "Note for Bob.",
            "a2"
        ]
    );
    assert_eq!(built.messages[4].0, Role::User);
    let native = build(&preset("native", json!([])), &s, None);
    assert_eq!(texts(&native), ["Main.", "u1", "a1", "u2", "a2"]);
}

// openai.js, getPromptPosition() and populateChatCompletion(): position 2 (before the prompt) is
// inserted at the start of the main prompt's place, position 0 (in the prompt) at its end.
#[test]
fn authors_note_before_or_in_the_prompt_stands_before_or_after_the_main_prompt() {
    let p = preset("sillytavern", json!([]));
    let before = json!({"content": "N.", "position": "before_prompt", "role": "system"});
    assert_eq!(
        texts(&build(&p, &session(1, before), None)),
        ["N.", "Main.", "[Start a new Chat]", "u1", "a1"]
    );
    let inside = json!({"content": "N.", "position": "in_prompt", "role": "assistant"});
    let built = build(&p, &session(1, inside), None);
    assert_eq!(
        texts(&built),
        ["Main.", "N.", "[Start a new Chat]", "u1", "a1"]
    );
    assert_eq!(built.messages[1].0, Role::Assistant);
}

// authors-note.js, setFloatingPrompt(): the note is shown when the number of user messages is a
// positive multiple of the interval (the message being sent counts); interval 1 always, 0 never.
#[test]
fn authors_note_is_shown_only_on_the_turns_its_interval_says() {
    let p = preset("sillytavern", json!([]));
    let with = |interval: u32| json!({"content": "N.", "position": "in_chat", "depth": 0, "interval": interval});
    let has_note = |b: &Built| texts(b).contains(&"N.");
    // One user message stored: with the input it is the second.
    assert!(!has_note(&build(&p, &session(1, with(2)), None)));
    assert!(has_note(&build(&p, &session(1, with(2)), Some("next"))));
    assert!(has_note(&build(&p, &session(3, with(3)), None)));
    assert!(!has_note(&build(&p, &session(4, with(3)), None)));
    // Interval 1: always, even before any user message; 0: never.
    assert!(has_note(&build(&p, &session(0, with(1)), None)));
    assert!(!has_note(&build(&p, &session(2, with(0)), None)));
    assert!(!has_note(&build(&p, &session(0, with(2)), None)));
}

// world-info.js, checkWorldInfo(): entries at "before the author's note" go on the lines above
// its text and those at "after" on the lines below (here in the assembler's anchor order, `order`
// highest first), and the whole is placed where the note goes.
#[test]
fn lorebook_entries_aimed_at_the_note_are_joined_around_its_text() {
    let entries = json!([
        entry("b1", "Top low.", "before", 10),
        entry("b2", "Top high.", "before", 90),
        entry("a1", "Bottom.", "after", 50),
    ]);
    let note = json!({"content": "Note.", "position": "in_chat", "depth": 0});
    let built = build(
        &preset("sillytavern", entries.clone()),
        &session(1, note),
        None,
    );
    assert_eq!(
        texts(&built).last().copied(),
        Some("Top high.\nTop low.\nNote.\nBottom.")
    );
    // An empty note with entries: an empty line where its text would be.
    let empty = json!({"content": "", "position": "before_prompt"});
    let built = build(&preset("sillytavern", entries), &session(1, empty), None);
    assert_eq!(texts(&built)[0], "Top high.\nTop low.\n\nBottom.");
}

// world-info.js, checkWorldInfo(): the entries are joined into the note only when it is shown
// (`shouldWIAddPrompt`); on other turns they are not sent at all. Here they are listed as dropped
// with the reason.
#[test]
fn lorebook_entries_aimed_at_the_note_are_left_out_when_it_is_not_shown() {
    let entries = json!([entry("b1", "Top.", "before", 10)]);
    let note = json!({"content": "Note.", "position": "in_chat", "depth": 0, "interval": 2});
    let built = build(&preset("sillytavern", entries), &session(1, note), None);
    assert_eq!(texts(&built), ["Main.", "[Start a new Chat]", "u1", "a1"]);
    assert_eq!(built.dropped.len(), 1, "{:?}", built.dropped);
    assert_eq!(built.dropped[0].source.entry_id.as_deref(), Some("b1"));
    assert!(
        built.dropped[0].reason.contains("author's note"),
        "{}",
        built.dropped[0].reason
    );
}

// authors-note.js, loadSettings(): a chat without a note has SillyTavern's defaults (empty text,
// in the chat at depth 4, system, every turn), so entries aimed at the note still go there.
#[test]
fn without_a_note_the_aimed_entries_go_where_the_default_note_goes() {
    let entries = json!([entry("a1", "Lore.", "after", 10)]);
    let built = build(
        &preset("sillytavern", entries),
        &session(3, Value::Null),
        None,
    );
    assert_eq!(
        texts(&built),
        [
            "Main.",
            "[Start a new Chat]",
            "u1",
            "a1",
            "Lore.",
            "u2",
            "a2",
            "u3",
            "a3"
        ]
    );
    assert_eq!(built.messages[4].0, Role::System);
}
