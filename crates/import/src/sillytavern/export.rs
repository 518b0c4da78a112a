//! An agent preset -> a SillyTavern chat-completion preset (`prompts` + `prompt_order`), the
//! inverse of [`super::preset`]. SillyTavern has one prompt order and per-prompt placement, so
//! what it cannot hold (other recipes, anchor placements, step overrides, character data) is
//! reported, item by item. The generation settings go back to SillyTavern's sampler keys, the
//! inverse of the import ([`super::preset::SAMPLER_KEYS`]); stop sequences and extra fields have
//! no place in a preset and are reported.

use std::collections::HashMap;

use promptloom_engine::model::{
    AgentPreset, ContextRecipe, GenerationSettings, MessageTemplate, TemplateType,
};
use serde_json::{json, Map, Value};

use super::preset::{
    marker, Marker, ASSEMBLER, CONTINUE_POSTFIXES, FORMAT_KEYS, GLOBAL_ORDER_ID, OVERRIDABLE,
};
use super::world_info::placement_order;
use crate::texts;
use crate::{ImportReport, Reported};

/// Prompts SillyTavern ships and flags `system_prompt` (they cannot be deleted there).
const BUILT_IN_PROMPTS: &[&str] = &["main", "nsfw", "jailbreak", "enhanceDefinitions"];

pub fn export_preset(preset: &AgentPreset) -> Reported<Value> {
    let mut report = ImportReport::new(texts::FORMAT_ST_PRESET);
    let recipe = choose_recipe(preset, &mut report);

    let mut prompts = Vec::new();
    // Template id -> SillyTavern identifier.
    let mut identifiers: HashMap<&str, String> = HashMap::new();
    for template in &preset.message_templates {
        let identifier = match template.kind {
            TemplateType::ChatHistory => "chatHistory".to_owned(),
            TemplateType::UserProfile => "personaDescription".to_owned(),
            _ => template.id.clone(),
        };
        let item = format!("template {}", template.id);
        if identifiers.values().any(|i| *i == identifier) {
            report.push(item, texts::SECOND_TEMPLATE.with("identifier", identifier));
            continue;
        }
        prompts.push(prompt_from_template(
            template,
            &identifier,
            &item,
            &mut report,
        ));
        identifiers.insert(template.id.as_str(), identifier);
    }

    let mut order = Vec::new();
    if let Some(recipe) = recipe {
        for (i, step) in recipe.steps.iter().enumerate() {
            let Some(identifier) = identifiers.get(step.message_id.as_str()) else {
                report.push(
                    format!("recipe {} step {i}", recipe.id),
                    texts::STEP_TEMPLATE_LEFT_OUT.with("template", &step.message_id),
                );
                continue;
            };
            let item = format!("recipe {} step {i} ({})", recipe.id, step.message_id);
            let template_default = preset
                .template(&step.message_id)
                .and_then(|t| t.default_injection_strategy.as_ref());
            if step.injection_strategy.is_some()
                && step.injection_strategy.as_ref() != template_default
            {
                report.push(&item, texts::STEP_PLACEMENT);
            }
            if step.overrides.is_some() {
                report.push(&item, texts::STEP_OVERRIDES);
            }
            order.push(json!({ "identifier": identifier, "enabled": step.enabled }));
        }
    }

    if preset.character.is_some() {
        report.push("character", texts::CHARACTER);
    }
    if preset.lorebook.is_some() {
        report.push("lorebook", texts::LOREBOOK);
    }
    if preset.regex_rules.as_ref().is_some_and(|r| !r.is_empty()) {
        report.push("regexRules", texts::REGEX_RULES);
    }
    let mut formats = Map::new();
    let mut forbidden: Vec<&str> = Vec::new();
    if let Some(processors) = &preset.processors {
        let left = prompt_manager_settings(processors, &mut formats, &mut forbidden);
        if !left.is_empty() {
            report.push(
                format!("processors ({})", left.join(", ")),
                texts::NOT_EXPORTED,
            );
        }
    }
    for prompt in prompts.iter_mut() {
        let forbids = prompt
            .get("identifier")
            .and_then(Value::as_str)
            .is_some_and(|id| forbidden.contains(&id));
        if forbids && prompt.get("forbid_overrides").is_some() {
            prompt["forbid_overrides"] = json!(true);
        }
    }
    if preset.variables.as_ref().is_some_and(|v| !v.is_empty()) {
        report.push("variables", texts::NOT_EXPORTED);
    }

    let mut value = json!({
        "prompts": prompts,
        "prompt_order": [{ "character_id": GLOBAL_ORDER_ID, "order": order }],
    });
    if let (Some(g), Value::Object(root)) = (&preset.generation, &mut value) {
        samplers(g, root, &mut report);
    }
    if let Value::Object(root) = &mut value {
        root.extend(formats);
    }
    Reported { value, report }
}

