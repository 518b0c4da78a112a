//! SillyTavern's Advanced Formatting (RULES 7.2, docs/IMPORT.md): instruct templates, context
//! templates, system prompts and their master export. The templates below are SillyTavern
//! 1.12.6's own (default/content/presets/instruct, context and sysprompt), their values as those
//! files have them; each golden string is what SillyTavern writes for the same chat
//! (instruct-mode.js, formatInstructModeChat and formatInstructModePrompt; script.js, Generate),
//! worked out in the comments.

mod common;

use common::build_for_gpt4o;
use promptloom_engine::instruct::{render, InstructTemplate, NamesMode, SystemMode, Turn};
use promptloom_engine::model::{parse_session, Role};
use promptloom_import::{import_bytes, instruct_template_bytes, Imported, Reported};
use serde_json::{json, Value};

fn import(file: &str, value: &Value) -> Reported<Imported> {
    import_bytes(file, value.to_string().as_bytes()).expect("imports")
}

fn template_of(r: Reported<Imported>) -> (InstructTemplate, Vec<String>) {
    let items = r.report.items.iter().map(|i| i.item.clone()).collect();
    match r.value {
        Imported::InstructTemplate { template } => (template, items),
        other => panic!("an instruct template, not {}", other.kind()),
    }
}

fn chatml() -> Value {
    json!({
        "input_sequence": "<|im_start|>user",
        "output_sequence": "<|im_start|>assistant",
        "last_output_sequence": "",
        "system_sequence": "<|im_start|>system",
        "stop_sequence": "<|im_end|>",
        "wrap": true,
        "macro": true,
        "names_behavior": "always",
        "activation_regex": "",
        "system_sequence_prefix": "",
        "system_sequence_suffix": "",
        "first_output_sequence": "",
        "skip_examples": false,
        "output_suffix": "<|im_end|>\n",
        "input_suffix": "<|im_end|>\n",
        "system_suffix": "<|im_end|>\n",
        "user_alignment_message": "",
        "system_same_as_user": false,
        "last_system_sequence": "",
        "name": "ChatML"
    })
}

fn llama3() -> Value {
    json!({
        "input_sequence": "<|start_header_id|>user<|end_header_id|>\n\n",
        "output_sequence": "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "last_output_sequence": "",
        "system_sequence": "<|start_header_id|>system<|end_header_id|>\n\n",
        "stop_sequence": "<|eot_id|>",
        "wrap": false,
        "macro": true,
        "names_behavior": "always",
        "activation_regex": "",
        "system_sequence_prefix": "",
        "system_sequence_suffix": "",
        "first_output_sequence": "",
        "skip_examples": false,
        "output_suffix": "<|eot_id|>",
        "input_suffix": "<|eot_id|>",
        "system_suffix": "<|eot_id|>",
        "user_alignment_message": "",
        "system_same_as_user": true,
        "last_system_sequence": "",
        "name": "Llama 3 Instruct"
    })
}

fn mistral_tekken() -> Value {
    json!({
        "input_sequence": "[INST]",
        "output_sequence": "[/INST]",
        "last_output_sequence": "",
        "system_sequence": "",
        "stop_sequence": "",
        "wrap": false,
        "macro": true,
        "names_behavior": "always",
        "activation_regex": "",
        "system_sequence_prefix": "",
        "system_sequence_suffix": "",
        "first_output_sequence": "",
        "skip_examples": false,
        "output_suffix": "</s>",
        "input_suffix": "",
        "system_suffix": "",
        "user_alignment_message": "Let's get started. Please respond based on the information and instructions provided above.",
        "system_same_as_user": true,
        "last_system_sequence": "",
        "name": "Mistral V3-Tekken"
    })
}

