//! Caps on everything a file from a stranger can make grow. Presets, cards, lorebooks and regex
//! scripts come from the internet; a few kilobytes of macros, rules or keys can ask for gigabytes.
//! Each cap is far above what a real SillyTavern preset, card or lorebook needs (docs/ARCHITECTURE.md,
//! "Limits", says why each value was chosen); past it, the engine stops that one piece of work,
//! keeps what it has, and says so in a warning that names what hit the cap.

/// One expansion (one template, one lorebook entry, one history message) may produce at most
/// this many bytes of macro output. A card field of a few hundred kilobytes fits many times.
pub const MACRO_EXPANSION_BYTES: usize = 2 << 20;
/// One `{{setvar}}` / `{{addvar}}` variable holds at most this many bytes.
pub const MACRO_VARIABLE_BYTES: usize = 1 << 20;
/// All the macros of one build together produce (and store in variables) at most this many
/// bytes.
pub const MACRO_BUILD_BYTES: usize = 16 << 20;
/// A macro name longer than this is no macro: nothing is searched past it.
pub const MACRO_NAME_BYTES: usize = 64;
/// One build records at most this many macro evaluations (name and output hash) for the
/// turn-to-turn diff to name the macro a change came from; later ones are not recorded.
pub const MACRO_TRACE_ENTRIES: usize = 20_000;
/// The macro tracer (RULES 4.6) keeps at most this many bytes of text for one build: what each
/// macro was written as, given and became, and the variables it changed.
pub const MACRO_TRACE_BYTES: usize = 4 << 20;
/// Each text the macro tracer keeps is cut to this many bytes.
pub const MACRO_TRACE_TEXT_BYTES: usize = 1 << 10;
/// The lorebook tester's text (RULES 6.6) is at most this many bytes, as any file read is.
pub const LOREBOOK_TEST_TEXT_BYTES: usize = 50 * 1024 * 1024;
/// A variable name longer than this is refused.
pub const MACRO_VARIABLE_NAME_BYTES: usize = 256;

/// One regex rule may make one text at most this many bytes longer.
pub const REGEX_RULE_GROWTH: usize = 1 << 20;
/// All the regex rules of one build together may add at most this many bytes.
pub const REGEX_BUILD_GROWTH: usize = 32 << 20;

/// One compiled pattern (a regex rule or a `/regex/` lorebook key) may take this many bytes for
/// each of its automata; a pattern that needs more is refused with an error that says so.
pub const PATTERN_NFA_BYTES: usize = 1 << 20;
/// The lazy DFA of one pattern keeps at most this many bytes of states while it searches.
pub const PATTERN_DFA_CACHE_BYTES: usize = 512 << 10;
/// The patterns one build compiles and keeps take at most this many bytes together; keys past
/// it are reported and skipped.
pub const PATTERN_BUILD_BYTES: usize = 64 << 20;
/// The patterns the process keeps compiled between builds take at most this many bytes.
pub const PATTERN_CACHE_BYTES: usize = 64 << 20;
/// The search caches the process keeps between builds (each pattern's lazy DFA states) take at
/// most this many bytes together.
pub const PATTERN_SEARCH_CACHE_BYTES: usize = 32 << 20;

/// A build places at most this many messages recalled from long-term memory (RULES 5.15); the
/// library asks the search for no more.
pub const MEMORY_HITS: usize = 16;
/// A recalled message's text is cut to this many bytes when it is placed.
pub const MEMORY_HIT_BYTES: usize = 8 << 10;
