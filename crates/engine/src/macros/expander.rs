//! One expansion's bookkeeping: the environment and state it works on, the warnings it gives
//! (each once), the bytes its macros produce charged against the caps (RULES 4.4), and the seed
//! of each `{{pick}}` (RULES 4.3). What each macro becomes is `evaluate.rs`; the scan is
//! `scan.rs`.

use std::collections::HashSet;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::env::{MacroEnv, MacroState};
use super::random::SplitMix64;
use super::text::in_words;
use crate::limits::{MACRO_BUILD_BYTES, MACRO_EXPANSION_BYTES};
use crate::said::Said;
use crate::texts;

/// Distinct warnings one `expand` call reports at most.
const MAX_WARNINGS: usize = 50;

pub(super) enum Output {
    Text(String),
    /// The macro stays as written (with the macros in its arguments expanded).
    Kept,
    Trim,
}

pub(super) enum Problem {
    Unknown,
    NoArguments,
    NeedsArguments,
    BadDice,
    NoVariableName,
    LongVariableName,
    /// A cap was reached; the warning is already given.
    Stopped,
}

pub(super) enum Value {
    Plain(String),
    /// A value that may itself hold macros (a description with `{{user}}`).
    Expandable(String),
    Trim,
}

pub(super) struct Expander<'x, 'a> {
    pub(super) env: &'x MacroEnv<'a>,
    pub(super) state: &'x mut MacroState,
    pub(super) position: &'x str,
    pub(super) warnings: Vec<Said>,
    pub(super) warned: HashSet<Said>,
    pub(super) evaluations: usize,
    /// Bytes this expansion's macros have produced (output and stored values).
    pub(super) produced: usize,
    /// Set when a cap was reached: every later macro of this expansion stays as written.
    pub(super) stopped: bool,
    /// Set when a macro read more than the environment: a variable, the random stream, a pick's
    /// seed or the clock (`memo.rs` keeps only expansions without such a macro).
    pub(super) impure: bool,
    /// The block whose condition is being evaluated (`if`, `unless`), for the macro tracer.
    pub(super) block: Option<&'static str>,
    /// With the macro tracer: for the text being scanned, each run of text its blocks kept, as
    /// (offset in the scanned text, offset in the text as written); none without the tracer.
    pub(super) segments: Option<Vec<(usize, usize)>>,
}

impl<'x, 'a> Expander<'x, 'a> {
    pub(super) fn new(env: &'x MacroEnv<'a>, state: &'x mut MacroState, position: &'x str) -> Self {
        Expander {
            env,
            state,
            position,
            warnings: Vec::new(),
            warned: HashSet::new(),
            evaluations: 0,
            produced: 0,
            stopped: false,
            impure: false,
            block: None,
            segments: None,
        }
    }
}

impl Expander<'_, '_> {
    pub(super) fn warn(&mut self, warning: impl FnOnce() -> Said) {
        if self.warnings.len() >= MAX_WARNINGS {
            return;
        }
        let warning = warning();
        if self.warned.insert(warning.clone()) {
            self.warnings.push(warning);
        }
    }

    /// Counts `bytes` of macro output (or of a stored value) against this expansion's and this
    /// build's caps; false, with a warning, when they would cross one.
    pub(super) fn charge(&mut self, bytes: usize) -> bool {
        if self.produced + bytes > MACRO_EXPANSION_BYTES {
            self.stopped = true;
            self.warn(|| texts::EXPANSION_CAP.with("size", in_words(MACRO_EXPANSION_BYTES)));
            return false;
        }
        if self.state.produced + bytes > MACRO_BUILD_BYTES {
            self.stopped = true;
            // Said once per build, where it happened; later expansions stay as written.
            if !std::mem::replace(&mut self.state.exhausted, true) {
                self.warn(|| texts::BUILD_CAP.with("size", in_words(MACRO_BUILD_BYTES)));
            }
            return false;
        }
        self.produced += bytes;
        self.state.produced += bytes;
        true
    }

    /// Where the scanned text's byte `at` stood in the text as written, before its blocks were
    /// resolved (only the macro tracer asks, and only it notes the runs).
    pub(super) fn source_offset(&self, at: usize) -> usize {
        match &self.segments {
            Some(runs) if !runs.is_empty() => {
                let i = runs
                    .partition_point(|&(out, _)| out <= at)
                    .saturating_sub(1);
                let (out, source) = runs[i];
                source + at.saturating_sub(out)
            }
            _ => at,
        }
    }

    /// The generator for the next `{{pick}}` at this position: the same session, position and
    /// occurrence always give the same choice.
    pub(super) fn pick_seed(&mut self) -> SplitMix64 {
        let occurrence = match self.state.picks.get_mut(self.position) {
            Some(count) => {
                *count += 1;
                *count - 1
            }
            None => {
                self.state.picks.insert(self.position.to_string(), 1);
                0
            }
        };
        let mut key = Vec::with_capacity(self.position.len() + 9);
        key.extend_from_slice(self.position.as_bytes());
        key.push(0xff); // never in UTF-8, so the position cannot run into the count
        key.extend_from_slice(&occurrence.to_le_bytes());
        SplitMix64(xxh3_64_with_seed(&key, self.state.seed))
    }
}