fn alpaca() -> Value {
    json!({
        "input_sequence": "### Instruction:",
        "output_sequence": "### Response:",
        "last_output_sequence": "",
        "system_sequence": "### Input:",
        "stop_sequence": "",
        "wrap": true,
        "macro": true,
        "names_behavior": "force",
        "activation_regex": "",
        "system_sequence_prefix": "",
        "system_sequence_suffix": "",
        "first_output_sequence": "",
        "skip_examples": false,
        "output_suffix": "\n\n",
        "input_suffix": "\n\n",
        "system_suffix": "\n\n",
        "user_alignment_message": "",
        "system_same_as_user": false,
        "last_system_sequence": "",
        "name": "Alpaca"
    })
}

fn chatml_context() -> Value {
    json!({
        "story_string": "<|im_start|>system\n{{#if system}}{{system}}\n{{/if}}{{#if wiBefore}}{{wiBefore}}\n{{/if}}{{#if description}}{{description}}\n{{/if}}{{#if personality}}{{char}}'s personality: {{personality}}\n{{/if}}{{#if scenario}}Scenario: {{scenario}}\n{{/if}}{{#if wiAfter}}{{wiAfter}}\n{{/if}}{{#if persona}}{{persona}}\n{{/if}}{{trim}}<|im_end|>",
        "example_separator": "",
        "chat_start": "",
        "use_stop_strings": false,
        "allow_jailbreak": false,
        "always_force_name2": true,
        "trim_sentences": false,
        "single_line": false,
        "name": "ChatML"
    })
}

/// A user, an assistant, a narrator (system) and a user message, with names.
fn chat() -> [Turn<'static>; 4] {
    let turn = |role, name, content| Turn {
        role,
        name,
        content,
        unwrapped: false,
    };
    [
        turn(Role::User, Some("Rosa"), "Is the lamp lit?"),
        turn(Role::Assistant, Some("Mara"), "It has not gone out."),
        turn(Role::System, None, "[A storm rises.]"),
        turn(Role::User, Some("Rosa"), "Then we wait."),
    ]
}

// instruct-mode.js: under `wrap` each message is its sequence, a line break, `Name: text` and
// its suffix; the last message loses its final line break, and the reply is a line break, the
// output sequence, a line break and `Mara:` (names always). The template writes everything but
// the name after the reply's sequence, which is reported.
#[test]
fn rule_7_2_instruct_chatml_gives_sillytaverns_string() {
    let (t, items) = template_of(import("ChatML.json", &chatml()));
    assert_eq!((t.id.as_str(), t.name.as_str()), ("chatml", "ChatML"));
    assert_eq!(t.names, NamesMode::Always);
    assert_eq!(t.system_mode, SystemMode::Own);
    let sillytavern = "<|im_start|>user\nRosa: Is the lamp lit?<|im_end|>\n\
        <|im_start|>assistant\nMara: It has not gone out.<|im_end|>\n\
        <|im_start|>system\n[A storm rises.]<|im_end|>\n\
        <|im_start|>user\nRosa: Then we wait.<|im_end|>\n\
        <|im_start|>assistant\nMara:";
    assert_eq!(format!("{}Mara:", render(&t, &chat()).prompt), sillytavern);
    // Every sequence is a stop string after a line break (wrap), each once.
    assert_eq!(
        t.stop,
        [
            "\n<|im_end|>",
            "\n<|im_start|>user",
            "\n<|im_start|>assistant",
            "\n<|im_start|>system"
        ]
    );
    assert_eq!(items, ["names_behavior"]);
}

