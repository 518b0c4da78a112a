//! SillyTavern context templates (`context/*.json`, or the `context` section of a master export)
//! -> an agent preset (RULES 7.2), with the instruct template and system prompt that come with
//! them in a master export.
//!
//! SillyTavern writes a text-completion prompt as the story string, the example dialogue, the
//! chat start, the chat and the reply's sequence (script.js, Generate). The preset made here,
//! under SillyTavern compatibility, has one recipe in that order:
//!
//! 1. `storyString`: a system template marked `unwrapped` (RULES 5.12), since a story string
//!    writes the model's own tokens (`<|im_start|>system`), whose text is the story string with
//!    its fields as Promptloom macros ([`translate_story_string`]);
//! 2. `dialogueExamples`: the placeholder where the assembler writes the example dialogue, each
//!    block opened by `example_separator` (its `newExampleChatPrompt`);
//! 3. `chatStart`: `chat_start` and a line break, unwrapped, when there is one;
//! 4. `userAlignment`: the instruct template's `user_alignment_message`, a user message, when
//!    there is one;
//! 5. `chatHistory`;
//! 6. `jailbreak`: an empty user message that a card's post-history instructions fill, when
//!    `allow_jailbreak` is on.
//!
//! The system prompt is the preset's variable `systemPrompt`, which the story string reads where
//! SillyTavern's reads `{{system}}`, so that a system prompt imported later can replace it.

use promptloom_engine::macros::block_problems;
use promptloom_engine::model::{
    validate_preset, AgentPreset, Compatibility, ContextRecipe, GenerationSettings,
    MessageTemplate, ProcessorConfig, RecipeStep, Role, TemplateType, FORMAT_VERSION,
    MAX_STOP_SEQUENCES,
};
use serde_json::Value;

use super::instruct::{Fields, StInstruct};
use super::preset::ASSEMBLER;
use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem};

/// The variable that holds the system prompt.
pub const SYSTEM_PROMPT_VARIABLE: &str = "systemPrompt";
/// The ids of the templates a context template makes.
pub const STORY_STRING_ID: &str = "storyString";
pub const CHAT_START_ID: &str = "chatStart";
pub const USER_ALIGNMENT_ID: &str = "userAlignment";

/// A context template as read.
#[derive(Debug, Clone, PartialEq)]
pub struct StContext {
    pub name: Option<String>,
    pub story_string: String,
    pub example_separator: String,
    pub chat_start: String,
    pub use_stop_strings: bool,
    pub allow_jailbreak: bool,
    pub single_line: bool,
    /// `always_force_name2`: SillyTavern ends the prompt with the character's name, without
    /// instruct mode.
    pub always_force_name2: bool,
}

/// The keys read, or known and reported.
const KNOWN: &[&str] = &[
    "name",
    "preset",
    "story_string",
    "example_separator",
    "chat_start",
    "use_stop_strings",
    "allow_jailbreak",
    "names_as_stop_strings",
    "always_force_name2",
    "trim_sentences",
    "single_line",
    "story_string_position",
];

/// SillyTavern's "Default" context template (default/content/presets/context/Default.json), for a
/// master export without a context section.
pub(crate) fn default_context() -> StContext {
    StContext {
        name: Some("Default".into()),
        story_string: "{{#if system}}{{system}}\n{{/if}}{{#if wiBefore}}{{wiBefore}}\n{{/if}}{{#if description}}{{description}}\n{{/if}}{{#if personality}}{{char}}'s personality: {{personality}}\n{{/if}}{{#if scenario}}Scenario: {{scenario}}\n{{/if}}{{#if wiAfter}}{{wiAfter}}\n{{/if}}{{#if persona}}{{persona}}\n{{/if}}".into(),
        example_separator: "***".into(),
        chat_start: "***".into(),
        use_stop_strings: false,
        allow_jailbreak: false,
        single_line: false,
        always_force_name2: true,
    }
}

/// True when `root` is a context template.
pub fn looks_like_context(root: &Object) -> bool {
    root.contains_key("story_string")
}

