//! The commands the UI calls. Each is thin: it runs off the main thread and hands the work to the
//! store or the engine (STYLE.md). The UI reaches them only through the generated `bindings.ts`.

pub mod transfer;

use std::sync::Arc;
use std::time::Instant;

use promptloom_engine::assets::InlineAssets;
use promptloom_engine::model::ProcessorConfig;
use promptloom_engine::model::{
    available_anchors, AgentPreset, ContextRecipe, MessageTemplate, RecipeStep, Role, Session,
    TemplateType,
};
use promptloom_engine::pattern::{best_match, pattern_problem};
use promptloom_engine::pipeline::{BuildResult, Pipeline, ProcessorDescriptor, ResolvedConfig};
use promptloom_engine::profiles::{profile_for_model, ModelProfile, KNOWN_MODELS};
use promptloom_engine::{build, BuildOptions, BuildRequest};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};

use crate::error::AppError;
use crate::state::{AppState, Startup};

/// A preset or session in a list: its id, name and last change (milliseconds since 1970).
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct ListItem {
    pub id: String,
    pub name: String,
    pub updated_at: f64,
}

impl From<promptloom_store::Listed> for ListItem {
    fn from(l: promptloom_store::Listed) -> Self {
        ListItem {
            id: l.id,
            name: l.name,
            updated_at: l.updated_at as f64,
        }
    }
}

/// What the live preview asks for: the preset as it is being edited (not yet saved, perhaps), a
/// stored session, the model and the build options of SPEC 8.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PreviewRequest {
    pub preset: AgentPreset,
    pub session_id: Option<String>,
    pub model: String,
    pub input: Option<String>,
    pub context_window: Option<u32>,
    pub reserve: Option<u32>,
}

/// A build for the preview, with what the editor needs beside it.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub result: BuildResult<'static>,
    /// The anchors a step can target (SPEC 2.2), for the anchor picker.
    pub anchors: Vec<String>,
    /// The tokenizer that counted, and whether it is the model's own.
    pub tokenizer: String,
    pub exact: bool,
    /// How long the build took in the backend, in milliseconds.
    pub build_ms: f64,
    /// History messages taken out of `result` because they are exactly as stored: the UI holds
    /// the session and puts them back (`withStoredHistory`).
    pub elided: Vec<StoredRun>,
}

/// Runs `work` on a blocking thread with the app state, so that the window never waits on SQLite
/// or a build.
pub(crate) async fn blocking<T, F>(app: AppHandle, work: F) -> Result<T, AppError>
where
    T: Send + 'static,
    F: FnOnce(&AppState) -> Result<T, AppError> + Send + 'static,
{
    tauri::async_runtime::spawn_blocking(move || match &app.state::<Startup>().0 {
        Ok(state) => work(state),
        Err(e) => Err(e.clone()),
    })
    .await
    .map_err(|e| AppError::new("internal", format!("a background task failed: {e}")))?
}

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

