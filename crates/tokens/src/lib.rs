//! RULES 5.8: token counting. OpenAI families are counted with their real vocabularies
//! (bpe-openai); Llama 3, Qwen, Gemma 3, DeepSeek V3 and Mistral's Tekken with theirs, read from
//! the tokenizer.json files the engine ships (compressed, each loaded on first use); a user's own
//! tokenizer.json can count for a model profile. Models with no public tokenizer (Claude, Gemini)
//! get a labelled estimate. The counts a build makes are kept in the
//! engine's build cache, so a live preview recounts only what changed.

use std::hash::Hasher;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

mod compact_bpe;
mod families;
mod hf;
mod openai;
mod own;
mod pieces;

pub use families::{chat_template_for_model, tokenizer_for_model, ChatTemplate};
pub use hf::{TokenizerError, MAX_TOKENIZER_BYTES};
pub use own::own_tokenizer;
pub(crate) use pieces::{bounded_parts, head_at_token_end, tail_at_token_start, TokenEnds};
pub use pieces::{independent_pieces, starts_a_piece, MAX_COUNTED_AT_ONCE};

use hf::HfCounter;
use openai::OpenAi;

/// o200k_base's and cl100k_base's counters, by [`TokenizerKind::slot`], each read on first use.
static OPENAI: [OnceLock<Result<OpenAi, TokenizerError>>; 2] = [const { OnceLock::new() }; 2];
/// The other families' counters, by [`TokenizerKind::slot`], each read on its first use.
static FAMILIES: [OnceLock<Result<HfCounter, TokenizerError>>; 5] = [const { OnceLock::new() }; 5];

/// A vocabulary this build embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    O200kBase,
    Cl100kBase,
    /// Llama 3, 3.1, 3.2 and 3.3.
    Llama3,
    /// Qwen 2, 2.5 and 3 (and QwQ).
    Qwen,
    Gemma3,
    /// DeepSeek V3, V3.1 and R1.
    DeepseekV3,
    /// Mistral's Tekken: Nemo, Ministral, Pixtral, Small 3 and later.
    Tekken,
}

