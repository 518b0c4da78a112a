//! RULES 2.1: the simple linear form (`presetMessages`) and the canonical form (templates +
//! recipes) are one model. A preset that arrives in the simple form is converted on load.

use std::collections::HashSet;

use super::{AgentPreset, ContextRecipe, MessageTemplate, RecipeStep};

/// Id of the recipe made from a simple-form preset.
pub const SIMPLE_RECIPE_ID: &str = "default";

/// Converts `presetMessages` into templates and one `["*"]` recipe when the preset has no recipes
/// yet. Messages without an id get a stable one from their position (`message-3`), never one
/// already taken. A preset that has recipes is returned unchanged but for dropping the redundant
/// simple list.
pub fn canonicalize(mut preset: AgentPreset) -> AgentPreset {
    let Some(messages) = preset.preset_messages.take() else {
        return preset;
    };
    if !preset.context_recipes.is_empty() {
        return preset;
    }
    let mut taken: HashSet<String> = preset
        .message_templates
        .iter()
        .map(|t| t.id.clone())
        .chain(messages.iter().filter_map(|m| m.id.clone()))
        .collect();
    let mut steps = Vec::with_capacity(messages.len());
    for (index, message) in messages.into_iter().enumerate() {
        let id = match message.id {
            Some(id) => id,
            None => {
                let mut candidate = format!("message-{}", index + 1);
                let mut n = 1;
                while taken.contains(&candidate) {
                    n += 1;
                    candidate = format!("message-{}-{n}", index + 1);
                }
                taken.insert(candidate.clone());
                candidate
            }
        };
        steps.push(RecipeStep {
            message_id: id.clone(),
            enabled: message.is_enabled.unwrap_or(true),
            injection_strategy: message.injection_strategy,
            overrides: None,
        });
        preset.message_templates.push(MessageTemplate {
            id,
            name: message.name,
            role: message.role,
            kind: message.kind.unwrap_or_default(),
            content: message.content,
            default_injection_strategy: None,
            unwrapped: false,
        });
    }
    preset.context_recipes.push(ContextRecipe {
        id: SIMPLE_RECIPE_ID.into(),
        name: Some("Default".into()),
        model_filter: vec!["*".into()],
        steps,
    });
    preset
}
