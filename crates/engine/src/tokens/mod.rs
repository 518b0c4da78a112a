//! RULES 5.8: token counting. OpenAI families are counted exactly with their real vocabularies
//! (bpe-openai, initialised once); every other model gets a labelled estimate. The counts a build
//! makes are kept in the [`crate::cache::BuildCache`], so a live preview recounts only what changed.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// A vocabulary this build embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    O200kBase,
    Cl100kBase,
}

impl TokenizerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenizerKind::O200kBase => "o200k_base",
            TokenizerKind::Cl100kBase => "cl100k_base",
        }
    }

    /// The counter for this vocabulary, built on first use and shared for the life of the
    /// process.
    pub fn counter(self) -> &'static dyn TokenCounter {
        static O200K: OnceLock<BpeOpenAi> = OnceLock::new();
        static CL100K: OnceLock<BpeOpenAi> = OnceLock::new();
        match self {
            TokenizerKind::O200kBase => {
                O200K.get_or_init(|| BpeOpenAi::new("o200k_base", bpe_openai::o200k_base()))
            }
            TokenizerKind::Cl100kBase => {
                CL100K.get_or_init(|| BpeOpenAi::new("cl100k_base", bpe_openai::cl100k_base()))
            }
        }
    }

    /// Number of tokens in `text`.
    pub fn count(self, text: &str) -> usize {
        self.counter().count(text)
    }

    /// See [`TokenCounter::keep_first_tokens`].
    pub fn keep_first_tokens(self, text: &str, max_tokens: usize) -> String {
        self.counter().keep_first_tokens(text, max_tokens)
    }

    /// See [`TokenCounter::keep_last_tokens`].
    pub fn keep_last_tokens(self, text: &str, max_tokens: usize) -> String {
        self.counter().keep_last_tokens(text, max_tokens)
    }
}

/// Something that counts tokens for one vocabulary. The engine counts through this trait so a
/// further tokenizer (a local model's, say) can be added without touching the processors.
pub trait TokenCounter: Send + Sync {
    /// The vocabulary's name, as shown in the preview (`o200k_base`).
    fn name(&self) -> &'static str;
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
    /// The longest tail of `text` that is at most `max_tokens` tokens, cut at a token boundary
    /// that is also a character boundary (used by `truncateOverflowing`).
    fn keep_last_tokens(&self, text: &str, max_tokens: usize) -> String;
    /// The longest head of `text` that is at most `max_tokens` tokens, cut at a token boundary
    /// that is also a character boundary (used by the `proportional` budget).
    fn keep_first_tokens(&self, text: &str, max_tokens: usize) -> String;
}

/// OpenAI's byte-pair vocabularies through the `bpe-openai` crate.
struct BpeOpenAi {
    name: &'static str,
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Every token of the vocabulary, by its bytes.
    whole: WholeTokens,
}

impl BpeOpenAi {
    fn new(name: &'static str, tokenizer: &'static bpe_openai::Tokenizer) -> Self {
        let bpe = &tokenizer.bpe;
        let whole = (0..bpe.num_tokens() as u32)
            .map(|id| bpe.token_bytes(id))
            .collect();
        BpeOpenAi {
            name,
            tokenizer,
            whole,
        }
    }
}

impl TokenCounter for BpeOpenAi {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Same result as bpe-openai's own `count`, faster on prose: a pre-tokenized piece that is
    /// one whole token of the vocabulary (most words of English) counts 1 without running the
    /// encoder, which allocates for every piece. tiktoken takes the same shortcut, so the
    /// counts it is checked against stay the reference.
    fn count(&self, text: &str) -> usize {
        let text = self.tokenizer.normalize(text);
        self.tokenizer
            .split(text.as_str())
            .map(|piece| {
                if self.whole.contains(piece.as_bytes()) {
                    1
                } else {
                    self.tokenizer.bpe.count(piece.as_bytes())
                }
            })
            .sum()
    }

    fn keep_last_tokens(&self, text: &str, max_tokens: usize) -> String {
        if max_tokens == 0 {
            return String::new();
        }
        let tokens = self.tokenizer.encode(text);
        if tokens.len() <= max_tokens {
            return text.to_string();
        }
        // A token may end inside a multi-byte character; step forward until the tail decodes.
        let mut start = tokens.len() - max_tokens;
        while start < tokens.len() {
            if let Some(tail) = self.tokenizer.decode(&tokens[start..]) {
                return tail;
            }
            start += 1;
        }
        String::new()
    }

