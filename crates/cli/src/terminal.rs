//! Text from files, made safe to print to a terminal. A preset's name, a message or an import
//! report can hold control characters; printed raw, an escape sequence can retitle the terminal,
//! clear it, move the cursor over earlier lines, or reorder what is shown (bidirectional
//! overrides). Each such character is shown as a visible escape instead: `\e`, `\x07`,
//! `\u{202e}`. Line breaks and tabs stay.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every character a terminal would act on written as a visible escape.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !acts_on_terminal(c) {
            out.push(c);
            continue;
        }
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// C0 controls but line feed and tab, DEL, and what the send crate's one rule hides (C1
/// controls, which some terminals read as escape sequences, and the invisible marks that reorder
/// or hide text).
fn acts_on_terminal(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}')
        || promptloom_send::text::is_hidden(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(escape("\u{1b}]0;pwned\u{7}hi"), "\\e]0;pwned\\x07hi");
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\e[2Jb");
        assert_eq!(escape("over\rwrite"), "over\\rwrite");
        assert_eq!(escape("c1\u{9b}31m"), "c1\\x9b31m");
        assert_eq!(escape("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(escape("alm\u{61c}x"), "alm\\u{61c}x");
        assert_eq!(escape("ls\u{2028}x"), "ls\\u{2028}x");
        assert_eq!(escape("wj\u{2060}\u{2064}x"), "wj\\u{2060}\\u{2064}x");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "line one\n\tindented, 日本語, émoji 🙂, ‘quotes’";
        assert!(matches!(escape(text), Cow::Borrowed(t) if t == text));
    }
}