impl TokenizerKind {
    pub const ALL: [TokenizerKind; 7] = [
        TokenizerKind::O200kBase,
        TokenizerKind::Cl100kBase,
        TokenizerKind::Llama3,
        TokenizerKind::Qwen,
        TokenizerKind::Gemma3,
        TokenizerKind::DeepseekV3,
        TokenizerKind::Tekken,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TokenizerKind::O200kBase => "o200k_base",
            TokenizerKind::Cl100kBase => "cl100k_base",
            TokenizerKind::Llama3 => "llama3",
            TokenizerKind::Qwen => "qwen",
            TokenizerKind::Gemma3 => "gemma3",
            TokenizerKind::DeepseekV3 => "deepseek_v3",
            TokenizerKind::Tekken => "tekken",
        }
    }

    /// The built-in instruct template (RULES 5.12) a chat server writes this family's
    /// messages in, whose affixes are what a message costs beyond its content; none for the
    /// OpenAI vocabularies, whose cost OpenAI publishes.
    pub fn chat_template(self) -> Option<&'static str> {
        match self {
            TokenizerKind::O200kBase | TokenizerKind::Cl100kBase => None,
            TokenizerKind::Llama3 => Some("llama-3"),
            TokenizerKind::Qwen => Some("qwen"),
            TokenizerKind::Gemma3 => Some("gemma"),
            TokenizerKind::DeepseekV3 => Some("deepseek"),
            TokenizerKind::Tekken => Some("mistral-tekken"),
        }
    }

    /// The shipped tokenizer.json, gzip-compressed (scripts/vocabularies writes them).
    fn shipped(self) -> &'static [u8] {
        macro_rules! vocab {
            ($name:literal) => {
                include_bytes!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/vocab/",
                    $name,
                    ".json.gz"
                ))
            };
        }
        match self {
            TokenizerKind::O200kBase => vocab!("o200k_base"),
            TokenizerKind::Cl100kBase => vocab!("cl100k_base"),
            TokenizerKind::Llama3 => vocab!("llama3"),
            TokenizerKind::Qwen => vocab!("qwen"),
            TokenizerKind::Gemma3 => vocab!("gemma3"),
            TokenizerKind::DeepseekV3 => vocab!("deepseek_v3"),
            TokenizerKind::Tekken => vocab!("tekken"),
        }
    }

    /// The counter for this vocabulary, built on first use (its vocabulary is read then, and
    /// only then) and shared for the life of the process.
    pub fn load(self) -> Result<&'static dyn TokenCounter, TokenizerError> {
        match self {
            TokenizerKind::O200kBase | TokenizerKind::Cl100kBase => OPENAI[self.slot()]
                .get_or_init(|| {
                    let counter = OpenAi::read(self, &self.shipped_json()?);
                    release_freed_memory();
                    counter
                })
                .as_ref()
                .map(|c| c as &dyn TokenCounter)
                .map_err(Clone::clone),
            family => FAMILIES[family.slot()]
                .get_or_init(|| {
                    let counter = HfCounter::shipped(self.as_str(), &self.shipped_json()?);
                    release_freed_memory();
                    counter
                })
                .as_ref()
                .map(|c| c as &dyn TokenCounter)
                .map_err(Clone::clone),
        }
    }

    /// Where the counter is kept in `OPENAI` or `FAMILIES`.
    fn slot(self) -> usize {
        match self {
            TokenizerKind::O200kBase => 0,
            TokenizerKind::Cl100kBase => 1,
            TokenizerKind::Llama3 => 0,
            TokenizerKind::Qwen => 1,
            TokenizerKind::Gemma3 => 2,
            TokenizerKind::DeepseekV3 => 3,
            TokenizerKind::Tekken => 4,
        }
    }

    /// Whether this vocabulary has been read in this process (each is read on its first count
    /// only).
    pub fn is_loaded(self) -> bool {
        match self {
            TokenizerKind::O200kBase | TokenizerKind::Cl100kBase => {
                OPENAI[self.slot()].get().is_some()
            }
            family => FAMILIES[family.slot()].get().is_some(),
        }
    }

    /// The shipped tokenizer.json of a vocabulary, decompressed.
    pub fn shipped_json(self) -> Result<Vec<u8>, TokenizerError> {
        own::gunzip(self.shipped(), self.as_str())
    }

    /// A counter of this vocabulary read afresh from the shipped file, not kept: what the first
    /// count costs, for the benchmarks and the memory measure. The engine itself reads each
    /// vocabulary once, through [`Self::load`].
    pub fn read_afresh(self) -> Result<Box<dyn TokenCounter>, TokenizerError> {
        let json = self.shipped_json()?;
        Ok(match self {
            TokenizerKind::O200kBase | TokenizerKind::Cl100kBase => {
                Box::new(OpenAi::read(self, &json)?)
            }
            _ => Box::new(HfCounter::shipped(self.as_str(), &json)?),
        })
    }

    /// The counter, or o200k_base's where this vocabulary could not be read (a build resolves
    /// its tokenizer first, which says so and labels the count an estimate).
    pub fn counter(self) -> &'static dyn TokenCounter {
        match self.load() {
            Ok(counter) => counter,
            Err(_) => TokenizerKind::O200kBase.counter(),
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

/// Hands back to the system the memory a vocabulary's reading used and freed: glibc keeps freed
/// memory for reuse, and reading a large tokenizer.json leaves tens of MiB of it behind in a
/// long-running app (docs/PERFORMANCE.md).
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of the allocator to the system; it has no
    // preconditions and touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The vocabulary that counts: one the engine ships, or a user's own tokenizer.json (see
/// [`own_tokenizer`]). What the count cache is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Vocabulary {
    Shipped(TokenizerKind),
    Own(own::OwnId),
    /// Claude's estimate: cl100k_base's count times [`CLAUDE_SCALE`], the estimator that came
    /// closest to Anthropic's own counts (docs/PERFORMANCE.md).
    ClaudeEstimate,
}

/// What cl100k_base's count is multiplied by to estimate Claude's (docs/PERFORMANCE.md).
pub const CLAUDE_SCALE: f64 = 1.11;

