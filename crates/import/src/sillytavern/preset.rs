//! SillyTavern chat-completion presets (`prompts` + `prompt_order`) -> an agent preset (RULES 7.2).
//!
//! Each prompt becomes a template of its identifier. SillyTavern's markers become slots or
//! templates: `chatHistory` the chat_history slot, `personaDescription` the user_profile slot,
//! `worldInfoBefore`, `worldInfoAfter` and `dialogueExamples` placeholders (the anchors lorebook
//! entries aim at), `charDescription`, `charPersonality` and `scenario` system templates whose
//! content is the matching macro. `main`, `nsfw`, `jailbreak` and `enhanceDefinitions` are
//! ordinary prompts with content and are imported as such. One recipe (`["*"]`) follows the order
//! list of character_id 100001, the global one (else the last list), with its `enabled` flags.
//! The samplers SillyTavern sends to every chat-completion source become the preset's generation
//! settings ([`SAMPLER_KEYS`]); the prompt manager's formats and openers ([`FORMAT_KEYS`]) and
//! a `forbid_overrides` on `main` or `jailbreak` become the injection assembler's settings
//! (RULES 5.11.3); its other settings are reported.

use std::collections::HashSet;

use promptloom_engine::model::{
    validate_preset, AgentPreset, Compatibility, ContextRecipe, InjectionStrategy, MessageTemplate,
    ProcessorConfig, RecipeStep, Role, TemplateType, FORMAT_VERSION,
};
use serde_json::Value;

use super::preset_keys::{
    extensions_from, known_not_mapped, UnknownKeys, ORDER_ENTRY_KEYS, ORDER_LIST_KEYS, PROMPT_KEYS,
};
use super::preset_settings::{
    continue_settings, formats_from, generation_from, request_formatting, wi_format,
};
pub(crate) use super::preset_settings::{CONTINUE_POSTFIXES, FORMAT_KEYS, SAMPLER_KEYS};
use super::world_info::{clamp_u32, placement_order};
use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};

/// The character_id of SillyTavern's global prompt order.
pub const GLOBAL_ORDER_ID: i64 = 100001;
/// SillyTavern's default depth and order for an in-chat prompt.
const DEFAULT_INJECTION_DEPTH: i64 = 4;
const DEFAULT_INJECTION_ORDER: i64 = 100;
/// The processor the prompt manager's settings go to, and the settings: each preset key with
/// the injection assembler's setting it becomes (RULES 5.11.3).
pub(crate) const ASSEMBLER: &str = "injection-assembler";
/// The prompts a card's own fields may replace, with the assembler's setting that names them.
pub(crate) const OVERRIDABLE: &[(&str, &str)] = &[
    ("main", "systemPromptTemplate"),
    ("jailbreak", "postHistoryTemplate"),
];

/// The prompts SillyTavern flags `system_prompt` and still sends: its built-ins and markers. A
/// prompt with content of another identifier flagged so is never sent there (1.12's
/// `populateChatCompletion` sends these by name and, of the rest, only those with
/// `system_prompt: false`). Markers of other identifiers send nothing either way and stay.
const SENT_SYSTEM_PROMPTS: &[&str] = &[
    "main",
    "nsfw",
    "jailbreak",
    "enhanceDefinitions",
    "worldInfoBefore",
    "worldInfoAfter",
    "charDescription",
    "charPersonality",
    "scenario",
    "personaDescription",
    "dialogueExamples",
    "chatHistory",
];

/// Id of the recipe an imported preset gets.
pub const IMPORTED_RECIPE_ID: &str = "default";

/// The generation a build is: an ordinary send (RULES 7.2).
const NORMAL_GENERATION: &str = "normal";

/// What a SillyTavern marker prompt becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Slot(TemplateType),
    /// A system template with this macro as content.
    Field(&'static str),
}

pub(crate) fn marker(identifier: &str) -> Option<Marker> {
    Some(match identifier {
        "chatHistory" => Marker::Slot(TemplateType::ChatHistory),
        "personaDescription" => Marker::Slot(TemplateType::UserProfile),
        "worldInfoBefore" | "worldInfoAfter" | "dialogueExamples" => {
            Marker::Slot(TemplateType::Placeholder)
        }
        "charDescription" => Marker::Field("{{description}}"),
        "charPersonality" => Marker::Field("{{personality}}"),
        "scenario" => Marker::Field("{{scenario}}"),
        _ => return None,
    })
}

