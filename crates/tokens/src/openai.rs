//! OpenAI's vocabularies (o200k_base, cl100k_base): the text cut in pieces by bpe-openai's
//! pre-tokenizer (OpenAI's split patterns, its look-ahead written as a pattern whose last
//! character is dropped), each piece counted with the compact byte-pair model read from the
//! vocabulary's tokenizer.json. A piece that is one whole token counts 1, as tiktoken counts
//! it. bpe-openai's own vocabularies are not used: they held 72 MiB and 35 MiB resident, the
//! compact model a fraction of that (docs/PERFORMANCE.md).

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use bpe_openai::Tokenizer;

use super::compact_bpe::CompactBpe;
use super::hf::TokenizerError;
use super::{
    bounded_parts, head_at_token_end, tail_at_token_start, TokenCounter, TokenEnds, TokenizerKind,
    MAX_COUNTED_AT_ONCE,
};

/// OpenAI's split patterns for cl100k_base and o200k_base, as bpe-openai takes them: the
/// negative look-ahead `\s+(?!\S)` becomes `\s+\s` with its last character dropped, and
/// `\s+$` keeps a trailing run whole.
const CL100K_SPLIT: &str = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
const O200K_SPLIT: &str = concat!(
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|\\p{N}{1,3}",
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
    "|\\s*[\\r\\n]+",
    "|\\s+$",
);

#[derive(serde::Deserialize)]
struct ModelOnly {
    model: CompactBpe,
}

pub(super) struct OpenAi {
    name: &'static str,
    split: Tokenizer,
    model: CompactBpe,
}

impl OpenAi {
    /// The counter of `kind` (o200k_base or cl100k_base) from its tokenizer.json.
    pub(super) fn read(kind: TokenizerKind, json: &[u8]) -> Result<Self, TokenizerError> {
        let name = kind.as_str();
        let pattern = match kind {
            TokenizerKind::Cl100kBase => CL100K_SPLIT,
            _ => O200K_SPLIT,
        };
        // bpe-openai's tokenizer only splits here: its byte-pair part is the 256 bytes.
        let bytes = BytePairEncoding::from_dictionary((0..=255u8).map(|b| vec![b]), None);
        let split = Tokenizer::new_lookahead(
            bytes,
            &[(pattern, false), ("\\s+\\s", true), ("\\s+", false)],
            false,
        )
        .map_err(|e| TokenizerError::invalid(name, format!("its split pattern: {e}")))?;
        let read: ModelOnly = serde_json::from_slice(json)
            .map_err(|e| TokenizerError::invalid(name, format!("not a tokenizer.json: {e}")))?;
        Ok(OpenAi {
            name,
            split,
            model: read.model.into_raw_bytes(),
        })
    }
}

impl TokenCounter for OpenAi {
    fn name(&self) -> &'static str {
        self.name
    }

    fn count(&self, text: &str) -> usize {
        self.split
            .split(text)
            .map(|piece| {
                if piece.len() <= MAX_COUNTED_AT_ONCE {
                    self.model.count_bytes(piece.as_bytes())
                } else {
                    bounded_parts(piece)
                        .map(|part| self.model.count_bytes(part.as_bytes()))
                        .sum()
                }
            })
            .sum()
    }

    fn keep_first_tokens(&self, text: &str, max_tokens: usize) -> String {
        head_at_token_end(self, text, max_tokens)
    }

    fn keep_last_tokens(&self, text: &str, max_tokens: usize) -> String {
        tail_at_token_start(self, text, max_tokens)
    }
}

impl TokenEnds for OpenAi {
    /// Where each token of `text` ends, as byte offsets, in order.
    fn token_ends(&self, text: &str) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut at = 0;
        for piece in self.split.split(text) {
            for len in self.model.token_lengths(piece.as_bytes()) {
                at += len as usize;
                ends.push(at);
            }
        }
        ends
    }

    fn lines_count_alone(&self) -> bool {
        true
    }
}