/// Reads a context template; `at` prefixes its fields (`context.` in a master export). Settings
/// with no place here are reported.
pub(crate) fn context_from_value(
    root: &Object,
    at: &str,
    report: &mut ImportReport,
) -> Result<StContext, Problem> {
    let f = Fields { obj: root, at };
    let context = StContext {
        name: f.text("name")?.filter(|n| !n.trim().is_empty()),
        story_string: f.text_or_empty("story_string")?,
        example_separator: f.text_or_empty("example_separator")?,
        chat_start: f.text_or_empty("chat_start")?,
        use_stop_strings: f.flag("use_stop_strings")?.unwrap_or(false),
        allow_jailbreak: f.flag("allow_jailbreak")?.unwrap_or(false),
        single_line: f.flag("single_line")?.unwrap_or(false),
        always_force_name2: f.flag("always_force_name2")?.unwrap_or(true),
    };
    if f.flag("names_as_stop_strings")?.unwrap_or(true) {
        report.push(f.item("names_as_stop_strings"), texts::NAMES_AS_STOPS);
    }
    if f.flag("trim_sentences")? == Some(true) {
        report.push(f.item("trim_sentences"), texts::TRIM_SENTENCES);
    }
    match root.get("story_string_position") {
        None | Some(Value::Null) => {}
        Some(v) if json::value_int(v) == Some(0) => {}
        Some(_) => report.push(
            f.item("story_string_position"),
            texts::STORY_STRING_POSITION,
        ),
    }
    let mut unknown = json::unknown_set_keys(root, KNOWN);
    unknown.sort_unstable();
    if !unknown.is_empty() {
        let keys: Vec<String> = unknown.iter().map(|k| format!("{at}{k}")).collect();
        report.push(keys.join(", "), texts::NOT_MAPPED);
    }
    Ok(context)
}

/// What a story string's field becomes.
enum Field {
    /// A Promptloom macro of this name.
    Macro(&'static str),
    /// Nothing here: the variable of the field's name, empty unless set.
    Unmapped,
}

/// SillyTavern 1.12.6's story string fields (power-user.js, renderStoryString; script.js), and
/// the later `anchorBefore` / `anchorAfter`.
fn field(name: &str) -> Option<Field> {
    Some(match name {
        "description" => Field::Macro("description"),
        "personality" => Field::Macro("personality"),
        "scenario" => Field::Macro("scenario"),
        "persona" => Field::Macro("persona"),
        "char" => Field::Macro("char"),
        "user" => Field::Macro("user"),
        "system" => Field::Macro("getvar::systemPrompt"),
        "wiBefore" | "loreBefore" => Field::Macro("wiBefore"),
        "wiAfter" | "loreAfter" => Field::Macro("wiAfter"),
        "mesExamples" | "mesExamplesRaw" => Field::Macro("mesExamples"),
        "anchorBefore" | "anchorAfter" => Field::Unmapped,
        _ => return None,
    })
}

/// The story string with Promptloom's macros for SillyTavern's fields (`{{system}}` is the
/// variable `systemPrompt`, wrapped in `system_prefix` / `system_suffix` when they are given,
/// `{{loreBefore}}` is `{{wiBefore}}`...), Handlebars comments as comments, and `{{trim}}` in
/// front when the text could start with a line break (SillyTavern takes those off). A block that
/// is not well formed, or not `#if` / `#unless`, is an error naming `item` and the place.
pub(crate) fn translate_story_string(
    text: &str,
    item: &str,
    system_wrap: Option<(&str, &str, &str)>,
    report: &mut ImportReport,
) -> Result<String, Problem> {
    if let Some(problem) = block_problems(text).into_iter().next() {
        return Err(Problem::shape(format!("`{item}`: {problem}")));
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut reported: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        // `{{{x}}}` is `{{x}}` in a story string (Handlebars without HTML escaping).
        let (braces, closing) = if after.starts_with("{{{") && !after.starts_with("{{{{") {
            (3, "}}}")
        } else {
            (2, "}}")
        };
        let body_and_rest = &after[braces..];
        let Some(end) = body_and_rest.find(closing) else {
            out.push_str(after);
            rest = "";
            break;
        };
        let body = &body_and_rest[..end];
        rest = &body_and_rest[end + closing.len()..];
        if body.contains("{{") {
            // Macros inside macros are SillyTavern's own, left to the macro engine.
            out.push_str(&after[..braces + end + closing.len()]);
            continue;
        }
        let trimmed = body.trim();
        if let Some(comment) = trimmed.strip_prefix('!') {
            let comment = comment.trim_start_matches("--").trim_end_matches("--");
            out.push_str(&format!("{{{{// {}}}}}", comment.trim()));
            continue;
        }
        // A block's condition, or a field alone.
        let (head, name) = match trimmed.split_once(char::is_whitespace) {
            Some((head, name))
                if matches!(head, "#if" | "#unless" | "else") && !name.trim().is_empty() =>
            {
                let name = name.trim();
                // `else if NAME`
                match name.split_once(char::is_whitespace) {
                    Some((word, inner)) if head == "else" => {
                        (format!("else {word} "), inner.trim())
                    }
                    _ => (format!("{head} "), name),
                }
            }
            _ => (String::new(), trimmed),
        };
        match field(name) {
            Some(Field::Macro(target)) => {
                if name.starts_with("mesExamples") && !reported.contains(&name) {
                    report.push(format!("{item} {{{{{name}}}}}"), texts::STORY_EXAMPLES);
                    reported.push(name);
                }
                match (name, system_wrap, head.is_empty()) {
                    ("system", Some((prefix, suffix, separator)), true)
                        if !prefix.is_empty() || !suffix.is_empty() =>
                    {
                        if !prefix.is_empty() {
                            out.push_str(prefix);
                            out.push_str(separator);
                        }
                        out.push_str(&format!("{{{{{target}}}}}"));
                        if !suffix.is_empty() {
                            out.push_str(separator);
                            out.push_str(suffix);
                        }
                    }
                    _ => out.push_str(&format!("{{{{{head}{target}}}}}")),
                }
            }
            Some(Field::Unmapped) => {
                if !reported.contains(&name) {
                    report.push(
                        format!("{item} {{{{{name}}}}}"),
                        texts::STORY_FIELD_NOT_MAPPED.with("variable", name),
                    );
                    reported.push(name);
                }
                out.push_str(&format!("{{{{{head}getvar::{name}}}}}"));
            }
            None => out.push_str(&after[..braces + end + closing.len()]),
        }
    }
    out.push_str(rest);
    // SillyTavern takes the line breaks off the start of the story string.
    if out.starts_with("{{") || out.starts_with('\n') {
        out.insert_str(0, "{{trim}}");
    }
    Ok(out)
}

/// The parts a context template's preset is made from.
pub(crate) struct Parts<'a> {
    pub(crate) stem: &'a str,
    pub(crate) context: &'a StContext,
    /// `context.` in a master export, else empty.
    pub(crate) at: &'a str,
    pub(crate) instruct: Option<&'a StInstruct>,
    pub(crate) system_prompt: Option<&'a str>,
}

