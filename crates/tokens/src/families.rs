//! Which vocabulary counts for a model id (RULES 5.8), from the ids users type: a provider's
//! (`gpt-4o`, `claude-sonnet-4-5`), a router's (`meta-llama/llama-3.1-70b-instruct`,
//! `qwen/qwen3-235b-a22b`), a local server's (`llama3.1:8b`, `hf.co/.../Qwen2.5-7B-Instruct-GGUF`)
//! or a file's (`Mistral-Nemo-Instruct-2407-Q4_K_M.gguf`).

use super::{TokenizerChoice, TokenizerKind, Vocabulary};

/// The id's last path segment, lower-cased, with a `.gguf` ending and an `hf.co/` or router
/// prefix taken off; separators `_` and ` ` read as `-`.
fn normalise(model_id: &str) -> String {
    let id = model_id.trim().to_lowercase();
    let id = id.strip_suffix(".gguf").unwrap_or(&id);
    // `hf.co/owner/repo:quant` and `owner/model`: the model is the last segment.
    let last = id.rsplit('/').next().unwrap_or(id);
    last.replace(['_', ' '], "-")
}

/// Whether `id` has `word` starting at a word boundary (start, or after `-`, `.`, `:`).
fn has_word(id: &str, word: &str) -> bool {
    id.match_indices(word)
        .any(|(at, _)| at == 0 || id[..at].ends_with(['-', '.', ':']))
}

/// Whether `id` starts with `family` followed by the end or a separator: `o1` is not `o1x`.
fn is_family(id: &str, family: &str) -> bool {
    id.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':']))
}

/// Picks the tokenizer for a model id.
///
/// - OpenAI: gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o1, o3, o4, chatgpt-4o and gpt-oss count with
///   o200k_base; gpt-4, gpt-3.5 and the embeddings with cl100k_base. Exact.
/// - Llama 3.x (and Llama Guard 3, Hermes 3, the DeepSeek R1 distills of Llama): llama3, exact.
/// - Qwen 2, 2.5, 3, QwQ, Qwen's API models (and R1's Qwen distills): qwen, exact.
/// - Gemma 3: gemma3, exact.
/// - DeepSeek V3, V3.x, R1, deepseek-chat and deepseek-reasoner: deepseek_v3, exact.
/// - Mistral's Tekken models (Nemo, Ministral, Pixtral, Small 3 and later, Medium 3, Magistral,
///   Devstral): tekken, exact.
/// - Gemini: estimated with gemma3, which Google's report says is Gemini 2.0's vocabulary.
/// - Claude: estimated with cl100k_base times 1.11, the closest of the estimators measured
///   against Anthropic's counts (docs/PERFORMANCE.md).
/// - Other models of those families (Llama 2 and 4, Gemma 1 and 2, DeepSeek V2, Mistral's older
///   SentencePiece models) are estimated with the family's vocabulary; everything else with
///   o200k_base.
pub fn tokenizer_for_model(model_id: &str) -> TokenizerChoice {
    use TokenizerKind::*;
    let id = normalise(model_id);
    let id = id.as_str();
    let any = |families: &[&str]| families.iter().any(|f| is_family(id, f));
    let word = |words: &[&str]| words.iter().any(|w| has_word(id, w));
    if any(&[
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "chatgpt-4o",
        "o1",
        "o3",
        "o4",
        "gpt-oss",
    ]) {
        return TokenizerChoice::exact(O200kBase);
    }
    if any(&[
        "gpt-4",
        "gpt-3.5",
        "text-embedding-3",
        "text-embedding-ada-002",
    ]) {
        return TokenizerChoice::exact(Cl100kBase);
    }
    // The R1 distills keep their base model's vocabulary.
    if id.contains("distill") {
        if id.contains("llama") {
            return TokenizerChoice::exact(Llama3);
        }
        if id.contains("qwen") {
            return TokenizerChoice::exact(Qwen);
        }
    }
    if word(&[
        "llama-3",
        "llama3",
        "llama-guard-3",
        "hermes-3",
        "meta-llama-3",
    ]) {
        return TokenizerChoice::exact(Llama3);
    }
    if word(&["llama", "codellama"]) {
        return TokenizerChoice::estimate(Llama3);
    }
    if word(&["qwen", "qwq", "qvq"]) {
        return TokenizerChoice::exact(Qwen);
    }
    if word(&["gemma-3", "gemma3"]) {
        return TokenizerChoice::exact(Gemma3);
    }
    if word(&["gemini", "gemma"]) {
        return TokenizerChoice::estimate(Gemma3);
    }
    if word(&["deepseek"]) {
        let v3 = word(&[
            "deepseek-v3",
            "deepseek-chat",
            "deepseek-reasoner",
            "deepseek-r1",
        ]) || id.contains("deepseek-v3")
            || id.contains("deepseek-prover-v2");
        return if v3 {
            TokenizerChoice::exact(DeepseekV3)
        } else {
            TokenizerChoice::estimate(DeepseekV3)
        };
    }
    let tekken = word(&[
        "mistral-nemo",
        "open-mistral-nemo",
        "ministral",
        "pixtral",
        "magistral",
        "devstral",
        "voxtral",
        "mistral-small-3",
        "mistral-small3",
        "mistral-small-24b",
        "mistral-small-2501",
        "mistral-small-2503",
        "mistral-small-2506",
        "mistral-small-latest",
        "mistral-medium-3",
        "mistral-medium-2505",
        "mistral-medium-2508",
        "mistral-medium-latest",
        "codestral-2501",
        "codestral-25",
    ]);
    if tekken {
        return TokenizerChoice::exact(Tekken);
    }
    if word(&["mistral", "mixtral", "codestral"]) {
        return TokenizerChoice::estimate(Tekken);
    }
    if word(&["claude", "anthropic"]) || model_id.to_lowercase().starts_with("anthropic/") {
        return TokenizerChoice {
            vocabulary: Vocabulary::ClaudeEstimate,
            exact: false,
        };
    }
    TokenizerChoice::estimate(O200kBase)
}