/// The injection assembler's prompt-manager settings back under SillyTavern's keys (the inverse
/// of the import, RULES 5.11.3): the formats and openers into `formats`, a cleared override
/// setting as its prompt's `forbid_overrides` into `forbidden`. Returns what has no place in a
/// SillyTavern preset: other processors, and other settings or an `enabled` or `priority` of
/// the assembler.
fn prompt_manager_settings(
    processors: &[promptloom_engine::model::ProcessorConfig],
    formats: &mut Map<String, Value>,
    forbidden: &mut Vec<&'static str>,
) -> Vec<String> {
    let mut left = Vec::new();
    for p in processors {
        // The lorebook's `wiFormat` is the preset's `wi_format` (RULES 5.11.1).
        if p.id == "lorebook" {
            if p.enabled.is_some() || p.priority.is_some() {
                left.push(p.id.clone());
            }
            for (key, value) in &p.settings {
                match (key.as_str(), value.as_str()) {
                    ("wiFormat", Some(text)) => {
                        formats.insert("wi_format".into(), json!(text));
                    }
                    _ => left.push(format!("{}.{key}", p.id)),
                }
            }
            continue;
        }
        // `squash_system_messages` and `names_behavior` (RULES 5.11.6, 5.11.7).
        if p.id == "squash-system-messages" && p.priority.is_none() && p.settings.is_empty() {
            if let Some(on) = p.enabled {
                formats.insert("squash_system_messages".into(), json!(on));
            }
            continue;
        }
        if p.id == "session-loader" && p.enabled.is_none() && p.priority.is_none() {
            for (key, value) in &p.settings {
                let behavior = match (key.as_str(), value.as_str()) {
                    ("names", Some("none")) => Some(-1),
                    ("names", Some("completion")) => Some(1),
                    ("names", Some("content")) => Some(2),
                    _ => None,
                };
                match behavior {
                    Some(b) => {
                        formats.insert("names_behavior".into(), json!(b));
                    }
                    None => left.push(format!("{}.{key}", p.id)),
                }
            }
            continue;
        }
        if p.id != ASSEMBLER {
            left.push(p.id.clone());
            continue;
        }
        if p.enabled.is_some() || p.priority.is_some() {
            left.push(p.id.clone());
        }
        for (key, value) in &p.settings {
            let format = FORMAT_KEYS.iter().find(|(_, s)| s == key);
            let forbid = OVERRIDABLE.iter().find(|(_, s)| s == key);
            match (format, forbid, value.as_str()) {
                (Some((st_key, _)), _, Some(text)) => {
                    formats.insert((*st_key).into(), json!(text));
                }
                (_, Some((prompt, _)), Some("")) => forbidden.push(prompt),
                _ => match (key.as_str(), value) {
                    ("continuePrefill", Value::Bool(on)) => {
                        formats.insert("continue_prefill".into(), json!(on));
                    }
                    ("continuePostfix", Value::String(name)) => {
                        match CONTINUE_POSTFIXES.iter().find(|(_, n)| n == name) {
                            Some((text, _)) => {
                                formats.insert("continue_postfix".into(), json!(text));
                            }
                            None => left.push(format!("{}.{key}", p.id)),
                        }
                    }
                    _ => left.push(format!("{}.{key}", p.id)),
                },
            }
        }
    }
    left
}