// Without `wrap` nothing is added between the parts; `system_same_as_user` writes the narrator's
// message with the user's sequences (`asUser`), without a name.
#[test]
fn rule_7_2_instruct_llama_3_gives_sillytaverns_string() {
    let (t, items) = template_of(import("Llama 3 Instruct.json", &llama3()));
    assert_eq!(t.system_mode, SystemMode::AsUser);
    let user = "<|start_header_id|>user<|end_header_id|>\n\n";
    let assistant = "<|start_header_id|>assistant<|end_header_id|>\n\n";
    let sillytavern = format!(
        "{user}Rosa: Is the lamp lit?<|eot_id|>{assistant}Mara: It has not gone out.<|eot_id|>\
         {user}[A storm rises.]<|eot_id|>{user}Rosa: Then we wait.<|eot_id|>{assistant}Mara:"
    );
    assert_eq!(format!("{}Mara:", render(&t, &chat()).prompt), sillytavern);
    assert_eq!(
        t.stop,
        [
            "<|eot_id|>",
            "<|start_header_id|>user<|end_header_id|>",
            "<|start_header_id|>assistant<|end_header_id|>",
            "<|start_header_id|>system<|end_header_id|>"
        ]
    );
    assert_eq!(items, ["names_behavior"]);
}

// Mistral: no wrap, no system sequence (narration as the user's), the output suffix `</s>`. The
// user alignment message belongs to the chat, which an instruct template alone does not hold.
#[test]
fn rule_7_2_instruct_mistral_gives_sillytaverns_string() {
    let (t, items) = template_of(import("Mistral V3-Tekken.json", &mistral_tekken()));
    let sillytavern = "[INST]Rosa: Is the lamp lit?[/INST]Mara: It has not gone out.</s>\
        [INST][A storm rises.][INST]Rosa: Then we wait.[/INST]Mara:";
    assert_eq!(format!("{}Mara:", render(&t, &chat()).prompt), sillytavern);
    assert_eq!(t.stop, ["[INST]", "[/INST]"]);
    assert_eq!(items, ["names_behavior", "user_alignment_message"]);
}

// Alpaca: `force` writes no names with one character; every suffix ends in a line break, so the
// reply (a line break, `### Response:`, a line break, after the last message lost its final
// line break) comes out exactly, and nothing is reported.
#[test]
fn rule_7_2_instruct_alpaca_gives_sillytaverns_string_exactly() {
    let (t, items) = template_of(import("Alpaca.json", &alpaca()));
    assert_eq!(t.names, NamesMode::Never);
    let sillytavern =
        "### Instruction:\nIs the lamp lit?\n\n### Response:\nIt has not gone out.\n\n\
        ### Input:\n[A storm rises.]\n\n### Instruction:\nThen we wait.\n\n### Response:\n";
    assert_eq!(render(&t, &chat()).prompt, sillytavern);
    assert_eq!(
        t.stop,
        ["\n### Instruction:", "\n### Response:", "\n### Input:"]
    );
    assert!(items.is_empty(), "{items:?}");
}

// First and last sequences: the chat's first reply and its last user message have their own;
// the reply starts with the last output sequence. Old files' `names` flags, and the old
// separator, are read as SillyTavern migrates them.
#[test]
fn rule_7_2_instruct_first_and_last_sequences_and_old_fields() {
    let mut file = alpaca();
    let o = file.as_object_mut().unwrap();
    o.insert("first_output_sequence".into(), json!("### First:"));
    o.insert("last_input_sequence".into(), json!("### Last:"));
    o.insert("last_output_sequence".into(), json!("### Final:"));
    o.insert("names".into(), json!(true));
    o.insert("separator_sequence".into(), json!("\n"));
    let (t, _) = template_of(import("old.json", &file));
    assert_eq!(t.assistant.first_prefix.as_deref(), Some("### First:\n"));
    assert_eq!(t.user.last_prefix.as_deref(), Some("### Last:\n"));
    assert_eq!(t.assistant.suffix, "\n");
    assert_eq!(t.reply_prefix, "### Final:\n");
    assert_eq!(t.names, NamesMode::Always);
    assert!(t.stop.contains(&"\n### Final:".to_string()));
    // `sequences_as_stop_strings` off: the stop sequence alone.
    let mut file = chatml();
    file["sequences_as_stop_strings"] = json!(false);
    let (t, _) = template_of(import("ChatML.json", &file));
    assert_eq!(t.stop, ["\n<|im_end|>"]);
}

