//! Making text from a provider safe to show in one line of a terminal or a dialog.

use std::fmt::Write;

/// How much of an unreadable error body is shown.
pub const ERROR_BODY_SHOWN: usize = 500;

/// `text` with every control character written as a visible escape: C0 (line breaks and tabs
/// too, so a message stays on one line), DEL, C1, and the bidirectional and zero-width marks that
/// can reorder or hide what a terminal shows.
pub fn escape_control(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{1b}' => out.push_str("\\e"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn is_hidden(c: char) -> bool {
    matches!(c as u32,
        0x80..=0x9f            // C1 controls
        | 0x200b..=0x200f      // zero-width spaces and joiners, LRM, RLM
        | 0x202a..=0x202e      // embeddings and overrides
        | 0x2060..=0x2064      // word joiner, invisible operators
        | 0x2066..=0x2069      // isolates
        | 0xfeff               // zero-width no-break space
    )
}

/// The first `max` bytes of `bytes` as text (cut at a character boundary, invalid UTF-8
/// replaced), escaped, with `…` when something was left off.
pub fn shown_prefix(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(max)]);
    // A character cut by the byte limit decodes as U+FFFD at the very end; drop it.
    let text = if bytes.len() > max {
        text.trim_end_matches('\u{fffd}').to_string()
    } else {
        text.into_owned()
    };
    let mut out = escape_control(text.trim());
    if bytes.len() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            escape_control("a\nb\x1b[2J\u{202e}c"),
            "a\\nb\\e[2J\\u{202e}c"
        );
        assert_eq!(escape_control("\x07\u{85}é"), "\\x07\\u{85}é");
    }

    #[test]
    fn prefix_cuts_at_a_character() {
        let s = "ééé".as_bytes();
        assert_eq!(shown_prefix(s, 3), "é…");
        assert_eq!(shown_prefix(s, 6), "ééé");
        assert_eq!(shown_prefix(b"\xff\xfeok", 10), "\u{fffd}\u{fffd}ok");
    }
}