pub(crate) fn looks_like_preset(root: &Object) -> bool {
    root.contains_key("prompts") || root.contains_key("prompt_order")
}

pub(crate) fn parse_role(value: Option<&Value>) -> Result<Role, String> {
    match value {
        None | Some(Value::Null) => Ok(Role::System),
        Some(Value::String(s)) => match s.as_str() {
            "system" | "" => Ok(Role::System),
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            other => Err(format!("role \"{other}\"")),
        },
        Some(other) => Err(format!("role {other}")),
    }
}

pub(crate) fn preset_from_value(
    file: &str,
    root: &Object,
) -> Result<Reported<AgentPreset>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_PRESET);
    let prompts: &[Value] = match root.get("prompts") {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(other) => {
            return Err(Problem::shape(format!(
                "`prompts` is {}, expected a list",
                json::kind(other)
            )))
        }
    };

    let mut templates: Vec<MessageTemplate> = Vec::new();
    // Each prompt's own `enabled`, used only when there is no order list.
    let mut own_enabled: Vec<bool> = Vec::new();
    let mut settings = serde_json::Map::new();
    // Prompts SillyTavern never sends (see SENT_SYSTEM_PROMPTS).
    let mut never_sent: Vec<String> = Vec::new();
    // Prompts sent only for other generations than an ordinary send, with their triggers.
    let mut not_triggered: Vec<(String, String)> = Vec::new();
    let mut unknown_keys = UnknownKeys::default();
    for (i, value) in prompts.iter().enumerate() {
        let Value::Object(prompt) = value else {
            report.push(
                format!("prompts[{i}]"),
                texts::NOT_A_PROMPT.part("kind", json::kind_text(value)),
            );
            continue;
        };
        let Some(id) = json::text(prompt, "identifier") else {
            report.push(format!("prompts[{i}]"), texts::NO_IDENTIFIER);
            continue;
        };
        let item = format!("prompts[{i}] ({id})");
        if templates.iter().any(|t| t.id == id) {
            report.push(&item, texts::SECOND_PROMPT);
            continue;
        }
        unknown_keys.note("prompts[]", prompt, PROMPT_KEYS, &id);
        if let Some(triggers) = other_triggers(prompt) {
            not_triggered.push((id.clone(), triggers));
        }
        own_enabled.push(json::boolean(prompt, "enabled").unwrap_or(true));
        if json::boolean(prompt, "forbid_overrides") == Some(true) {
            if let Some((_, key)) = OVERRIDABLE.iter().find(|(p, _)| *p == id) {
                settings.insert((*key).into(), Value::from(""));
            }
        }
        if json::boolean(prompt, "system_prompt") == Some(true)
            && json::boolean(prompt, "marker") != Some(true)
            && !SENT_SYSTEM_PROMPTS.contains(&id.as_str())
        {
            report.push(&item, texts::NEVER_SENT);
            never_sent.push(id.clone());
        }
        templates.push(template_from_prompt(&id, prompt, &item, &mut report));
    }

    let mut steps = steps_from_order(
        root,
        &templates,
        &own_enabled,
        &mut unknown_keys,
        &mut report,
    )?;
    for step in &mut steps {
        if never_sent.contains(&step.message_id) {
            step.enabled = false;
        }
        // injection_trigger (RULES 7.2): a build is an ordinary send.
        if let Some((_, triggers)) = not_triggered.iter().find(|(id, _)| *id == step.message_id) {
            if step.enabled {
                report.push(
                    format!("prompt {}", step.message_id),
                    texts::NOT_TRIGGERED.with("triggers", triggers),
                );
                step.enabled = false;
            }
        }
    }
    unknown_keys.report(&mut report);
    let in_order: HashSet<&str> = steps.iter().map(|s| s.message_id.as_str()).collect();
    for template in &templates {
        if !in_order.contains(template.id.as_str()) {
            report.push(format!("prompt {}", template.id), texts::NOT_IN_ORDER);
        }
    }

    let generation = generation_from(root, &mut report);
    formats_from(root, &mut templates, &mut settings, &mut report);
    continue_settings(root, &mut settings, &mut report);
    let mut processors = request_formatting(root, &mut report);
    let mut unknown: Vec<String> = Vec::new();
    let regex_rules = extensions_from(root, &mut unknown, &mut report);
    let mut mapped = vec![
        "prompts",
        "prompt_order",
        "wi_format",
        "names_behavior",
        "squash_system_messages",
        "extensions",
    ];
    mapped.extend_from_slice(SAMPLER_KEYS);
    mapped.extend(FORMAT_KEYS.iter().map(|(key, _)| *key));
    mapped.extend(["continue_prefill", "continue_postfix"]);
    let mut other_keys: Vec<&str> = Vec::new();
    for (key, value) in root {
        if mapped.contains(&key.as_str()) {
            continue;
        }
        if known_not_mapped(key) {
            // Settings that are off or empty say nothing, but a sampler at 0 is still a setting.
            if json::is_set(value) || matches!(value, Value::Number(_)) {
                other_keys.push(key);
            }
        } else if !value.is_null() {
            unknown.push(key.clone());
        }
    }
    other_keys.sort_unstable();
    if !other_keys.is_empty() {
        report.push(other_keys.join(", "), texts::PRESET_SETTINGS);
    }
    unknown.sort_unstable();
    if !unknown.is_empty() {
        report.push(unknown.join(", "), texts::UNKNOWN_PRESET_SETTINGS);
    }

    let stem = json::file_stem(file);
    let preset = AgentPreset {
        format_version: FORMAT_VERSION,
        id: json::slug(stem),
        name: stem.to_owned(),
        description: Some("Imported from a SillyTavern chat-completion preset".into()),
        message_templates: templates,
        context_recipes: vec![ContextRecipe {
            id: IMPORTED_RECIPE_ID.into(),
            name: Some("SillyTavern prompt order".into()),
            model_filter: vec!["*".into()],
            steps,
        }],
        preset_messages: None,
        character: None,
        lorebook: None,
        regex_rules,
        processors: {
            let mut configs: Vec<ProcessorConfig> = Vec::new();
            if !settings.is_empty() {
                configs.push(ProcessorConfig {
                    id: ASSEMBLER.into(),
                    enabled: None,
                    priority: None,
                    settings,
                });
            }
            configs.extend(wi_format(root).into_iter().flatten());
            configs.append(&mut processors);
            (!configs.is_empty()).then_some(configs)
        },
        variables: None,
        generation,
        compatibility: Compatibility::Sillytavern,
        instruct: None,
    };
    validate_preset(&preset)?;
    Ok(Reported {
        value: preset,
        report,
    })
}