    fn keep_first_tokens(&self, text: &str, max_tokens: usize) -> String {
        if max_tokens == 0 {
            return String::new();
        }
        let tokens = self.tokenizer.encode(text);
        if tokens.len() <= max_tokens {
            return text.to_string();
        }
        let mut end = max_tokens;
        while end > 0 {
            if let Some(head) = self.tokenizer.decode(&tokens[..end]) {
                return head;
            }
            end -= 1;
        }
        String::new()
    }
}

/// Which tokenizer counts for a model, and whether the count is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TokenizerChoice {
    pub kind: TokenizerKind,
    /// False when `kind` only approximates the model's own tokenizer.
    pub exact: bool,
}

impl TokenizerChoice {
    /// A human label: `o200k_base` or `estimate (o200k_base)`.
    pub fn label(&self) -> String {
        if self.exact {
            self.kind.as_str().to_string()
        } else {
            format!("estimate ({})", self.kind.as_str())
        }
    }
}

/// Picks the tokenizer for a model id. OpenAI's current families (gpt-4o, gpt-4.1, gpt-5, o1,
/// o3, o4, chatgpt-4o) use o200k_base; gpt-4, gpt-3.5 and the text-embedding-3 models use
/// cl100k_base. Everything else is estimated with o200k_base, whose counts sit close to other
/// modern vocabularies for mixed text.
pub fn tokenizer_for_model(model_id: &str) -> TokenizerChoice {
    let id = model_id.to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    let o200k = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "chatgpt-4o",
        "o1",
        "o3",
        "o4",
        "gpt-oss",
    ];
    let cl100k = [
        "gpt-4",
        "gpt-3.5",
        "text-embedding-3",
        "text-embedding-ada-002",
    ];
    let is_family = |prefix: &&str| {
        id.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':']))
    };
    if o200k.iter().any(is_family) {
        TokenizerChoice {
            kind: TokenizerKind::O200kBase,
            exact: true,
        }
    } else if cl100k.iter().any(is_family) {
        TokenizerChoice {
            kind: TokenizerKind::Cl100kBase,
            exact: true,
        }
    } else {
        TokenizerChoice {
            kind: TokenizerKind::O200kBase,
            exact: false,
        }
    }
}

/// Tokens a provider format adds around the content (RULES 5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MessageOverhead {
    pub per_message: u32,
    pub per_name: u32,
    /// Added once to every request: the priming of the reply.
    pub reply: u32,
}

impl MessageOverhead {
    /// OpenAI Chat Completions: 4 per message (the 3 tokens that wrap it, `<|start|>`, the
    /// separator and `<|end|>`, and its role, which is one token in both vocabularies), 1 per
    /// name, 3 for the reply (`<|start|>assistant<|message|>`). What OpenAI's own counting
    /// recipe adds up: 3 per message plus every field's tokens, the role's among them.
    pub const OPENAI_CHAT: MessageOverhead = MessageOverhead {
        per_message: 4,
        per_name: 1,
        reply: 3,
    };
}

type WholeTokens = HashSet<&'static [u8], BuildHasherDefault<KeyHasher>>;

/// A one-multiply-per-word hasher (FxHash's scheme). The count key already carries a strong
/// hash of the content, so folding its words is enough, and far cheaper than SipHash on every
/// lookup; the whole-token set hashes short pieces with it on every count.
#[derive(Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.mix(u64::from_le_bytes(last));
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
}