#[tauri::command]
#[specta::specta]
pub async fn list_sessions(app: AppHandle) -> Result<Vec<ListItem>, AppError> {
    blocking(app, |s| {
        Ok(s.store()?
            .list_sessions()?
            .into_iter()
            .map(ListItem::from)
            .collect())
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn get_session(app: AppHandle, id: String) -> Result<Session, AppError> {
    blocking(app, move |s| Ok((*s.session(&id)?).clone())).await
}

#[tauri::command]
#[specta::specta]
pub async fn save_session(app: AppHandle, session: Session) -> Result<(), AppError> {
    blocking(app, move |s| {
        s.forget_session(&session.id)?;
        Ok(s.store()?.save_session(&session)?)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn create_session(app: AppHandle, title: String) -> Result<Session, AppError> {
    blocking(app, move |s| {
        let store = s.store()?;
        let id = store.free_session_id(&slug(&title, "session"))?;
        let session = Session {
            format_version: 1,
            id,
            title: Some(title),
            user_profile: None,
            summary: None,
            messages: Vec::new(),
        };
        store.save_session(&session)?;
        Ok(session)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_session(app: AppHandle, id: String) -> Result<(), AppError> {
    blocking(app, move |s| {
        s.forget_session(&id)?;
        Ok(s.store()?.delete_session(&id)?)
    })
    .await
}

/// Builds the context `request` describes, as the preview shows it.
#[tauri::command]
#[specta::specta]
pub async fn preview(app: AppHandle, request: PreviewRequest) -> Result<Preview, AppError> {
    blocking(app, move |s| {
        let started = Instant::now();
        with_build(s, &request, |mut result, _, profile| {
            let choice = profile.tokenizer_choice();
            let elided = take_stored_history(&mut result);
            Ok(Preview {
                elided,
                anchors: available_anchors(&request.preset),
                tokenizer: choice.kind.as_str().to_string(),
                exact: choice.exact,
                build_ms: started.elapsed().as_secs_f64() * 1000.0,
                result: result.into_owned(),
            })
        })
    })
    .await
}

/// The request body the model's provider would receive for `request` (SPEC 5.7), as pretty
/// JSON. Asked for only when the user opens it: a long session's body is large.
#[tauri::command]
#[specta::specta]
pub async fn provider_request(app: AppHandle, request: PreviewRequest) -> Result<String, AppError> {
    blocking(app, move |s| {
        with_build(s, &request, |result, session, profile| {
            let body = promptloom_engine::providers::request_body(
                profile.provider_format,
                &result,
                session,
                &InlineAssets,
            )?;
            serde_json::to_string_pretty(&body)
                .map_err(|e| AppError::new("internal", format!("cannot write the request: {e}")))
        })
    })
    .await
}

/// A run of history messages that went into the build exactly as stored: the preview sends where
/// they go and their tokens, and the UI rebuilds them from the session it holds.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct StoredRun {
    /// The position of the run's first message in the whole message list.
    pub at: u32,
    /// The stored index of its first message; the others follow it one by one.
    pub history_index: u32,
    /// Each message's tokens, as in `BuiltMessage::tokens`.
    pub tokens: Vec<u32>,
}

/// Takes the history messages that are exactly as stored, and carry no attachments, out of
/// `result` and returns them as runs. Over a long session they are most of the preview; sent in
/// full, a 1,000-message preview was 397 KB, with the text left out still 124 KB.
fn take_stored_history(result: &mut BuildResult<'_>) -> Vec<StoredRun> {
    let mut runs: Vec<StoredRun> = Vec::new();
    let mut position = 0u32;
    result.messages.retain(|m| {
        let at = position;
        position += 1;
        // The UI rebuilds a stored message's role, name, text and tokens; one that carries
        // attachments goes whole, so that what the preview shows is what is sent.
        let Some(h) = m.stored_index().filter(|_| m.attachments().is_empty()) else {
            return true;
        };
        match runs.last_mut() {
            Some(run)
                if run.at + run.tokens.len() as u32 == at
                    && run.history_index + run.tokens.len() as u32 == h =>
            {
                run.tokens.push(m.tokens)
            }
            _ => runs.push(StoredRun {
                at,
                history_index: h,
                tokens: vec![m.tokens],
            }),
        }
        false
    });
    runs
}

/// One build for the preview over the stored session (or none) with the user's model profiles,
/// handed to `f` with the session it refers to and the model profile that applied.
fn with_build<T>(
    s: &AppState,
    request: &PreviewRequest,
    f: impl FnOnce(BuildResult<'_>, &Session, &ModelProfile) -> Result<T, AppError>,
) -> Result<T, AppError> {
    let session = match &request.session_id {
        Some(id) => s.session(id)?,
        None => Arc::new(Session {
            format_version: 1,
            id: "(no session)".into(),
            title: None,
            user_profile: None,
            summary: None,
            messages: Vec::new(),
        }),
    };
    let profiles = s.store()?.model_profiles()?;
    let mut options = BuildOptions::at(chrono::Local::now().fixed_offset());
    options.input = request.input.clone().filter(|i| !i.trim().is_empty());
    options.context_window = request.context_window;
    options.reserve = request.reserve;
    let build_request = BuildRequest {
        preset: &request.preset,
        session: &session,
        model: &request.model,
        options: &options,
        cache: &s.cache,
        profiles: &profiles,
        assets: &InlineAssets,
    };
    let result = build(&build_request)?;
    f(result, &session, &build_request.profile())
}

/// One processor in the pipeline panel: what it is, the settings it runs with for a preset and
/// model (each with its origin), and the model profile's own config, which is what the preset's
/// config replaces and what a reset goes back to.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct PipelineStage {
    pub descriptor: ProcessorDescriptor,
    pub resolved: ResolvedConfig,
    pub model_config: Option<ProcessorConfig>,
}

/// The pipeline as it would run for `preset` and `model`, in the order it would run (SPEC 5, 5.9).
#[tauri::command]
#[specta::specta]
pub async fn pipeline(
    app: AppHandle,
    preset: AgentPreset,
    model: String,
) -> Result<Vec<PipelineStage>, AppError> {
    blocking(app, move |s| {
        let profiles = s.store()?.model_profiles()?;
        let profile = profile_for_model(&model, &profiles);
        let pipeline = Pipeline::builtin();
        let descriptors = pipeline.descriptors();
        Ok(pipeline
            .resolve(&preset, &profile)
            .into_iter()
            .filter_map(|resolved| {
                let descriptor = descriptors.iter().find(|d| d.id == resolved.id)?.clone();
                let model_config = profile
                    .processors
                    .iter()
                    .find(|c| c.id == resolved.id)
                    .cloned();
                Some(PipelineStage {
                    descriptor,
                    resolved,
                    model_config,
                })
            })
            .collect())
    })
    .await
}

/// Which recipe a model gets, for the model filter editor.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelMatch {
    pub model: String,
    /// The winning recipe's id; none when no filter matches.
    pub recipe: Option<String>,
}

/// A model filter pattern that cannot be used, and why.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PatternProblem {
    pub recipe: String,
    pub pattern: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RecipeMatches {
    pub models: Vec<ModelMatch>,
    pub problems: Vec<PatternProblem>,
}

/// For each of `models`, the recipe of `preset` that would apply (SPEC 3.1), and every pattern
/// of the preset's model filters that is not a valid model pattern. Async, so that it runs off the
/// main thread.
#[tauri::command]
#[specta::specta]
pub async fn recipe_matches(
    preset: AgentPreset,
    models: Vec<String>,
) -> Result<RecipeMatches, AppError> {
    let recipes = &preset.context_recipes;
    Ok(RecipeMatches {
        models: models
            .into_iter()
            .map(|model| {
                let recipe = best_match(recipes.iter().map(|r| r.model_filter.as_slice()), &model)
                    .map(|i| recipes[i].id.clone());
                ModelMatch { model, recipe }
            })
            .collect(),
        problems: recipes
            .iter()
            .flat_map(|r| {
                r.model_filter.iter().filter_map(|p| {
                    pattern_problem(p).map(|message| PatternProblem {
                        recipe: r.id.clone(),
                        pattern: p.clone(),
                        message,
                    })
                })
            })
            .collect(),
    })
}

/// The model ids the pickers offer, and the profiles the user added.
#[tauri::command]
#[specta::specta]
pub async fn known_models(app: AppHandle) -> Result<Vec<String>, AppError> {
    blocking(app, |s| {
        let mut models: Vec<String> = KNOWN_MODELS.iter().map(|m| m.to_string()).collect();
        let user: Vec<ModelProfile> = s.store()?.model_profiles()?;
        for p in user {
            for pattern in p.patterns {
                if !pattern.contains('*') && !models.contains(&pattern) {
                    models.push(pattern);
                }
            }
        }
        Ok(models)
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn get_setting(app: AppHandle, key: String) -> Result<Option<String>, AppError> {
    blocking(app, move |s| Ok(s.store()?.setting(&key)?)).await
}

#[tauri::command]
#[specta::specta]
pub async fn set_setting(app: AppHandle, key: String, value: String) -> Result<(), AppError> {
    blocking(app, move |s| Ok(s.store()?.set_setting(&key, &value)?)).await
}

/// A lower-case id from a name: letters and digits kept, the rest joined by dashes.
pub fn slug(name: &str, fallback: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        fallback.to_string()
    } else {
        out
    }
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
    fn slugs_keep_letters_and_digits() {
        assert_eq!(slug("My Agent #2", "preset"), "my-agent-2");
        assert_eq!(slug("  ", "preset"), "preset");
        assert_eq!(slug("角色 卡", "preset"), "角色-卡");
    }

    #[test]
    fn stored_history_goes_as_runs_and_what_a_build_changed_goes_in_full() {
        let preset: AgentPreset = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "p", "name": "P",
            "messageTemplates": [
                { "id": "sys", "role": "system", "content": "You are here." },
                { "id": "hist", "role": "system", "type": "chat_history" },
                { "id": "note", "role": "system", "content": "A note." }
            ],
            "contextRecipes": [{ "id": "r", "modelFilter": ["*"], "steps": [
                { "messageId": "sys", "enabled": true },
                { "messageId": "hist", "enabled": true },
                { "messageId": "note", "enabled": true, "injectionStrategy": { "depth": 1 } }
            ]}],
            "regexRules": [{ "id": "bye", "pattern": "Bye", "replacement": "Farewell",
                "flags": "", "scope": "history", "enabled": true }]
        }))
        .expect("preset");
        let session: Session = serde_json::from_value(serde_json::json!({
            "formatVersion": 1, "id": "s",
            "messages": [
                { "id": "m0", "role": "user", "content": "Hello" },
                { "role": "assistant", "name": "Ann", "content": "Hi" },
                { "role": "user", "content": "Bye" },
                { "role": "assistant", "content": "Ok" },
                { "role": "user", "content": "Look", "attachments": [{ "id": "a",
                    "kind": "image", "mime": "image/png", "name": "p.png", "dataBase64": "AA==" }] }
            ]
        }))
        .expect("session");
        let options = BuildOptions::at(chrono::Local::now().fixed_offset());
        let tokens = promptloom_engine::cache::BuildCache::new();
        let mut result = build(&BuildRequest {
            preset: &preset,
            session: &session,
            model: "gpt-4o",
            options: &options,
            cache: &tokens,
            profiles: &[],
            assets: &InlineAssets,
        })
        .expect("builds");
        let whole = result.messages.clone();
        let contents: Vec<&str> = whole.iter().map(|m| m.content()).collect();
        assert_eq!(
            contents,
            [
                "You are here.",
                "Hello",
                "Hi",
                "Farewell",
                "Ok",
                "A note.",
                "Look"
            ]
        );
        assert_eq!(
            whole[6].stored_index(),
            Some(4),
            "gpt-4o takes the image as stored"
        );
        let runs = take_stored_history(&mut result);
        assert_eq!(
            runs,
            vec![
                StoredRun {
                    at: 1,
                    history_index: 0,
                    tokens: vec![whole[1].tokens, whole[2].tokens],
                },
                StoredRun {
                    at: 4,
                    history_index: 3,
                    tokens: vec![whole[4].tokens],
                },
            ],
            "stored messages in runs, split where the build put something between them"
        );
        assert!(whole[1].tokens > 0);
        assert_eq!(
            result.messages,
            vec![
                whole[0].clone(),
                whole[3].clone(),
                whole[5].clone(),
                whole[6].clone()
            ],
            "the prompt, the message a rule rewrote, the injection and the message with an \
             attachment are sent in full"
        );
    }

    #[test]
    fn a_new_preset_passes_validation() {
        let preset = new_preset("p".into(), "P".into());
        let json = serde_json::to_string(&preset).expect("serializes");
        promptloom_engine::model::parse_preset(&json).expect("valid");
    }
}
