//! The macros of RULES 4: `{{name}}`, `{{name::arg::arg}}` and `{{name:a,b}}` in template and
//! lorebook text.
//!
//! One left-to-right scan matches each `{{` with its `}}` on a stack, so the innermost macro
//! closes first and its result becomes part of the enclosing macro's arguments
//! (`{{setvar::x::{{user}}}}`). Text that is not a macro is copied in runs. Unbalanced braces
//! stay as written; an unknown macro stays as written (any macros in its arguments expanded) and
//! adds a warning that shows its source.
//!
//! Formats and semantics chosen here:
//! - `{{time}}` "3:04 PM" (12-hour clock, no leading zero), `{{date}}` "November 22, 2026",
//!   `{{weekday}}` "Sunday", `{{isodate}}` "2026-11-22", `{{isotime}}` "15:04" (24-hour). All
//!   read the build's timestamp in its own offset, never the clock.
//! - `{{trim}}` removes itself and all white space on both sides of it (up to the nearest
//!   non-space character, within the same macro argument).
//! - `{{random}}` and `{{roll}}` draw from one SplitMix64 stream per build, seeded from the
//!   session id and the message count. `{{pick}}` seeds each use from the session, the position
//!   and how many picks that position has had, so editing other text does not change it.
//! - `{{random:a, b}}` splits on commas (`\,` is a literal comma) and trims each choice;
//!   `{{random::a::b}}` keeps choices as written.
//! - `{{roll}}` takes `NdM`, `dM` or `M`, with an optional `+K` or `-K`, as `{{roll:3d6}}`,
//!   `{{roll::3d6}}` or `{{roll 3d6}}`.
//! - `{{idle_duration}}` says in words how long ago the user's message before the newest one was
//!   written, measured to the build's timestamp; "just now" when there is none or its time is
//!   not readable.
//! - `<USER>`, `<BOT>`, `<CHAR>`, `<GROUP>` and `<CHARIFNOTGROUP>` (any case) become the names
//!   only when `MacroEnv::legacy_names` is on; they are replaced before the scan.
//! - `{{getvar::x}}` of an unset variable is empty. `{{addvar::x::n}}` adds numerically when the
//!   value (an unset or empty one counts as 0) and `n` are both numbers, else appends `n`.
//! - Character fields, the persona, the summary and variables are expanded again when they hold
//!   macros (a description with `{{user}}`), at most [`MAX_VALUE_DEPTH`] levels deep; chat
//!   messages (`{{lastMessage}}`, ...) are not, as macros do not apply to history.
//!
//! Bounds (docs/ARCHITECTURE.md, "Limits"): one expansion evaluates at most [`MAX_EVALUATIONS`]
//! macros and produces at most [`MACRO_EXPANSION_BYTES`]; a variable holds at most
//! [`MACRO_VARIABLE_BYTES`]; one build's macros produce at most [`MACRO_BUILD_BYTES`] (output
//! and stored values together). Past a cap the macro that would cross it and every later one stay
//! as written, and a warning says which cap. A macro that is left as written costs no more than
//! its name: names, dice and variable names are only looked for in the first few bytes, so text
//! nested in many unknown macros is not read again at every level.
//!
//! Blocks (`{{#if NAME}}…{{else}}…{{/if}}`, `{{#unless NAME}}…{{/unless}}`) are resolved first,
//! in `blocks.rs`: a block is taken when the macro it names expands to more than white space.
//!
//! The module's files: `blocks.rs` resolves the blocks, `scan.rs` parses (the left-to-right scan, a macro's name and arguments),
//! `evaluate.rs` evaluates one macro within the caps, `variables.rs` holds `{{setvar}}` and
//! `{{addvar}}`, `random.rs` the seeded generator, `{{pick}}` and the dice.
//!
//! [`MACRO_EXPANSION_BYTES`]: crate::limits::MACRO_EXPANSION_BYTES
//! [`MACRO_VARIABLE_BYTES`]: crate::limits::MACRO_VARIABLE_BYTES
//! [`MACRO_BUILD_BYTES`]: crate::limits::MACRO_BUILD_BYTES

mod blocks;
mod evaluate;
mod idle;
mod legacy;
mod random;
mod scan;
#[cfg(test)]
mod tests;
mod variables;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, FixedOffset};
use xxhash_rust::xxh3::xxh3_64_with_seed;

pub use blocks::{block_problems, BlockProblem, BlockProblemKind, MAX_BLOCK_DEPTH};
use evaluate::Expander;
use random::{SplitMix64, RANDOM_STREAM};

/// How many times a macro value holding macros is expanded again; a value that names itself
/// stops here.
pub const MAX_VALUE_DEPTH: usize = 4;
/// Macros one `expand` call evaluates at most; later ones stay as written.
pub const MAX_EVALUATIONS: usize = 10_000;

