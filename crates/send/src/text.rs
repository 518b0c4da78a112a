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

/// Whether `c` is a character beyond C0 and DEL that a terminal acts on or that hides or
/// reorders text: the one rule for every text Promptloom prints (the CLI's too). C1 controls,
/// the Arabic letter mark, the Mongolian vowel separator, zero-width spaces and joiners, the
/// line and paragraph separators, bidirectional embeddings, overrides, isolates and marks,
/// invisible operators and the deprecated format characters, the zero-width no-break space and
/// the interlinear annotation marks.
pub fn is_hidden(c: char) -> bool {
    matches!(c as u32,
        0x80..=0x9f            // C1 controls
        | 0x061c               // Arabic letter mark
        | 0x180e               // Mongolian vowel separator
        | 0x200b..=0x200f      // zero-width spaces and joiners, LRM, RLM
        | 0x2028..=0x202e      // line and paragraph separators, embeddings and overrides
        | 0x2060..=0x206f      // word joiner, invisible operators, isolates, deprecated formats
        | 0xfeff               // zero-width no-break space
        | 0xfff9..=0xfffb      // interlinear annotation
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
        // Every invisible and bidirectional control, one by one.
        for c in [
            '\u{61c}', '\u{2028}', '\u{2029}', '\u{2060}', '\u{2064}', '\u{206f}', '\u{180e}',
        ] {
            assert_eq!(
                escape_control(&format!("a{c}b")),
                format!("a\\u{{{:x}}}b", c as u32)
            );
        }
    }

    #[test]
    fn prefix_cuts_at_a_character() {
        let s = "ééé".as_bytes();
        assert_eq!(shown_prefix(s, 3), "é…");
        assert_eq!(shown_prefix(s, 6), "ééé");
        assert_eq!(shown_prefix(b"\xff\xfeok", 10), "\u{fffd}\u{fffd}ok");
    }
}
