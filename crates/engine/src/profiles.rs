//! Model profiles (RULES 5.9): what a build needs to know about a model: its provider format,
//! context window, reserved reply tokens, tokenizer, capabilities and default processor configs.

use serde::{Deserialize, Serialize};

use crate::model::{GenerationField, GenerationSettings, ProcessorConfig};
use crate::pattern::best_match;
use crate::tokens::{
    own_tokenizer, tokenizer_for_model, MessageOverhead, TokenizerChoice, TokenizerError,
    TokenizerKind,
};

/// The request format of a provider (RULES 5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum ProviderFormat {
    OpenaiChat,
    AnthropicMessages,
    Gemini,
}

impl ProviderFormat {
    /// The format's name, as in documents and profiles (`openai-chat`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderFormat::OpenaiChat => "openai-chat",
            ProviderFormat::AnthropicMessages => "anthropic-messages",
            ProviderFormat::Gemini => "gemini",
        }
    }

    /// Whether the format's request body has a place for generation setting `field`
    /// (RULES 5.7). Chat Completions has no top-k; Anthropic Messages has no penalties and no
    /// seed; Gemini takes every one. A build warns about a set field its format does not take,
    /// and the body leaves it out.
    pub fn takes(self, field: GenerationField) -> bool {
        use GenerationField::*;
        match self {
            ProviderFormat::OpenaiChat => !matches!(field, TopK | CacheBreakpoints),
            ProviderFormat::AnthropicMessages => {
                !matches!(field, FrequencyPenalty | PresencePenalty | Seed)
            }
            ProviderFormat::Gemini => field != CacheBreakpoints,
        }
    }

    /// The highest temperature the format takes, where it is lower than the 2 a preset may
    /// hold: Anthropic's is 1.
    pub fn max_temperature(self) -> Option<f64> {
        (self == ProviderFormat::AnthropicMessages).then_some(1.0)
    }
}

/// The request format of a text-completion server (RULES 5.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum CompletionFormat {
    OpenaiCompletions,
    Llamacpp,
    Koboldcpp,
}