/// `text` in pieces that the o200k and cl100k pre-tokenizers never join, so that its count is the
/// sum of its pieces' counts and each piece can be counted (and remembered) alone: a cut falls
/// after each line break that is followed by a character that is neither white space nor `/`.
/// (No piece of those pre-tokenizers goes on past a line break but into more white space, or
/// into the `/` of a run of punctuation; and every piece starts afresh.) A long prompt string is
/// mostly such lines, so a warm rebuild counts only the ones that changed.
pub fn independent_pieces(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut cuts = bytes
        .iter()
        .enumerate()
        .skip(1)
        .filter(move |&(i, _)| {
            matches!(bytes[i - 1], b'\n' | b'\r')
                && text[i..]
                    .chars()
                    .next()
                    .is_some_and(|c| !c.is_whitespace() && c != '/')
        })
        .map(|(i, _)| i)
        .chain(std::iter::once(bytes.len()));
    std::iter::from_fn(move || {
        let end = cuts.next()?;
        let piece = &text[start..end];
        start = end;
        Some(piece)
    })
    .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &[&str] = &[
        "The quick brown fox jumps over the lazy dog. It's 2026, isn't it?",
        "你好，世界！这是一个用于测试分词器的中文句子，包含标点符号。长长的中文文本没有空格也要数对。",
        "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n    println!(\"{v:?}\");\n}\n",
        "Emoji 🎉🚀👩‍👩‍👧‍👦 and flags 🇨🇳🇺🇸, combined: café naïve ﬁ",
        "   leading spaces\n\n\n\ttabs and\r\nwindows lines   ",
        "",
    ];

    #[test]
    fn counts_match_tiktoken_on_english_chinese_code_and_emoji() {
        let o200k = tiktoken_rs::o200k_base_singleton();
        let cl100k = tiktoken_rs::cl100k_base_singleton();
        for text in SAMPLES {
            assert_eq!(
                TokenizerKind::O200kBase.count(text),
                o200k.encode_ordinary(text).len(),
                "o200k on {text:?}"
            );
            assert_eq!(
                TokenizerKind::Cl100kBase.count(text),
                cl100k.encode_ordinary(text).len(),
                "cl100k on {text:?}"
            );
        }
    }

    #[test]
    fn model_ids_map_to_their_tokenizers() {
        let exact = |kind| TokenizerChoice { kind, exact: true };
        assert_eq!(
            tokenizer_for_model("gpt-4o"),
            exact(TokenizerKind::O200kBase)
        );
        assert_eq!(
            tokenizer_for_model("GPT-4o-mini"),
            exact(TokenizerKind::O200kBase)
        );
        assert_eq!(
            tokenizer_for_model("openai/gpt-4.1"),
            exact(TokenizerKind::O200kBase)
        );
        assert_eq!(
            tokenizer_for_model("o3-mini"),
            exact(TokenizerKind::O200kBase)
        );
        assert_eq!(
            tokenizer_for_model("gpt-4-turbo"),
            exact(TokenizerKind::Cl100kBase)
        );
        assert_eq!(
            tokenizer_for_model("gpt-3.5-turbo"),
            exact(TokenizerKind::Cl100kBase)
        );
        let claude = tokenizer_for_model("claude-3-5-sonnet");
        assert!(!claude.exact);
        assert_eq!(claude.label(), "estimate (o200k_base)");
        // A prefix alone is no family: "o1x" is not o1.
        assert!(!tokenizer_for_model("o1x").exact);
    }

    #[test]
    fn keep_first_tokens_cuts_at_a_boundary_and_fits() {
        for text in SAMPLES {
            for max in [1usize, 3, 7] {
                let head = TokenizerKind::O200kBase.keep_first_tokens(text, max);
                assert!(text.starts_with(&head), "{head:?} is a head of {text:?}");
                assert!(TokenizerKind::O200kBase.count(&head) <= max);
            }
        }
        assert_eq!(
            TokenizerKind::O200kBase.keep_first_tokens("short", 10),
            "short"
        );
    }

    #[test]
    fn keep_last_tokens_cuts_at_a_boundary_and_fits() {
        let text = SAMPLES[1];
        for max in [0, 1, 3, 7, 1000] {
            let tail = TokenizerKind::O200kBase.keep_last_tokens(text, max);
            assert!(TokenizerKind::O200kBase.count(&tail) <= max);
            assert!(text.ends_with(&tail));
        }
        assert_eq!(
            TokenizerKind::O200kBase.keep_last_tokens("short", 10),
            "short"
        );
    }

    // The count of a text is the sum of its independent pieces' counts, in both vocabularies,
    // whatever the text: line breaks of every kind, slashes, white space of every kind, special
    // tokens written as text, letters, digits and CJK.
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn counting_independent_pieces_is_counting_the_whole(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "\n", "\r\n", "\r", " ", "  ", "\t", "/", "//", "\u{3000}", "\u{a0}",
                    "<|im_start|>", "<|im_end|>", "[INST]", "user", "Hello", "'s", "it's",
                    "42", "1234", "灯塔", "。", "!", "...", "é", "😀", "\n\n", "\n/", "\n ",
                ]),
                0..40,
            )
        ) {
            let text: String = parts.concat();
            for kind in [TokenizerKind::O200kBase, TokenizerKind::Cl100kBase] {
                let pieces: usize = independent_pieces(&text).map(|p| kind.count(p)).sum();
                proptest::prop_assert_eq!(pieces, kind.count(&text), "{:?} in {:?}", kind, text);
            }
            proptest::prop_assert_eq!(independent_pieces(&text).collect::<String>(), text);
        }
    }
}
