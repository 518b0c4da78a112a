//! The built-in templates on one conversation, golden strings; the renderer's rules.

use super::*;

/// A system prompt, a named user turn, a reply, a depth injection (a system message inside the
/// history) and the newest user turn.
fn conversation() -> Vec<Turn<'static>> {
    vec![
        Turn {
            role: Role::System,
            name: None,
            content: "You are Mara, a lighthouse keeper.",
            unwrapped: false,
        },
        Turn {
            role: Role::User,
            name: Some("Rosa"),
            content: "Is the lamp lit?",
            unwrapped: false,
        },
        Turn {
            role: Role::Assistant,
            name: None,
            content: "It has not gone out in forty years.",
            unwrapped: false,
        },
        Turn {
            role: Role::System,
            name: None,
            content: "[A storm is coming.]",
            unwrapped: false,
        },
        Turn {
            role: Role::User,
            name: None,
            content: "Then we wait.",
            unwrapped: false,
        },
    ]
}

/// The day the dated templates are written on.
fn day() -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339("2026-11-26T12:00:00+01:00").expect("a time")
}

fn rendered(id: &str) -> RenderedPrompt {
    let template = built_in(id).unwrap_or_else(|| panic!("built-in {id}"));
    render(&template.dated(&day()), &conversation())
}

#[test]
fn every_built_in_template_reads_and_has_a_golden_string() {
    let ids: Vec<&str> = built_in_ids().collect();
    assert_eq!(ids.len(), GOLDEN.len());
    for (id, golden) in GOLDEN {
        assert!(ids.contains(id), "{id}");
        let r = rendered(id);
        assert_eq!(&r.prompt, golden, "template {id}:\n{}", r.prompt);
        // Every byte in one span, in order.
        let mut at = 0;
        for span in &r.spans {
            assert_eq!(span.start, at, "{id}");
            assert!(span.end > span.start, "{id}");
            at = span.end;
        }
        assert_eq!(at as usize, r.prompt.len(), "{id}");
    }
}

