//! Texts in pieces: the longest text a counter takes at once, the pieces a long text is counted
//! in, the lines the shipped vocabularies count alone, and cutting a text at token boundaries.

use crate::TokenCounter;

/// The longest text a counter takes at once (RULES 5.8): longer ones are counted in parts cut
/// at character boundaries. The counters' working memory grows with the text they are given
/// (a symbol per byte to merge, the `tokenizers` crate's alignments), so a 16 MiB line of macro
/// output must not reach them whole. Only a line this long without a break is cut where its
/// tokenizer might not cut; its count can then be a few tokens off, and no text of a real chat
/// is one.
pub const MAX_COUNTED_AT_ONCE: usize = 64 * 1024;

/// `text` in parts of at most [`MAX_COUNTED_AT_ONCE`] bytes, each ending on a character
/// boundary.
pub(crate) fn bounded_parts(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(MAX_COUNTED_AT_ONCE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (part, tail) = rest.split_at(end);
        rest = tail;
        Some(part)
    })
}

/// `text` in parts of at most [`MAX_COUNTED_AT_ONCE`] bytes, cut first after line breaks where
/// `lines` (a shipped vocabulary's, which never joins across them), each with where it starts.
fn parts(text: &str, lines: bool) -> Vec<(usize, &str)> {
    let pieces: Box<dyn Iterator<Item = &str>> = if lines {
        Box::new(independent_pieces(text))
    } else {
        Box::new(std::iter::once(text))
    };
    let mut at = 0;
    pieces
        .flat_map(bounded_parts)
        .map(|part| {
            let start = at;
            at += part.len();
            (start, part)
        })
        .collect()
}

/// A counter that says where each token of a text ends (byte offsets, in order), and so can
/// cut a text at token boundaries.
pub(crate) trait TokenEnds: TokenCounter {
    fn token_ends(&self, text: &str) -> Vec<usize>;
    /// Whether a text's lines count alone (a shipped vocabulary's, see `independent_pieces`).
    fn lines_count_alone(&self) -> bool;
}

/// [`TokenCounter::keep_first_tokens`] for a counter that says where its tokens end. A text
/// longer than [`MAX_COUNTED_AT_ONCE`] goes by parts: whole parts while they fit, then the head
/// of the part that does not.
pub(crate) fn head_at_token_end(counter: &dyn TokenEnds, text: &str, max_tokens: usize) -> String {
    if text.len() > MAX_COUNTED_AT_ONCE {
        let mut used = 0;
        for (start, part) in parts(text, counter.lines_count_alone()) {
            let n = counter.count(part);
            if used + n > max_tokens {
                let head = head_at_token_end(counter, part, max_tokens - used);
                return text[..start + head.len()].to_string();
            }
            used += n;
        }
        return text.to_string();
    }
    let ends = counter.token_ends(text);
    if ends.len() <= max_tokens {
        return text.to_string();
    }
    // A token may end inside a character, and a head may split differently from the whole:
    // step back until the head is whole characters and counts no more than it may.
    let mut k = max_tokens;
    while k > 0 {
        let end = ends[k - 1];
        if text.is_char_boundary(end) && counter.count(&text[..end]) <= max_tokens {
            return text[..end].to_string();
        }
        k -= 1;
    }
    String::new()
}

/// [`TokenCounter::keep_last_tokens`] for a counter that says where its tokens end, by parts
/// from the end for a long text.
pub(crate) fn tail_at_token_start(
    counter: &dyn TokenEnds,
    text: &str,
    max_tokens: usize,
) -> String {
    if max_tokens == 0 {
        return String::new();
    }
    if text.len() > MAX_COUNTED_AT_ONCE {
        let mut used = 0;
        for (start, part) in parts(text, counter.lines_count_alone()).into_iter().rev() {
            let n = counter.count(part);
            if used + n > max_tokens {
                let tail = tail_at_token_start(counter, part, max_tokens - used);
                return text[start + part.len() - tail.len()..].to_string();
            }
            used += n;
        }
        return text.to_string();
    }
    let ends = counter.token_ends(text);
    if ends.len() <= max_tokens {
        return text.to_string();
    }
    let mut first = ends.len() - max_tokens;
    while first < ends.len() {
        let start = ends[first - 1];
        if text.is_char_boundary(start) && counter.count(&text[start..]) <= max_tokens {
            return text[start..].to_string();
        }
        first += 1;
    }
    String::new()
}

/// Whether `text` starts with a character that begins a piece of its own after a line break
/// (neither white space nor `/`): where [`independent_pieces`] cuts, and so where no shipped
/// vocabulary's token crosses from the line before.
pub fn starts_a_piece(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| !c.is_whitespace() && c != '/')
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
        .filter(move |&(i, _)| matches!(bytes[i - 1], b'\n' | b'\r') && starts_a_piece(&text[i..]))
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
