//! The assembler's phases seen from outside: the log lines one build writes, in order.

use crate::model::{parse_preset, parse_session};
use crate::pipeline::LogLevel;
use crate::processors::full_build::build_full;

/// The assembler's log lines of one build of `preset` over `session`, in order.
fn assembler_logs(preset: &str, session: &str) -> Vec<(LogLevel, String)> {
    let preset = parse_preset(preset).expect("preset");
    let session = parse_session(session).expect("session");
    build_full(&preset, &session, |_| {})
        .logs
        .into_iter()
        .filter(|l| l.processor == super::ID)
        .map(|l| (l.level, l.message))
        .collect()
}

const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
    {"role": "user", "content": "Hello {{nope}}"},
    {"role": "assistant", "content": "Hi."}]}"#;

#[test]
fn every_phase_logs_in_order_and_the_lines_are_written_after_assembly() {
    let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "You are {{char}}. {{bogus}}"},
            {"id": "hist", "role": "system", "type": "chat_history"},
            {"id": "blank", "role": "system", "content": "  {{trim}}  "},
            {"id": "both", "role": "system", "content": "Both."},
            {"id": "lost", "role": "system", "content": "Lost."},
            {"id": "prof", "role": "system", "type": "user_profile"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true},
            {"messageId": "hist", "enabled": true, "injectionStrategy": {"depth": 1}},
            {"messageId": "hist", "enabled": true},
            {"messageId": "blank", "enabled": true},
            {"messageId": "both", "enabled": true,
                "injectionStrategy": {"depth": 1, "anchorTarget": "chat_history"}},
            {"messageId": "lost", "enabled": true,
                "injectionStrategy": {"anchorTarget": "nowhere"}},
            {"messageId": "prof", "enabled": true}]}],
        "lorebook": {"entries": [
            {"id": "quiet", "keys": [], "constant": true, "content": "{{setvar::x::1}}"},
            {"id": "lore", "keys": [], "constant": true, "content": "Lore {{getvar::x}}"}]},
        "processors": [{"id": "injection-assembler",
            "settings": {"macrosInHistory": true}}]}"#;
    let warn = |s: &str| (LogLevel::Warning, s.to_string());
    let info = |s: &str| (LogLevel::Info, s.to_string());
    assert_eq!(
        assembler_logs(preset, SESSION),
        [
            info("recipe \"r\" [*] applies to model \"gpt-4o\""),
            warn("history:0: unknown macro {{nope}}"),
            warn("template:sys#0: unknown macro {{bogus}}"),
            warn(
                "step 1 (\"hist\"): a slot is always placed in list order; its strategy is ignored"
            ),
            warn("step 2 (\"hist\"): a second chat_history slot is ignored"),
            info("step 3 (\"blank\"): empty after macros and rules; not sent"),
            warn("step 4 (\"both\"): has both depth and anchor; depth wins"),
            info("lorebook \"quiet\": empty after macros; not sent"),
            warn("step 5 (\"lost\"): anchor \"nowhere\" is not in the recipe; dropped"),
            info("no user profile content; the user_profile slot is empty"),
            info("5 messages: 3 skeleton parts, 1 depth and 1 anchor injections, 2 history"),
        ]
    );
}

#[test]
fn without_a_history_slot_depth_injections_and_the_history_are_dropped_with_warnings() {
    let preset = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "System."},
            {"id": "deep", "role": "system", "content": "Deep."}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true},
            {"messageId": "deep", "enabled": true, "injectionStrategy": {"depth": 0}}]}]}"#;
    let warn = |s: &str| (LogLevel::Warning, s.to_string());
    let info = |s: &str| (LogLevel::Info, s.to_string());
    assert_eq!(
        assembler_logs(preset, SESSION),
        [
            info("recipe \"r\" [*] applies to model \"gpt-4o\""),
            warn("step 1 (\"deep\"): depth 0 injection dropped: the recipe has no enabled chat_history slot"),
            warn("the recipe has no enabled chat_history slot: 2 history messages not sent"),
            info("1 messages: 1 skeleton parts, 0 depth and 0 anchor injections, 0 history"),
        ]
    );
}

