//! What the engine says to people (warnings, log lines, reasons, report items) as a code with
//! parameters, so that the app can say it in the UI's language; the English text, which the
//! command line prints, is made from the same code and parameters.
//!
//! Every code is a [`Text`]: a code and its English, with `{name}` placeholders. Texts are
//! declared with [`texts!`](crate::texts!), which also lists them, so that no code can be said
//! without being in a list: the engine's is [`crate::texts::ALL`]. The app's language files are
//! held to those lists by a test (docs/ARCHITECTURE.md, "Engine texts in the UI's language").
//!
//! A [`Said`] is one text said: its code, its parameters (user data: ids, names, numbers, which
//! are never translated) and its parts (parameters that are sentences of their own, a reason
//! inside a warning, said in the same language). `Display` gives the English.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One text the engine can say: a stable code and its English, with `{name}` placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text {
    pub code: &'static str,
    pub english: &'static str,
}

impl Text {
    /// Use [`texts!`](crate::texts!), which also lists the text.
    #[doc(hidden)]
    pub const fn new(code: &'static str, english: &'static str) -> Self {
        Text { code, english }
    }

    /// This text said with the parameter `name`.
    pub fn with(self, name: &'static str, value: impl fmt::Display) -> Said {
        Said::from(self).with(name, value)
    }

    /// This text said with the part `name`, a sentence of its own.
    pub fn part(self, name: &'static str, part: impl Into<Said>) -> Said {
        Said::from(self).part(name, part)
    }

    /// The names of this text's placeholders, in order (see [`placeholders`]).
    pub fn placeholders(self) -> Vec<&'static str> {
        placeholders(self.english).map(|(_, name)| name).collect()
    }
}

/// One text said: its code with its parameters and parts. It travels next to its English (a
/// log line's `message`, an item's `reason`), which its `Display` gives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct Said {
    pub code: Cow<'static, str>,
    /// Values of the placeholders: user data (ids, names, patterns, numbers), never translated.
    pub params: BTreeMap<Cow<'static, str>, String>,
    /// Placeholders that are sentences of their own (a reason inside a warning).
    pub parts: BTreeMap<Cow<'static, str>, Said>,
    /// The English with placeholders, which `Display` fills; not on the wire (the UI has the
    /// list of texts).
    #[serde(skip)]
    #[cfg_attr(feature = "specta", specta(skip))]
    english: &'static str,
}

impl From<Text> for Said {
    fn from(text: Text) -> Self {
        Said {
            code: Cow::Borrowed(text.code),
            params: BTreeMap::new(),
            parts: BTreeMap::new(),
            english: text.english,
        }
    }
}

impl Said {
    /// Text the engine does not own, said as it is in every language: a plugin's message, a
    /// reason an asset source or the regex library gave.
    pub fn plain(text: impl fmt::Display) -> Self {
        crate::texts::PLAIN.with("text", text)
    }

    /// A text whose code is made rather than declared: a processor's descriptor texts, whose
    /// codes come from the processor's and the setting's ids
    /// ([`ProcessorDescriptor::texts`](crate::pipeline::ProcessorDescriptor::texts)).
    pub fn made(code: String, english: &'static str) -> Self {
        Said {
            code: Cow::Owned(code),
            params: BTreeMap::new(),
            parts: BTreeMap::new(),
            english,
        }
    }

    pub fn with(mut self, name: &'static str, value: impl fmt::Display) -> Self {
        self.params.insert(Cow::Borrowed(name), value.to_string());
        self
    }

    pub fn part(mut self, name: &'static str, part: impl Into<Said>) -> Self {
        self.parts.insert(Cow::Borrowed(name), part.into());
        self
    }
}

/// The English: the text's placeholders filled with the parameters and the parts' English.
impl fmt::Display for Said {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.english.is_empty() {
            // Read back from the wire, where the English is not carried.
            return f.write_str(&self.code);
        }
        let mut used = 0;
        let mut at = 0;
        for (start, name) in placeholders(self.english) {
            f.write_str(&self.english[at..start])?;
            at = start + name.len() + 2;
            if let Some(value) = self.params.get(name) {
                f.write_str(value)?;
            } else if let Some(part) = self.parts.get(name) {
                write!(f, "{part}")?;
            } else {
                debug_assert!(false, "{}: no value for {{{name}}}", self.code);
                f.write_str(&self.english[start..at])?;
                continue;
            }
            used += 1;
        }
        debug_assert_eq!(
            used,
            self.params.len() + self.parts.len(),
            "{}: a value for no placeholder",
            self.code
        );
        f.write_str(&self.english[at..])
    }
}

/// The placeholders of a text: `{name}` with a name of letters, digits and `_`, not inside
/// doubled braces (a text may show a macro such as `{{request}}` as it is). Each with its byte
/// offset. The UI fills them by the same rule (`ui/src/i18n/said.ts`).
pub fn placeholders(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    text.match_indices('{').filter_map(move |(start, _)| {
        let rest = &text[start + 1..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let closed = rest[len..].starts_with('}');
        let doubled = (start > 0 && bytes[start - 1] == b'{')
            || bytes.get(start + len + 2).is_some_and(|&b| b == b'}');
        (len > 0 && closed && !doubled).then(|| (start, &rest[..len]))
    })
}

/// Declares texts: `NAME = "code" => "English with {placeholders}";`, each a `pub const` [`Text`],
/// and `ALL`, the list of them, which the app's language files are held to.
#[macro_export]
macro_rules! texts {
    ($($(#[$doc:meta])* $name:ident = $code:literal => $english:literal;)*) => {
        $($(#[$doc])* pub const $name: $crate::said::Text = $crate::said::Text::new($code, $english);)*

        /// Every text of this list.
        pub const ALL: &[$crate::said::Text] = &[$($name),*];
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const GREETING: Text = Text::new("test.greeting", "hello {name}, {why}; {{name}} stays");
    const WHY: Text = Text::new("test.why", "because {n}");

    #[test]
    fn the_english_fills_params_and_parts_and_leaves_macros() {
        let said = GREETING.with("name", "Ann").part("why", WHY.with("n", 3));
        assert_eq!(said.to_string(), "hello Ann, because 3; {{name}} stays");
        assert_eq!(GREETING.placeholders(), ["name", "why"]);
        assert_eq!(said.code, "test.greeting");
        assert_eq!(said.parts["why"].params["n"], "3");
    }

    #[test]
    fn placeholders_need_a_name_and_a_closing_brace() {
        let names: Vec<_> = placeholders("{a} {b c} {} {d-} {{e}} {f}}").collect();
        assert_eq!(names, [(0, "a")]);
        assert_eq!(Said::plain("{x}").to_string(), "{x}");
    }

    #[test]
    fn every_engine_code_is_listed_once_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for text in crate::texts::ALL {
            assert!(seen.insert(text.code), "{} listed twice", text.code);
            assert!(
                text.code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-.".contains(c)),
                "{}",
                text.code
            );
        }
    }
}