// What has no place in an instruct template is reported, item by item.
#[test]
fn rule_7_2_instruct_what_cannot_be_mapped_is_reported() {
    let mut file = json!({
        "name": "ChatML-Names",
        "input_sequence": "<|im_start|>[{{name}}]",
        "output_sequence": "<|im_start|>[{{name}}]",
        "stop_sequence": "<|im_end|>",
        "activation_regex": "/chatml/i",
        "skip_examples": true,
        "bind_to_context": true,
        "last_system_sequence": "<|im_start|>system",
        "system_sequence_prefix": "<|system|>",
        "output_suffix": "</s>",
        "names_behavior": "none",
        "reasoning_budget": 3
    });
    let r = import("ChatML-Names.json", &file);
    let items: Vec<String> = r.report.items.iter().map(|i| i.item.clone()).collect();
    assert_eq!(
        items,
        [
            "wrap",
            "stop_sequence",
            "stop_sequence",
            "input_sequence",
            "output_sequence",
            "activation_regex",
            "bind_to_context",
            "skip_examples",
            "last_system_sequence",
            "reasoning_budget",
            "system_sequence_prefix",
        ]
    );
    assert!(r.report.mentions("{{name}}"), "{:?}", r.report);
    let (t, _) = template_of(r);
    // Stop strings holding macros are left out; the others stay.
    assert_eq!(t.stop, ["\n<|im_end|>", "\n<|im_start|>system"]);
    // The same template read for the CLI's --instruct gives the same template and report.
    file["name"] = json!("ChatML-Names");
    let reported =
        instruct_template_bytes("ChatML-Names.json", file.to_string().as_bytes()).expect("reads");
    assert_eq!(reported.value, t);
    assert_eq!(reported.report.items.len(), 11);
}

