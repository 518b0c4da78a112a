//! A SillyTavern preset's settings beside its prompts (RULES 7.2): the prompt manager's formats
//! and openers, the continue settings, the request formatting (squash, names), `wi_format`, and
//! the samplers that become generation settings. `preset.rs` reads the prompts and the order.

use promptloom_engine::model::{GenerationSettings, MessageTemplate, ProcessorConfig};
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::ImportReport;

pub(crate) const FORMAT_KEYS: &[(&str, &str)] = &[
    ("personality_format", "personalityFormat"),
    ("scenario_format", "scenarioFormat"),
    ("new_chat_prompt", "newChatPrompt"),
    ("new_example_chat_prompt", "newExampleChatPrompt"),
    ("continue_nudge_prompt", "continueNudgePrompt"),
    ("impersonation_prompt", "impersonationPrompt"),
    ("assistant_prefill", "assistantPrefill"),
    ("assistant_impersonation", "assistantImpersonation"),
];
/// `continue_postfix`'s texts, each with the value of the assembler's `continuePostfix` setting
/// it becomes (RULES 5.14).
pub(crate) const CONTINUE_POSTFIXES: &[(&str, &str)] = &[
    ("", "none"),
    (" ", "space"),
    ("\n", "newline"),
    ("\n\n", "doubleNewline"),
];
/// The processor `names_behavior` goes to, and `squash_system_messages`'s.
pub(super) const SESSION_LOADER: &str = "session-loader";
pub(super) const SQUASH: &str = "squash-system-messages";
/// The preset keys that become generation settings: `temperature`, `top_p`, `top_k`,
/// `openai_max_tokens` (maxOutputTokens), `frequency_penalty`, `presence_penalty`, `seed`.
/// SillyTavern keeps stop strings in its user settings, not in a preset.
pub(crate) const SAMPLER_KEYS: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "openai_max_tokens",
    "frequency_penalty",
    "presence_penalty",
    "seed",
];

/// The prompt manager's formats and openers ([`FORMAT_KEYS`]) as the injection assembler's
/// settings (RULES 5.11.3), each as the file has it. An empty personality or scenario format
/// sends nothing in SillyTavern, so the matching template is left empty too. A value that is
/// not text is reported and left out.
pub(super) fn formats_from(
    root: &Object,
    templates: &mut [MessageTemplate],
    settings: &mut serde_json::Map<String, Value>,
    report: &mut ImportReport,
) {
    for (key, setting) in FORMAT_KEYS {
        match root.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                settings.insert((*setting).into(), Value::from(text.as_str()));
                let template = match *key {
                    "personality_format" => "charPersonality",
                    "scenario_format" => "scenario",
                    _ => continue,
                };
                if text.is_empty() {
                    if let Some(t) = templates.iter_mut().find(|t| t.id == template) {
                        t.content = Some(String::new());
                    }
                }
            }
            Some(other) => report.push(
                *key,
                texts::FORMAT_NOT_TEXT.part("kind", json::kind_text(other)),
            ),
        }
    }
}

/// The continuation's settings (RULES 5.14): `continue_prefill` and `continue_postfix` as the
/// assembler's `continuePrefill` and `continuePostfix`; and, as SillyTavern does, a preset with
/// an `assistant_prefill` and no `assistant_impersonation` prefills an impersonation with it too.
/// A value of another shape is reported and left out.
pub(super) fn continue_settings(
    root: &Object,
    settings: &mut serde_json::Map<String, Value>,
    report: &mut ImportReport,
) {
    match root.get("continue_prefill") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(on)) => {
            settings.insert("continuePrefill".into(), Value::Bool(*on));
        }
        Some(other) => report.push(
            "continue_prefill",
            texts::SETTING_NOT_BOOLEAN.part("kind", json::kind_text(other)),
        ),
    }
    match root.get("continue_postfix") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => match CONTINUE_POSTFIXES.iter().find(|(t, _)| t == text) {
            Some((_, name)) => {
                settings.insert("continuePostfix".into(), Value::from(*name));
            }
            None => report.push(
                "continue_postfix",
                texts::CONTINUE_POSTFIX_UNKNOWN.with("value", text.escape_debug()),
            ),
        },
        Some(other) => report.push(
            "continue_postfix",
            texts::FORMAT_NOT_TEXT.part("kind", json::kind_text(other)),
        ),
    }
    if !root.contains_key("assistant_impersonation") {
        if let Some(prefill) = settings.get("assistantPrefill").cloned() {
            settings.insert("assistantImpersonation".into(), prefill);
        }
    }
}