/// The messages of one build of `preset` over `session`, with `input`, as (role, text).
pub(crate) fn built_texts(
    preset: &crate::model::AgentPreset,
    session: &crate::model::Session,
    input: Option<&str>,
) -> Vec<(crate::model::Role, String)> {
    build_full(preset, session, |o| o.input = input.map(str::to_string))
        .messages
        .iter()
        .map(|m| (m.role, m.content().to_string()))
        .collect()
}

const ONE_TEMPLATE: &str = r#"{"formatVersion": 1, "id": "p", "name": "Bob",
    "messageTemplates": [
        {"id": "main", "role": "system", "content": "CONTENT"},
        {"id": "hist", "role": "system", "type": "chat_history"}],
    "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
        {"messageId": "main", "enabled": true}, {"messageId": "hist", "enabled": true}]}]}"#;

fn preset_saying(content: &str) -> crate::model::AgentPreset {
    parse_preset(&ONE_TEMPLATE.replace("CONTENT", content)).unwrap()
}

// macros.js, getLastMessageId(), getFirstIncludedMessageId() and getTimeSinceLastMessage(): the
// newest message's index (the input counts), the oldest sent one's, and the time since the user's
// message before the newest one, to the build's timestamp.
#[test]
fn message_macros_read_the_session_indexes_and_the_earlier_user_message_time() {
    let preset = preset_saying("{{lastMessageId}}|{{firstIncludedMessageId}}|{{idle_duration}}");
    let session = parse_session(
        r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "a", "createdAt": "2026-11-22T07:30:00Z"},
        {"role": "assistant", "content": "b", "createdAt": "2026-11-22T07:31:00Z"},
        {"role": "user", "content": "c", "createdAt": "2026-11-22T10:20:00Z"},
        {"role": "assistant", "content": "d", "createdAt": "2026-11-22T10:21:00Z"}]}"#,
    )
    .unwrap();
    // Newest stored is the assistant's: the user's message before it is "c", 10 minutes ago.
    assert_eq!(built_texts(&preset, &session, None)[0].1, "3|0|10 minutes");
    // With the input appended, it is the newest (index 4): the user's before it is still "c".
    assert_eq!(
        built_texts(&preset, &session, Some("e"))[0].1,
        "4|0|10 minutes"
    );
    // Nothing stored: no ids, and "just now".
    let empty = parse_session(r#"{"formatVersion": 1, "id": "s", "messages": []}"#).unwrap();
    assert_eq!(built_texts(&preset, &empty, None)[0].1, "||just now");
}

// macros.js, evaluateMacros(): `<USER>` and `<BOT>` are names only under SillyTavern
// compatibility (the assembler's `legacyNames`); natively they stay as written.
#[test]
fn legacy_names_follow_the_assembler_setting_sillytavern_switches_on() {
    let mut preset = preset_saying("<USER> and <BOT>");
    let session = parse_session(
        r#"{"formatVersion": 1, "id": "s", "userProfile": {"name": "Ann"}, "messages": []}"#,
    )
    .unwrap();
    assert_eq!(
        built_texts(&preset, &session, None)[0].1,
        "<USER> and <BOT>"
    );
    preset.compatibility = crate::model::Compatibility::Sillytavern;
    assert_eq!(built_texts(&preset, &session, None)[0].1, "Ann and Bob");
}

