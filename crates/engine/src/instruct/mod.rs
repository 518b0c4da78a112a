//! Text completion (RULES 5.12): a build's messages written into one prompt string in a model's
//! instruct format. An [`InstructTemplate`] is data: each role's prefix and suffix, how system
//! messages are written when the format has no place for them, the text that starts the reply,
//! the stop sequences. [`render`] writes the string and remembers, for every span of it, whether
//! the template wrote it or which message it came from.
//!
//! The built-in templates are the JSON files of `presets/instruct/`, one per model family, each
//! checked against that family's own chat template in the tests.

pub mod jinja;

use serde::Serialize;

pub use crate::model::instruct::{
    Affixes, InstructTemplate, NamesMode, SystemMode, FORMAT_VERSION, MAX_TEMPLATE_BYTES,
};
use crate::model::Role;

/// One message as [`render`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn<'a> {
    pub role: Role,
    pub name: Option<&'a str>,
    pub content: &'a str,
    /// Written as it is: no affixes, no name, not trimmed, never folded, and no turn of its
    /// role for `firstPrefix` and `lastPrefix` (a template's `unwrapped`, RULES 5.12).
    pub unwrapped: bool,
}

/// Who wrote a span of the string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum SpanSource {
    /// The template: a prefix, a suffix, the start or the reply prefix.
    Template,
    /// The content (with its speaker's name) of message `index` of the build.
    Message { index: u32 },
}

/// A byte range of the string and who wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub source: SpanSource,
}

/// The prompt string of a text-completion request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct RenderedPrompt {
    /// The template's id.
    pub template: String,
    pub prompt: String,
    /// Every byte of `prompt` in exactly one span, in order.
    pub spans: Vec<Span>,
    pub stop: Vec<String>,
    /// The token the server puts before the string itself: counted in the total, not written
    /// in the string (`serverAddsBos`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_bos: Option<String>,
    /// The template's special tokens, for the preview to mark in the string.
    pub special_tokens: Vec<String>,
}

/// Writes the string and its spans.
struct Writer {
    prompt: String,
    spans: Vec<Span>,
}

impl Writer {
    fn push(&mut self, text: &str, source: SpanSource) {
        if text.is_empty() {
            return;
        }
        let start = self.prompt.len() as u32;
        self.prompt.push_str(text);
        let end = self.prompt.len() as u32;
        match self.spans.last_mut() {
            Some(last) if last.source == source && last.end == start => last.end = end,
            _ => self.spans.push(Span { start, end, source }),
        }
    }

    fn template(&mut self, text: &str) {
        self.push(text, SpanSource::Template);
    }

    fn message(&mut self, index: usize, text: &str) {
        self.push(
            text,
            SpanSource::Message {
                index: index as u32,
            },
        );
    }
}

/// The text of a message as the template writes it: its name before it (when the template
/// writes names; never for system messages), trimmed when the template trims.
fn body<'a>(template: &InstructTemplate, turn: &Turn<'a>) -> std::borrow::Cow<'a, str> {
    let content = if template.trims(turn.role) {
        turn.content.trim()
    } else {
        turn.content
    };
    match (template.names, turn.name, turn.role) {
        (NamesMode::Always, Some(name), role) if role != Role::System && !name.is_empty() => {
            format!("{name}: {content}").into()
        }
        _ => content.into(),
    }
}

/// The role whose affixes a message of `role` is written with, as a turn of its own (a system
/// message of an `asUser` template is a user turn; a tool message is one always).
pub(crate) fn written_role(template: &InstructTemplate, role: Role) -> Role {
    match (role, template.system_mode) {
        (Role::System, SystemMode::AsUser) | (Role::Tool, _) => Role::User,
        (role, _) => role,
    }
}

/// Whether `left` followed by `right` counts as the two counted apart, for every shipped
/// vocabulary: one side is empty, or the joint is a special token of `template` (matched
/// whole before anything else), or `left` ends a line and `right` starts with a character
/// that is neither white space nor `/` (where `tokens::independent_pieces` cuts). Anything
/// else may merge (`.` + `\n\n` is one token of several vocabularies).
pub(crate) fn joins_apart(template: &InstructTemplate, left: &str, right: &str) -> bool {
    left.is_empty()
        || right.is_empty()
        || template
            .special_tokens
            .iter()
            .filter(|s| !s.is_empty())
            .any(|s| left.ends_with(s.as_str()) || right.starts_with(s.as_str()))
        || (left.ends_with(['\n', '\r']) && crate::tokens::starts_a_piece(right))
}

/// The system turn `template` writes first, when it has one and the first message is not a
/// system message (only where system messages are turns of their own).
pub(crate) fn default_system<'t>(
    template: &'t InstructTemplate,
    turns: &[Turn<'_>],
) -> Option<&'t str> {
    default_system_before(
        template,
        turns.iter().find(|t| !t.unwrapped).map(|t| t.role),
    )
}

