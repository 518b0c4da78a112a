//! The instruct template of text completion (RULES 5.12), as data: each role's prefix and
//! suffix, how system messages are written when the format has no place for them, the text that
//! starts the reply, the stop sequences. [`crate::instruct`] renders it.

use serde::{Deserialize, Serialize};

use super::Role;
use crate::EngineError;

/// The version of the instruct template format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Bytes of one template's texts together, at most: a template is a few hundred bytes, and each
/// of its texts is written once per message.
pub const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

/// What comes before and after a message's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Affixes {
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
    /// The prefix of the first turn of this role in the string, when it differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_prefix: Option<String>,
    /// The prefix of the last turn of this role in the string, when it differs (over
    /// `firstPrefix` when one turn is both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_prefix: Option<String>,
}

impl Affixes {
    /// The prefix of a turn that is (or is not) the first and the last of its role.
    pub(crate) fn prefix_of(&self, first: bool, last: bool) -> &str {
        match (&self.first_prefix, &self.last_prefix) {
            (_, Some(p)) if last => p,
            (Some(p), _) if first => p,
            _ => &self.prefix,
        }
    }

    pub(crate) fn texts(&self) -> impl Iterator<Item = &String> {
        [&self.prefix, &self.suffix]
            .into_iter()
            .chain(&self.first_prefix)
            .chain(&self.last_prefix)
    }
}

/// Where system messages go in formats that have no system turn of their own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum SystemMode {
    /// A turn of their own, with the system affixes (ChatML, Llama 3, Phi-3).
    #[default]
    Own,
    /// A user turn, with the user affixes.
    AsUser,
    /// Inside the next user turn, before its content, each wrapped in the system affixes
    /// (Llama 2's `<<SYS>>` block, Gemma's and Mistral's system text before the user's).
    IntoNextUser,
    /// Inside the last user turn, before its content (Mistral Nemo's templates).
    IntoLastUser,
    /// All together at the very start, after `bos`, joined by `systemSeparator`, in one pair of
    /// system affixes (DeepSeek).
    AtStart,
}

/// Whether a message's speaker name is written into the string.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum NamesMode {
    /// `Name: ` before the content of every message that has a name.
    #[default]
    Always,
    /// Names are left out.
    Never,
}

/// A model family's instruct format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstructTemplate {
    #[serde(default = "format_version")]
    pub format_version: u32,
    pub id: String,
    pub name: String,
    /// The beginning-of-text token: written once at the very start, unless `serverAddsBos`.
    #[serde(default)]
    pub bos: String,
    /// The server puts `bos` before the string itself, as llama.cpp and the others do for a
    /// model whose tokenizer adds it (Llama, Gemma, Mistral): the string leaves it out, and the
    /// count has it (RULES 5.12).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_adds_bos: bool,
    /// A system turn written first when the first message is not a system message (Qwen 2.5's
    /// "You are Qwen…", Llama 3.1's empty one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_system: Option<String>,
    /// A `strftime` format: every `{today}` in the template's affixes is the build's day in it
    /// (Llama 3.1's `Today Date: 26 Nov 2026`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub today_format: Option<String>,
    #[serde(default)]
    pub system: Affixes,
    #[serde(default)]
    pub user: Affixes,
    #[serde(default)]
    pub assistant: Affixes,
    #[serde(default)]
    pub system_mode: SystemMode,
    /// Between system messages written together (`atStart`, or several folded into one user
    /// turn).
    #[serde(default)]
    pub system_separator: String,
    /// Written at the end, where the model's reply starts.
    #[serde(default)]
    pub reply_prefix: String,
    /// Where the model's reply ends.
    #[serde(default)]
    pub stop: Vec<String>,
    #[serde(default)]
    pub names: NamesMode,
    /// Trim white space around each message's content, as the Llama and Gemma templates do.
    #[serde(default)]
    pub trim: bool,
    /// Whether system messages are trimmed, where it differs from `trim` (Gemma 3 trims the
    /// turns but not the system text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_system: Option<bool>,
    /// The family's special tokens, which the preview marks in the string.
    #[serde(default)]
    pub special_tokens: Vec<String>,
}