// variables.js, getLocalVariable(): `{{getvar}}` reads the chat's local variables, which win over
// the preset's of the same name; `{{setvar}}` in a build changes that build only.
#[test]
fn session_variables_are_read_before_the_preset_and_a_build_never_changes_them() {
    let mut preset =
        preset_saying("{{getvar::mood}}/{{getvar::hp}}{{setvar::mood::angry}}/{{getvar::mood}}");
    preset.variables = Some(
        [
            ("mood".to_string(), "preset".to_string()),
            ("hp".into(), "9".into()),
        ]
        .into(),
    );
    let mut session = parse_session(r#"{"formatVersion": 1, "id": "s", "messages": []}"#).unwrap();
    assert_eq!(built_texts(&preset, &session, None)[0].1, "preset/9/angry");
    session.variables = Some([("mood".to_string(), "calm".to_string())].into());
    assert_eq!(built_texts(&preset, &session, None)[0].1, "calm/9/angry");
    assert_eq!(built_texts(&preset, &session, None)[0].1, "calm/9/angry");
}

/// The assembler's SillyTavern behaviours (RULES 5.11.3), each beside the native rule it
/// changes.
mod sillytavern {

    use crate::model::{parse_preset, parse_session};
    use crate::processors::full_build::build_full;

    /// Each message of one build as `role|name|content` (the name empty when there is none).
    fn built(preset: &str, session: &str, context_window: Option<u32>) -> Vec<String> {
        let preset = parse_preset(preset).expect("preset");
        let session = parse_session(session).expect("session");
        let result = build_full(&preset, &session, |o| {
            o.context_window = context_window;
            o.reserve = context_window.map(|_| 0);
        });
        result
            .messages
            .iter()
            .map(|m| {
                format!(
                    "{}|{}|{}",
                    m.role.as_str(),
                    m.name().unwrap_or(""),
                    m.content()
                )
            })
            .collect()
    }

    const SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": [
        {"role": "user", "content": "One."},
        {"role": "assistant", "content": "Two."},
        {"role": "user", "content": "Three."}]}"#;

    const EMPTY_SESSION: &str = r#"{"formatVersion": 1, "id": "s", "messages": []}"#;

    /// A preset of `templates` in that order with `extra` fields (compatibility, character,
    /// processors), the history slot last unless the templates place it.
    fn preset(templates: &str, steps: &str, extra: &str) -> String {
        format!(
            r#"{{"formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [{templates}],
            "contextRecipes": [{{"id": "r", "modelFilter": ["*"], "steps": [{steps}]}}]{extra}}}"#
        )
    }

    /// Two system and one user template at depth 1, and a user one at depth 1 placed first by
    /// order; then the history.
    fn depth_preset(extra: &str) -> String {
        preset(
            r#"{"id": "s1", "role": "system", "content": " Sys one. "},
               {"id": "u1", "role": "user", "content": "User one."},
               {"id": "s2", "role": "system", "content": "Sys two."},
               {"id": "a1", "role": "assistant", "content": "Asst one."},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "s1", "enabled": true, "injectionStrategy": {"depth": 1}},
               {"messageId": "u1", "enabled": true, "injectionStrategy": {"depth": 1}},
               {"messageId": "s2", "enabled": true, "injectionStrategy": {"depth": 1}},
               {"messageId": "a1", "enabled": true, "injectionStrategy": {"depth": 1}},
               {"messageId": "h", "enabled": true}"#,
            extra,
        )
    }

    // openai.js, populationInjectionPrompts(): the in-chat prompts of one depth become one message
    // per role, assistant then user then system, each role's texts joined by a newline as they
    // are and the whole trimmed (the space inside stays).
    #[test]
    fn in_chat_prompts_at_one_depth_are_joined_by_role_in_sillytavern_order() {
        let st = built(
            &depth_preset(r#", "compatibility": "sillytavern""#),
            SESSION,
            None,
        );
        assert_eq!(
            st,
            [
                "system||[Start a new Chat]",
                "user||One.",
                "assistant||Two.",
                "assistant||Asst one.",
                "user||User one.",
                "system||Sys one. \nSys two.",
                "user||Three.",
            ]
        );
        // Native (RULES 3.4): each its own message, in step order.
        let native = built(&depth_preset(""), SESSION, None);
        assert_eq!(
            native,
            [
                "user||One.",
                "assistant||Two.",
                "system|| Sys one. ",
                "user||User one.",
                "system||Sys two.",
                "assistant||Asst one.",
                "user||Three.",
            ]
        );
    }

    // openai.js, populationInjectionPrompts(): depths are inserted one after the other, so past the
    // oldest message a deeper group stays before a shallower one instead of joining it.
    #[test]
    fn in_chat_prompts_of_different_depths_past_the_history_are_not_joined() {
        let p = preset(
            r#"{"id": "five", "role": "system", "content": "Five."},
               {"id": "nine", "role": "system", "content": "Nine."},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "five", "enabled": true, "injectionStrategy": {"depth": 5}},
               {"messageId": "nine", "enabled": true, "injectionStrategy": {"depth": 9}},
               {"messageId": "h", "enabled": true}"#,
            r#", "compatibility": "sillytavern",
               "processors": [{"id": "injection-assembler", "settings": {"newChatPrompt": ""}}]"#,
        );
        assert_eq!(
            built(&p, SESSION, None),
            [
                "system||Nine.",
                "system||Five.",
                "user||One.",
                "assistant||Two.",
                "user||Three.",
            ]
        );
    }

    // openai.js, populationInjectionPrompts(): the extension prompts of a role at a depth (the
    // card's depth prompt, world info at a depth) join the prompt manager's prompts of that role
    // after them, in one message.
    #[test]
    fn candidates_at_one_depth_join_the_templates_of_their_role() {
        let p = preset(
            r#"{"id": "pm", "role": "system", "content": "Preset note."},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "pm", "enabled": true, "injectionStrategy": {"depth": 1}},
               {"messageId": "h", "enabled": true}"#,
            r#", "compatibility": "sillytavern",
               "character": {"name": "Mira",
                   "depthPrompt": {"prompt": "Card note.", "depth": 1, "role": "system"}},
               "lorebook": {"entries": [
                   {"id": "w", "keys": [], "constant": true, "content": "Lore.",
                    "strategy": {"depth": 1}}]},
               "processors": [{"id": "injection-assembler", "settings": {"newChatPrompt": ""}}]"#,
        );
        let out = built(&p, SESSION, None);
        assert_eq!(out.len(), 4, "{out:?}");
        assert_eq!(out[..2], ["user||One.", "assistant||Two."]);
        assert_eq!(out[3], "user||Three.");
        let joined = out[2].strip_prefix("system||").expect("one system message");
        let mut parts: Vec<&str> = joined.split('\n').collect();
        assert_eq!(parts.remove(0), "Preset note.", "the template first");
        parts.sort_unstable();
        assert_eq!(parts, ["Card note.", "Lore."]);
    }

    fn override_preset(character: &str, settings: &str) -> String {
        preset(
            r#"{"id": "main", "role": "system", "content": "Preset main."},
               {"id": "h", "role": "system", "type": "chat_history"},
               {"id": "jailbreak", "role": "system", "content": "Preset jailbreak."}"#,
            r#"{"messageId": "main", "enabled": true},
               {"messageId": "h", "enabled": true},
               {"messageId": "jailbreak", "enabled": true}"#,
            &format!(
                r#", "compatibility": "sillytavern", "character": {character},
                "processors": [{{"id": "injection-assembler", "settings": {settings}}}]"#
            ),
        )
    }

    // openai.js, preparePromptsForChatCompletion(): the card's system prompt and post-history
    // instructions replace main and jailbreak; {{original}} (PromptManager.js, preparePrompt())
    // is the prompt's own text.
    #[test]
    fn the_card_system_prompt_and_post_history_instructions_replace_main_and_jailbreak() {
        let p = override_preset(
            r#"{"name": "Mira", "systemPrompt": "  Card main, then {{original}} {{ORIGINAL}}\n",
                "postHistoryInstructions": "Card jailbreak."}"#,
            r#"{"newChatPrompt": ""}"#,
        );
        assert_eq!(
            built(&p, EMPTY_SESSION, None),
            [
                "system||Card main, then Preset main. ",
                "system||Card jailbreak.",
            ]
        );
    }

    // openai.js, preparePromptsForChatCompletion(): an empty card field replaces nothing.
    #[test]
    fn empty_card_fields_do_not_replace_main_and_jailbreak() {
        let p = override_preset(
            r#"{"name": "Mira", "systemPrompt": "  ", "postHistoryInstructions": ""}"#,
            r#"{"newChatPrompt": ""}"#,
        );
        assert_eq!(
            built(&p, EMPTY_SESSION, None),
            ["system||Preset main.", "system||Preset jailbreak."]
        );
    }

    // PromptManager.js, forbid_overrides: a prompt that forbids overrides keeps its text; the
    // importer says so by clearing the setting that names it.
    #[test]
    fn a_template_that_forbids_overrides_keeps_its_own_text() {
        let p = override_preset(
            r#"{"name": "Mira", "systemPrompt": "Card main.", "postHistoryInstructions": "Card jb."}"#,
            r#"{"newChatPrompt": "", "systemPromptTemplate": ""}"#,
        );
        assert_eq!(
            built(&p, EMPTY_SESSION, None),
            ["system||Preset main.", "system||Card jb."]
        );
    }

    fn field_preset(character: &str, extra: &str) -> String {
        preset(
            r#"{"id": "charPersonality", "role": "system", "content": "{{personality}}"},
               {"id": "scenario", "role": "system", "content": "{{scenario}}"},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "charPersonality", "enabled": true},
               {"messageId": "scenario", "enabled": true},
               {"messageId": "h", "enabled": true}"#,
            &format!(r#", "character": {character}{extra}"#),
        )
    }

    // openai.js, preparePromptsForChatCompletion(): personality and scenario are sent through
    // personality_format and scenario_format; populateChatHistory(): new_chat_prompt opens the
    // history.
    #[test]
    fn personality_and_scenario_go_through_their_formats_and_the_new_chat_prompt_opens_the_history()
    {
        let character = r#"{"name": "Mira", "personality": "curious", "scenario": "An inn."}"#;
        assert_eq!(
            built(
                &field_preset(character, r#", "compatibility": "sillytavern""#),
                EMPTY_SESSION,
                None
            ),
            [
                "system||[Mira's personality: curious]",
                "system||[Circumstances and context of the dialogue: An inn.]",
                "system||[Start a new Chat]",
            ]
        );
        assert_eq!(
            built(&field_preset(character, ""), EMPTY_SESSION, None),
            ["system||curious", "system||An inn."]
        );
    }

    // script.js, getCharacterCardFields(): each card field trimmed, then baseChatReplace() takes the
    // carriage returns out (RULES 5.11.3, cleanCardFields).
    #[test]
    fn card_fields_are_read_trimmed_and_without_carriage_returns_under_compatibility() {
        let character = r#"{"name": "Mira", "personality": "  curious\r\nand kind \r\n", "scenario": "An\rinn."}"#;
        assert_eq!(
            built(
                &field_preset(character, r#", "compatibility": "sillytavern""#),
                EMPTY_SESSION,
                None
            ),
            [
                "system||[Mira's personality: curious\nand kind]",
                "system||[Circumstances and context of the dialogue: Aninn.]",
                "system||[Start a new Chat]",
            ]
        );
        assert_eq!(
            built(&field_preset(character, ""), EMPTY_SESSION, None),
            ["system||  curious\r\nand kind \r\n", "system||An\rinn."]
        );
    }

    // openai.js, preparePromptsForChatCompletion(): an empty card field sends nothing, whatever the
    // format says.
    #[test]
    fn an_empty_personality_or_scenario_sends_nothing_through_its_format() {
        let p = field_preset(
            r#"{"name": "Mira", "personality": "", "scenario": "An inn."}"#,
            r#", "compatibility": "sillytavern",
               "processors": [{"id": "injection-assembler",
                   "settings": {"scenarioFormat": "Where: {{scenario}}", "newChatPrompt": ""}}]"#,
        );
        assert_eq!(built(&p, EMPTY_SESSION, None), ["system||Where: An inn."]);
    }

    // script.js, the card's extensions.depth_prompt set as an in-chat extension prompt; openai.js,
    // populationInjectionPrompts() places it at its depth with its role.
    #[test]
    fn the_character_note_is_placed_at_its_depth_with_its_role_under_compatibility() {
        let extra = |compat: &str| {
            format!(
                r#"{compat}, "character": {{"name": "Mira",
                    "depthPrompt": {{"prompt": " {{{{char}}}} hums. ", "depth": 1, "role": "user"}}}},
                    "processors": [{{"id": "injection-assembler", "settings": {{"newChatPrompt": ""}}}}]"#
            )
        };
        let p = |compat: &str| {
            preset(
                r#"{"id": "h", "role": "system", "type": "chat_history"}"#,
                r#"{"messageId": "h", "enabled": true}"#,
                &extra(compat),
            )
        };
        assert_eq!(
            built(&p(r#", "compatibility": "sillytavern""#), SESSION, None),
            [
                "user||One.",
                "assistant||Two.",
                "user||Mira hums.",
                "user||Three."
            ]
        );
        assert_eq!(
            built(&p(""), SESSION, None),
            ["user||One.", "assistant||Two.", "user||Three."],
            "native mode does not send the note"
        );
    }

    // RULES 3.2: under SillyTavern compatibility a prompt that is only white space is sent (a
    // real preset's prompts of comments alone leave a line break); in the chat it is not.
    #[test]
    fn a_white_space_prompt_is_sent_under_compatibility_only_in_list_order() {
        let p = |compat: &str| {
            preset(
                r#"{"id": "a", "role": "system", "content": "A."},
                   {"id": "w", "role": "system", "content": "{{// a note }}\n"},
                   {"id": "d", "role": "system", "content": " \n"},
                   {"id": "h", "role": "system", "type": "chat_history"}"#,
                r#"{"messageId": "a", "enabled": true},
                   {"messageId": "w", "enabled": true},
                   {"messageId": "d", "enabled": true, "injectionStrategy": {"depth": 1}},
                   {"messageId": "h", "enabled": true}"#,
                &format!(
                    r#"{compat}, "processors": [{{"id": "injection-assembler",
                        "settings": {{"newChatPrompt": ""}}}}]"#
                ),
            )
        };
        assert_eq!(
            built(&p(r#", "compatibility": "sillytavern""#), SESSION, None),
            [
                "system||A.",
                "system||\n",
                "user||One.",
                "assistant||Two.",
                "user||Three."
            ]
        );
        assert_eq!(
            built(&p(""), SESSION, None),
            [
                "system||A.",
                "user||One.",
                "assistant||Two.",
                "user||Three."
            ]
        );
    }

    // RULES 5.11.7: an empty assistant prompt between two system prompts keeps them apart when
    // system messages are squashed (a real Nemo Engine preset has one); an empty system one does
    // not.
    #[test]
    fn an_empty_turn_between_system_prompts_keeps_them_apart_when_squashed() {
        let p = preset(
            r#"{"id": "a", "role": "system", "content": "A."},
               {"id": "e", "role": "assistant", "content": ""},
               {"id": "b", "role": "system", "content": "B."},
               {"id": "s", "role": "system", "content": ""},
               {"id": "c", "role": "system", "content": "C."},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "a", "enabled": true},
               {"messageId": "e", "enabled": true},
               {"messageId": "b", "enabled": true},
               {"messageId": "s", "enabled": true},
               {"messageId": "c", "enabled": true},
               {"messageId": "h", "enabled": true}"#,
            r#", "compatibility": "sillytavern", "processors": [
                {"id": "injection-assembler", "settings": {"newChatPrompt": ""}},
                {"id": "squash-system-messages", "enabled": true}]"#,
        );
        assert_eq!(
            built(&p, SESSION, None),
            [
                "system||A.",
                "system||B.\nC.",
                "user||One.",
                "assistant||Two.",
                "user||Three."
            ]
        );
    }

    // RULES 5.11.4: the note loses its carriage returns, as the card's other fields do.
    #[test]
    fn the_character_note_is_sent_without_carriage_returns() {
        let p = preset(
            r#"{"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "h", "enabled": true}"#,
            r#", "compatibility": "sillytavern", "character": {"name": "Mira",
                "depthPrompt": {"prompt": "[\r\nMira hums.\r\n]\r\n", "depth": 1, "role": "system"}},
                "processors": [{"id": "injection-assembler", "settings": {"newChatPrompt": ""}}]"#,
        );
        assert_eq!(
            built(&p, SESSION, None),
            [
                "user||One.",
                "assistant||Two.",
                "system||[\nMira hums.\n]",
                "user||Three."
            ]
        );
    }

    fn examples_preset(examples: &str, lore: &str) -> String {
        preset(
            r#"{"id": "main", "role": "system", "content": "Main."},
               {"id": "dialogueExamples", "role": "system", "type": "placeholder"},
               {"id": "h", "role": "system", "type": "chat_history"}"#,
            r#"{"messageId": "main", "enabled": true},
               {"messageId": "dialogueExamples", "enabled": true},
               {"messageId": "h", "enabled": true}"#,
            &format!(
                r#", "compatibility": "sillytavern",
                "character": {{"name": "Mira", "exampleDialogue": {}}}{lore},
                "processors": [{{"id": "injection-assembler", "settings": {{"newChatPrompt": ""}}}}]"#,
                serde_json::Value::from(examples)
            ),
        )
    }

    // script.js, parseMesExamples(), and openai.js, parseExampleIntoIndividual() and
    // populateDialogueExamples(): the example dialogue split at <START>, each block its opener and
    // system messages named example_user and example_assistant.
    #[test]
    fn dialogue_examples_are_split_at_start_into_named_system_messages() {
        let examples =
            "<START>\n{{user}}: Hi.\n{{char}}: Hello.\nStill me.\n<start>\n{{char}}: Again.";
        assert_eq!(
            built(&examples_preset(examples, ""), EMPTY_SESSION, None),
            [
                "system||Main.",
                "system||[Example Chat]",
                "system|example_user|Hi.",
                "system|example_assistant|Hello.\nStill me.",
                "system||[Example Chat]",
                "system|example_assistant|Again.",
            ]
        );
    }

    // script.js, Generate(): world info entries before and after the examples are parsed into
    // blocks of their own, put before and after the card's. world-info.js, checkWorldInfo()
    // lists them (EMEntries) in reverse of its order-sorted list, one entry each, and Generate()
    // puts each "before" one in front: of two entries of equal order, the first in the book
    // opens (the lorebook hands them over in that list's order).
    #[test]
    fn world_info_before_and_after_examples_is_folded_into_the_example_blocks() {
        let lore = r#", "lorebook": {"entries": [
            {"id": "b1", "keys": [], "constant": true, "content": "{{user}}: B1.",
                "strategy": {"anchorTarget": "dialogueExamples", "anchorPosition": "before"}},
            {"id": "b2", "keys": [], "constant": true, "content": "{{user}}: B2.",
                "strategy": {"anchorTarget": "dialogueExamples", "anchorPosition": "before"}},
            {"id": "a1", "keys": [], "constant": true, "content": "<START>\n{{char}}: A1.",
                "strategy": {"anchorTarget": "dialogueExamples", "anchorPosition": "after"}}]}"#;
        let texts: Vec<String> = built(
            &examples_preset("<START>\n{{char}}: Own.", lore),
            EMPTY_SESSION,
            None,
        )
        .into_iter()
        .filter(|m| !m.ends_with("[Example Chat]"))
        .collect();
        assert_eq!(
            texts,
            [
                "system||Main.",
                "system|example_user|B1.",
                "system|example_user|B2.",
                "system|example_assistant|Own.",
                "system|example_assistant|A1.",
            ]
        );
    }

    // openai.js, populateDialogueExamples(): after the history, the examples are added block by
    // block while they fit what is left of the budget; a block that does not fit is left out and a
    // later, smaller one may still be sent.
    #[test]
    fn dialogue_examples_are_added_block_by_block_while_they_fit_the_budget() {
        let long = "word ".repeat(200);
        let examples = format!("<START>\n{{{{char}}}}: Short.\n<START>\n{{{{char}}}}: {long}\n<START>\n{{{{char}}}}: Tiny.");
        let all = built(&examples_preset(&examples, ""), SESSION, None);
        assert_eq!(all.len(), 1 + 6 + 3, "all blocks without a budget");
        let fitted = built(&examples_preset(&examples, ""), SESSION, Some(150));
        assert_eq!(
            fitted,
            [
                "system||Main.",
                "system||[Example Chat]",
                "system|example_assistant|Short.",
                "system||[Example Chat]",
                "system|example_assistant|Tiny.",
                "user||One.",
                "assistant||Two.",
                "user||Three.",
            ]
        );
    }
}

