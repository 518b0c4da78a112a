//! SillyTavern system prompts (`sysprompt/*.json`: `name`, `content`, and in later versions
//! `post_history`) -> the text of a preset's system prompt: the variable `systemPrompt`, which
//! the story string of an imported context template reads (RULES 7.2).

use promptloom_engine::model::AgentPreset;
use serde::Serialize;
use serde_json::Value;

use super::context::SYSTEM_PROMPT_VARIABLE;
use super::instruct::Fields;
use crate::json::Object;
use crate::texts;
use crate::{ImportReport, Problem};

/// A system prompt: its name and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPrompt {
    pub name: String,
    pub content: String,
}

/// True when `root` is a system prompt and nothing else: a text `name` and `content`, and no key
/// but those and `post_history` (a native preset, a card or a chat message has more).
pub fn looks_like_sysprompt(root: &Object) -> bool {
    matches!(root.get("name"), Some(Value::String(_)))
        && matches!(root.get("content"), Some(Value::String(_)))
        && root
            .keys()
            .all(|k| matches!(k.as_str(), "name" | "content" | "post_history"))
}

/// Reads a system prompt; `at` prefixes its fields (`sysprompt.` in a master export).
pub(crate) fn sysprompt_from_value(
    stem: &str,
    root: &Object,
    at: &str,
    report: &mut ImportReport,
) -> Result<SystemPrompt, Problem> {
    let f = Fields { obj: root, at };
    let content = f.text_or_empty("content")?;
    if f.text("post_history")?
        .is_some_and(|p| !p.trim().is_empty())
    {
        report.push(f.item("post_history"), texts::POST_HISTORY);
    }
    Ok(SystemPrompt {
        name: f
            .text("name")?
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| stem.to_string()),
        content,
    })
}

impl SystemPrompt {
    /// Makes this the system prompt of `preset` (its variable `systemPrompt`). True when one of
    /// its templates reads that variable.
    pub fn apply_to(&self, preset: &mut AgentPreset) -> bool {
        preset
            .variables
            .get_or_insert_with(Default::default)
            .insert(SYSTEM_PROMPT_VARIABLE.to_string(), self.content.clone());
        reads_system_prompt(preset)
    }
}

/// True when a template or a step's override of `preset` reads the variable `systemPrompt`.
pub fn reads_system_prompt(preset: &AgentPreset) -> bool {
    let needle = format!("getvar::{}", SYSTEM_PROMPT_VARIABLE.to_ascii_lowercase());
    let reads = |text: &str| text.to_ascii_lowercase().contains(&needle);
    preset
        .message_templates
        .iter()
        .filter_map(|t| t.content.as_deref())
        .chain(
            preset
                .context_recipes
                .iter()
                .flat_map(|r| &r.steps)
                .filter_map(|s| s.overrides.as_ref()?.content.as_deref()),
        )
        .any(reads)
}
