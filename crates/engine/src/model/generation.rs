//! Generation settings (RULES 2, 5.10): the sampler and length settings a request carries next to
//! the messages. Every field is optional: absent means "not sent", and the provider's own default
//! applies. A model profile may carry them too; per field, the preset's value wins over the
//! profile's ([`crate::pipeline::ResolvedGeneration`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::EngineError;

/// The most stop sequences a preset or profile may hold.
pub const MAX_STOP_SEQUENCES: usize = 16;

/// Keys that `extra` may not set: each is part of the body the engine writes itself (the messages,
/// the model, the stream flag, Anthropic's system text, Gemini's contents, system instruction and
/// generation config), in one dialect or another.
pub const RESERVED_EXTRA_KEYS: &[&str] = &[
    "messages",
    "model",
    "stream",
    "stream_options",
    "system",
    "contents",
    "systemInstruction",
    "system_instruction",
    "generationConfig",
    "generation_config",
    "prompt",
];

/// Sampler and length settings. Absent fields are not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct GenerationSettings {
    /// 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// At least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// The reply limit; absent, the body carries the model profile's reply reserve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Stop sequences, at most 16, none empty. An empty list is the same as none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// -2 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// -2 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Where an Anthropic Messages body marks `cache_control` breakpoints (RULES 5.13); other
    /// formats have no such marks and leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_breakpoints: Option<CacheBreakpoints>,
    /// Further top-level body fields, written as they are after everything else (so they win over
    /// a typed setting of the same name); none of [`RESERVED_EXTRA_KEYS`].
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// The most `cache_control` breakpoints one Anthropic request may carry.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// Prompt-cache breakpoints (RULES 5.13): after the system part, and after the message at each
/// depth (0 is the newest message of the request), at most [`MAX_CACHE_BREAKPOINTS`] in all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct CacheBreakpoints {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub system: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depths: Vec<u32>,
}

impl CacheBreakpoints {
    /// How many breakpoints these settings ask for.
    pub fn count(&self) -> usize {
        usize::from(self.system) + self.depths.len()
    }
}

/// One typed generation setting, named as in the documents (camelCase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GenerationField {
    Temperature,
    TopP,
    TopK,
    MaxOutputTokens,
    Stop,
    FrequencyPenalty,
    PresencePenalty,
    Seed,
    CacheBreakpoints,
}

impl GenerationField {
    pub const ALL: [GenerationField; 9] = [
        GenerationField::Temperature,
        GenerationField::TopP,
        GenerationField::TopK,
        GenerationField::MaxOutputTokens,
        GenerationField::Stop,
        GenerationField::FrequencyPenalty,
        GenerationField::PresencePenalty,
        GenerationField::Seed,
        GenerationField::CacheBreakpoints,
    ];

    /// The field's name in a document.
    pub fn as_str(self) -> &'static str {
        match self {
            GenerationField::Temperature => "temperature",
            GenerationField::TopP => "topP",
            GenerationField::TopK => "topK",
            GenerationField::MaxOutputTokens => "maxOutputTokens",
            GenerationField::Stop => "stop",
            GenerationField::FrequencyPenalty => "frequencyPenalty",
            GenerationField::PresencePenalty => "presencePenalty",
            GenerationField::Seed => "seed",
            GenerationField::CacheBreakpoints => "cacheBreakpoints",
        }
    }
}

impl GenerationSettings {
    /// True when nothing is set: such settings send nothing and serialize to `{}`.
    pub fn is_empty(&self) -> bool {
        GenerationField::ALL.iter().all(|&f| !self.is_set(f)) && self.extra.is_empty()
    }

    /// Whether `field` has a value (a stop list counts when it is not empty).
    pub fn is_set(&self, field: GenerationField) -> bool {
        match field {
            GenerationField::Temperature => self.temperature.is_some(),
            GenerationField::TopP => self.top_p.is_some(),
            GenerationField::TopK => self.top_k.is_some(),
            GenerationField::MaxOutputTokens => self.max_output_tokens.is_some(),
            GenerationField::Stop => !self.stop.is_empty(),
            GenerationField::FrequencyPenalty => self.frequency_penalty.is_some(),
            GenerationField::PresencePenalty => self.presence_penalty.is_some(),
            GenerationField::Seed => self.seed.is_some(),
            GenerationField::CacheBreakpoints => self
                .cache_breakpoints
                .as_ref()
                .is_some_and(|c| c.count() > 0),
        }
    }

