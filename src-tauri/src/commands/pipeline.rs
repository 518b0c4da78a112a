//! What runs for a model: the pipeline panel's processors, and which recipe each model gets.

use promptloom_engine::model::{AgentPreset, ProcessorConfig};
use promptloom_engine::pattern::{best_match, pattern_problem};
use promptloom_engine::pipeline::{Pipeline, ProcessorDescriptor, ResolvedConfig};
use promptloom_engine::profiles::profile_for_model;
use serde::Serialize;
use tauri::AppHandle;

use super::blocking;
use crate::error::AppError;

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

/// For each of `models`, the recipe of `preset` that would apply (RULES 3.1), and every pattern
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