/// The preset of a context template (the module's documentation says how).
pub(crate) fn preset_from_parts(
    parts: Parts<'_>,
    report: &mut ImportReport,
) -> Result<AgentPreset, Problem> {
    let Parts {
        stem,
        context,
        at,
        instruct,
        system_prompt,
    } = parts;
    let wrap = instruct.is_none_or(|i| i.wrap);
    let separator = if wrap { "\n" } else { "" };
    let system_wrap = instruct.map(|i| {
        (
            i.system_prompt_prefix.as_str(),
            i.system_prompt_suffix.as_str(),
            separator,
        )
    });
    let item = format!("{at}story_string");
    let mut story = translate_story_string(&context.story_string, &item, system_wrap, report)?;
    // SillyTavern ends a story string with a line break (under `wrap`, or without instruct mode)
    // when it has none; here that is known when the text ends in plain text.
    let ends_in_text = !story.ends_with("}}");
    if wrap && ends_in_text && !story.is_empty() && !story.ends_with('\n') {
        story.push('\n');
    }
    if let Some(i) = instruct {
        story = format!("{}{story}{}", i.story_string_prefix, i.story_string_suffix);
    }

    let template =
        |id: &str, name: &str, role: Role, content: String, unwrapped: bool| MessageTemplate {
            id: id.into(),
            name: Some(name.into()),
            role,
            kind: TemplateType::Message,
            content: Some(content),
            default_injection_strategy: None,
            unwrapped,
        };
    let slot = |id: &str, name: &str, kind: TemplateType| MessageTemplate {
        id: id.into(),
        name: Some(name.into()),
        role: Role::System,
        kind,
        content: None,
        default_injection_strategy: None,
        unwrapped: false,
    };
    let mut templates = vec![
        template(STORY_STRING_ID, "Story string", Role::System, story, true),
        slot(
            "dialogueExamples",
            "Example dialogue",
            TemplateType::Placeholder,
        ),
    ];
    if !context.chat_start.is_empty() {
        templates.push(template(
            CHAT_START_ID,
            "Chat start",
            Role::System,
            format!("{}\n", context.chat_start),
            true,
        ));
    }
    if let Some(message) = instruct
        .map(|i| i.user_alignment_message.as_str())
        .filter(|m| !m.is_empty())
    {
        templates.push(template(
            USER_ALIGNMENT_ID,
            "User alignment message",
            Role::User,
            message.to_string(),
            false,
        ));
        report.push("instruct.user_alignment_message", texts::USER_ALIGNMENT);
    }
    templates.push(slot(
        "chatHistory",
        "Chat history",
        TemplateType::ChatHistory,
    ));
    if context.allow_jailbreak {
        templates.push(template(
            "jailbreak",
            "Post-history instructions",
            Role::User,
            String::new(),
            false,
        ));
    }

    // The stop strings of the context template.
    let mut stops: Vec<String> = Vec::new();
    if context.single_line {
        stops.push("\n".into());
    }
    if context.use_stop_strings {
        for (key, text) in [
            ("chat_start", &context.chat_start),
            ("example_separator", &context.example_separator),
        ] {
            if text.is_empty() {
                continue;
            }
            if text.contains("{{") {
                report.push(
                    format!("{at}{key}"),
                    texts::STOP_WITH_MACROS.with("stop", text),
                );
                continue;
            }
            let stop = format!("\n{text}");
            if !stops.contains(&stop) {
                stops.push(stop);
            }
        }
    }
    let mut instruct_template = instruct.map(|i| i.template.clone());
    let mut generation = None;
    match instruct_template.as_mut() {
        Some(t) => {
            for stop in stops {
                if !t.stop.contains(&stop) {
                    t.stop.push(stop);
                }
            }
            t.validate()?;
        }
        None if !stops.is_empty() => {
            stops.truncate(MAX_STOP_SEQUENCES);
            generation = Some(GenerationSettings {
                stop: stops,
                ..GenerationSettings::default()
            });
        }
        None => {}
    }
    // Without instruct mode SillyTavern ends the prompt with `Name:`; with it the reply's
    // sequence is the instruct template's.
    if instruct.is_none() && context.always_force_name2 {
        report.push(format!("{at}always_force_name2"), texts::FORCE_NAME);
    }

    let mut settings = serde_json::Map::new();
    settings.insert("newChatPrompt".into(), Value::from(""));
    settings.insert(
        "newExampleChatPrompt".into(),
        Value::from(context.example_separator.as_str()),
    );
    let steps = templates
        .iter()
        .map(|t| RecipeStep {
            message_id: t.id.clone(),
            enabled: true,
            injection_strategy: None,
            overrides: None,
        })
        .collect();
    let name = context.name.clone().unwrap_or_else(|| stem.to_string());
    let preset = AgentPreset {
        format_version: FORMAT_VERSION,
        id: json::slug(stem),
        name,
        description: Some(if instruct.is_some() {
            "Imported from SillyTavern's Advanced Formatting (instruct and context templates)"
                .into()
        } else {
            "Imported from a SillyTavern context template".into()
        }),
        message_templates: templates,
        context_recipes: vec![ContextRecipe {
            id: super::preset::IMPORTED_RECIPE_ID.into(),
            name: Some("SillyTavern story string".into()),
            model_filter: vec!["*".into()],
            steps,
        }],
        preset_messages: None,
        character: None,
        lorebook: None,
        regex_rules: None,
        processors: Some(vec![ProcessorConfig {
            id: ASSEMBLER.into(),
            enabled: None,
            priority: None,
            settings,
        }]),
        variables: Some(
            [(
                SYSTEM_PROMPT_VARIABLE.to_string(),
                system_prompt.unwrap_or_default().to_string(),
            )]
            .into_iter()
            .collect(),
        ),
        generation,
        compatibility: Compatibility::Sillytavern,
        instruct: instruct_template,
    };
    validate_preset(&preset)?;
    Ok(preset)
}
