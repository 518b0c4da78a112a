//! What an expansion reads and what a build's expansions share: the environment (names, fields,
//! the chat's last messages, the time), the state carried from one text to the next (variables,
//! the random stream, the bytes produced, the trace), and the caps on evaluation.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, FixedOffset};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::random::{SplitMix64, RANDOM_STREAM};
use super::trace::{MacroTrace, Recorder};

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
    pub(super) variables: BTreeMap<String, String>,
    /// The global variables (`{{setglobalvar}}`...): none kept between builds, so each build
    /// starts without any.
    pub(super) globals: BTreeMap<String, String>,
    pub(super) seed: u64,
    pub(super) random: SplitMix64,
    /// How many `pick`s each position has had in this build.
    pub(super) picks: HashMap<String, u64>,
    /// Bytes this build's macros have produced so far: their output and the values they stored.
    pub(super) produced: usize,
    /// Set when `produced` reached [`crate::limits::MACRO_BUILD_BYTES`]: every later macro stays as written.
    pub(super) exhausted: bool,
    /// The macros evaluated since the last [`MacroState::take_trace`], in order, at most
    /// [`crate::limits::MACRO_TRACE_ENTRIES`] a build.
    trace: Vec<MacroUse>,
    traced: usize,
    /// Whether evaluations are recorded at all ([`MacroState::traced`]).
    pub(super) tracing: bool,
    /// The macro tracer's record ([`MacroState::traced_in_detail`]); none without it, so an
    /// untraced build pays one test of `None` per macro.
    pub(super) detail: Option<Box<Recorder>>,
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
            globals: BTreeMap::new(),
            seed,
            random: SplitMix64(seed ^ RANDOM_STREAM),
            picks: HashMap::new(),
            produced: 0,
            exhausted: false,
            trace: Vec::new(),
            traced: 0,
            tracing: false,
            detail: None,
        }
    }

    /// The same state traced ([`MacroState::traced`]) and recording every macro in detail for
    /// the macro tracer (RULES 4.6), starting from the variables it holds now.
    pub fn traced_in_detail(mut self) -> Self {
        self.detail = Some(Box::new(Recorder::new(&self.variables)));
        self.traced()
    }

    /// The macro tracer's record with the variables as they are now; `None` unless the state
    /// was [`MacroState::traced_in_detail`].
    pub fn take_detail(&mut self) -> Option<MacroTrace> {
        let recorder = self.detail.take()?;
        Some(recorder.finish(&self.variables, &self.globals))
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

    pub(super) fn record(&mut self, name: &str, output: &str) {
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

pub fn has_macros(text: &str) -> bool {
    text.contains("{{")
}
