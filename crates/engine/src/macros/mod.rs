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
//! The module's files, each using only those listed before it: `random.rs` the seeded generator
//! and the dice; `idle.rs` times in words; `env.rs` what an expansion reads and what a build's
//! expansions share; `expander.rs` one expansion's bookkeeping (warnings, the caps charged,
//! `{{pick}}`'s seeds); `scan.rs` the left-to-right scan, a macro's name and arguments;
//! `variables.rs` `{{setvar}}` and `{{addvar}}`; `blocks.rs` the blocks; `legacy.rs` the legacy
//! names; `evaluate.rs` what each macro becomes; `memo.rs` the expansions kept between builds.
//! `mod.rs` is the entry point over them.
//!
//! [`MACRO_EXPANSION_BYTES`]: crate::limits::MACRO_EXPANSION_BYTES
//! [`MACRO_VARIABLE_BYTES`]: crate::limits::MACRO_VARIABLE_BYTES
//! [`MACRO_BUILD_BYTES`]: crate::limits::MACRO_BUILD_BYTES

mod blocks;
mod env;
mod evaluate;
mod expander;
mod idle;
mod legacy;
mod memo;
mod random;
mod scan;
#[cfg(test)]
mod tests;
mod text;
mod trace;
mod variables;

use chrono::{DateTime, FixedOffset};

pub use blocks::{block_problems, BlockProblem, BlockProblemKind, MAX_BLOCK_DEPTH};
pub use env::{
    has_macros, Expansion, ExpansionTrace, MacroEnv, MacroState, MacroUse, MAX_EVALUATIONS,
    MAX_VALUE_DEPTH,
};
use expander::Expander;
pub use memo::{MacroMemo, KEPT_BYTES};
pub use trace::{MacroTrace, TracedMacro, VariableChange, VariableScope, VariableState};

/// A stored message's `createdAt` read as a time (RFC 3339, milliseconds since 1970, or
/// SillyTavern's "November 22, 2026 3:04pm" in the offset of `now`), as the time macros read it.
pub fn stored_time(created_at: &str, now: &DateTime<FixedOffset>) -> Option<DateTime<FixedOffset>> {
    idle::parse_time(created_at, now)
}

/// True when `text` has anything `env` expands: a macro, or a legacy name when they are on.
pub fn needs_expansion(text: &str, env: &MacroEnv<'_>) -> bool {
    has_macros(text) || (env.legacy_names && legacy::has_legacy_names(text))
}

/// Expands the macros in `text`. `position` names where the text comes from (a template and
/// step, a lorebook entry); it keeps `{{pick}}` stable there.
pub fn expand(text: &str, env: &MacroEnv<'_>, state: &mut MacroState, position: &str) -> Expansion {
    expand_reporting(text, env, state, position).0
}

/// [`expand`], and whether the expansion was pure: every macro it evaluated read only the
/// environment (no variable, random draw, pick or clock), so the same text in an environment of
/// the same [`MacroEnv::fingerprint`] expands the same (`memo.rs`).
fn expand_reporting(
    text: &str,
    env: &MacroEnv<'_>,
    state: &mut MacroState,
    position: &str,
) -> (Expansion, bool) {
    if !needs_expansion(text, env) {
        let expansion = Expansion {
            text: text.to_string(),
            warnings: Vec::new(),
        };
        return (expansion, true);
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
    let expansion = Expansion {
        text,
        warnings: expander.warnings,
    };
    (expansion, !expander.impure)
}

/// [`super::expand`] through `memo`: a kept outcome for this text in an environment of this
/// `fingerprint` ([`MacroEnv::fingerprint`]), else the expansion, kept when it was pure. A traced
/// state, or one whose build cap is reached or would be by the kept outcome, expands afresh.
pub fn expand_kept(
    text: &str,
    env: &MacroEnv<'_>,
    fingerprint: u64,
    state: &mut MacroState,
    position: &str,
    memo: &MacroMemo,
) -> Expansion {
    if state.tracing || state.exhausted {
        return expand(text, env, state, position);
    }
    let key = (
        xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
        text.len(),
        fingerprint,
    );
    if let Some(kept) = memo.get(key) {
        if state.produced + kept.produced <= crate::limits::MACRO_BUILD_BYTES {
            state.produced += kept.produced;
            return Expansion {
                text: kept.text.clone(),
                warnings: kept.warnings.clone(),
            };
        }
    }
    let before = state.produced;
    let (expansion, pure) = expand_reporting(text, env, state, position);
    if pure && !state.exhausted {
        memo.keep(
            key,
            memo::Kept {
                text: expansion.text.clone(),
                warnings: expansion.warnings.clone(),
                produced: state.produced - before,
            },
        );
    }
    expansion
}
