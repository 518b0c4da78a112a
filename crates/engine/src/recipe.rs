//! RULES 3.1: which recipe applies to a model, and, for the model filter editor, which recipe
//! each of several models gets and which filter patterns cannot be used.

use serde::Serialize;

use crate::model::{AgentPreset, ContextRecipe};
use crate::pattern::{best_match, pattern_problem};
use crate::said::Said;
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

/// Which recipe a model gets, for the model filter editor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelMatch {
    pub model: String,
    /// The winning recipe's id; none when no filter matches.
    pub recipe: Option<String>,
}

/// A model filter pattern that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PatternProblem {
    pub recipe: String,
    pub pattern: String,
    /// In English.
    pub message: String,
    /// The same as a code with parameters, for the app to say in its language.
    pub said: Said,
}

/// What the model filter editor shows: the recipe each model gets, and the unusable patterns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecipeMatches {
    pub models: Vec<ModelMatch>,
    pub problems: Vec<PatternProblem>,
}

/// For each of `models`, in order, the recipe of `preset` that would apply (RULES 3.1; none
/// where no filter matches), and every pattern of the preset's model filters that is not a valid
/// model pattern (RULES 3.1, last paragraph), recipe by recipe in filter order.
pub fn recipe_matches(
    preset: &AgentPreset,
    models: impl IntoIterator<Item = String>,
) -> RecipeMatches {
    let recipes = &preset.context_recipes;
    RecipeMatches {
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
                    pattern_problem(p).map(|said| PatternProblem {
                        recipe: r.id.clone(),
                        pattern: p.clone(),
                        message: said.to_string(),
                        said,
                    })
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_preset;

    fn preset(recipes: &str) -> AgentPreset {
        parse_preset(&format!(
            r#"{{"formatVersion": 1, "id": "p", "name": "P",
                "messageTemplates": [{{"id": "sys", "role": "system", "content": "Hi."}}],
                "contextRecipes": {recipes}}}"#
        ))
        .expect("preset")
    }

    fn matched(m: &RecipeMatches) -> Vec<(&str, Option<&str>)> {
        m.models
            .iter()
            .map(|m| (m.model.as_str(), m.recipe.as_deref()))
            .collect()
    }

    #[test]
    fn each_model_gets_the_recipe_a_build_would_choose() {
        let p = preset(
            r#"[
            {"id": "any", "modelFilter": ["*"], "steps": []},
            {"id": "claude", "modelFilter": ["claude-*"], "steps": []},
            {"id": "sonnet", "modelFilter": ["claude-3-5-sonnet", "gpt-4?"], "steps": []}]"#,
        );
        let models = ["claude-3-opus", "CLAUDE-3-5-SONNET ", "gpt-4o", "llama-3"];
        let m = recipe_matches(&p, models.iter().map(|m| m.to_string()));
        assert_eq!(
            matched(&m),
            [
                ("claude-3-opus", Some("claude")),
                ("CLAUDE-3-5-SONNET ", Some("sonnet")),
                ("gpt-4o", Some("sonnet")),
                ("llama-3", Some("any")),
            ]
        );
        for model in models {
            assert_eq!(
                choose_recipe(&p, model).ok().map(|r| r.id.as_str()),
                m.models
                    .iter()
                    .find(|x| x.model == model)
                    .unwrap()
                    .recipe
                    .as_deref(),
                "{model}: the editor and a build agree"
            );
        }
        assert!(m.problems.is_empty());
    }

    #[test]
    fn a_model_no_filter_matches_gets_none_and_bad_patterns_are_listed_in_order() {
        let p = preset(
            r#"[
            {"id": "a", "modelFilter": ["gpt 4", "gpt-4o"], "steps": []},
            {"id": "b", "modelFilter": ["", "claude-*", "x#y"], "steps": []}]"#,
        );
        let m = recipe_matches(&p, ["mistral-large".to_string(), "gpt-4o".to_string()]);
        assert_eq!(
            matched(&m),
            [("mistral-large", None), ("gpt-4o", Some("a"))]
        );
        let problems: Vec<(&str, &str)> = m
            .problems
            .iter()
            .map(|p| (p.recipe.as_str(), p.pattern.as_str()))
            .collect();
        assert_eq!(problems, [("a", "gpt 4"), ("b", ""), ("b", "x#y")]);
        for problem in &m.problems {
            assert_eq!(
                Some(&problem.said),
                pattern_problem(&problem.pattern).as_ref()
            );
            assert_eq!(problem.message, problem.said.to_string());
        }
    }

    #[test]
    fn the_wire_shape_is_the_bindings_one() {
        let p = preset(r#"[{"id": "r", "modelFilter": ["gpt-*", "a b"], "steps": []}]"#);
        let m = recipe_matches(&p, ["gpt-4o".to_string()]);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::json!({
                "models": [{"model": "gpt-4o", "recipe": "r"}],
                "problems": [{"recipe": "r", "pattern": "a b",
                    "message": "\"a b\" contains a space (' '); model ids have none",
                    "said": {"code": "pattern.space",
                        "params": {"pattern": "a b", "char": "' '"}, "parts": {}}}]
            })
        );
    }
}
