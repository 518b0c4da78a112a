//! SillyTavern instruct templates (`instruct/*.json`, or the `instruct` section of a master
//! export) -> an instruct template (RULES 5.12, 7.2), read as SillyTavern 1.12.6 writes a
//! text-completion prompt with one (instruct-mode.js):
//!
//! - each message is its sequence, then (with `wrap`) a line break, then its text, then its
//!   suffix, or a line break when the suffix is empty and `wrap` is on: so a role's prefix is its
//!   sequence followed by a line break under `wrap`, and its suffix the suffix or that line break;
//! - `first_output_sequence` / `first_input_sequence` open the chat's first message, and
//!   `last_input_sequence` its last user message: each role's `firstPrefix` / `lastPrefix`;
//! - the reply starts with `last_output_sequence` (else `output_sequence`): under `wrap`
//!   SillyTavern takes the line break off the last message and writes a line break, the
//!   sequence and a line break, which comes to the sequence and a line break after a suffix
//!   that ends in one;
//! - system messages (SillyTavern's narrator) take `system_sequence` and `system_suffix`, or the
//!   user's when `system_same_as_user` is on (`systemMode: asUser`);
//! - `names_behavior` `always` writes `Name: ` before each message (`names: always`); `force` and
//!   `none` write no names in a chat with one character (`names: never`); the old `names` and
//!   `names_force_groups` flags are read as SillyTavern migrates them;
//! - the stop strings are `stop_sequence` and, unless `sequences_as_stop_strings` is off, every
//!   sequence, one a line, each once, each after a line break under `wrap`.
//!
//! What has no place in an instruct template is reported: the activation regex, the user
//! alignment message, skipped examples, sequences that hold macros, the name SillyTavern writes
//! after the reply's sequence. The system prompt and story string wrappers go into the story
//! string when a context template comes with the template ([`super::context`]).

use promptloom_engine::instruct::{
    Affixes, InstructTemplate, NamesMode, SystemMode, FORMAT_VERSION, MAX_TEMPLATE_BYTES,
};
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem};

/// An instruct template with what SillyTavern keeps beside it, which the context template's
/// import uses.
#[derive(Debug, Clone, PartialEq)]
pub struct StInstruct {
    pub template: InstructTemplate,
    /// `wrap`: line breaks between sequences and texts.
    pub wrap: bool,
    /// `system_sequence_prefix` / `system_sequence_suffix`: around the system prompt in the story
    /// string (`{{name}}` already made `System`).
    pub system_prompt_prefix: String,
    pub system_prompt_suffix: String,
    /// `story_string_prefix` / `story_string_suffix` (SillyTavern after 1.12.6): around the
    /// story string.
    pub story_string_prefix: String,
    pub story_string_suffix: String,
    /// `user_alignment_message`: a user message SillyTavern puts before the chat.
    pub user_alignment_message: String,
    /// An old template's `system_prompt` (SillyTavern moved it into the system prompts).
    pub system_prompt: Option<String>,
}

/// The keys read (or known and reported) from an instruct template.
const KNOWN: &[&str] = &[
    "name",
    "preset",
    "enabled",
    "input_sequence",
    "input_suffix",
    "output_sequence",
    "output_suffix",
    "system_sequence",
    "system_suffix",
    "first_input_sequence",
    "last_input_sequence",
    "first_output_sequence",
    "last_output_sequence",
    "last_system_sequence",
    "stop_sequence",
    "wrap",
    "macro",
    "names_behavior",
    "names",
    "names_force_groups",
    "separator_sequence",
    "system_same_as_user",
    "skip_examples",
    "sequences_as_stop_strings",
    "activation_regex",
    "bind_to_context",
    "user_alignment_message",
    "system_sequence_prefix",
    "system_sequence_suffix",
    "story_string_prefix",
    "story_string_suffix",
    "system_prompt",
];

/// True when `root` is an instruct template: SillyTavern's own test is `name`, `input_sequence`
/// and `output_sequence`; `name` is not required here.
pub fn looks_like_instruct(root: &Object) -> bool {
    root.contains_key("input_sequence") && root.contains_key("output_sequence")
}

/// Strict field readers: absent and `null` are "not set"; another type is an error naming the
/// field (`at` is the section's path, `instruct.` in a master export).
pub(crate) struct Fields<'o> {
    pub(crate) obj: &'o Object,
    pub(crate) at: &'o str,
}