/// The system turn `template` writes first when the first message is of role `first` (none:
/// there is no message).
pub(crate) fn default_system_before(
    template: &InstructTemplate,
    first: Option<Role>,
) -> Option<&str> {
    let text = template.default_system.as_deref()?;
    (template.system_mode == SystemMode::Own && first != Some(Role::System)).then_some(text)
}

/// How a prompt string ends (RULES 5.12, 5.14): where the model's text starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// The reply prefix: the model writes the next reply.
    #[default]
    Reply,
    /// The reply prefix and then the last turn's text, without its affixes: the start of the
    /// reply (a prefill, or the reply a continuation extends).
    ReplyWithLast,
    /// The user's prefix: the model writes the user's next message.
    User,
    /// The user's prefix and then the last turn's text: the start of the user's next message.
    UserWithLast,
}

/// Writes `turns` in `template`'s format, with the reply prefix at the end (RULES 5.12).
pub fn render(template: &InstructTemplate, turns: &[Turn<'_>]) -> RenderedPrompt {
    render_ending(template, turns, Ending::Reply)
}

/// Writes `turns` in `template`'s format, ending as `ending` says (RULES 5.12, 5.14).
pub fn render_ending(
    template: &InstructTemplate,
    turns: &[Turn<'_>],
    ending: Ending,
) -> RenderedPrompt {
    // The reply's start is written after the reply prefix, not as a turn.
    let (turns, start) = match (ending, turns.split_last()) {
        (Ending::ReplyWithLast | Ending::UserWithLast, Some((last, earlier))) => {
            (earlier, Some(last))
        }
        _ => (turns, None),
    };
    // The string's length, near enough that it is never grown (a grown string holds its old
    // and new buffers at once, and a prompt may be megabytes).
    let affixes = [&template.system, &template.user, &template.assistant]
        .iter()
        .flat_map(|a| a.texts())
        .map(String::len)
        .max()
        .unwrap_or(0);
    let capacity = turns
        .iter()
        .map(|t| {
            t.content.len()
                + t.name.map_or(0, str::len)
                + template.system_separator.len()
                + 2 * affixes
                + 2
        })
        .sum::<usize>()
        + template.bos.len()
        + template.reply_prefix.len()
        + template.default_system.as_ref().map_or(0, String::len)
        + start.map_or(0, |t| t.content.len())
        + 2 * affixes;
    let mut w = Writer {
        prompt: String::with_capacity(capacity),
        spans: Vec::new(),
    };
    if !template.server_adds_bos {
        w.template(&template.bos);
    }
    let systems: Vec<usize> = (0..turns.len())
        .filter(|&i| turns[i].role == Role::System && !turns[i].unwrapped)
        .collect();
    // System messages written inside a user turn, by the index of that turn.
    let mut folded: Vec<Vec<usize>> = vec![Vec::new(); turns.len()];
    // System messages that fold but found no user turn: written as user turns of their own.
    let mut left = vec![false; turns.len()];
    match template.system_mode {
        SystemMode::IntoNextUser => {
            let mut pending = Vec::new();
            for (i, turn) in turns.iter().enumerate().filter(|(_, t)| !t.unwrapped) {
                match turn.role {
                    Role::System => pending.push(i),
                    Role::User => folded[i].append(&mut pending),
                    _ => {}
                }
            }
            for i in pending {
                left[i] = true;
            }
        }
        SystemMode::IntoLastUser => {
            match turns
                .iter()
                .rposition(|t| t.role == Role::User && !t.unwrapped)
            {
                Some(last) => folded[last] = systems.clone(),
                None => systems.iter().for_each(|&i| left[i] = true),
            };
        }
        SystemMode::AtStart if !systems.is_empty() => {
            w.template(&template.system.prefix);
            for (k, &i) in systems.iter().enumerate() {
                if k > 0 {
                    w.template(&template.system_separator);
                }
                w.message(i, &body(template, &turns[i]));
            }
            w.template(&template.system.suffix);
        }
        _ => {}
    }
    let folds = matches!(
        template.system_mode,
        SystemMode::IntoNextUser | SystemMode::IntoLastUser | SystemMode::AtStart
    );
    // The turns as written, each with the role whose affixes it takes (none: as it is).
    let written: Vec<(usize, Option<Role>)> = turns
        .iter()
        .enumerate()
        .filter(|&(i, turn)| turn.unwrapped || !(turn.role == Role::System && folds && !left[i]))
        .map(|(i, turn)| {
            // A system message with nowhere to go is a user turn of its own.
            let role = match (turn.role, template.system_mode) {
                _ if turn.unwrapped => None,
                (Role::System, SystemMode::Own) => Some(Role::System),
                (Role::System, _) | (Role::Tool, _) => Some(Role::User),
                (role, _) => Some(role),
            };
            (i, role)
        })
        .collect();
    let first_of = |role: Role| written.iter().position(|w| w.1 == Some(role));
    let last_of = |role: Role| written.iter().rposition(|w| w.1 == Some(role));
    let mut bounds = [Role::System, Role::User, Role::Assistant].map(|r| (first_of(r), last_of(r)));
    if let Some(text) = default_system(template, turns) {
        // The template's own system turn comes first: the first of its role.
        let (_, last) = bounds[Role::System.index()];
        w.template(template.system.prefix_of(true, last.is_none()));
        w.template(text);
        w.template(&template.system.suffix);
        bounds[Role::System.index()].0 = None;
    }
    for (k, &(i, role)) in written.iter().enumerate() {
        let Some(role) = role else {
            w.message(i, turns[i].content);
            continue;
        };
        let affixes = template.affixes(role);
        let (first, last) = bounds[role.index()];
        w.template(affixes.prefix_of(first == Some(k), last == Some(k)));
        for (n, &s) in folded[i].iter().enumerate() {
            if n > 0 {
                w.template(&template.system_separator);
            }
            w.template(&template.system.prefix);
            w.message(s, &body(template, &turns[s]));
            w.template(&template.system.suffix);
        }
        w.message(i, &body(template, &turns[i]));
        w.template(&affixes.suffix);
    }
    match ending {
        Ending::User | Ending::UserWithLast => w.template(
            template
                .user
                .last_prefix
                .as_deref()
                .unwrap_or(&template.user.prefix),
        ),
        _ => w.template(&template.reply_prefix),
    }
    if let Some(start) = start {
        w.message(turns.len(), start.content);
    }
    RenderedPrompt {
        template: template.id.clone(),
        prompt: w.prompt,
        spans: w.spans,
        stop: template.stop.clone(),
        server_bos: (template.server_adds_bos && !template.bos.is_empty())
            .then(|| template.bos.clone()),
        special_tokens: template.special_tokens.clone(),
    }
}

/// The built-in templates' files, by id.
const BUILT_IN: &[(&str, &str)] = &[
    (
        "chatml",
        include_str!("../../../../presets/instruct/chatml.json"),
    ),
    (
        "qwen",
        include_str!("../../../../presets/instruct/qwen.json"),
    ),
    (
        "qwen-2.5",
        include_str!("../../../../presets/instruct/qwen-2.5.json"),
    ),
    (
        "llama-3",
        include_str!("../../../../presets/instruct/llama-3.json"),
    ),
    (
        "llama-3.1",
        include_str!("../../../../presets/instruct/llama-3.1.json"),
    ),
    (
        "llama-2",
        include_str!("../../../../presets/instruct/llama-2.json"),
    ),
    (
        "mistral",
        include_str!("../../../../presets/instruct/mistral.json"),
    ),
    (
        "mistral-tekken",
        include_str!("../../../../presets/instruct/mistral-tekken.json"),
    ),
    (
        "gemma",
        include_str!("../../../../presets/instruct/gemma.json"),
    ),
    (
        "phi-3",
        include_str!("../../../../presets/instruct/phi-3.json"),
    ),
    (
        "deepseek",
        include_str!("../../../../presets/instruct/deepseek.json"),
    ),
    (
        "alpaca",
        include_str!("../../../../presets/instruct/alpaca.json"),
    ),
    (
        "vicuna",
        include_str!("../../../../presets/instruct/vicuna.json"),
    ),
];

/// The ids of the built-in templates.
pub fn built_in_ids() -> impl Iterator<Item = &'static str> {
    BUILT_IN.iter().map(|(id, _)| *id)
}

/// The built-in template `id`, if there is one.
pub fn built_in(id: &str) -> Option<InstructTemplate> {
    built_in_ref(id).cloned()
}

/// The built-in template `id`, read once for the life of the process: a chat build of a model
/// family reads its template's affixes on every build (RULES 5.8), so a live preview does not
/// parse it on every keystroke.
pub fn built_in_ref(id: &str) -> Option<&'static InstructTemplate> {
    static PARSED: std::sync::OnceLock<Vec<Option<InstructTemplate>>> = std::sync::OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        // The files are the repository's own and a test reads every one.
        BUILT_IN
            .iter()
            .map(|(id, text)| InstructTemplate::parse(id, text).ok())
            .collect()
    });
    let at = BUILT_IN.iter().position(|(i, _)| *i == id)?;
    parsed[at].as_ref()
}

#[cfg(test)]
mod tests;