impl CompletionFormat {
    pub const ALL: [CompletionFormat; 3] = [
        CompletionFormat::OpenaiCompletions,
        CompletionFormat::Llamacpp,
        CompletionFormat::Koboldcpp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CompletionFormat::OpenaiCompletions => "openai-completions",
            CompletionFormat::Llamacpp => "llamacpp",
            CompletionFormat::Koboldcpp => "koboldcpp",
        }
    }

    /// Whether the format's body has a place for generation setting `field`.
    pub fn takes(self, field: GenerationField) -> bool {
        use GenerationField::*;
        match self {
            CompletionFormat::OpenaiCompletions => !matches!(field, TopK | CacheBreakpoints),
            CompletionFormat::Llamacpp => field != CacheBreakpoints,
            CompletionFormat::Koboldcpp => {
                !matches!(field, FrequencyPenalty | PresencePenalty | CacheBreakpoints)
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    pub vision: bool,
    pub audio: bool,
    pub documents: bool,
    /// Whether the API takes system messages in the message list.
    pub system_role: bool,
    #[serde(default)]
    pub video: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct ModelProfile {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Model ids this profile covers (`claude-*`).
    pub patterns: Vec<String>,
    pub provider_format: ProviderFormat,
    pub context_window: u32,
    pub reserved_reply: u32,
    /// The tokenizer that counts; `None` picks one from the model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<TokenizerKind>,
    /// Whether `tokenizer` is the model's own (exact) or an estimate.
    #[serde(default)]
    pub tokenizer_exact: bool,
    /// A tokenizer.json of the user's (a path) that counts exactly for this profile's models,
    /// before `tokenizer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_file: Option<String>,
    pub capabilities: Capabilities,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<ProcessorConfig>,
    /// Generation settings for this model; per field, a preset's win over these (RULES 5.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationSettings>,
    /// Text completion (RULES 5.12): the id of the built-in instruct template the model's
    /// prompt string is written in; none for a chat model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruct: Option<String>,
    #[serde(default)]
    pub builtin: bool,
}

impl ModelProfile {
    /// The tokenizer that counts for `model_id` under this profile (RULES 5.8): the profile's
    /// own tokenizer file, else the vocabulary it names, else the one the id picks. When the
    /// chosen vocabulary cannot be read, the id's estimate counts instead, and the error says
    /// why.
    pub fn resolve_tokenizer(&self, model_id: &str) -> (TokenizerChoice, Option<TokenizerError>) {
        let by_id = || TokenizerChoice {
            exact: false,
            ..tokenizer_for_model(model_id)
        };
        let chosen = match (&self.tokenizer_file, self.tokenizer) {
            (Some(file), _) => match own_tokenizer(std::path::Path::new(file)) {
                Ok(choice) => choice,
                Err(e) => {
                    let (estimate, _) = by_id().or_estimate();
                    return (estimate, Some(e));
                }
            },
            (None, Some(kind)) => TokenizerChoice {
                vocabulary: kind.into(),
                exact: self.tokenizer_exact,
            },
            (None, None) => tokenizer_for_model(model_id),
        };
        chosen.or_estimate()
    }

    /// [`Self::resolve_tokenizer`] without the reason for a fallback.
    pub fn tokenizer_choice(&self, model_id: &str) -> TokenizerChoice {
        self.resolve_tokenizer(model_id).0
    }

    /// Per-message overhead of the profile's format. OpenAI documents its own; for the others,
    /// whose wrappers are not published, the same figures serve as the estimate.
    pub fn overhead(&self) -> MessageOverhead {
        MessageOverhead::OPENAI_CHAT
    }
}

fn enable(ids: &[&str]) -> Vec<ProcessorConfig> {
    ids.iter()
        .map(|id| ProcessorConfig {
            id: (*id).to_string(),
            enabled: Some(true),
            priority: None,
            settings: Default::default(),
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn profile(
    id: &str,
    name: &str,
    patterns: &[&str],
    format: ProviderFormat,
    window: u32,
    reserve: u32,
    tokenizer: Option<TokenizerChoice>,
    capabilities: Capabilities,
) -> ModelProfile {
    ModelProfile {
        id: id.into(),
        name: Some(name.into()),
        patterns: patterns.iter().map(|p| p.to_string()).collect(),
        provider_format: format,
        context_window: window,
        reserved_reply: reserve,
        tokenizer: tokenizer.and_then(|t| t.vocabulary.kind()),
        tokenizer_exact: tokenizer.is_some_and(|t| t.exact),
        tokenizer_file: None,
        capabilities,
        processors: Vec::new(),
        generation: None,
        instruct: None,
        builtin: true,
    }
}

/// The built-in profiles. Windows are the providers' published context lengths; the reserve is
/// a default reply allowance, overridable per build.
pub fn builtin_profiles() -> Vec<ModelProfile> {
    use ProviderFormat::*;
    let o200k = Some(TokenizerChoice::exact(TokenizerKind::O200kBase));
    let cl100k = Some(TokenizerChoice::exact(TokenizerKind::Cl100kBase));
    // The other families' vocabularies are picked by the model id (`tokenizer_for_model`).
    let by_id = None;
    let caps = |vision, audio, documents, system_role| Capabilities {
        vision,
        audio,
        documents,
        system_role,
        video: false,
    };
    let mut anthropic = profile(
        "anthropic-claude",
        "Anthropic Claude",
        &["claude-*", "anthropic/*"],
        AnthropicMessages,
        200_000,
        8_192,
        by_id,
        caps(true, false, true, false),
    );
    // One top-level system text and alternating user/assistant turns (RULES 5.9).
    anthropic.processors = enable(&[
        "convert-system-to-user",
        "merge-consecutive-roles",
        "ensure-alternation",
    ]);
    let mut gemini = profile(
        "google-gemini",
        "Google Gemini",
        &["gemini-*", "google/*"],
        Gemini,
        1_048_576,
        8_192,
        by_id,
        caps(true, true, true, false),
    );
    gemini.capabilities.video = true;
    // One `systemInstruction` and user/model turns.
    gemini.processors = enable(&["convert-system-to-user", "merge-consecutive-roles"]);
    vec![
        profile(
            "openai-gpt-4o",
            "OpenAI GPT-4o",
            &["gpt-4o*", "chatgpt-4o*"],
            OpenaiChat,
            128_000,
            4_096,
            o200k,
            caps(true, true, true, true),
        ),
        profile(
            "openai-gpt-4.1",
            "OpenAI GPT-4.1",
            &["gpt-4.1*"],
            OpenaiChat,
            1_047_576,
            8_192,
            o200k,
            caps(true, false, true, true),
        ),
        profile(
            "openai-gpt-5",
            "OpenAI GPT-5",
            &["gpt-5*"],
            OpenaiChat,
            400_000,
            16_384,
            o200k,
            caps(true, false, true, true),
        ),
        profile(
            "openai-reasoning",
            "OpenAI o-series",
            &["o1*", "o3*", "o4*"],
            OpenaiChat,
            200_000,
            16_384,
            o200k,
            caps(true, false, true, true),
        ),
        profile(
            "openai-gpt-4",
            "OpenAI GPT-4 and GPT-4 Turbo",
            &["gpt-4-turbo*", "gpt-4-1106*", "gpt-4-0125*"],
            OpenaiChat,
            128_000,
            4_096,
            cl100k,
            caps(true, false, false, true),
        ),
        profile(
            "openai-gpt-4-8k",
            "OpenAI GPT-4 (8k)",
            &["gpt-4", "gpt-4-0613", "gpt-4-0314"],
            OpenaiChat,
            8_192,
            1_024,
            cl100k,
            caps(false, false, false, true),
        ),
        profile(
            "openai-gpt-3.5",
            "OpenAI GPT-3.5 Turbo",
            &["gpt-3.5*"],
            OpenaiChat,
            16_385,
            1_024,
            cl100k,
            caps(false, false, false, true),
        ),
        anthropic,
        gemini,
        profile(
            "deepseek",
            "DeepSeek",
            &["deepseek-*", "deepseek/*"],
            OpenaiChat,
            128_000,
            8_192,
            by_id,
            caps(false, false, false, true),
        ),
        profile(
            "qwen",
            "Qwen",
            &["qwen*", "qwq*", "qwen/*"],
            OpenaiChat,
            131_072,
            8_192,
            by_id,
            caps(true, false, false, true),
        ),
        profile(
            "meta-llama",
            "Meta Llama",
            &["llama*", "meta-llama/*", "*llama-3*", "*llama-4*"],
            OpenaiChat,
            131_072,
            4_096,
            by_id,
            caps(false, false, false, true),
        ),
        profile(
            "mistral",
            "Mistral",
            &[
                "mistral-*",
                "ministral-*",
                "codestral-*",
                "magistral-*",
                "mistralai/*",
            ],
            OpenaiChat,
            131_072,
            4_096,
            by_id,
            caps(false, false, false, true),
        ),
        profile(
            "google-gemma",
            "Google Gemma (open weights)",
            &["gemma*", "google/gemma*"],
            OpenaiChat,
            131_072,
            4_096,
            by_id,
            caps(true, false, false, true),
        ),
        profile(
            "generic",
            "Any other model",
            &["*"],
            OpenaiChat,
            32_768,
            4_096,
            by_id,
            caps(false, false, false, true),
        ),
    ]
}

/// Model ids the app offers in its pickers, one or more per built-in family. Any other id can
/// still be typed; it finds its profile by pattern.
pub const KNOWN_MODELS: &[&str] = &[
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-5",
    "o3",
    "gpt-3.5-turbo",
    "claude-3-5-sonnet",
    "claude-sonnet-4-5",
    "claude-opus-4-1",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "deepseek-chat",
    "qwen3-235b-a22b",
    "llama-3.1-70b-instruct",
    "mistral-large",
];

/// The profile for a model id: the best-matching user profile, else the best-matching built-in
/// one (`generic` matches everything). An exact match beats a wildcard, a more specific wildcard
/// beats a less specific one.
pub fn profile_for_model(model_id: &str, user_profiles: &[ModelProfile]) -> ModelProfile {
    if let Some(i) = best_match(
        user_profiles.iter().map(|p| p.patterns.as_slice()),
        model_id,
    ) {
        return user_profiles[i].clone();
    }
    // Every build asks, mostly for the model it asked for last: that one is kept.
    static LAST: std::sync::Mutex<Option<(String, ModelProfile)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((id, profile)) = &*last {
        if id == model_id {
            return profile.clone();
        }
    }
    static BUILTIN: std::sync::OnceLock<Vec<ModelProfile>> = std::sync::OnceLock::new();
    let builtin = BUILTIN.get_or_init(builtin_profiles);
    let i = best_match(builtin.iter().map(|p| p.patterns.as_slice()), model_id)
        .unwrap_or(builtin.len() - 1);
    let mut profile = builtin[i].clone();
    // The family profile's tokenizer is right for the family; refine exactness per id.
    let by_id = tokenizer_for_model(model_id);
    if let (true, Some(kind)) = (by_id.exact, by_id.vocabulary.kind()) {
        profile.tokenizer = Some(kind);
        profile.tokenizer_exact = true;
    }
    *last = Some((model_id.to_string(), profile.clone()));
    profile
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_model_has_a_family_profile() {
        for model in KNOWN_MODELS {
            assert_ne!(profile_for_model(model, &[]).id, "generic", "{model}");
        }
    }

    #[test]
    fn families_find_their_profiles() {
        let id = |m: &str| profile_for_model(m, &[]).id;
        assert_eq!(id("gpt-4o"), "openai-gpt-4o");
        assert_eq!(id("gpt-4o-mini"), "openai-gpt-4o");
        assert_eq!(id("claude-3-5-sonnet"), "anthropic-claude");
        assert_eq!(id("gemini-2.5-pro"), "google-gemini");
        assert_eq!(id("deepseek-chat"), "deepseek");
        assert_eq!(id("qwen2.5-72b-instruct"), "qwen");
        assert_eq!(id("llama-3.3-70b"), "meta-llama");
        assert_eq!(id("mistral-large-latest"), "mistral");
        assert_eq!(id("gpt-4"), "openai-gpt-4-8k");
        assert_eq!(id("some-local-model"), "generic");
    }

    #[test]
    fn user_profiles_come_first() {
        let mut mine = profile_for_model("gpt-4o", &[]);
        mine.id = "my-gpt".into();
        mine.context_window = 1000;
        assert_eq!(profile_for_model("gpt-4o", &[mine.clone()]).id, "my-gpt");
        assert_eq!(
            profile_for_model("claude-x", &[mine]).id,
            "anthropic-claude"
        );
    }
}