impl Fields<'_> {
    pub(crate) fn text(&self, key: &str) -> Result<Option<String>, Problem> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.len() > MAX_TEMPLATE_BYTES => Err(Problem::shape(format!(
                "`{}{key}` is {} bytes; at most {MAX_TEMPLATE_BYTES} (64 KiB)",
                self.at,
                s.len()
            ))),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Problem::shape(format!(
                "`{}{key}` is {}, expected text",
                self.at,
                json::kind(other)
            ))),
        }
    }

    pub(crate) fn text_or_empty(&self, key: &str) -> Result<String, Problem> {
        Ok(self.text(key)?.unwrap_or_default())
    }

    pub(crate) fn flag(&self, key: &str) -> Result<Option<bool>, Problem> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(Problem::shape(format!(
                "`{}{key}` is {}, expected true or false",
                self.at,
                json::kind(other)
            ))),
        }
    }

    pub(crate) fn item(&self, key: &str) -> String {
        format!("{}{key}", self.at)
    }
}

/// Reads an instruct template. `stem` names it when it has no `name`; `at` prefixes the fields
/// in errors and report items.
pub(crate) fn instruct_from_value(
    stem: &str,
    root: &Object,
    at: &str,
    report: &mut ImportReport,
) -> Result<StInstruct, Problem> {
    let f = Fields { obj: root, at };
    let name = f.text("name")?.filter(|n| !n.trim().is_empty());
    let wrap = f.flag("wrap")?.unwrap_or(true);
    let macros = f.flag("macro")?.unwrap_or(true);
    let nl = if wrap { "\n" } else { "" };
    let sequence = |s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("{s}{nl}")
        }
    };
    let suffix = |s: &str| {
        if s.is_empty() {
            nl.to_string()
        } else {
            s.to_string()
        }
    };
    let input = f.text_or_empty("input_sequence")?;
    let output = f.text_or_empty("output_sequence")?;
    let system = f.text_or_empty("system_sequence")?;
    // SillyTavern's migration: the old separator is the output suffix.
    let output_suffix = match f.text("separator_sequence")? {
        Some(separator) if root.contains_key("separator_sequence") => separator,
        _ => f.text_or_empty("output_suffix")?,
    };
    let input_suffix = f.text_or_empty("input_suffix")?;
    let system_suffix = f.text_or_empty("system_suffix")?;
    let first_input = f.text_or_empty("first_input_sequence")?;
    let last_input = f.text_or_empty("last_input_sequence")?;
    let first_output = f.text_or_empty("first_output_sequence")?;
    let last_output = f.text_or_empty("last_output_sequence")?;
    let last_system = f.text_or_empty("last_system_sequence")?;
    let stop_sequence = f.text_or_empty("stop_sequence")?;
    let same_as_user = f.flag("system_same_as_user")?.unwrap_or(false);
    let names = names_mode(&f)?;

    let optional = |s: &str| (!s.is_empty()).then(|| sequence(s));
    let user = Affixes {
        prefix: sequence(&input),
        suffix: suffix(&input_suffix),
        first_prefix: optional(&first_input),
        last_prefix: optional(&last_input),
    };
    let assistant = Affixes {
        prefix: sequence(&output),
        suffix: suffix(&output_suffix),
        first_prefix: optional(&first_output),
        last_prefix: None,
    };
    let system_affixes = Affixes {
        prefix: sequence(&system),
        suffix: suffix(&system_suffix),
        first_prefix: None,
        last_prefix: None,
    };
    let reply = if last_output.is_empty() {
        &output
    } else {
        &last_output
    };
    let reply_prefix = if wrap {
        format!("{}\n", reply.trim_end())
    } else {
        reply.clone()
    };

    // The reply's line break: exact when every suffix a chat can end with ends in one.
    let suffixes = [&user.suffix, &assistant.suffix, &system_affixes.suffix];
    if wrap && suffixes.iter().any(|s| !s.ends_with('\n')) {
        report.push(f.item("wrap"), texts::REPLY_LINE_BREAK);
    }
    if names == Names::Always {
        report.push(f.item("names_behavior"), texts::REPLY_NAME);
    }

    let mut stop: Vec<String> = Vec::new();
    let sequences_as_stops = f.flag("sequences_as_stop_strings")?.unwrap_or(true);
    let mut lines: Vec<&str> = stop_sequence.split('\n').collect();
    if sequences_as_stops {
        for s in [
            &input,
            &output,
            &first_output,
            &last_output,
            &system,
            &last_system,
        ] {
            lines.extend(s.split('\n'));
        }
    }
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        let stop_string = format!("{}{line}", if wrap { "\n" } else { "" });
        if stop_string.contains("{{") {
            report.push(
                f.item("stop_sequence"),
                texts::STOP_WITH_MACROS.with("stop", line),
            );
            continue;
        }
        if !stop.contains(&stop_string) {
            stop.push(stop_string);
        }
    }

    if macros {
        let sequences = [
            ("input_sequence", &input),
            ("output_sequence", &output),
            ("system_sequence", &system),
            ("input_suffix", &input_suffix),
            ("output_suffix", &output_suffix),
            ("system_suffix", &system_suffix),
            ("first_input_sequence", &first_input),
            ("last_input_sequence", &last_input),
            ("first_output_sequence", &first_output),
            ("last_output_sequence", &last_output),
        ];
        for (key, text) in sequences {
            if text.contains("{{") {
                report.push(f.item(key), texts::SEQUENCE_WITH_MACROS);
            }
        }
    }
    if !f.text_or_empty("activation_regex")?.trim().is_empty() {
        report.push(f.item("activation_regex"), texts::ACTIVATION_REGEX);
    }
    if f.flag("bind_to_context")? == Some(true) {
        report.push(f.item("bind_to_context"), texts::BIND_TO_CONTEXT);
    }
    if f.flag("skip_examples")? == Some(true) {
        report.push(f.item("skip_examples"), texts::SKIP_EXAMPLES);
    }
    if !last_system.is_empty() {
        report.push(f.item("last_system_sequence"), texts::LAST_SYSTEM_SEQUENCE);
    }
    let mut unknown = json::unknown_set_keys(root, KNOWN);
    unknown.sort_unstable();
    if !unknown.is_empty() {
        let keys: Vec<String> = unknown.iter().map(|k| format!("{at}{k}")).collect();
        report.push(keys.join(", "), texts::NOT_MAPPED);
    }

    let named = name.clone().unwrap_or_else(|| stem.to_string());
    let template = InstructTemplate {
        format_version: FORMAT_VERSION,
        id: json::slug(&named),
        name: named,
        bos: String::new(),
        server_adds_bos: false,
        default_system: None,
        today_format: None,
        system: system_affixes,
        user,
        assistant,
        system_mode: if same_as_user {
            SystemMode::AsUser
        } else {
            SystemMode::Own
        },
        system_separator: String::new(),
        reply_prefix,
        stop,
        names: match names {
            Names::Always => NamesMode::Always,
            Names::Force | Names::None => NamesMode::Never,
        },
        trim: false,
        trim_system: None,
        special_tokens: Vec::new(),
    };
    template.validate()?;
    let system_name = |s: String| replace_name(&s, "System");
    Ok(StInstruct {
        template,
        wrap,
        system_prompt_prefix: system_name(f.text_or_empty("system_sequence_prefix")?),
        system_prompt_suffix: f.text_or_empty("system_sequence_suffix")?,
        story_string_prefix: system_name(f.text_or_empty("story_string_prefix")?),
        story_string_suffix: f.text_or_empty("story_string_suffix")?,
        user_alignment_message: f.text_or_empty("user_alignment_message")?,
        system_prompt: f.text("system_prompt")?.filter(|s| !s.trim().is_empty()),
    })
}

