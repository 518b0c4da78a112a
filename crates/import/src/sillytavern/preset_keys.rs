//! What a SillyTavern chat-completion preset sets besides its prompts and their order (RULES
//! 7.2): the settings this importer knows and does not map, the keys it does not know (each
//! named in the report, never dropped in silence), and the preset's `extensions`.

use promptloom_engine::model::RegexRule;
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, ReportItem};

/// The settings of a SillyTavern chat-completion preset that this importer knows and does not
/// map: request options of SillyTavern's API sources, samplers without a counterpart, the context
/// size, and texts for generations a build does not make (group chats).
/// docs/IMPORT.md ("Every SillyTavern field at a glance") says why for each. They are reported
/// on one line when set; a key neither mapped nor in this list (nor a connection's, see
/// [`is_connection_key`]) is reported on a line of its own as unknown, whatever its value.
const NOT_MAPPED_KEYS: &[&str] = &[
    // Samplers and request options without a counterpart here.
    "top_a",
    "min_p",
    "repetition_penalty",
    "n",
    "stream_openai",
    "bias_preset_selected",
    "reasoning_effort",
    "verbosity",
    "show_thoughts",
    "enable_web_search",
    "websearch_cohere",
    "request_images",
    "request_image_resolution",
    "request_image_aspect_ratio",
    "function_calling",
    "tool_call_recurse_limit",
    "tool_reasoning_mode",
    "image_inlining",
    "inline_image_quality",
    "media_inlining",
    "video_inlining",
    "audio_inlining",
    // The context size: the model profile's window is the budget.
    "openai_max_context",
    "max_context_unlocked",
    // Generations a build does not make.
    "new_group_chat_prompt",
    "group_nudge_prompt",
    "send_if_empty",
    // How SillyTavern shapes a request for one source.
    "wrap_in_quotes",
    "jailbreak_system",
    "jailbreak_prompt",
    "claude_use_sysprompt",
    "use_makersuite_sysprompt",
    "use_sysprompt",
    "human_sysprompt_message",
    "custom_prompt_post_processing",
    "names_in_completion",
    "exclude_assistant",
    "use_ai21_tokenizer",
    "use_google_tokenizer",
    // The connection.
    "chat_completion_source",
    "reverse_proxy",
    "proxy_password",
    "api_url_scale",
    "use_alt_scale",
    "show_external_models",
    "bypass_status_check",
];

/// A connection's setting (RULES 8.5): a source's model (`*_model`) or endpoint, and the
/// settings of OpenRouter, Vertex AI, Azure, Workers AI and the custom endpoint (its body and
/// headers). SillyTavern adds a model key for every source it gains, so these go by their form.
fn is_connection_key(key: &str) -> bool {
    key.ends_with("_model")
        || key.ends_with("_endpoint")
        || ["openrouter_", "vertexai_", "azure_", "workers_ai_"]
            .iter()
            .any(|prefix| key.starts_with(prefix))
        || (key.starts_with("custom_") && key != "custom_prompt_post_processing")
}

/// The keys of a prompt SillyTavern writes. `extension` marks a prompt an extension added; like
/// `name` it changes nothing that is sent.
pub(super) const PROMPT_KEYS: &[&str] = &[
    "identifier",
    "name",
    "role",
    "content",
    "enabled",
    "system_prompt",
    "marker",
    "injection_position",
    "injection_depth",
    "injection_order",
    "injection_trigger",
    "forbid_overrides",
    "extension",
];
/// The keys of an order list and of its entries.
pub(super) const ORDER_LIST_KEYS: &[&str] = &["character_id", "order"];
pub(super) const ORDER_ENTRY_KEYS: &[&str] = &["identifier", "enabled"];

/// Whether `key`, a top-level key of a preset, is one this importer knows and does not map.
pub(super) fn known_not_mapped(key: &str) -> bool {
    NOT_MAPPED_KEYS.contains(&key) || is_connection_key(key)
}

/// The keys of prompts and order lists this importer does not know, each with the items that
/// set it, reported one line per key (what a preset sets is never dropped in silence).
#[derive(Default)]
pub(super) struct UnknownKeys {
    /// (where, key) and the items that set it.
    keys: Vec<((&'static str, String), Vec<String>)>,
}

impl UnknownKeys {
    /// Notes the keys of `obj` (a prompt, an order list or entry, named `name`) outside `known`
    /// whose value is not `null`.
    pub(super) fn note(&mut self, place: &'static str, obj: &Object, known: &[&str], name: &str) {
        for (key, value) in obj {
            if known.contains(&key.as_str()) || value.is_null() {
                continue;
            }
            let at = (place, key.clone());
            match self.keys.iter_mut().find(|(k, _)| *k == at) {
                Some((_, names)) => names.push(name.to_owned()),
                None => self.keys.push((at, vec![name.to_owned()])),
            }
        }
    }

    pub(super) fn report(self, report: &mut ImportReport) {
        for ((place, key), names) in self.keys {
            report.push(
                format!("{place}.{key}"),
                texts::UNKNOWN_PROMPT_KEY
                    .with("count", names.len())
                    .with("ids", listed(&names)),
            );
        }
    }
}

/// The first five of `names`, then `…` when there are more.
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        text.push_str(", …");
    }
    text
}

/// A preset's `extensions`: its `regex_scripts` become the preset's regex rules (SillyTavern's
/// preset-bound scripts, read as a regex scripts file is, RULES 5.2), switched off: SillyTavern
/// runs them only once its user allows them (RULES 7.2), and the report names the ones the file
/// has on. Any other extension's data is named in `unknown`.
pub(super) fn extensions_from(
    root: &Object,
    unknown: &mut Vec<String>,
    report: &mut ImportReport,
) -> Option<Vec<RegexRule>> {
    let extensions = match root.get("extensions") {
        None | Some(Value::Null) => return None,
        Some(Value::Object(extensions)) => extensions,
        Some(_) => {
            unknown.push("extensions".into());
            return None;
        }
    };
    let mut rules = None;
    for (key, value) in extensions {
        if key != "regex_scripts" {
            if !value.is_null() {
                unknown.push(format!("extensions.{key}"));
            }
            continue;
        }
        let scripts = match value {
            Value::Array(scripts) if scripts.is_empty() => continue,
            Value::Null => continue,
            other => other,
        };
        match super::regex::rules_from_value(scripts) {
            Ok(imported) => {
                for item in imported.report.items {
                    report.items.push(ReportItem {
                        item: format!("extensions.regex_scripts {}", item.item),
                        ..item
                    });
                }
                if !imported.value.is_empty() {
                    let mut imported = imported.value;
                    let on: Vec<String> = imported
                        .iter()
                        .filter(|rule| rule.enabled)
                        .map(|rule| rule.name.clone().unwrap_or_else(|| rule.id.clone()))
                        .collect();
                    for rule in &mut imported {
                        rule.enabled = false;
                    }
                    report.push(
                        "extensions.regex_scripts",
                        texts::PRESET_REGEX_SCRIPTS
                            .with("count", imported.len())
                            .with(
                                "on",
                                if on.is_empty() {
                                    "-".into()
                                } else {
                                    listed(&on)
                                },
                            ),
                    );
                    rules = Some(imported);
                }
            }
            Err(_) => report.push(
                "extensions.regex_scripts",
                texts::NOT_A_LIST.part("kind", json::kind_text(scripts)),
            ),
        }
    }
    rules
}
