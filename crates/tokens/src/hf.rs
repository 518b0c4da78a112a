//! Counting with a Hugging Face `tokenizer.json` (RULES 5.8): the `tokenizers` crate's
//! normalizer, pre-tokenizer and added-token matching, over the file's byte-pair model held in
//! [`CompactBpe`]. A text's special-token strings (`<|im_start|>`) count as those single tokens,
//! as a server that reads them in a prompt counts them.

use serde::Deserialize;
use tokenizers::{
    AddedToken, DecoderWrapper, Model, NormalizerWrapper, OffsetReferential, OffsetType,
    PostProcessorWrapper, PreTokenizer, PreTokenizerWrapper, TokenizerImpl,
};

use super::compact_bpe::CompactBpe;
use super::{
    bounded_parts, head_at_token_end, independent_pieces, tail_at_token_start, TokenCounter,
    TokenEnds, MAX_COUNTED_AT_ONCE,
};

type Inner = TokenizerImpl<
    CompactBpe,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// The largest tokenizer.json read, decompressed: Gemma 3's, the largest shipped, is 33 MB.
pub const MAX_TOKENIZER_BYTES: usize = 64 * 1024 * 1024;

/// Why a tokenizer.json could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenizerError {
    #[error("tokenizer file {file}: {problem}")]
    Invalid { file: String, problem: String },
}

impl TokenizerError {
    pub(super) fn invalid(file: &str, problem: impl Into<String>) -> Self {
        TokenizerError::Invalid {
            file: file.to_string(),
            problem: problem.into(),
        }
    }
}

#[derive(Deserialize)]
struct AddedEntry {
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
    #[serde(default)]
    special: bool,
}

/// The parts of a tokenizer.json that counting uses; the rest (truncation, padding, the
/// post-processor, the decoder) is read past.
#[derive(Deserialize)]
struct TokenizerFile {
    #[serde(default)]
    added_tokens: Vec<AddedEntry>,
    #[serde(default)]
    normalizer: Option<NormalizerWrapper>,
    #[serde(default)]
    pre_tokenizer: Option<PreTokenizerWrapper>,
    model: Option<CompactBpe>,
}

pub struct HfCounter {
    name: &'static str,
    inner: Inner,
    /// One of the engine's own vocabularies, whose lines count alone.
    shipped: bool,
}

impl HfCounter {
    /// Reads a tokenizer.json (`file` names it in errors).
    pub fn from_json(name: &'static str, file: &str, json: &[u8]) -> Result<Self, TokenizerError> {
        Self::read(name, file, json, false)
    }

    /// The same counter under another name (a user's file, named once it has read).
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// One of the engine's own vocabularies (see [`Self::from_json`]).
    pub fn shipped(name: &'static str, json: &[u8]) -> Result<Self, TokenizerError> {
        Self::read(name, name, json, true)
    }

    fn read(
        name: &'static str,
        file: &str,
        json: &[u8],
        shipped: bool,
    ) -> Result<Self, TokenizerError> {
        if json.len() > MAX_TOKENIZER_BYTES {
            return Err(TokenizerError::invalid(
                file,
                format!(
                    "{} bytes, more than the {MAX_TOKENIZER_BYTES} a tokenizer file may have",
                    json.len()
                ),
            ));
        }
        let parsed: TokenizerFile = serde_json::from_slice(json)
            .map_err(|e| TokenizerError::invalid(file, format!("not a tokenizer.json: {e}")))?;
        let model = parsed.model.ok_or_else(|| {
            TokenizerError::invalid(file, "not a tokenizer.json: it has no \"model\"")
        })?;
        if model.get_vocab_size() == 0 {
            return Err(TokenizerError::invalid(file, "its vocabulary is empty"));
        }
        let mut inner = Inner::new(model);
        if let Some(n) = parsed.normalizer {
            inner
                .with_normalizer(Some(n))
                .map_err(|e| TokenizerError::invalid(file, format!("its normalizer: {e}")))?;
        }
        if let Some(p) = parsed.pre_tokenizer {
            inner.with_pre_tokenizer(Some(p));
        }
        let (special, plain): (Vec<_>, Vec<_>) =
            parsed.added_tokens.into_iter().partition(|t| t.special);
        let token = |t: AddedEntry| {
            AddedToken::from(t.content, t.special)
                .single_word(t.single_word)
                .lstrip(t.lstrip)
                .rstrip(t.rstrip)
                .normalized(t.normalized)
        };
        let added =
            |e: tokenizers::Error| TokenizerError::invalid(file, format!("its added tokens: {e}"));
        inner
            .add_tokens(plain.into_iter().map(token))
            .map_err(added)?;
        inner
            .add_special_tokens(special.into_iter().map(token))
            .map_err(added)?;
        Ok(HfCounter {
            name,
            inner,
            shipped,
        })
    }
}

impl HfCounter {
    /// Tokens in a text of at most [`MAX_COUNTED_AT_ONCE`] bytes.
    fn count_part(&self, text: &str) -> usize {
        let mut pieces = self
            .inner
            .get_added_vocabulary()
            .extract_and_normalize(self.inner.get_normalizer(), text);
        if let Some(pre) = self.inner.get_pre_tokenizer() {
            if pre.pre_tokenize(&mut pieces).is_err() {
                return 0;
            }
        }
        let model = self.inner.get_model();
        pieces
            .get_splits(OffsetReferential::Normalized, OffsetType::None)
            .into_iter()
            .map(|(piece, _, tokens)| match tokens {
                Some(tokens) => tokens.len(),
                None => model.count_word(piece),
            })
            .sum()
    }
}

impl TokenCounter for HfCounter {
    fn name(&self) -> &'static str {
        self.name
    }

    fn count(&self, text: &str) -> usize {
        if text.len() <= MAX_COUNTED_AT_ONCE {
            return self.count_part(text);
        }
        // A shipped family's lines count alone (`independent_pieces`); a line, or a user's
        // file's text, longer than the bound is cut at character boundaries.
        let lines: Box<dyn Iterator<Item = &str>> = if self.shipped {
            Box::new(independent_pieces(text))
        } else {
            Box::new(std::iter::once(text))
        };
        lines
            .flat_map(bounded_parts)
            .map(|part| self.count_part(part))
            .sum()
    }

    fn keep_first_tokens(&self, text: &str, max_tokens: usize) -> String {
        head_at_token_end(self, text, max_tokens)
    }

    fn keep_last_tokens(&self, text: &str, max_tokens: usize) -> String {
        tail_at_token_start(self, text, max_tokens)
    }
}

impl TokenEnds for HfCounter {
    /// The token boundaries of `text` as byte offsets where each token ends, in order.
    fn token_ends(&self, text: &str) -> Vec<usize> {
        match self.inner.encode_fast(text, false) {
            Ok(encoding) => encoding.get_offsets().iter().map(|o| o.1).collect(),
            Err(_) => Vec::new(),
        }
    }

    fn lines_count_alone(&self) -> bool {
        self.shipped
    }
}