    /// Sets `field` to `from`'s value of it.
    pub fn take_field(&mut self, from: &GenerationSettings, field: GenerationField) {
        match field {
            GenerationField::Temperature => self.temperature = from.temperature,
            GenerationField::TopP => self.top_p = from.top_p,
            GenerationField::TopK => self.top_k = from.top_k,
            GenerationField::MaxOutputTokens => self.max_output_tokens = from.max_output_tokens,
            GenerationField::Stop => self.stop.clone_from(&from.stop),
            GenerationField::FrequencyPenalty => self.frequency_penalty = from.frequency_penalty,
            GenerationField::PresencePenalty => self.presence_penalty = from.presence_penalty,
            GenerationField::Seed => self.seed = from.seed,
            GenerationField::CacheBreakpoints => {
                self.cache_breakpoints.clone_from(&from.cache_breakpoints)
            }
        }
    }
}

/// Checks generation settings; `path` is where they sit in their document (`generation`), and
/// an error names the field under it (`generation.topP`).
pub fn validate_generation(path: &str, g: &GenerationSettings) -> Result<(), EngineError> {
    let field = |name: &str| format!("{path}.{name}");
    let range = |name: &str, value: Option<f64>, min: f64, max: f64| match value {
        // `contains` is false for NaN too.
        Some(v) if !(min..=max).contains(&v) => Err(EngineError::invalid(
            field(name),
            format!("{name} is {v}; it must be between {min} and {max}"),
        )),
        _ => Ok(()),
    };
    range("temperature", g.temperature, 0.0, 2.0)?;
    range("topP", g.top_p, 0.0, 1.0)?;
    range("frequencyPenalty", g.frequency_penalty, -2.0, 2.0)?;
    range("presencePenalty", g.presence_penalty, -2.0, 2.0)?;
    if g.top_k == Some(0) {
        return Err(EngineError::invalid(
            field("topK"),
            "topK is 0; it must be at least 1 (leave it out to send none)",
        ));
    }
    if g.max_output_tokens == Some(0) {
        return Err(EngineError::invalid(
            field("maxOutputTokens"),
            "maxOutputTokens is 0; it must be at least 1 (leave it out to send the reply reserve)",
        ));
    }
    if g.stop.len() > MAX_STOP_SEQUENCES {
        return Err(EngineError::invalid(
            field("stop"),
            format!(
                "{} stop sequences; at most {MAX_STOP_SEQUENCES} are taken",
                g.stop.len()
            ),
        ));
    }
    if let Some(i) = g.stop.iter().position(String::is_empty) {
        return Err(EngineError::invalid(
            format!("{path}.stop[{i}]"),
            "a stop sequence is empty",
        ));
    }
    if let Some(c) = &g.cache_breakpoints {
        if c.count() > MAX_CACHE_BREAKPOINTS {
            return Err(EngineError::invalid(
                field("cacheBreakpoints"),
                format!(
                    "{} cache breakpoints; a request takes at most {MAX_CACHE_BREAKPOINTS}",
                    c.count()
                ),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(d) = c.depths.iter().find(|d| !seen.insert(**d)) {
            return Err(EngineError::invalid(
                field("cacheBreakpoints.depths"),
                format!("depth {d} is named twice"),
            ));
        }
    }
    for key in g.extra.keys() {
        if key.is_empty() {
            return Err(EngineError::invalid(
                field("extra"),
                "a key of extra is empty",
            ));
        }
        if RESERVED_EXTRA_KEYS.contains(&key.as_str()) {
            return Err(EngineError::invalid(
                format!("{path}.extra.{key}"),
                format!("\"{key}\" is written by the engine itself and cannot be set in extra"),
            ));
        }
    }
    Ok(())
}