/// SillyTavern's `names_behavior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Names {
    None,
    Force,
    Always,
}

/// `names_behavior`, or the old `names` / `names_force_groups` flags as SillyTavern migrates them
/// (they win when present); SillyTavern's default is `force`.
fn names_mode(f: &Fields<'_>) -> Result<Names, Problem> {
    if let Some(names) = f.flag("names")? {
        let force = f.flag("names_force_groups")?.unwrap_or(false);
        return Ok(match (names, force) {
            (true, _) => Names::Always,
            (false, true) => Names::Force,
            (false, false) => Names::None,
        });
    }
    match f.text("names_behavior")?.as_deref() {
        None | Some("force") => Ok(Names::Force),
        Some("always") => Ok(Names::Always),
        Some("none") => Ok(Names::None),
        Some(other) => Err(Problem::shape(format!(
            "`{}names_behavior` is \"{other}\", expected none, force or always",
            f.at
        ))),
    }
}

/// `{{name}}` (any case) as `name`, as SillyTavern fills it in the system prompt's wrapper.
fn replace_name(text: &str, name: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in lower.match_indices("{{name}}") {
        out.push_str(&text[last..at]);
        out.push_str(name);
        last = at + "{{name}}".len();
    }
    out.push_str(&text[last..]);
    out
}