/// The generation settings under SillyTavern's preset keys, each only when set.
fn samplers(g: &GenerationSettings, root: &mut Map<String, Value>, report: &mut ImportReport) {
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            root.insert(key.into(), value);
        }
    };
    put("temperature", g.temperature.map(Value::from));
    put("top_p", g.top_p.map(Value::from));
    put("top_k", g.top_k.map(Value::from));
    put("openai_max_tokens", g.max_output_tokens.map(Value::from));
    put("frequency_penalty", g.frequency_penalty.map(Value::from));
    put("presence_penalty", g.presence_penalty.map(Value::from));
    put("seed", g.seed.map(Value::from));
    if !g.stop.is_empty() {
        report.push("generation.stop", texts::STOP_SEQUENCES);
    }
    if !g.extra.is_empty() {
        let keys: Vec<&str> = g.extra.keys().map(String::as_str).collect();
        report.push(
            format!("generation.extra ({})", keys.join(", ")),
            texts::EXTRA_FIELDS,
        );
    }
}

/// The recipe for every model (`*`), else the first.
fn choose_recipe<'a>(
    preset: &'a AgentPreset,
    report: &mut ImportReport,
) -> Option<&'a ContextRecipe> {
    let chosen = preset
        .context_recipes
        .iter()
        .find(|r| r.model_filter.iter().any(|f| f == "*"))
        .or_else(|| preset.context_recipes.first());
    for recipe in &preset.context_recipes {
        if Some(recipe.id.as_str()) != chosen.map(|c| c.id.as_str()) {
            report.push(format!("recipe {}", recipe.id), texts::OTHER_RECIPE);
        }
    }
    if chosen.is_none() {
        report.push("contextRecipes", texts::NO_RECIPE);
    }
    chosen
}

fn prompt_from_template(
    template: &MessageTemplate,
    identifier: &str,
    item: &str,
    report: &mut ImportReport,
) -> Value {
    let name = template.name.clone().unwrap_or_else(|| template.id.clone());
    let marker_prompt = || {
        json!({
            "identifier": identifier,
            "name": name,
            "system_prompt": true,
            "marker": true,
        })
    };
    match (template.kind, marker(identifier)) {
        (TemplateType::ChatHistory | TemplateType::UserProfile, _) => return marker_prompt(),
        (TemplateType::Placeholder, Some(Marker::Slot(TemplateType::Placeholder))) => {
            return marker_prompt()
        }
        (TemplateType::Placeholder, _) => {
            report.push(item, texts::UNKNOWN_MARKER);
            return marker_prompt();
        }
        (TemplateType::Message, Some(Marker::Field(content))) => {
            if template.content.as_deref() != Some(content) {
                report.push(item, texts::MARKER_CONTENT.with("identifier", identifier));
            }
            return marker_prompt();
        }
        (TemplateType::Message, Some(Marker::Slot(_))) => {
            report.push(item, texts::MARKER_ID.with("identifier", identifier));
            return marker_prompt();
        }
        (TemplateType::Message, None) => {}
    }
    let mut prompt = Map::new();
    prompt.insert("identifier".into(), json!(identifier));
    prompt.insert("name".into(), json!(name));
    prompt.insert(
        "system_prompt".into(),
        json!(BUILT_IN_PROMPTS.contains(&identifier)),
    );
    prompt.insert("role".into(), json!(template.role.as_str()));
    prompt.insert(
        "content".into(),
        json!(template.content.clone().unwrap_or_default()),
    );
    prompt.insert("marker".into(), json!(false));
    let strategy = template
        .default_injection_strategy
        .clone()
        .unwrap_or_default();
    match (strategy.depth, &strategy.anchor_target) {
        (Some(depth), _) => {
            prompt.insert("injection_position".into(), json!(1));
            prompt.insert("injection_depth".into(), json!(depth));
            // The inverse of 200 − order.
            prompt.insert(
                "injection_order".into(),
                json!(placement_order(i64::from(strategy.order()))),
            );
        }
        (None, Some(anchor)) => {
            report.push(item, texts::ANCHOR_PLACEMENT.with("anchor", anchor));
            prompt.insert("injection_position".into(), json!(0));
        }
        (None, None) => {
            prompt.insert("injection_position".into(), json!(0));
        }
    }
    prompt.insert("forbid_overrides".into(), json!(false));
    Value::Object(prompt)
}
