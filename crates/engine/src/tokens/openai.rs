//! OpenAI's byte-pair vocabularies through the `bpe-openai` crate.

use super::{TokenCounter, WholeTokens};

/// OpenAI's byte-pair vocabularies through the `bpe-openai` crate.
pub(super) struct BpeOpenAi {
    name: &'static str,
    tokenizer: &'static bpe_openai::Tokenizer,
    /// Every token of the vocabulary, by its bytes.
    whole: WholeTokens,
}

impl BpeOpenAi {
    pub(super) fn new(name: &'static str, tokenizer: &'static bpe_openai::Tokenizer) -> Self {
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