/// The built-in instruct template (RULES 5.12) a chat server writes `model_id`'s messages in,
/// counted with `kind`, and whether it is that model's own, checked against the real server
/// (`checked`): else it is the family's nearest and the counts are estimates.
///
/// Checked: Llama 3 (`llama-3`); Llama 3.1, 3.2 and 3.3 (`llama-3.1`, which dates its system
/// turn); Qwen 2.5 (`qwen-2.5`, which writes a system turn of its own when there is none); Qwen 3
/// (`qwen`); Gemma 3 (`gemma`); DeepSeek V3 and `deepseek-chat` (`deepseek`); Mistral Nemo
/// (`mistral-tekken`). Models of those vocabularies with other templates (Hermes 3, Llama Guard,
/// the R1 models and distills, Qwen 2, QwQ, Mistral's later Tekken models) get the family's.
pub fn chat_template_for_model(model_id: &str, kind: TokenizerKind) -> Option<ChatTemplate> {
    // OpenAI's vocabularies: no template (and no reading of the id on every build).
    let family = kind.chat_template()?;
    let id = normalise(model_id);
    let word = |words: &[&str]| words.iter().any(|w| has_word(&id, w));
    let other = word(&[
        "distill",
        "hermes-3",
        "llama-guard-3",
        "r1",
        "reasoner",
        "qwq",
        "qvq",
    ]);
    let llama_31 = [
        "llama-3.1",
        "llama-3.2",
        "llama-3.3",
        "llama3.1",
        "llama3.2",
        "llama3.3",
    ];
    let (id, checked) = match kind {
        TokenizerKind::Llama3 if word(&llama_31) => ("llama-3.1", !other),
        TokenizerKind::Llama3 => (
            family,
            !other && word(&["llama-3", "llama3", "meta-llama-3"]),
        ),
        TokenizerKind::Qwen if word(&["qwen2.5", "qwen-2.5"]) => ("qwen-2.5", !other),
        TokenizerKind::Qwen => (family, !other && word(&["qwen3", "qwen-3"])),
        TokenizerKind::Gemma3 => (family, word(&["gemma-3", "gemma3"])),
        TokenizerKind::DeepseekV3 => (family, !other && word(&["deepseek-v3", "deepseek-chat"])),
        TokenizerKind::Tekken => (family, word(&["mistral-nemo", "open-mistral-nemo"])),
        // OpenAI's have no family template: returned above.
        TokenizerKind::O200kBase | TokenizerKind::Cl100kBase => (family, false),
    };
    Some(ChatTemplate { id, checked })
}