impl Vocabulary {
    pub fn counter(self) -> &'static dyn TokenCounter {
        match self {
            Vocabulary::Shipped(kind) => kind.counter(),
            Vocabulary::Own(id) => id.counter(),
            Vocabulary::ClaudeEstimate => {
                static CLAUDE: Scaled = Scaled {
                    name: "cl100k_base × 1.11",
                    base: TokenizerKind::Cl100kBase,
                    factor: CLAUDE_SCALE,
                };
                &CLAUDE
            }
        }
    }

    /// The vocabulary's name, as the preview shows it.
    pub fn name(self) -> &'static str {
        self.counter().name()
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

    /// The shipped family, if it is one.
    pub fn kind(self) -> Option<TokenizerKind> {
        match self {
            Vocabulary::Shipped(kind) => Some(kind),
            Vocabulary::Own(_) | Vocabulary::ClaudeEstimate => None,
        }
    }
}

impl From<TokenizerKind> for Vocabulary {
    fn from(kind: TokenizerKind) -> Self {
        Vocabulary::Shipped(kind)
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

/// Which tokenizer counts for a model, and whether the count is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenizerChoice {
    pub vocabulary: Vocabulary,
    /// False when `vocabulary` only approximates the model's own tokenizer.
    pub exact: bool,
}

impl TokenizerChoice {
    pub fn exact(kind: TokenizerKind) -> Self {
        TokenizerChoice {
            vocabulary: kind.into(),
            exact: true,
        }
    }

    pub fn estimate(kind: TokenizerKind) -> Self {
        TokenizerChoice {
            vocabulary: kind.into(),
            exact: false,
        }
    }

    /// A human label: `o200k_base` or `estimate (o200k_base)`.
    pub fn label(&self) -> String {
        if self.exact {
            self.vocabulary.name().to_string()
        } else {
            format!("estimate ({})", self.vocabulary.name())
        }
    }

    /// This choice where its vocabulary can be read, else an o200k_base estimate and why not.
    pub fn or_estimate(self) -> (TokenizerChoice, Option<TokenizerError>) {
        match self.vocabulary {
            Vocabulary::Shipped(kind) => match kind.load() {
                Ok(_) => (self, None),
                Err(e) => (TokenizerChoice::estimate(TokenizerKind::O200kBase), Some(e)),
            },
            Vocabulary::Own(_) | Vocabulary::ClaudeEstimate => (self, None),
        }
    }
}

/// Another vocabulary's count times a factor, rounded up: an estimate for a model whose own
/// tokenizer splits text finer than any we have.
struct Scaled {
    name: &'static str,
    base: TokenizerKind,
    factor: f64,
}

impl TokenCounter for Scaled {
    fn name(&self) -> &'static str {
        self.name
    }

    fn count(&self, text: &str) -> usize {
        (self.base.count(text) as f64 * self.factor).ceil() as usize
    }

    fn keep_last_tokens(&self, text: &str, max_tokens: usize) -> String {
        let base = (max_tokens as f64 / self.factor).floor() as usize;
        self.base.keep_last_tokens(text, base)
    }

    fn keep_first_tokens(&self, text: &str, max_tokens: usize) -> String {
        let base = (max_tokens as f64 / self.factor).floor() as usize;
        self.base.keep_first_tokens(text, base)
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

/// A one-multiply-per-word hasher (FxHash's scheme). Its methods are `#[inline]`: the engine's
/// count cache hashes with it on every lookup, from another crate. The count key already carries a strong
/// hash of the content, so folding its words is enough, and far cheaper than SipHash on every
/// lookup.
#[derive(Debug, Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
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

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
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

    // Any text at all, not only prose: the counts are tiktoken's.
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        #[test]
        fn openai_counts_match_tiktoken_on_any_text(
            text in "(\\PC|[ \t\r\n]|'s|'ll| {2,5}|[0-9]{1,7}|[a-z]{1,12}|[A-Z][a-z]{0,8}){0,60}"
        ) {
            let o200k = tiktoken_rs::o200k_base_singleton();
            let cl100k = tiktoken_rs::cl100k_base_singleton();
            proptest::prop_assert_eq!(
                TokenizerKind::O200kBase.count(&text),
                o200k.encode_ordinary(&text).len()
            );
            proptest::prop_assert_eq!(
                TokenizerKind::Cl100kBase.count(&text),
                cl100k.encode_ordinary(&text).len()
            );
        }
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
