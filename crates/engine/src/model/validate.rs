//! Validation whose errors name the field or id (issue 2, item 2). Shape errors (an unknown role,
//! a negative depth) are caught while parsing and carry their JSON path; these are the rules that
//! span fields.

use std::collections::HashSet;

use super::{AgentPreset, Role, Session};
use crate::EngineError;

pub fn validate_preset(preset: &AgentPreset) -> Result<(), EngineError> {
    if preset.id.trim().is_empty() {
        return Err(EngineError::invalid("id", "the preset id is empty"));
    }
    let mut ids = HashSet::new();
    for (i, template) in preset.message_templates.iter().enumerate() {
        let path = format!("messageTemplates[{i}]");
        if template.id.trim().is_empty() {
            return Err(EngineError::invalid(
                format!("{path}.id"),
                "the template id is empty",
            ));
        }
        if !ids.insert(template.id.as_str()) {
            return Err(EngineError::invalid(
                format!("{path}.id"),
                format!("duplicate template id \"{}\"", template.id),
            ));
        }
        if template.role == Role::Tool {
            return Err(EngineError::invalid(
                format!("{path}.role"),
                "\"tool\" is not a template role (system, user or assistant)",
            ));
        }
    }
    let mut recipe_ids = HashSet::new();
    for (r, recipe) in preset.context_recipes.iter().enumerate() {
        let path = format!("contextRecipes[{r}]");
        if !recipe_ids.insert(recipe.id.as_str()) {
            return Err(EngineError::invalid(
                format!("{path}.id"),
                format!("duplicate recipe id \"{}\"", recipe.id),
            ));
        }
        for (s, step) in recipe.steps.iter().enumerate() {
            if !ids.contains(step.message_id.as_str()) {
                return Err(EngineError::invalid(
                    format!("{path}.steps[{s}].messageId"),
                    format!(
                        "recipe \"{}\" names unknown template \"{}\"",
                        recipe.id, step.message_id
                    ),
                ));
            }
            if step.overrides.as_ref().and_then(|o| o.role) == Some(Role::Tool) {
                return Err(EngineError::invalid(
                    format!("{path}.steps[{s}].overrides.role"),
                    "\"tool\" is not a template role (system, user or assistant)",
                ));
            }
        }
    }
    for (i, rule) in preset.regex_rules.iter().flatten().enumerate() {
        if let Err(e) = crate::regex_pattern::compile_pattern(&rule.pattern, &rule.flags) {
            return Err(EngineError::invalid(
                format!("regexRules[{i}].pattern"),
                format!("rule \"{}\": {e}", rule.id),
            ));
        }
    }
    if let Some(generation) = &preset.generation {
        super::validate_generation("generation", generation)?;
    }
    Ok(())
}

pub fn validate_session(session: &Session) -> Result<(), EngineError> {
    if session.id.trim().is_empty() {
        return Err(EngineError::invalid("id", "the session id is empty"));
    }
    let mut ids = HashSet::new();
    for (i, message) in session.messages.iter().enumerate() {
        if let Some(id) = &message.id {
            if !ids.insert(&**id) {
                return Err(EngineError::invalid(
                    format!("messages[{i}].id"),
                    format!("duplicate message id \"{id}\""),
                ));
            }
        }
    }
    Ok(())
}