/// SillyTavern's request formatting that changes the messages: `squash_system_messages` switches
/// on the `squash-system-messages` processor; `names_behavior` 1 (completion) and 2 (content)
/// become the session loader's `names`. -1 (none) and 0 (default, which names only the members
/// of a group chat) are what SillyTavern compatibility starts from: no names.
pub(super) fn request_formatting(root: &Object, report: &mut ImportReport) -> Vec<ProcessorConfig> {
    let mut configs = Vec::new();
    if json::boolean(root, "squash_system_messages") == Some(true) {
        configs.push(ProcessorConfig {
            id: SQUASH.into(),
            enabled: Some(true),
            priority: None,
            settings: serde_json::Map::new(),
        });
    }
    let names = match json::int(root, "names_behavior") {
        None | Some(-1 | 0) => None,
        Some(1) => Some("completion"),
        Some(2) => Some("content"),
        Some(other) => {
            report.push("names_behavior", texts::NAMES_BEHAVIOR.with("value", other));
            None
        }
    };
    if let Some(names) = names {
        configs.push(ProcessorConfig {
            id: SESSION_LOADER.into(),
            enabled: None,
            priority: None,
            settings: [("names".to_string(), Value::from(names))]
                .into_iter()
                .collect(),
        });
    }
    configs
}

/// `wi_format` -> the `lorebook` processor's `wiFormat` setting (RULES 5.11.1), when it is not
/// SillyTavern's default `{0}` (which is the setting's default too).
pub(super) fn wi_format(root: &Object) -> Option<Vec<ProcessorConfig>> {
    let format = json::string(root, "wi_format").filter(|f| f != "{0}")?;
    Some(vec![ProcessorConfig {
        id: "lorebook".into(),
        enabled: None,
        priority: None,
        settings: [("wiFormat".to_string(), Value::from(format))]
            .into_iter()
            .collect(),
    }])
}

/// The samplers of [`SAMPLER_KEYS`] as generation settings; `None` when none is set. SillyTavern's
/// "off" values read as not set: `top_k` 0 and a negative `seed` (a random one). A value outside
/// what a preset may hold (RULES 2.3), or not a number, is reported and left out.
pub(super) fn generation_from(
    root: &Object,
    report: &mut ImportReport,
) -> Option<GenerationSettings> {
    let mut refused: Vec<(&str, &'static str)> = Vec::new();
    let mut float = |key: &'static str, range: &'static str, min: f64, max: f64| {
        let number = json::float(root, key).filter(|v| (min..=max).contains(v));
        if number.is_none() && root.get(key).is_some_and(|v| !v.is_null()) {
            refused.push((key, range));
        }
        number
    };
    let mut g = GenerationSettings {
        temperature: float("temperature", "0..2", 0.0, 2.0),
        top_p: float("top_p", "0..1", 0.0, 1.0),
        frequency_penalty: float("frequency_penalty", "-2..2", -2.0, 2.0),
        presence_penalty: float("presence_penalty", "-2..2", -2.0, 2.0),
        ..GenerationSettings::default()
    };
    let set = |key: &str| root.get(key).is_some_and(|v| !v.is_null());
    match json::int(root, "top_k").map(u32::try_from) {
        Some(Ok(0)) => {}
        Some(Ok(k)) => g.top_k = Some(k),
        _ if set("top_k") => refused.push(("top_k", "≥ 0")),
        _ => {}
    }
    match json::int(root, "openai_max_tokens").map(u32::try_from) {
        Some(Ok(n)) if n >= 1 => g.max_output_tokens = Some(n),
        _ if set("openai_max_tokens") => refused.push(("openai_max_tokens", "≥ 1")),
        _ => {}
    }
    match json::int(root, "seed") {
        Some(seed) if seed >= 0 => g.seed = Some(seed),
        Some(_) => {}
        None if set("seed") => refused.push(("seed", "≥ -1")),
        None => {}
    }
    for (key, range) in refused {
        report.push(
            key,
            texts::SAMPLER_NOT_MAPPED
                .with("value", &root[key])
                .with("range", range),
        );
    }
    (!g.is_empty()).then_some(g)
}
