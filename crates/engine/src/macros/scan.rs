//! Parsing (RULES 4.2): one left-to-right scan matches each `{{` with its `}}` on a stack, so the
//! innermost macro closes first and its result becomes part of the enclosing one's arguments;
//! a macro's name and arguments (`name::a::b` or `name:a,b`).

use super::expander::{Expander, Output};
use super::text::char_floor;
use crate::limits::MACRO_NAME_BYTES;

/// One open `{{` during the scan; the bottom frame is the text itself. Every frame writes into
/// one output buffer, so a macro kept as written costs nothing however deep it nests.
struct Frame {
    /// Where this frame's text starts in the output, just after its `{{`.
    start: usize,
    /// Byte offset of this frame's `{{` in the scanned text.
    open: usize,
    /// Set by `{{trim}}`: white space written next is dropped.
    skip_space: bool,
    /// Where `{{trim}}` stops taking line breaks back: the end of the last text of a macro that
    /// SillyTavern replaces after `{{trim}}` ([`before_trim`]).
    floor: usize,
    /// Inside `{{// ...}}`: nothing in it is evaluated.
    comment: bool,
}

impl Frame {
    fn write(&mut self, out: &mut String, s: &str) {
        if self.skip_space {
            let rest = s.trim_start_matches(is_newline);
            if rest.is_empty() {
                return;
            }
            self.skip_space = false;
            out.push_str(rest);
        } else {
            out.push_str(s);
        }
    }
}

impl Expander<'_, '_> {
    pub(super) fn scan(&mut self, text: &str, depth: usize) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut frames = vec![Frame {
            start: 0,
            open: 0,
            skip_space: false,
            floor: 0,
            comment: false,
        }];
        let mut literal = 0; // start of the text not yet copied
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => {
                    let run = bytes[i..].iter().take_while(|&&b| b == b'{').count();
                    if run < 2 {
                        i += 1;
                        continue;
                    }
                    // In `{{{user}}}` the first brace is text and the last two open the macro.
                    let open = i + run - 2;
                    let top = last(&mut frames);
                    top.write(&mut out, &text[literal..open]);
                    let comment = top.comment || text[open + 2..].trim_start().starts_with("//");
                    out.push_str("{{");
                    frames.push(Frame {
                        start: out.len(),
                        open,
                        skip_space: false,
                        floor: out.len(),
                        comment,
                    });
                    i = open + 2;
                    literal = i;
                }
                b'}' if frames.len() > 1 && bytes.get(i + 1) == Some(&b'}') => {
                    last(&mut frames).write(&mut out, &text[literal..i]);
                    let Some(frame) = frames.pop() else { break };
                    let raw = &text[frame.open..i + 2];
                    i += 2;
                    literal = i;
                    let output = if frame.comment {
                        if last(&mut frames).comment {
                            Output::Kept
                        } else {
                            Output::Text(String::new())
                        }
                    } else {
                        let at = self.source_offset(frame.open);
                        self.evaluate(&out[frame.start..], raw, at, depth)
                    };
                    let early = !frame.comment && before_trim(&out[frame.start..]);
                    let parent = last(&mut frames);
                    match output {
                        Output::Kept => {
                            out.push_str("}}");
                            parent.skip_space = false;
                        }
                        Output::Text(s) if early => {
                            out.truncate(frame.start - 2);
                            parent.write(&mut out, &s);
                        }
                        Output::Text(s) => {
                            // Still written as a macro when SillyTavern trims: `{{trim}}` takes
                            // no line break on its far side, nor from its text.
                            out.truncate(frame.start - 2);
                            out.push_str(&s);
                            parent.skip_space = false;
                            parent.floor = out.len();
                        }
                        Output::Trim => {
                            out.truncate(frame.start - 2);
                            // SillyTavern's `{{trim}}` takes the line breaks around it, not
                            // spaces (macros.js: `(?:\r?\n)*{{trim}}(?:\r?\n)*`).
                            let floor = parent.floor.max(parent.start);
                            let kept = out[floor..].trim_end_matches(is_newline).len();
                            out.truncate(floor + kept);
                            parent.skip_space = true;
                        }
                    }
                }
                _ => i += 1,
            }
        }
        // Unclosed `{{` are already in the output as written.
        last(&mut frames).write(&mut out, &text[literal..]);
        out
    }
}

/// Whether SillyTavern 1.12.6 replaces the macro `body` before `{{trim}}`: dice rolls, the
/// instruct and system prompt macros, the variable macros and `{{newline}}` (macros.js
/// `evaluateMacros`, RULES 4.2). Every other macro, a comment too, is still written as a macro
/// when `{{trim}}` takes its line breaks, so they are not taken across it.
fn before_trim(body: &str) -> bool {
    let name = split_macro(body).map_or("", |(name, _)| name.trim());
    let name = name.to_ascii_lowercase();
    if name.starts_with("roll") || name.starts_with("instruct") {
        return true;
    }
    matches!(
        name.as_str(),
        "newline"
            | "systemprompt"
            | "defaultsystemprompt"
            | "exampleseparator"
            | "chatseparator"
            | "chatstart"
            | "getvar"
            | "setvar"
            | "addvar"
            | "incvar"
            | "decvar"
            | "hasvar"
            | "varexists"
            | "deletevar"
            | "flushvar"
            | "getglobalvar"
            | "setglobalvar"
            | "addglobalvar"
            | "incglobalvar"
            | "decglobalvar"
            | "hasglobalvar"
            | "globalvarexists"
            | "deleteglobalvar"
            | "flushglobalvar"
    )
}

fn is_newline(c: char) -> bool {
    c == '\n' || c == '\r'
}

fn last(stack: &mut [Frame]) -> &mut Frame {
    // The bottom frame is never popped while the scan runs.
    let index = stack.len().saturating_sub(1);
    &mut stack[index]
}

/// A macro's arguments: what follows `name::` (`double`) or `name:`.
#[derive(Clone, Copy)]
pub(super) struct Args<'b> {
    pub(super) double: bool,
    pub(super) text: &'b str,
}

impl Args<'_> {
    /// `random` and `pick` choices: `a::b` as written, or `a, b` trimmed with `\,` for a comma.
    pub(super) fn choices(self) -> Vec<String> {
        if self.double {
            return self.text.split("::").map(str::to_string).collect();
        }
        let mut choices = Vec::new();
        let mut current = String::new();
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&',') => {
                    chars.next();
                    current.push(',');
                }
                ',' => choices.push(std::mem::take(&mut current).trim().to_string()),
                c => current.push(c),
            }
        }
        choices.push(current.trim().to_string());
        choices
    }
}

/// `name`, `name::args` or `name:args`; `None` when no name ends within [`MACRO_NAME_BYTES`].
pub(super) fn split_macro(body: &str) -> Option<(&str, Option<Args<'_>>)> {
    let head = &body[..char_floor(body, MACRO_NAME_BYTES + 1)];
    let Some(at) = head.find(':') else {
        return (head.len() == body.len()).then_some((body, None));
    };
    let (name, rest) = (&body[..at], &body[at + 1..]);
    Some(match rest.strip_prefix(':') {
        Some(text) => (name, Some(Args { double: true, text })),
        None => (
            name,
            Some(Args {
                double: false,
                text: rest,
            }),
        ),
    })
}
