//! What runs for a model: the pipeline panel's processors, and which recipe each model gets.
//! The engine decides both; these commands hand over the user's model profiles.

use promptloom_engine::model::AgentPreset;
use promptloom_engine::pipeline::{Pipeline, PipelineStage};
use promptloom_engine::recipe::RecipeMatches;
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;

/// The pipeline as it would run for `preset` and `model`, in the order it would run (RULES 5.1, 5.9).
#[tauri::command]
#[specta::specta]
pub async fn pipeline(
    app: AppHandle,
    preset: AgentPreset,
    model: String,
) -> Result<Vec<PipelineStage>, AppError> {
    blocking(app, move |s| {
        let profiles = s.store()?.model_profiles()?;
        Ok(Pipeline::builtin().stages(&preset, &model, &profiles))
    })
    .await
}

/// For each of `models`, the recipe of `preset` that would apply (RULES 3.1), and every pattern
/// of the preset's model filters that is not a valid model pattern. Async, so that it runs off the
/// main thread.
#[tauri::command]
#[specta::specta]
pub async fn recipe_matches(
    preset: AgentPreset,
    models: Vec<String>,
) -> Result<RecipeMatches, AppError> {
    Ok(promptloom_engine::recipe::recipe_matches(&preset, models))
}