pub struct MacroEnv<'a> {
    pub user: &'a str,
    pub char_name: &'a str,
    pub description: &'a str,
    pub personality: &'a str,
    pub scenario: &'a str,
    pub persona: &'a str,
    pub mes_examples: &'a str,
    /// `{{wiBefore}}` and `{{wiAfter}}`: the lorebook's texts for the places before and after the
    /// character, when a template writes them itself (RULES 4.2).
    pub wi_before: &'a str,
    pub wi_after: &'a str,
    pub summary: &'a str,
    pub model: &'a str,
    pub last_message: &'a str,
    pub last_user_message: &'a str,
    pub last_char_message: &'a str,
    /// `{{lastMessageId}}`: the stored index of the newest message (the input counts), if any.
    pub last_message_id: Option<usize>,
    /// `{{firstIncludedMessageId}}`: the stored index of the oldest history message the build
    /// reads, if any.
    pub first_included_message_id: Option<usize>,
    /// `{{idle_duration}}`: when the user's message before the newest message was written, as
    /// stored (`createdAt`).
    pub idle_since: Option<&'a str>,
    /// `<USER>`, `<BOT>`, `<CHAR>` (and `<GROUP>`, `<CHARIFNOTGROUP>`) stand for the names
    /// (RULES 4.2; a setting of the assembler).
    pub legacy_names: bool,
    pub timestamp: DateTime<FixedOffset>,
    pub session_id: &'a str,
    pub message_count: usize,
}

/// What macros carry from one `expand` call to the next within a build: the variables and the
/// random stream.
pub struct MacroState {
    variables: BTreeMap<String, String>,
    seed: u64,
    random: SplitMix64,
    /// How many `pick`s each position has had in this build.
    picks: HashMap<String, u64>,
    /// Bytes this build's macros have produced so far: their output and the values they stored.
    produced: usize,
    /// Set when `produced` reached [`MACRO_BUILD_BYTES`]: every later macro stays as written.
    exhausted: bool,
    /// The macros evaluated since the last [`MacroState::take_trace`], in order, at most
    /// [`crate::limits::MACRO_TRACE_ENTRIES`] a build.
    trace: Vec<MacroUse>,
    traced: usize,
    /// Whether evaluations are recorded at all ([`MacroState::traced`]).
    tracing: bool,
}

/// One macro evaluation as the turn-to-turn diff reads it: the name as written and a hash of
/// what it produced. Two builds whose expansions of the same text differ first at one macro
/// changed because of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacroUse {
    pub name: String,
    pub output: u64,
}

impl MacroState {
    pub fn new(env: &MacroEnv<'_>, variables: BTreeMap<String, String>) -> Self {
        let seed = xxh3_64_with_seed(env.session_id.as_bytes(), env.message_count as u64);
        MacroState {
            variables,
            seed,
            random: SplitMix64(seed ^ RANDOM_STREAM),
            picks: HashMap::new(),
            produced: 0,
            exhausted: false,
            trace: Vec::new(),
            traced: 0,
            tracing: false,
        }
    }

    /// The same state recording each evaluation for [`MacroState::take_trace`].
    pub fn traced(mut self) -> Self {
        self.tracing = true;
        self
    }

    /// The macros evaluated since the last call, in order.
    pub fn take_trace(&mut self) -> Vec<MacroUse> {
        std::mem::take(&mut self.trace)
    }

    fn record(&mut self, name: &str, output: &str) {
        if self.tracing && self.traced < crate::limits::MACRO_TRACE_ENTRIES {
            self.traced += 1;
            self.trace.push(MacroUse {
                name: name.to_string(),
                output: xxhash_rust::xxh3::xxh3_64(output.as_bytes()),
            });
        }
    }

    pub fn variables(&self) -> &BTreeMap<String, String> {
        &self.variables
    }

    /// Bytes this build's macros have produced so far (output and stored values).
    pub fn produced(&self) -> usize {
        self.produced
    }
}

/// What one text's expansion was made of, for the turn-to-turn diff: where the text comes from
/// (`template:ID#STEP`, `lorebook:IDS`...), a hash of the text as written, and the macros it
/// evaluated in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpansionTrace {
    pub position: String,
    pub text: u64,
    pub macros: Vec<MacroUse>,
}

pub struct Expansion {
    pub text: String,
    /// What stayed as written and why; `Display` gives the English.
    pub warnings: Vec<crate::said::Said>,
}

/// A stored message's `createdAt` read as a time (RFC 3339, milliseconds since 1970, or
/// SillyTavern's "November 22, 2026 3:04pm" in the offset of `now`), as the time macros read it.
pub fn stored_time(created_at: &str, now: &DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
    idle::parse_time(created_at, now)
}

pub fn has_macros(text: &str) -> bool {
    text.contains("{{")
}

/// True when `text` has anything `env` expands: a macro, or a legacy name when they are on.
pub fn needs_expansion(text: &str, env: &MacroEnv<'_>) -> bool {
    has_macros(text) || (env.legacy_names && legacy::has_legacy_names(text))
}

/// Expands the macros in `text`. `position` names where the text comes from (a template and
/// step, a lorebook entry); it keeps `{{pick}}` stable there.
pub fn expand(text: &str, env: &MacroEnv<'_>, state: &mut MacroState, position: &str) -> Expansion {
    if !needs_expansion(text, env) {
        return Expansion {
            text: text.to_string(),
            warnings: Vec::new(),
        };
    }
    let mut expander = Expander::new(env, state, position);
    let replaced;
    let text = if env.legacy_names && legacy::has_legacy_names(text) {
        replaced = expander.legacy_names(text);
        replaced.as_str()
    } else {
        text
    };
    let text = if has_macros(text) {
        expander.expand_text(text, 0)
    } else {
        text.to_string()
    };
    Expansion {
        text,
        warnings: expander.warnings,
    }
}
