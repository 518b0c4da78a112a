//! The macro tracer (RULES 4.6): every macro a build evaluates, in order, with where it stands,
//! what it was given and what it became, and for a variable macro the variable before and after;
//! the variables before and after the build. Recorded only when a build asks for it
//! ([`super::MacroState::traced_in_detail`]); an untraced build keeps no recorder at all.
//!
//! Bounded (docs/ARCHITECTURE.md, "Limits"): at most [`MACRO_TRACE_ENTRIES`] expansions and
//! [`MACRO_TRACE_BYTES`] of their texts, each text cut to [`MACRO_TRACE_TEXT_BYTES`]; past a cap
//! the trace stops and says so in `stopped`, and the build goes on as if untraced.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::text::char_floor;
use crate::limits::{MACRO_TRACE_BYTES, MACRO_TRACE_ENTRIES, MACRO_TRACE_TEXT_BYTES};
use crate::said::Said;
use crate::texts;

/// Which variables a variable macro works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum VariableScope {
    /// The session's variables (`{{setvar}}`...).
    Local,
    /// The build's own global variables (`{{setglobalvar}}`...).
    Global,
}

/// What a variable macro did to its variable: its value before and after (absent: not set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct VariableChange {
    pub scope: VariableScope,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// One macro evaluated, as the tracer shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct TracedMacro {
    /// The text it stands in, as the build names it: `template:ID#STEP`, `lorebook:IDS`,
    /// `history:I`, `profile`, `examples`...
    pub position: String,
    /// The build's message (index in its messages) that text became; absent when it became
    /// none of them (a text the budget dropped, a prefill, an empty one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u32>,
    /// Byte offset of its `{{` in the text it was read from: the position's text (with legacy
    /// names replaced), or, when `depth` is above 0, the value that held it.
    pub offset: u32,
    /// 0 for a macro of the text itself; 1 and up inside a value expanded again (a description
    /// holding `{{user}}`).
    pub depth: u32,
    /// `if` or `unless` when it is the condition of a block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// The macro as written, nested macros and all.
    pub written: String,
    /// Its name, as written.
    pub name: String,
    /// Its arguments as it was given them (nested macros already expanded); absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// What it became (empty for `{{setvar}}`, `{{trim}}`, a comment).
    pub output: String,
    /// It stayed as written: unknown, wrong arguments, or past a cap (a warning says which).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<VariableChange>,
}

/// The variables at one moment: the session's and the build's global ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct VariableState {
    pub local: BTreeMap<String, String>,
    pub global: BTreeMap<String, String>,
}

/// The tracer's answer for one build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct MacroTrace {
    /// Every macro evaluated, in the order it was (an inner macro before the one holding it).
    pub expansions: Vec<TracedMacro>,
    /// The variables as the build found them (the preset's, the session's over them).
    pub before: VariableState,
    /// The variables as the build left them.
    pub after: VariableState,
    /// Set when the trace reached a cap and recorded no more; the build itself went on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Said>,
}

/// What the tracer keeps while a build runs.
#[derive(Debug)]
pub(super) struct Recorder {
    pub(super) trace: MacroTrace,
    bytes: usize,
}

impl Recorder {
    pub(super) fn new(local: &BTreeMap<String, String>) -> Self {
        Recorder {
            trace: MacroTrace {
                before: VariableState {
                    local: snapshot(local),
                    global: BTreeMap::new(),
                },
                ..MacroTrace::default()
            },
            bytes: 0,
        }
    }

    /// Whether another expansion is still recorded.
    pub(super) fn open(&self) -> bool {
        self.trace.stopped.is_none()
    }

    /// Records `traced` (its texts already cut with [`cut`]), or stops the trace at a cap.
    pub(super) fn record(&mut self, traced: TracedMacro) {
        if !self.open() {
            return;
        }
        let size = traced.written.len()
            + traced.name.len()
            + traced.position.len()
            + traced.arguments.as_ref().map_or(0, String::len)
            + traced.output.len()
            + traced.variable.as_ref().map_or(0, |v| {
                v.name.len()
                    + v.before.as_ref().map_or(0, String::len)
                    + v.after.as_ref().map_or(0, String::len)
            });
        if self.trace.expansions.len() >= MACRO_TRACE_ENTRIES {
            self.trace.stopped = Some(texts::TRACE_ENTRIES_CAP.with("count", MACRO_TRACE_ENTRIES));
            return;
        }
        if self.bytes + size > MACRO_TRACE_BYTES {
            self.trace.stopped = Some(
                texts::TRACE_BYTES_CAP.with("size", format!("{} MiB", MACRO_TRACE_BYTES >> 20)),
            );
            return;
        }
        self.bytes += size;
        self.trace.expansions.push(traced);
    }

    /// The trace, with the variables as the build left them.
    pub(super) fn finish(
        mut self,
        local: &BTreeMap<String, String>,
        global: &BTreeMap<String, String>,
    ) -> MacroTrace {
        self.trace.after = VariableState {
            local: snapshot(local),
            global: snapshot(global),
        };
        self.trace
    }
}

/// The variables as the trace shows them: each name and value cut as [`cut`] cuts.
fn snapshot(vars: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut bytes = 0;
    vars.iter()
        .map(|(k, v)| (cut(k, &mut bytes), cut(v, &mut bytes)))
        .collect()
}

/// `text` as the trace keeps it: at most [`MACRO_TRACE_TEXT_BYTES`], cut at a character
/// boundary and ended with `…` when longer; `bytes` counts what was kept.
pub(super) fn cut(text: &str, bytes: &mut usize) -> String {
    let kept = if text.len() <= MACRO_TRACE_TEXT_BYTES {
        text.to_string()
    } else {
        format!("{}…", &text[..char_floor(text, MACRO_TRACE_TEXT_BYTES)])
    };
    *bytes += kept.len();
    kept
}