// A field of the wrong type, an unknown names behaviour, a sequence over the template's cap: an
// error naming the file and the field; never a panic.
#[test]
fn rule_7_3_a_bad_instruct_template_is_an_error_naming_the_field() {
    let bad = |key: &str, value: Value| {
        let mut file = chatml();
        file[key] = value;
        import_bytes("bad.json", file.to_string().as_bytes())
            .expect_err("refused")
            .to_string()
    };
    let e = bad("input_sequence", json!(5));
    assert!(
        e.starts_with("bad.json: ") && e.contains("`input_sequence` is a number, expected text"),
        "{e}"
    );
    let e = bad("wrap", json!("yes"));
    assert!(
        e.contains("`wrap` is a string, expected true or false"),
        "{e}"
    );
    let e = bad("names_behavior", json!("sometimes"));
    assert!(e.contains("`names_behavior` is \"sometimes\""), "{e}");
    let e = bad("output_suffix", json!("x".repeat(70_000)));
    assert!(
        e.contains("`output_suffix` is 70000 bytes; at most 65536"),
        "{e}"
    );
    // Several texts under the cap alone but over it together: the template's own check.
    let mut file = chatml();
    for key in ["input_sequence", "output_sequence", "system_sequence"] {
        file[key] = json!("y".repeat(30_000));
    }
    let e = import_bytes("big.json", file.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(e.starts_with("big.json: ") && e.contains("at most"), "{e}");
    // In a master export the section is named too.
    let mut master = json!({ "instruct": chatml(), "context": chatml_context() });
    master["instruct"]["stop_sequence"] = json!(["<|im_end|>"]);
    let e = import_bytes("master.json", master.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(e.contains("`instruct.stop_sequence` is an array"), "{e}");
}

fn preset_of(r: Reported<Imported>) -> (promptloom_engine::model::AgentPreset, Vec<String>) {
    let items = r.report.items.iter().map(|i| i.item.clone()).collect();
    match r.value {
        Imported::Preset { preset } => (*preset, items),
        other => panic!("a preset, not {}", other.kind()),
    }
}

// A context template alone: the story string (unwrapped, its fields as Promptloom macros, the
// system prompt as the variable systemPrompt), the example dialogue, the chat start and the chat.
#[test]
fn rule_7_2_context_template_becomes_a_preset_of_its_story_string() {
    let default = json!({
        "story_string": "{{#if system}}{{system}}\n{{/if}}{{#if wiBefore}}{{wiBefore}}\n{{/if}}{{#if description}}{{description}}\n{{/if}}{{#if personality}}{{char}}'s personality: {{personality}}\n{{/if}}{{#if scenario}}Scenario: {{scenario}}\n{{/if}}{{#if loreAfter}}{{loreAfter}}\n{{/if}}{{#if persona}}{{persona}}\n{{/if}}{{#if anchorAfter}}{{anchorAfter}}{{/if}}{{!-- the end --}}",
        "example_separator": "***",
        "chat_start": "***",
        "use_stop_strings": true,
        "allow_jailbreak": true,
        "names_as_stop_strings": false,
        "always_force_name2": false,
        "trim_sentences": true,
        "single_line": false,
        "name": "Default"
    });
    let (preset, items) = preset_of(import("Default.json", &default));
    assert_eq!(
        (preset.id.as_str(), preset.name.as_str()),
        ("default", "Default")
    );
    assert_eq!(
        preset.compatibility,
        promptloom_engine::model::Compatibility::Sillytavern
    );
    let ids: Vec<&str> = preset
        .message_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "storyString",
            "dialogueExamples",
            "chatStart",
            "chatHistory",
            "jailbreak"
        ]
    );
    let story = &preset.message_templates[0];
    assert!(story.unwrapped);
    assert_eq!(
        story.content.as_deref(),
        Some("{{trim}}{{#if getvar::systemPrompt}}{{getvar::systemPrompt}}\n{{/if}}{{#if wiBefore}}{{wiBefore}}\n{{/if}}{{#if description}}{{description}}\n{{/if}}{{#if personality}}{{char}}'s personality: {{personality}}\n{{/if}}{{#if scenario}}Scenario: {{scenario}}\n{{/if}}{{#if wiAfter}}{{wiAfter}}\n{{/if}}{{#if persona}}{{persona}}\n{{/if}}{{#if getvar::anchorAfter}}{{getvar::anchorAfter}}{{/if}}{{// the end}}")
    );
    assert_eq!(
        preset.message_templates[2].content.as_deref(),
        Some("***\n")
    );
    assert!(preset.message_templates[2].unwrapped);
    assert_eq!(
        preset.variables.as_ref().unwrap()["systemPrompt"],
        "",
        "the system prompt's place"
    );
    let assembler = &preset.processors.as_ref().unwrap()[0];
    assert_eq!(assembler.settings["newExampleChatPrompt"], json!("***"));
    assert_eq!(assembler.settings["newChatPrompt"], json!(""));
    // The context template's stop strings, as a preset's own (no instruct template here).
    assert_eq!(preset.generation.unwrap().stop, ["\n***"]);
    assert!(preset.instruct.is_none());
    assert_eq!(items, ["trim_sentences", "story_string {{anchorAfter}}"]);
}

// A story string whose blocks are not well formed, or not #if / #unless, is refused with the
// file, the field and the place; nothing is made.
#[test]
fn rule_7_3_a_bad_story_string_is_an_error_naming_the_place() {
    let bad = |story: &str| {
        let mut file = chatml_context();
        file["story_string"] = json!(story);
        import_bytes("ctx.json", file.to_string().as_bytes())
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        bad("{{#if system}}{{system}}\n{{#if description}}x{{/if}}"),
        "ctx.json: wrong shape: `story_string`: {{#if system}} at line 1, column 1 is never \
         closed; left as written"
    );
    let e = bad("a\n{{#each items}}{{this}}{{/each}}");
    assert!(
        e.contains("{{#each items}} at line 2, column 1 is not a block this knows"),
        "{e}"
    );
    let e = bad("{{/if}}");
    assert!(e.contains("closes or continues no open block"), "{e}");
    let mut master = json!({ "context": chatml_context() });
    master["context"]["story_string"] = json!("{{else}}");
    let e = import_bytes("m.json", master.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("`context.story_string`: {{else}} at line 1"),
        "{e}"
    );
}