/// A chat template [`chat_template_for_model`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatTemplate {
    /// The built-in instruct template's id.
    pub id: &'static str,
    /// It is the model's own, checked against the real server.
    pub checked: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenizerKind::*;

    #[track_caller]
    fn check(id: &str, kind: TokenizerKind, exact: bool) {
        let choice = tokenizer_for_model(id);
        assert_eq!(
            (choice.vocabulary.kind(), choice.exact),
            (Some(kind), exact),
            "{id}"
        );
    }

    #[test]
    fn a_chat_template_is_checked_only_for_the_models_it_was_checked_against() {
        for (id, template, checked) in [
            ("llama-3-8b-instruct", "llama-3", true),
            ("meta-llama/Meta-Llama-3-70B-Instruct", "llama-3", true),
            ("llama-3.1-8b-instruct", "llama-3.1", true),
            ("llama3.3:70b", "llama-3.1", true),
            ("hermes-3-llama-3.1-8b", "llama-3.1", false),
            ("deepseek-r1-distill-llama-8b", "llama-3", false),
            ("qwen2.5-7b-instruct", "qwen-2.5", true),
            ("qwen/qwen3-235b-a22b", "qwen", true),
            ("qwen2-7b-instruct", "qwen", false),
            ("qwq-32b", "qwen", false),
            ("gemma-3-4b-it", "gemma", true),
            ("deepseek-v3", "deepseek", true),
            ("deepseek-chat", "deepseek", true),
            ("deepseek-r1", "deepseek", false),
            ("mistral-nemo-instruct-2407", "mistral-tekken", true),
            ("mistral-small-3.1-24b-instruct", "mistral-tekken", false),
        ] {
            let kind = tokenizer_for_model(id).vocabulary.kind().expect(id);
            assert_eq!(
                chat_template_for_model(id, kind),
                Some(ChatTemplate {
                    id: template,
                    checked
                }),
                "{id}"
            );
        }
        assert_eq!(chat_template_for_model("gpt-4o", O200kBase), None);
    }

    #[test]
    fn openai_ids_map_to_their_vocabularies() {
        check("gpt-4o", O200kBase, true);
        check("GPT-4o-mini", O200kBase, true);
        check("openai/gpt-4.1", O200kBase, true);
        check("o3-mini", O200kBase, true);
        check("gpt-oss:20b", O200kBase, true);
        check("gpt-4-turbo", Cl100kBase, true);
        check("gpt-3.5-turbo", Cl100kBase, true);
        // A prefix alone is no family: "o1x" is not o1.
        assert!(!tokenizer_for_model("o1x").exact);
    }

    #[test]
    fn provider_router_and_local_ids_find_their_family() {
        for id in [
            "llama-3.1-70b-instruct",
            "meta-llama/llama-3.1-70b-instruct",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "llama3.1:8b",
            "llama3.2",
            "llama-3.3-70b-versatile",
            "hf.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M",
            "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
            "nousresearch/hermes-3-llama-3.1-405b",
            "deepseek-r1-distill-llama-70b",
        ] {
            check(id, Llama3, true);
        }
        for id in [
            "qwen/qwen3-235b-a22b",
            "qwen3:30b",
            "qwen2.5:7b",
            "Qwen2.5-72B-Instruct",
            "qwq-32b",
            "qwen-max",
            "hf.co/Qwen/Qwen2.5-7B-Instruct-GGUF:Q5_K_M",
            "deepseek-r1-distill-qwen-32b",
        ] {
            check(id, Qwen, true);
        }
        for id in [
            "gemma3:27b",
            "google/gemma-3-27b-it",
            "gemma-3-4b-it-Q4_K_M.gguf",
        ] {
            check(id, Gemma3, true);
        }
        for id in [
            "deepseek-chat",
            "deepseek/deepseek-chat",
            "deepseek-reasoner",
            "deepseek/deepseek-r1",
            "deepseek-v3.1",
            "deepseek-ai/DeepSeek-V3-0324",
        ] {
            check(id, DeepseekV3, true);
        }
        for id in [
            "mistral-nemo",
            "open-mistral-nemo",
            "mistral-nemo:12b",
            "mistralai/mistral-nemo",
            "Mistral-Nemo-Instruct-2407-Q4_K_M.gguf",
            "ministral-8b-latest",
            "mistral-small-latest",
            "mistral-small3.1",
            "pixtral-12b",
            "magistral-medium-latest",
        ] {
            check(id, Tekken, true);
        }
    }

    #[test]
    fn relatives_without_a_shipped_vocabulary_are_estimated_with_the_closest() {
        check("llama-2-13b-chat", Llama3, false);
        check("llama-4-scout", Llama3, false);
        check("gemma2:9b", Gemma3, false);
        check("gemini-2.5-pro", Gemma3, false);
        check("google/gemini-2.0-flash", Gemma3, false);
        check("deepseek-coder-v2", DeepseekV3, false);
        check("mixtral-8x7b", Tekken, false);
        check("mistral-large-latest", Tekken, false);
        check("some-local-model", O200kBase, false);
        for id in [
            "claude-3-5-sonnet",
            "anthropic/claude-sonnet-4.5",
            "claude-opus-4-1",
        ] {
            let claude = tokenizer_for_model(id);
            assert_eq!(claude.vocabulary, Vocabulary::ClaudeEstimate, "{id}");
            assert_eq!(claude.label(), "estimate (cl100k_base × 1.11)");
        }
    }
}
