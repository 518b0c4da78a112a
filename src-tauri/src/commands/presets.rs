//! Presets: the list, the editor's open and save, and creating, duplicating, renaming and
//! deleting one, or restoring the built-in ones.

use promptloom_engine::model::{
    AgentPreset, ContextRecipe, MessageTemplate, RecipeStep, Role, TemplateType,
};
use serde::Serialize;
use tauri::AppHandle;

use super::{blocking, slug, ListItem};
use crate::error::AppError;

#[tauri::command]
#[specta::specta]
pub async fn list_presets(app: AppHandle) -> Result<Vec<ListItem>, AppError> {
    blocking(app, |s| {
        Ok(s.store()?
            .list_presets()?
            .into_iter()
            .map(ListItem::from)
            .collect())
    })
    .await
}

/// A preset as the editor opens it: with the revision it is at, which its saves name.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct OpenedPreset {
    pub preset: AgentPreset,
    pub revision: u32,
}

#[tauri::command]
#[specta::specta]
pub async fn get_preset(app: AppHandle, id: String) -> Result<OpenedPreset, AppError> {
    blocking(app, move |s| {
        let (preset, revision) = s.store()?.get_preset_with_revision(&id)?;
        Ok(OpenedPreset {
            preset,
            revision: wire_revision(revision),
        })
    })
    .await
}

/// Saves an edited preset (autosave) over `revision`, the one it was opened at, and returns the
/// new revision. When another program saved it meanwhile (`promptloom import --into`), nothing
/// is written and the error's code is `conflict`; without a revision it is saved over whatever
/// is stored (the user chose to keep their version). A preset that does not pass validation is
/// refused and the stored one stays as it was.
#[tauri::command]
#[specta::specta]
pub async fn save_preset(
    app: AppHandle,
    preset: AgentPreset,
    revision: Option<u32>,
) -> Result<u32, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let saved = match revision {
            Some(r) => store.save_preset_at(&preset, i64::from(r))?,
            None => store.save_preset(&preset)?,
        };
        Ok(wire_revision(saved))
    })
    .await
}

/// A revision as the UI holds it: a count of saves, which stays far below `u32::MAX`.
fn wire_revision(revision: i64) -> u32 {
    u32::try_from(revision).unwrap_or(u32::MAX)
}

/// A new preset named `name`: a system prompt and the chat history in one recipe for every model.
#[tauri::command]
#[specta::specta]
pub async fn create_preset(app: AppHandle, name: String) -> Result<AgentPreset, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let id = store.free_preset_id(&slug(&name, "preset"))?;
        let preset = new_preset(id, name);
        store.save_preset(&preset)?;
        Ok(preset)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn duplicate_preset(
    app: AppHandle,
    id: String,
    name: String,
) -> Result<AgentPreset, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let new_id = store.free_preset_id(&slug(&name, "preset"))?;
        Ok(store.duplicate_preset(&id, &new_id, &name)?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn rename_preset(app: AppHandle, id: String, name: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        if name.trim().is_empty() {
            return Err(AppError::new("invalid_name", "a preset needs a name"));
        }
        Ok(s.store()?.rename_preset(&id, name.trim())?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_preset(app: AppHandle, id: String) -> Result<(), AppError> {
    blocking(app, move |s| Ok(s.store()?.delete_preset(&id)?)).await
}

/// Puts every built-in preset back as shipped (SPEC 9); returns their ids.
#[tauri::command]
#[specta::specta]
pub async fn restore_builtin_presets(app: AppHandle) -> Result<Vec<String>, AppError> {
    blocking(app, |s| {
        let store = s.store()?;
        let mut ids = Vec::new();
        for (file, json) in promptloom_store::builtin_presets() {
            let preset = promptloom_engine::model::parse_preset(json)
                .map_err(|e| AppError::new("invalid_document", format!("{file}: {e}")))?;
            store.restore_builtin_preset(promptloom_store::builtin_presets(), &preset.id)?;
            ids.push(preset.id);
        }
        Ok(ids)
    })
    .await
}

/// The preset a user starts from: a system prompt, then the chat history, for every model.
pub fn new_preset(id: String, name: String) -> AgentPreset {
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
            },
            MessageTemplate {
                id: "chat-history".into(),
                name: Some("Chat history".into()),
                role: Role::User,
                kind: TemplateType::ChatHistory,
                content: None,
                default_injection_strategy: None,
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_preset_passes_validation() {
        let preset = new_preset("p".into(), "P".into());
        let json = serde_json::to_string(&preset).expect("serializes");
        promptloom_engine::model::parse_preset(&json).expect("valid");
    }
}