// RULES 5.11.5: a template that writes `{{wiBefore}}` or `{{wiAfter}}` takes the lorebook's texts
// for those places; entries at a depth are placed as usual, and without the macros nothing changes.
#[test]
fn rule_5_11_5_wi_before_and_after_in_a_template_take_the_lorebook_texts() {
    let preset = |content: &str| {
        parse_preset(&format!(
            r#"{{"formatVersion": 1, "id": "p", "name": "Bob",
            "messageTemplates": [
                {{"id": "story", "role": "system", "content": {content:?}}},
                {{"id": "hist", "role": "system", "type": "chat_history"}}],
            "contextRecipes": [{{"id": "r", "modelFilter": ["*"], "steps": [
                {{"messageId": "story", "enabled": true}}, {{"messageId": "hist", "enabled": true}}]}}],
            "lorebook": {{"entries": [
                {{"id": "a", "keys": [], "constant": true, "content": "Castle of {{{{char}}}}."}},
                {{"id": "b", "keys": [], "constant": true, "content": "A moat.",
                    "strategy": {{"anchorTarget": "worldInfoAfter"}}}},
                {{"id": "c", "keys": [], "constant": true, "content": "Deep.",
                    "strategy": {{"depth": 0}}}}]}}}}"#
        ))
        .expect("preset")
    };
    let session = parse_session(SESSION).expect("session");
    let story =
        preset("{{#if wiBefore}}{{wiBefore}}\n{{/if}}Bob.{{#if loreAfter}}\n{{loreAfter}}{{/if}}");
    let texts: Vec<String> = built_texts(&story, &session, None)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(
        texts,
        [
            "Castle of Bob.\nBob.\nA moat.",
            "Hello {{nope}}",
            "Hi.",
            "Deep."
        ]
    );
    // Without the macros the entries are placed as usual: before the history, or at an anchor
    // this recipe does not have (dropped).
    let plain = preset("Bob.");
    let texts: Vec<String> = built_texts(&plain, &session, None)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(
        texts,
        ["Bob.", "Castle of Bob.", "Hello {{nope}}", "Hi.", "Deep."]
    );
}