fn template_from_prompt(
    id: &str,
    prompt: &Object,
    item: &str,
    report: &mut ImportReport,
) -> MessageTemplate {
    let name = json::text(prompt, "name");
    let role = parse_role(prompt.get("role")).unwrap_or_else(|bad| {
        report.push(item, texts::UNKNOWN_ROLE.with("role", &bad));
        Role::System
    });
    let position = json::int(prompt, "injection_position").unwrap_or(0);
    let is_marker = json::boolean(prompt, "marker").unwrap_or(false);
    let slot = |kind: TemplateType| MessageTemplate {
        id: id.to_owned(),
        name: name.clone(),
        role,
        kind,
        content: None,
        default_injection_strategy: None,
        unwrapped: false,
    };
    let template = match marker(id) {
        Some(Marker::Slot(kind)) => {
            if position == 1 {
                report.push(item, texts::SLOT_POSITION_IGNORED);
            }
            slot(kind)
        }
        Some(Marker::Field(content)) => MessageTemplate {
            content: Some(content.into()),
            default_injection_strategy: strategy(prompt, position),
            ..slot(TemplateType::Message)
        },
        None if is_marker => {
            report.push(item, texts::MARKER_PLACEHOLDER);
            slot(TemplateType::Placeholder)
        }
        None => MessageTemplate {
            content: Some(json::string(prompt, "content").unwrap_or_default()),
            default_injection_strategy: strategy(prompt, position),
            ..slot(TemplateType::Message)
        },
    };
    if !matches!(position, 0 | 1) {
        report.push(
            item,
            texts::UNKNOWN_INJECTION_POSITION.with("position", position),
        );
    }
    template
}