/// The master export of SillyTavern's ChatML set with the "Neutral - Chat" system prompt.
fn chatml_master() -> Value {
    json!({
        "instruct": chatml(),
        "context": chatml_context(),
        "sysprompt": {
            "name": "Neutral - Chat",
            "content": "Write {{char}}'s next reply in a fictional chat between {{char}} and {{user}}."
        }
    })
}

// The master export: one preset with the instruct template, the story string and the system
// prompt. Built for a chat, it gives SillyTavern's prompt: the story string (its empty blocks
// gone, `{{trim}}` taking the line break before `<|im_end|>`, a line break added under wrap,
// the lorebook's before-character entry in it), then the chat, then the reply; all but the name
// SillyTavern writes after the reply's sequence.
#[test]
fn rule_7_2_master_export_builds_sillytaverns_prompt() {
    let (mut preset, items) = preset_of(import("ChatML set.json", &chatml_master()));
    assert_eq!(preset.id, "chatml-set");
    assert_eq!(
        preset.instruct.as_ref().map(|t| t.id.as_str()),
        Some("chatml")
    );
    assert_eq!(
        items,
        ["instruct.names_behavior", "context.names_as_stop_strings"]
    );
    preset.character = Some(promptloom_engine::model::Character {
        name: "Mara".into(),
        description: Some("A lighthouse keeper.".into()),
        scenario: Some("A storm night.".into()),
        ..Default::default()
    });
    preset.lorebook = Some(
        serde_json::from_value(json!({ "entries": [
            { "id": "lamp", "keys": [], "constant": true, "content": "The lamp is old.",
              "strategy": { "anchorTarget": "worldInfoBefore" } }] }))
        .expect("a book"),
    );
    let session = parse_session(
        &json!({ "formatVersion": 1, "id": "s",
            "userProfile": { "name": "Rosa" },
            "messages": [
                { "role": "assistant", "name": "Mara", "content": "Welcome." },
                { "role": "user", "name": "Rosa", "content": "Is the lamp lit?" }] })
        .to_string(),
    )
    .expect("session");
    let result = build_for_gpt4o(&preset, &session, None);
    let prompt = result.prompt.expect("text completion").prompt;
    let sillytavern = "<|im_start|>system\nWrite Mara's next reply in a fictional chat between \
        Mara and Rosa.\nThe lamp is old.\nA lighthouse keeper.\nScenario: A storm night.<|im_end|>\n\
        <|im_start|>assistant\nMara: Welcome.<|im_end|>\n\
        <|im_start|>user\nRosa: Is the lamp lit?<|im_end|>\n\
        <|im_start|>assistant\nMara:";
    assert_eq!(format!("{prompt}Mara:"), sillytavern);
}

// A master export's parts that have no place here are reported; without a context section the
// preset gets SillyTavern's default one, and a user alignment message becomes a user message
// before the chat.
#[test]
fn rule_7_2_master_export_sections_and_defaults() {
    let master = json!({
        "instruct": mistral_tekken(),
        "sysprompt": { "name": "Blank", "content": "" },
        "preset": { "temp": 0.7, "top_k": 40, "top_p": 0.9, "rep_pen": 1.1 },
        "reasoning": { "prefix": "<think>" }
    });
    let (preset, items) = preset_of(import("mistral.json", &master));
    assert_eq!(
        items,
        [
            "instruct.names_behavior",
            "context",
            "preset",
            "reasoning",
            "instruct.user_alignment_message"
        ]
    );
    let ids: Vec<&str> = preset
        .message_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "storyString",
            "dialogueExamples",
            "chatStart",
            "userAlignment",
            "chatHistory"
        ]
    );
    assert_eq!(preset.message_templates[3].role, Role::User);
    assert!(!preset.message_templates[3].unwrapped);
}

