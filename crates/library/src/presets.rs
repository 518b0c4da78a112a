//! Presets both front doors make: a starter, a copy, the built-ins put back as shipped.

use promptloom_engine::model::{
    AgentPreset, ContextRecipe, MessageTemplate, RecipeStep, Role, TemplateType,
};
use promptloom_store::Store;

use crate::{slug, LibraryError};

/// A new preset named `name` under a free id made from it: the [`starter`].
pub fn create(store: &Store, name: &str) -> Result<AgentPreset, LibraryError> {
    let id = store.free_preset_id(&slug(name, "preset"))?;
    let preset = starter(id, name.to_string());
    store.save_preset(&preset)?;
    Ok(preset)
}

/// A copy of preset `id` named `name`, under a free id made from the name.
pub fn duplicate(store: &Store, id: &str, name: &str) -> Result<AgentPreset, LibraryError> {
    let new_id = store.free_preset_id(&slug(name, "preset"))?;
    Ok(store.duplicate_preset(id, &new_id, name)?)
}

/// Puts every built-in preset back as shipped; returns their ids.
pub fn restore_builtins(store: &Store) -> Result<Vec<String>, LibraryError> {
    Ok(store.restore_builtin_presets()?)
}

/// The preset a user starts from: a system prompt, then the chat history, for every model.
pub fn starter(id: String, name: String) -> AgentPreset {
    AgentPreset {
        format_version: 1,
        id,
        name,
        description: None,
        message_templates: vec![
            MessageTemplate {
                id: "system-prompt".into(),
                name: Some("System prompt".into()),
                role: Role::System,
                kind: TemplateType::Message,
                content: Some("You are {{char}}, a helpful assistant.".into()),
                default_injection_strategy: None,
                unwrapped: false,
            },
            MessageTemplate {
                id: "chat-history".into(),
                name: Some("Chat history".into()),
                role: Role::User,
                kind: TemplateType::ChatHistory,
                content: None,
                default_injection_strategy: None,
                unwrapped: false,
            },
        ],
        context_recipes: vec![ContextRecipe {
            id: "default".into(),
            name: Some("Every model".into()),
            model_filter: vec!["*".into()],
            steps: ["system-prompt", "chat-history"]
                .iter()
                .map(|id| RecipeStep {
                    message_id: id.to_string(),
                    enabled: true,
                    injection_strategy: None,
                    overrides: None,
                })
                .collect(),
        }],
        preset_messages: None,
        character: None,
        lorebook: None,
        regex_rules: None,
        processors: None,
        variables: None,
        generation: None,
        compatibility: Default::default(),
        instruct: None,
    }
}