fn format_version() -> u32 {
    FORMAT_VERSION
}

impl InstructTemplate {
    /// Reads a template from JSON: an unknown field, a wrong type or a newer format version is
    /// an error that names the template and the place.
    pub fn parse(name: &str, text: &str) -> Result<InstructTemplate, EngineError> {
        let template: InstructTemplate =
            serde_json::from_str(text).map_err(|e| EngineError::Shape {
                path: format!("instruct template \"{name}\""),
                message: format!("{e}"),
            })?;
        template.validate()?;
        Ok(template)
    }

    /// The rules a template read from anywhere must keep.
    pub fn validate(&self) -> Result<(), EngineError> {
        let at = |field: &str| format!("instruct template \"{}\": {field}", self.id);
        if self.format_version > FORMAT_VERSION {
            return Err(EngineError::NewerFormat {
                found: self.format_version,
                supported: FORMAT_VERSION,
            });
        }
        if self.id.trim().is_empty() {
            return Err(EngineError::invalid(
                "instruct template: id",
                "is empty; a template needs an id",
            ));
        }
        let bytes: usize = self.texts().map(str::len).sum();
        if bytes > MAX_TEMPLATE_BYTES {
            return Err(EngineError::invalid(
                at("texts"),
                format!("{bytes} bytes together; at most {MAX_TEMPLATE_BYTES}"),
            ));
        }
        if let Some(format) = &self.today_format {
            use chrono::format::{Item, StrftimeItems};
            if StrftimeItems::new(format).any(|i| matches!(i, Item::Error)) {
                return Err(EngineError::invalid(
                    at("todayFormat"),
                    format!("\"{format}\" is not a date format (strftime: %d %b %Y)"),
                ));
            }
        }
        if let Some(i) = self.stop.iter().position(String::is_empty) {
            return Err(EngineError::invalid(
                at(&format!("stop[{i}]")),
                "is empty; a stop sequence needs at least one character",
            ));
        }
        Ok(())
    }

    fn texts(&self) -> impl Iterator<Item = &str> {
        [&self.bos, &self.system_separator, &self.reply_prefix]
            .into_iter()
            .chain(&self.default_system)
            .chain(&self.today_format)
            .chain(self.system.texts())
            .chain(self.user.texts())
            .chain(self.assistant.texts())
            .chain(&self.stop)
            .chain(&self.special_tokens)
            .map(String::as_str)
    }

    /// Whether a message of `role` is trimmed.
    pub fn trims(&self, role: Role) -> bool {
        match role {
            Role::System => self.trim_system.unwrap_or(self.trim),
            _ => self.trim,
        }
    }

    /// The template as written on the day of `now`: each `{today}` of its affixes in
    /// `todayFormat` (borrowed as it is when it has none).
    pub fn dated(
        &self,
        now: &chrono::DateTime<chrono::FixedOffset>,
    ) -> std::borrow::Cow<'_, InstructTemplate> {
        use std::fmt::Write;
        let Some(format) = &self.today_format else {
            return std::borrow::Cow::Borrowed(self);
        };
        let mut day = String::new();
        // A format chrono cannot write leaves the placeholder as it is.
        if write!(day, "{}", now.format(format)).is_err() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut t = self.clone();
        for affixes in [&mut t.system, &mut t.user, &mut t.assistant] {
            for text in [&mut affixes.prefix, &mut affixes.suffix]
                .into_iter()
                .chain(affixes.first_prefix.as_mut())
                .chain(affixes.last_prefix.as_mut())
            {
                if text.contains("{today}") {
                    *text = text.replace("{today}", &day);
                }
            }
        }
        std::borrow::Cow::Owned(t)
    }

    /// The affixes of a turn of `role` (a tool message is written as a user turn).
    pub fn affixes(&self, role: Role) -> &Affixes {
        match role {
            Role::System => &self.system,
            Role::Assistant => &self.assistant,
            Role::User | Role::Tool => &self.user,
        }
    }
}