// A system prompt alone: its name and text, for a preset; later SillyTavern's post-history
// instructions are reported.
#[test]
fn rule_7_2_system_prompt_is_read_for_a_preset() {
    let r = import(
        "Actor.json",
        &json!({ "name": "Actor", "content": "You are {{char}}.", "post_history": "Stay." }),
    );
    assert!(r.report.mentions("post_history"));
    let Imported::SystemPrompt { prompt } = r.value else {
        panic!("a system prompt");
    };
    assert_eq!(
        (prompt.name.as_str(), prompt.content.as_str()),
        ("Actor", "You are {{char}}.")
    );
    let (mut preset, _) = preset_of(import("ChatML.json", &chatml_context()));
    assert!(prompt.apply_to(&mut preset));
    assert_eq!(
        preset.variables.unwrap()["systemPrompt"],
        "You are {{char}}."
    );
}

// Each of these files is told apart from the other kinds, and the other kinds are not taken for
// them.
#[test]
fn rule_7_1_advanced_formatting_files_are_told_apart() {
    let kind = |file: &str, value: Value| import(file, &value).value.kind();
    assert_eq!(kind("i.json", chatml()), "instructTemplate");
    assert_eq!(kind("c.json", chatml_context()), "preset");
    assert_eq!(
        kind("s.json", json!({ "name": "Neutral", "content": "Hi." })),
        "systemPrompt"
    );
    assert_eq!(kind("m.json", chatml_master()), "preset");
    // A chat message has `mes`, a V1 card `first_mes`: neither is a system prompt.
    assert_eq!(
        kind(
            "chat.json",
            json!({ "name": "Mara", "mes": "Hi.", "is_user": false })
        ),
        "session"
    );
    assert_eq!(
        kind(
            "card.json",
            json!({ "name": "Mara", "content": "x", "first_mes": "Hi.", "description": "d" })
        ),
        "character"
    );
    // A native document keeps its `formatVersion`; a chat-completion preset its prompts.
    assert_eq!(
        kind(
            "p.json",
            json!({ "formatVersion": 1, "id": "p", "name": "P",
                "messageTemplates": [], "contextRecipes": [] })
        ),
        "preset"
    );
    // An object with `name` and `content` and anything else is no system prompt.
    let e = import_bytes(
        "x.json",
        br#"{"name": "n", "content": "c", "role": "system"}"#,
    )
    .expect_err("unknown");
    assert_eq!(e.code(), "unknown_format");
}

// The CLI's --instruct reads Promptloom's own template JSON as well, and a master export's
// instruct section (saying what else it did not read).
#[test]
fn rule_7_2_an_instruct_template_file_may_be_native_or_sillytaverns() {
    let native =
        serde_json::to_string(&promptloom_engine::instruct::built_in("chatml").unwrap()).unwrap();
    let r = instruct_template_bytes("chatml.json", native.as_bytes()).expect("reads");
    assert_eq!(r.value.id, "chatml");
    assert!(r.report.is_empty());
    assert_eq!(r.report.format, "Promptloom instruct template");
    let r =
        instruct_template_bytes("set.json", chatml_master().to_string().as_bytes()).expect("reads");
    assert_eq!(r.value.name, "ChatML");
    assert!(r.report.mentions("context") && r.report.mentions("sysprompt"));
    let e = instruct_template_bytes("odd.json", br#"{"id": "x", "name": "X", "users": {}}"#)
        .expect_err("refused");
    assert!(e.to_string().contains("users"), "{e}");
}