const GOLDEN: &[(&str, &str)] = &[
    ("chatml", "<|im_start|>system\nYou are Mara, a lighthouse keeper.<|im_end|>\n<|im_start|>user\nRosa: Is the lamp lit?<|im_end|>\n<|im_start|>assistant\nIt has not gone out in forty years.<|im_end|>\n<|im_start|>system\n[A storm is coming.]<|im_end|>\n<|im_start|>user\nThen we wait.<|im_end|>\n<|im_start|>assistant\n"),
    ("qwen", "<|im_start|>system\nYou are Mara, a lighthouse keeper.<|im_end|>\n<|im_start|>user\nRosa: Is the lamp lit?<|im_end|>\n<|im_start|>assistant\nIt has not gone out in forty years.<|im_end|>\n<|im_start|>system\n[A storm is coming.]<|im_end|>\n<|im_start|>user\nThen we wait.<|im_end|>\n<|im_start|>assistant\n"),
    ("qwen-2.5", "<|im_start|>system\nYou are Mara, a lighthouse keeper.<|im_end|>\n<|im_start|>user\nRosa: Is the lamp lit?<|im_end|>\n<|im_start|>assistant\nIt has not gone out in forty years.<|im_end|>\n<|im_start|>system\n[A storm is coming.]<|im_end|>\n<|im_start|>user\nThen we wait.<|im_end|>\n<|im_start|>assistant\n"),
    ("llama-3", "<|start_header_id|>system<|end_header_id|>\n\nYou are Mara, a lighthouse keeper.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nRosa: Is the lamp lit?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nIt has not gone out in forty years.<|eot_id|><|start_header_id|>system<|end_header_id|>\n\n[A storm is coming.]<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nThen we wait.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
    ("llama-3.1", "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Nov 2026\n\nYou are Mara, a lighthouse keeper.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nRosa: Is the lamp lit?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nIt has not gone out in forty years.<|eot_id|><|start_header_id|>system<|end_header_id|>\n\n[A storm is coming.]<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nThen we wait.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"),
    ("llama-2", "[INST] <<SYS>>\nYou are Mara, a lighthouse keeper.\n<</SYS>>\n\nRosa: Is the lamp lit? [/INST] It has not gone out in forty years. </s><s>[INST] <<SYS>>\n[A storm is coming.]\n<</SYS>>\n\nThen we wait. [/INST]"),
    ("mistral", " [INST] You are Mara, a lighthouse keeper.\n\nRosa: Is the lamp lit? [/INST] It has not gone out in forty years.</s> [INST] [A storm is coming.]\n\nThen we wait. [/INST]"),
    ("mistral-tekken", "[INST]Rosa: Is the lamp lit?[/INST]It has not gone out in forty years.</s>[INST]You are Mara, a lighthouse keeper.\n\n[A storm is coming.]\n\nThen we wait.[/INST]"),
    ("gemma", "<start_of_turn>user\nYou are Mara, a lighthouse keeper.\n\nRosa: Is the lamp lit?<end_of_turn>\n<start_of_turn>model\nIt has not gone out in forty years.<end_of_turn>\n<start_of_turn>user\n[A storm is coming.]\n\nThen we wait.<end_of_turn>\n<start_of_turn>model\n"),
    ("phi-3", "<|system|>\nYou are Mara, a lighthouse keeper.<|end|>\n<|user|>\nRosa: Is the lamp lit?<|end|>\n<|assistant|>\nIt has not gone out in forty years.<|end|>\n<|system|>\n[A storm is coming.]<|end|>\n<|user|>\nThen we wait.<|end|>\n<|assistant|>\n"),
    ("deepseek", "<｜begin▁of▁sentence｜>You are Mara, a lighthouse keeper.\n\n[A storm is coming.]<｜User｜>Rosa: Is the lamp lit?<｜Assistant｜>It has not gone out in forty years.<｜end▁of▁sentence｜><｜User｜>Then we wait.<｜Assistant｜>"),
    ("alpaca", "You are Mara, a lighthouse keeper.\n\n### Instruction:\nRosa: Is the lamp lit?\n\n### Response:\nIt has not gone out in forty years.\n\n[A storm is coming.]\n\n### Instruction:\nThen we wait.\n\n### Response:\n"),
    ("vicuna", "You are Mara, a lighthouse keeper. USER: Rosa: Is the lamp lit? ASSISTANT: It has not gone out in forty years.</s>[A storm is coming.] USER: Then we wait. ASSISTANT:"),
];

// llama.cpp (and the other servers) put the BOS token before a prompt string themselves where
// the model's tokenizer adds one: written in the string too, the model would read two.
#[test]
fn instruct_bos_the_server_adds_is_left_out_of_the_string_and_named() {
    for (id, bos) in [
        ("llama-3", "<|begin_of_text|>"),
        ("llama-3.1", "<|begin_of_text|>"),
        ("gemma", "<bos>"),
        ("mistral-tekken", "<s>"),
        ("mistral", "<s>"),
        ("llama-2", "<s>"),
    ] {
        let r = rendered(id);
        assert!(!r.prompt.starts_with(bos), "{id}: {}", r.prompt);
        assert_eq!(r.server_bos.as_deref(), Some(bos), "{id}");
    }
    // DeepSeek's tokenizer adds none: its template writes the BOS text, and so does ours.
    let r = rendered("deepseek");
    assert!(r.prompt.starts_with("<｜begin▁of▁sentence｜>"));
    assert_eq!(r.server_bos, None);
}

// A date format chrono cannot write is refused when the template is read.
#[test]
fn instruct_today_format_must_be_a_date_format() {
    let mut t = built_in("llama-3.1").expect("llama-3.1");
    t.today_format = Some("%d %Q".into());
    let e = t.validate().unwrap_err().to_string();
    assert!(e.contains("todayFormat") && e.contains("%d %Q"), "{e}");
}

#[test]
fn instruct_template_with_an_unknown_field_is_an_error_naming_it() {
    let e = InstructTemplate::parse("mine.json", r#"{"id": "x", "name": "X", "userPrefx": "U"}"#)
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("instruct template \"mine.json\"") && text.contains("userPrefx"),
        "{text}"
    );
    let e = InstructTemplate::parse("mine.json", r#"{"id": "x", "name": "X", "stop": [""]}"#)
        .unwrap_err();
    assert!(e.to_string().contains("stop[0]"), "{e}");
    let e = InstructTemplate::parse(
        "mine.json",
        r#"{"formatVersion": 9, "id": "x", "name": "X"}"#,
    )
    .unwrap_err();
    assert_eq!(e.code(), crate::error::codes::NEWER_FORMAT);
    let huge = format!(
        r#"{{"id": "x", "name": "X", "bos": "{}"}}"#,
        "a".repeat(MAX_TEMPLATE_BYTES + 1)
    );
    let e = InstructTemplate::parse("mine.json", &huge).unwrap_err();
    assert!(e.to_string().contains("at most"), "{e}");
}

#[test]
fn instruct_spans_say_which_message_each_part_came_from() {
    let r = rendered("chatml");
    let of = |index: u32| -> Vec<&str> {
        r.spans
            .iter()
            .filter(|s| s.source == SpanSource::Message { index })
            .map(|s| &r.prompt[s.start as usize..s.end as usize])
            .collect()
    };
    assert_eq!(of(1), ["Rosa: Is the lamp lit?"]);
    assert_eq!(of(3), ["[A storm is coming.]"]);
    assert_eq!(r.stop, ["<|im_end|>"]);
    // The template's parts between them.
    assert_eq!(r.spans[0].source, SpanSource::Template);
    assert_eq!(
        &r.prompt[r.spans[0].start as usize..r.spans[0].end as usize],
        "<|im_start|>system\n"
    );
}

#[test]
fn instruct_names_are_written_or_left_out_and_system_messages_without_a_user_turn_stand_alone() {
    let mut t = built_in("gemma").expect("gemma");
    let turns = [
        Turn {
            role: Role::User,
            name: Some("Rosa"),
            content: "  Hi.  ",
            unwrapped: false,
        },
        Turn {
            role: Role::System,
            name: Some("Narrator"),
            content: "Dusk.",
            unwrapped: false,
        },
    ];
    assert_eq!(
        render(&t, &turns).prompt,
        "<start_of_turn>user\nRosa: Hi.<end_of_turn>\n<start_of_turn>user\nDusk.<end_of_turn>\n<start_of_turn>model\n"
    );
    t.names = NamesMode::Never;
    t.trim = false;
    assert!(render(&t, &turns)
        .prompt
        .starts_with("<start_of_turn>user\n  Hi.  <end_of_turn>"));
}

// RULES 5.12: a role's first and last turns may have prefixes of their own; the last wins
// when one turn is both.
#[test]
fn instruct_first_and_last_prefixes_mark_a_roles_first_and_last_turns() {
    let mut t = built_in("alpaca").expect("alpaca");
    t.user.first_prefix = Some("[first user] ".into());
    t.user.last_prefix = Some("[last user] ".into());
    t.assistant.first_prefix = Some("[first reply] ".into());
    t.system.last_prefix = Some("[last system] ".into());
    t.system_mode = SystemMode::Own;
    t.names = NamesMode::Never;
    let prompt = render(&t, &conversation()).prompt;
    let at = |needle: &str| {
        prompt
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} in {prompt:?}"))
    };
    assert!(at("[first user] Is the lamp lit?") < at("[last user] Then we wait."));
    assert!(prompt.contains("[first reply] It has not gone out"));
    // Two system turns: the first has the plain prefix, the second the last one.
    assert!(prompt.contains("[last system] [A storm is coming.]"));
    assert!(!prompt.contains("[last system] You are Mara"));
    // One user turn is the first and the last: the last prefix.
    let one = [Turn {
        role: Role::User,
        name: None,
        content: "Hello.",
        unwrapped: false,
    }];
    assert!(render(&t, &one).prompt.contains("[last user] Hello."));
    // The variants count toward the template's size cap.
    t.user.first_prefix = Some("x".repeat(MAX_TEMPLATE_BYTES + 1));
    assert!(t.validate().is_err());
}

// RULES 5.12: an unwrapped message is written as it is, in place: no affixes, no name, never
// folded into a user turn, and no turn of its role for the first and last prefixes.
#[test]
fn instruct_unwrapped_messages_are_written_as_they_are() {
    let mut t = built_in("llama-2").expect("llama-2");
    t.user.first_prefix = Some("[first] ".into());
    let turns = [
        Turn {
            role: Role::System,
            name: Some("Story"),
            content: "[INST] Story. [/INST]",
            unwrapped: true,
        },
        Turn {
            role: Role::System,
            name: None,
            content: "Be brief.",
            unwrapped: false,
        },
        Turn {
            role: Role::User,
            name: None,
            content: "Hi.",
            unwrapped: false,
        },
    ];
    let folded = render(&t, &turns);
    assert!(
        folded
            .prompt
            .starts_with("[INST] Story. [/INST][first] <<SYS>>\nBe brief."),
        "{}",
        folded.prompt
    );
    assert_eq!(folded.spans[0].source, SpanSource::Message { index: 0 });
    // Alone before the chat, in a format that writes system messages at the start.
    t.system_mode = SystemMode::AtStart;
    let at_start = render(&t, &turns[..1]).prompt;
    assert_eq!(at_start, format!("[INST] Story. [/INST]{}", t.reply_prefix));
}

mod in_a_build {
    use super::*;
    use crate::model::{parse_preset, parse_session};
    use crate::processors::full_build::build_full;
    use crate::tokens::TokenizerKind;

    pub(super) const PRESET: &str = r#"{"formatVersion": 1, "id": "p", "name": "P",
        "messageTemplates": [
            {"id": "sys", "role": "system", "content": "You are Mara."},
            {"id": "hist", "role": "system", "type": "chat_history"}],
        "contextRecipes": [{"id": "r", "modelFilter": ["*"], "steps": [
            {"messageId": "sys", "enabled": true}, {"messageId": "hist", "enabled": true}]}],
        "processors": [{"id": "token-limiter", "enabled": true}]}"#;

    fn session(n: usize) -> crate::model::Session {
        let messages: Vec<String> = (0..n)
            .map(|i| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                format!(r#"{{"role": "{role}", "content": "Message number {i} about the lamp."}}"#)
            })
            .collect();
        parse_session(&format!(
            r#"{{"formatVersion": 1, "id": "s", "messages": [{}]}}"#,
            messages.join(",")
        ))
        .expect("session")
    }

    // RULES 5.12: the built messages, after every processor, are written into one string; the
    // total counts that string.
    #[test]
    fn text_completion_build_renders_the_messages_into_one_string_and_counts_it() {
        let preset = parse_preset(PRESET).expect("preset");
        let s = session(2);
        let result = build_full(&preset, &s, |o| o.instruct = built_in("chatml"));
        let prompt = result.prompt.as_ref().expect("a prompt string");
        assert_eq!(
            prompt.prompt,
            "<|im_start|>system\nYou are Mara.<|im_end|>\n<|im_start|>user\nMessage number 0 about \
             the lamp.<|im_end|>\n<|im_start|>assistant\nMessage number 1 about the \
             lamp.<|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(prompt.stop, ["<|im_end|>"]);
        let exact = TokenizerKind::O200kBase.count(&prompt.prompt) as u32;
        assert_eq!(result.tokens.total, exact);
        // Each message costs its content and its role's prefix and suffix.
        let count = |t: &str| TokenizerKind::O200kBase.count(t) as u32;
        assert_eq!(
            result.messages[0].tokens,
            count("You are Mara.") + count("<|im_start|>system\n") + count("<|im_end|>\n")
        );
        // A chat build has no prompt string.
        assert!(build_full(&preset, &s, |_| {}).prompt.is_none());
    }

    // RULES 5.12: a template marked `unwrapped` is written into the string as it is.
    #[test]
    fn text_completion_writes_an_unwrapped_template_as_it_is() {
        let preset = parse_preset(&PRESET.replace(
            r#""content": "You are Mara.""#,
            r#""content": "<|im_start|>system\nYou are Mara.<|im_end|>\n", "unwrapped": true"#,
        ))
        .expect("preset");
        let s = session(1);
        let result = build_full(&preset, &s, |o| o.instruct = built_in("chatml"));
        assert_eq!(
            result.prompt.expect("a prompt").prompt,
            "<|im_start|>system\nYou are Mara.<|im_end|>\n<|im_start|>user\nMessage number 0 \
             about the lamp.<|im_end|>\n<|im_start|>assistant\n"
        );
        // In chat completion it is a system message like any other.
        let chat = build_full(&preset, &s, |_| {});
        assert_eq!(chat.messages[0].role, Role::System);
    }

    // RULES 5.12, 5.6: the budget counts the template's tokens, so a window that holds the
    // history as chat messages drops some of it as a ChatML string, and the string fits.
    #[test]
    fn text_completion_budget_counts_the_templates_tokens() {
        let preset = parse_preset(PRESET).expect("preset");
        let s = session(40);
        let window = |o: &mut crate::pipeline::BuildOptions| {
            o.context_window = Some(400);
            o.reserve = Some(0);
        };
        let chat = build_full(&preset, &s, window);
        let text = build_full(&preset, &s, |o| {
            window(o);
            o.instruct = built_in("llama-3");
        });
        assert!(
            text.messages.len() < chat.messages.len(),
            "{} against {}",
            text.messages.len(),
            chat.messages.len()
        );
        assert!(text.tokens.total <= 400, "{}", text.tokens.total);
        assert!(!text.dropped.is_empty());
    }

    // A model profile can name its template.
    #[test]
    fn text_completion_a_model_profile_names_its_template() {
        let preset = parse_preset(PRESET).expect("preset");
        let s = session(2);
        let mut profile = crate::profiles::builtin_profiles()
            .into_iter()
            .find(|p| p.patterns.iter().any(|m| m.starts_with("gpt-4o")))
            .expect("a gpt-4o profile");
        profile.id = "local".into();
        profile.builtin = false;
        profile.patterns = vec!["local-*".into()];
        profile.instruct = Some("gemma".into());
        let options = crate::processors::testing::options();
        let cache = crate::cache::BuildCache::new();
        let result = crate::build(&crate::pipeline::BuildRequest {
            preset: &preset,
            session: &s,
            kept_rewrites: None,
            model: "local-gemma",
            options: &options,
            cache: &cache,
            profiles: std::slice::from_ref(&profile),
            assets: &crate::assets::InlineAssets,
        })
        .expect("builds");
        let prompt = result.prompt.expect("a prompt string");
        assert!(
            prompt
                .prompt
                .starts_with("<start_of_turn>user\nYou are Mara.\n\n"),
            "{}",
            prompt.prompt
        );
        assert_eq!(prompt.template, "gemma");

        // The preset's own template wins over the profile's; the build options' over both.
        let mut own = preset.clone();
        own.instruct = built_in("alpaca");
        let build = |options: &crate::pipeline::BuildOptions| {
            crate::build(&crate::pipeline::BuildRequest {
                preset: &own,
                session: &s,
                kept_rewrites: None,
                model: "local-gemma",
                options,
                cache: &cache,
                profiles: std::slice::from_ref(&profile),
                assets: &crate::assets::InlineAssets,
            })
            .expect("builds")
            .prompt
            .expect("a prompt string")
            .template
        };
        assert_eq!(build(&options), "alpaca");
        let mut chosen = options.clone();
        chosen.instruct = built_in("vicuna");
        assert_eq!(build(&chosen), "vicuna");
    }
}

/// RULES 5.12: each built-in template against its model family's published chat template
/// (tests/data/chat_templates, SOURCES.md there), on a system prompt, a named user turn, a reply
/// and the newest user turn: the same string.
mod against_jinja {
    use super::*;
    use crate::instruct::jinja::{check, render_chat_template, SpecialTokens};

    fn chat_template(file: &str) -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/chat_templates/");
        std::fs::read_to_string(format!("{path}{file}")).expect("test data")
    }

    fn turns() -> Vec<Turn<'static>> {
        let mut turns = conversation();
        turns.remove(3);
        turns
    }

    fn tokens(bos: &str, eos: &str) -> SpecialTokens {
        SpecialTokens {
            bos: bos.into(),
            eos: eos.into(),
            now: Some(day()),
        }
    }

    #[test]
    fn instruct_built_ins_give_the_string_of_their_familys_chat_template() {
        for (id, file, bos, eos) in [
            ("chatml", "chatml.jinja", "", ""),
            ("qwen", "qwen2.5.jinja", "", "<|im_end|>"),
            ("qwen-2.5", "qwen2.5.jinja", "", "<|im_end|>"),
            (
                "llama-3.1",
                "llama-3.1.jinja",
                "<|begin_of_text|>",
                "<|eot_id|>",
            ),
            ("llama-2", "llama-2.jinja", "<s>", "</s>"),
            ("mistral", "mistral-v1.jinja", "<s>", "</s>"),
            ("mistral-tekken", "mistral-v3-tekken.jinja", "<s>", "</s>"),
            ("gemma", "gemma-3.jinja", "<bos>", "<eos>"),
            ("phi-3", "phi-3.jinja", "<s>", "<|endoftext|>"),
            (
                "deepseek",
                "deepseek-v3.jinja",
                "<｜begin▁of▁sentence｜>",
                "<｜end▁of▁sentence｜>",
            ),
        ] {
            let t = built_in(id).expect("built-in");
            let c = check(&t, file, &chat_template(file), &turns(), &tokens(bos, eos))
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            assert!(
                c.identical(),
                "{id} against {file}:\n ours   {:?}\n theirs {:?}",
                c.ours,
                c.theirs
            );
        }
    }

    // Without a system message Qwen 2.5 writes its own and Llama 3.1 an empty dated one; white
    // space around a message is trimmed by Llama 3.1 and Gemma 3, but Gemma keeps the system
    // text's; the model's BOS is the server's.
    #[test]
    fn instruct_built_ins_follow_their_chat_template_without_a_system_message_and_padded() {
        let turn = |role, content| Turn {
            role,
            name: None,
            content,
            unwrapped: false,
        };
        let no_system = vec![
            turn(Role::User, "Hi"),
            turn(Role::Assistant, "Hello! How can I help?"),
            turn(Role::User, "Tell me a joke."),
        ];
        let padded = vec![
            turn(Role::System, "  padded system  "),
            turn(Role::User, "\n  padded user \n"),
            turn(Role::Assistant, " padded reply "),
            turn(Role::User, "last "),
        ];
        for (id, file, bos, eos) in [
            ("qwen-2.5", "qwen2.5.jinja", "", "<|im_end|>"),
            (
                "llama-3.1",
                "llama-3.1.jinja",
                "<|begin_of_text|>",
                "<|eot_id|>",
            ),
            ("gemma", "gemma-3.jinja", "<bos>", "<eos>"),
            ("mistral-tekken", "mistral-v3-tekken.jinja", "<s>", "</s>"),
        ] {
            let t = built_in(id).expect("built-in");
            for turns in [&no_system, &padded] {
                let c = check(&t, file, &chat_template(file), turns, &tokens(bos, eos))
                    .unwrap_or_else(|e| panic!("{id}: {e}"));
                assert!(
                    c.identical(),
                    "{id} against {file}:\n ours   {:?}\n theirs {:?}",
                    c.ours,
                    c.theirs
                );
            }
        }
        // Qwen 3's template writes no system turn of its own.
        let qwen3 = render(&built_in("qwen").expect("qwen"), &no_system).prompt;
        assert!(qwen3.starts_with("<|im_start|>user\nHi"), "{qwen3}");
    }

    // Llama 3.1's template writes a knowledge cut-off and a date into the system turn; the
    // llama-3 template is Llama 3's, which does not, and the check says where they part.
    #[test]
    fn instruct_check_names_the_first_byte_that_differs() {
        let t = built_in("llama-3").expect("llama-3");
        let c = check(
            &t,
            "llama-3.1.jinja",
            &chat_template("llama-3.1.jinja"),
            &turns(),
            &tokens("<|begin_of_text|>", "<|eot_id|>"),
        )
        .expect("renders");
        let at = c.first_difference.expect("they differ") as usize;
        assert!(
            c.theirs[at..].starts_with("Cutting Knowledge Date: December 2023"),
            "{}",
            &c.theirs[at..]
        );
        assert_eq!(c.ours[..at], c.theirs[..at]);
    }

    // A chat template that does not parse, loops or raises is an error naming it and the place.
    #[test]
    fn instruct_check_of_a_bad_chat_template_is_a_clear_error() {
        let t = tokens("", "");
        let e = render_chat_template("mine", "{% for m in messages %}", &turns(), &t).unwrap_err();
        assert!(
            e.to_string().starts_with("chat template \"mine\": line 1"),
            "{e}"
        );
        let looping =
            "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}";
        let e = render_chat_template("mine", looping, &turns(), &t).unwrap_err();
        assert!(e.to_string().contains("ran out of steps"), "{e}");
        let gemma2 = chat_template("gemma-2.jinja");
        let e = render_chat_template("gemma-2.jinja", &gemma2, &turns(), &t).unwrap_err();
        assert!(e.to_string().contains("System role not supported"), "{e}");
        let huge = "x".repeat(jinja::MAX_JINJA_BYTES + 1);
        let e = render_chat_template("mine", &huge, &turns(), &t).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
    }

    // The app's check runs on a whole build: its messages through the template that wrote its
    // string, whose side of the check is that very string; a chat build has nothing to check.
    #[test]
    fn instruct_check_of_a_build_compares_its_own_prompt_string() {
        use crate::model::{parse_preset, parse_session};
        use crate::processors::full_build::build_full;
        let preset = parse_preset(super::in_a_build::PRESET).expect("preset");
        let s = parse_session(
            r#"{"formatVersion": 1, "id": "s", "messages": [
                {"role": "user", "name": "Rosa", "content": "灯亮着吗？🕯️"},
                {"role": "assistant", "content": "It has not gone out."}]}"#,
        )
        .expect("session");
        let result = build_full(&preset, &s, |o| o.instruct = built_in("chatml"));
        let c = result
            .check_chat_template(
                "chatml.jinja",
                &chat_template("chatml.jinja"),
                &tokens("", ""),
            )
            .expect("renders");
        assert!(c.identical(), "{c:?}");
        assert_eq!(c.ours, result.prompt.as_ref().expect("a prompt").prompt);
        let other = result
            .check_chat_template(
                "gemma-3.jinja",
                &chat_template("gemma-3.jinja"),
                &tokens("<bos>", "<eos>"),
            )
            .expect("renders");
        // `<|im_start|>` against `<bos>`: the same first byte.
        assert_eq!(other.first_difference, Some(1));
        assert!(other.theirs.starts_with("<bos><start_of_turn>user\n"));
        let chat = build_full(&preset, &s, |_| {});
        let e = chat
            .check_chat_template(
                "chatml.jinja",
                &chat_template("chatml.jinja"),
                &tokens("", ""),
            )
            .unwrap_err();
        assert!(e.to_string().contains("chat completion"), "{e}");

        // A dated template is checked on the build's own day when the caller names none.
        let dated = build_full(&preset, &s, |o| {
            o.timestamp = day();
            o.instruct = built_in("llama-3.1");
        });
        let mut no_day = tokens("<|begin_of_text|>", "<|eot_id|>");
        no_day.now = None;
        let c = dated
            .check_chat_template(
                "llama-3.1.jinja",
                &chat_template("llama-3.1.jinja"),
                &no_day,
            )
            .expect("renders");
        assert!(c.identical(), "{c:?}");
        assert!(c.ours.contains("Today Date: 26 Nov 2026"), "{}", c.ours);
    }
}