/// `injection_position` 1 is "in chat at depth"; 0 or absent is list order, whatever the depth.
fn strategy(prompt: &Object, position: i64) -> Option<InjectionStrategy> {
    (position == 1).then(|| InjectionStrategy {
        depth: Some(clamp_u32(
            json::int(prompt, "injection_depth").unwrap_or(DEFAULT_INJECTION_DEPTH),
        )),
        anchor_target: None,
        anchor_position: None,
        order: Some(placement_order(
            json::int(prompt, "injection_order").unwrap_or(DEFAULT_INJECTION_ORDER),
        )),
    })
}

fn steps_from_order(
    root: &Object,
    templates: &[MessageTemplate],
    own_enabled: &[bool],
    unknown_keys: &mut UnknownKeys,
    report: &mut ImportReport,
) -> Result<Vec<RecipeStep>, Problem> {
    let lists: &[Value] = match root.get("prompt_order") {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => &[],
        Some(other) => {
            return Err(Problem::shape(format!(
                "`prompt_order` is {}, expected a list",
                json::kind(other)
            )))
        }
    };
    let lists: Vec<&Object> = lists.iter().filter_map(Value::as_object).collect();
    for list in &lists {
        let character = json::string(list, "character_id").unwrap_or_default();
        unknown_keys.note("prompt_order[]", list, ORDER_LIST_KEYS, &character);
    }
    let chosen = lists
        .iter()
        .find(|l| json::int(l, "character_id") == Some(GLOBAL_ORDER_ID))
        .or_else(|| lists.last());
    let Some(chosen) = chosen else {
        report.push("prompt_order", texts::NO_ORDER_LIST);
        return Ok(templates
            .iter()
            .zip(own_enabled)
            .map(|(t, enabled)| RecipeStep {
                message_id: t.id.clone(),
                enabled: *enabled,
                injection_strategy: None,
                overrides: None,
            })
            .collect());
    };
    let character_id = json::int(chosen, "character_id");
    if character_id != Some(GLOBAL_ORDER_ID) {
        report.push(
            "prompt_order",
            texts::LAST_ORDER_LIST.with("global", GLOBAL_ORDER_ID).with(
                "used",
                character_id.map_or("none".into(), |c| c.to_string()),
            ),
        );
    }
    let Some(Value::Array(order)) = chosen.get("order") else {
        return Err(Problem::shape(
            "the chosen `prompt_order` entry has no `order` list",
        ));
    };
    let mut steps = Vec::with_capacity(order.len());
    for (i, value) in order.iter().enumerate() {
        let item = format!("prompt_order order[{i}]");
        let Some(entry) = value.as_object() else {
            report.push(
                item,
                texts::NOT_AN_ORDER_ENTRY.part("kind", json::kind_text(value)),
            );
            continue;
        };
        let Some(id) = json::text(entry, "identifier") else {
            report.push(item, texts::NO_IDENTIFIER);
            continue;
        };
        unknown_keys.note("prompt_order order[]", entry, ORDER_ENTRY_KEYS, &id);
        if !templates.iter().any(|t| t.id == id) {
            report.push(format!("{item} ({id})"), texts::UNKNOWN_PROMPT);
            continue;
        }
        // SillyTavern sends a prompt whose entry is enabled, and only then (RULES 7.2).
        let enabled = json::boolean(entry, "enabled");
        if enabled.is_none() {
            report.push(format!("{item} ({id})"), texts::NO_ENABLED_FLAG);
        }
        steps.push(RecipeStep {
            message_id: id,
            enabled: enabled.unwrap_or(false),
            injection_strategy: None,
            overrides: None,
        });
    }
    Ok(steps)
}

/// The `injection_trigger` of a prompt that SillyTavern does not send for an ordinary send, as
/// the file lists it: a list that is not empty and does not hold `normal`. Anything but a list
/// (absent, `null`, a lone string) means every generation, as in SillyTavern.
fn other_triggers(prompt: &Object) -> Option<String> {
    let Some(Value::Array(triggers)) = prompt.get("injection_trigger") else {
        return None;
    };
    if triggers.is_empty()
        || triggers
            .iter()
            .any(|t| t.as_str() == Some(NORMAL_GENERATION))
    {
        return None;
    }
    let names: Vec<String> = triggers
        .iter()
        .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned))
        .collect();
    Some(names.join(", "))
}
