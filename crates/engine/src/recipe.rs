//! RULES 3.1: which recipe applies to a model.

use crate::model::{AgentPreset, ContextRecipe};
use crate::pattern::best_match;
use crate::EngineError;

/// The recipe for model `model`: a recipe whose filter has the id exactly wins; else the one
/// with the most specific matching wildcard pattern; else one with `*`; ties go to the earlier
/// recipe. No match is an error that names the model and lists the filters.
pub fn choose_recipe<'p>(
    preset: &'p AgentPreset,
    model: &str,
) -> Result<&'p ContextRecipe, EngineError> {
    let recipes = &preset.context_recipes;
    best_match(recipes.iter().map(|r| r.model_filter.as_slice()), model)
        .map(|i| &recipes[i])
        .ok_or_else(|| EngineError::NoRecipe {
            model: model.to_string(),
            filters: if recipes.is_empty() {
                "(the preset has no recipes)".into()
            } else {
                recipes
                    .iter()
                    .map(|r| format!("{} [{}]", r.id, r.model_filter.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ")
            },
        })
}
