//! Small helpers on texts the macro files share: a char boundary at or below a byte offset, a
//! macro's source shortened for a warning, a cap in words.

/// The largest char boundary of `text` at or below `at`.
pub(super) fn char_floor(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut end = at;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A macro's source as a warning shows it: long ones are cut.
pub(super) fn shorten(raw: &str) -> String {
    const SHOWN: usize = 80;
    if raw.len() <= SHOWN {
        return raw.to_string();
    }
    format!("{}…", &raw[..char_floor(raw, SHOWN)])
}

/// A cap in words: "2 MiB".
pub(super) fn in_words(bytes: usize) -> String {
    format!("{} MiB", bytes >> 20)
}
