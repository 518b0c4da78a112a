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
//! - `{{roll}}` takes `NdM`, `dM` or `M`, with an optional `+K` or `-K`.
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

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Datelike, FixedOffset, Timelike};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::limits::{
    MACRO_BUILD_BYTES, MACRO_EXPANSION_BYTES, MACRO_NAME_BYTES, MACRO_VARIABLE_BYTES,
    MACRO_VARIABLE_NAME_BYTES,
};

/// How many times a macro value holding macros is expanded again; a value that names itself
/// stops here.
pub const MAX_VALUE_DEPTH: usize = 4;
/// Macros one `expand` call evaluates at most; later ones stay as written.
pub const MAX_EVALUATIONS: usize = 10_000;
/// Distinct warnings one `expand` call reports at most.
const MAX_WARNINGS: usize = 50;
const MAX_DICE: u64 = 1_000;
const MAX_SIDES: u64 = 1_000_000_000;
const MAX_DICE_MODIFIER: i64 = 1_000_000_000_000;
/// Keeps the `random` stream apart from the `pick` seeds, which share the session seed.
const RANDOM_STREAM: u64 = 0x7261_6e64_6f6d_2121;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

pub struct MacroEnv<'a> {
    pub user: &'a str,
    pub char_name: &'a str,
    pub description: &'a str,
    pub personality: &'a str,
    pub scenario: &'a str,
    pub persona: &'a str,
    pub mes_examples: &'a str,
    pub summary: &'a str,
    pub model: &'a str,
    pub last_message: &'a str,
    pub last_user_message: &'a str,
    pub last_char_message: &'a str,
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

pub struct Expansion {
    pub text: String,
    pub warnings: Vec<String>,
}

pub fn has_macros(text: &str) -> bool {
    text.contains("{{")
}

/// Expands the macros in `text`. `position` names where the text comes from (a template and
/// step, a lorebook entry); it keeps `{{pick}}` stable there.
pub fn expand(text: &str, env: &MacroEnv<'_>, state: &mut MacroState, position: &str) -> Expansion {
    if !has_macros(text) {
        return Expansion {
            text: text.to_string(),
            warnings: Vec::new(),
        };
    }
    let mut expander = Expander {
        env,
        state,
        position,
        warnings: Vec::new(),
        warned: HashSet::new(),
        evaluations: 0,
        produced: 0,
        stopped: false,
    };
    let text = expander.scan(text, 0);
    Expansion {
        text,
        warnings: expander.warnings,
    }
}

/// SplitMix64 (Steele, Lea and Flood): small, fast, and good enough to choose among a few
/// options reproducibly.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; multiply-shift, whose bias (below n / 2^64) does not matter here.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// One open `{{` during the scan; the bottom frame is the text itself. Every frame writes into
/// one output buffer, so a macro kept as written costs nothing however deep it nests.
struct Frame {
    /// Where this frame's text starts in the output, just after its `{{`.
    start: usize,
    /// Byte offset of this frame's `{{` in the scanned text.
    open: usize,
    /// Set by `{{trim}}`: white space written next is dropped.
    skip_space: bool,
    /// Inside `{{// ...}}`: nothing in it is evaluated.
    comment: bool,
}

impl Frame {
    fn write(&mut self, out: &mut String, s: &str) {
        if self.skip_space {
            let rest = s.trim_start();
            if rest.is_empty() {
                return;
            }
            self.skip_space = false;
            out.push_str(rest);
        } else {
            out.push_str(s);
        }
    }
}

enum Output {
    Text(String),
    /// The macro stays as written (with the macros in its arguments expanded).
    Kept,
    Trim,
}

enum Problem {
    Unknown,
    NoArguments,
    NeedsArguments,
    BadDice,
    NoVariableName,
    LongVariableName,
    /// A cap was reached; the warning is already given.
    Stopped,
}

struct Expander<'x, 'a> {
    env: &'x MacroEnv<'a>,
    state: &'x mut MacroState,
    position: &'x str,
    warnings: Vec<String>,
    warned: HashSet<String>,
    evaluations: usize,
    /// Bytes this expansion's macros have produced (output and stored values).
    produced: usize,
    /// Set when a cap was reached: every later macro of this expansion stays as written.
    stopped: bool,
}

impl Expander<'_, '_> {
    fn warn(&mut self, warning: impl FnOnce() -> String) {
        if self.warnings.len() >= MAX_WARNINGS {
            return;
        }
        let warning = warning();
        if self.warned.insert(warning.clone()) {
            self.warnings.push(warning);
        }
    }

    fn scan(&mut self, text: &str, depth: usize) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut frames = vec![Frame {
            start: 0,
            open: 0,
            skip_space: false,
            comment: false,
        }];
        let mut literal = 0; // start of the text not yet copied
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => {
                    let run = bytes[i..].iter().take_while(|&&b| b == b'{').count();
                    if run < 2 {
                        i += 1;
                        continue;
                    }
                    // In `{{{user}}}` the first brace is text and the last two open the macro.
                    let open = i + run - 2;
                    let top = last(&mut frames);
                    top.write(&mut out, &text[literal..open]);
                    let comment = top.comment || text[open + 2..].trim_start().starts_with("//");
                    out.push_str("{{");
                    frames.push(Frame {
                        start: out.len(),
                        open,
                        skip_space: false,
                        comment,
                    });
                    i = open + 2;
                    literal = i;
                }
                b'}' if frames.len() > 1 && bytes.get(i + 1) == Some(&b'}') => {
                    last(&mut frames).write(&mut out, &text[literal..i]);
                    let Some(frame) = frames.pop() else { break };
                    let raw = &text[frame.open..i + 2];
                    i += 2;
                    literal = i;
                    let output = if frame.comment {
                        if last(&mut frames).comment {
                            Output::Kept
                        } else {
                            Output::Text(String::new())
                        }
                    } else {
                        self.evaluate(&out[frame.start..], raw, depth)
                    };
                    let parent = last(&mut frames);
                    match output {
                        Output::Kept => {
                            out.push_str("}}");
                            parent.skip_space = false;
                        }
                        Output::Text(s) => {
                            out.truncate(frame.start - 2);
                            parent.write(&mut out, &s);
                        }
                        Output::Trim => {
                            out.truncate(frame.start - 2);
                            let kept = out[parent.start..].trim_end().len();
                            out.truncate(parent.start + kept);
                            parent.skip_space = true;
                        }
                    }
                }
                _ => i += 1,
            }
        }
        // Unclosed `{{` are already in the output as written.
        last(&mut frames).write(&mut out, &text[literal..]);
        out
    }

    /// Counts `bytes` of macro output (or of a stored value) against this expansion's and this
    /// build's caps; false, with a warning, when they would cross one.
    fn charge(&mut self, bytes: usize) -> bool {
        if self.produced + bytes > MACRO_EXPANSION_BYTES {
            self.stopped = true;
            self.warn(|| {
                format!(
                    "macros produced more than {} here; the rest are left as written",
                    in_words(MACRO_EXPANSION_BYTES)
                )
            });
            return false;
        }
        if self.state.produced + bytes > MACRO_BUILD_BYTES {
            self.stopped = true;
            // Said once per build, where it happened; later expansions stay as written.
            if !std::mem::replace(&mut self.state.exhausted, true) {
                self.warn(|| {
                    format!(
                        "the macros of this build produced more than {}; from here on every macro is left as written",
                        in_words(MACRO_BUILD_BYTES)
                    )
                });
            }
            return false;
        }
        self.produced += bytes;
        self.state.produced += bytes;
        true
    }

    /// Stores `value` in variable `name`, within the variable's and the expansions' caps.
    fn store(&mut self, name: &str, value: String) -> Result<(), Problem> {
        if value.len() > MACRO_VARIABLE_BYTES {
            self.stopped = true;
            self.warn(|| {
                format!(
                    "variable \"{}\" would hold more than {}; it keeps its value and the rest are left as written",
                    shorten(name),
                    in_words(MACRO_VARIABLE_BYTES)
                )
            });
            return Err(Problem::Stopped);
        }
        if !self.charge(value.len()) {
            return Err(Problem::Stopped);
        }
        self.state.variables.insert(name.to_string(), value);
        Ok(())
    }

    /// Evaluates one macro whose arguments are already expanded (`body`); `raw` is its source.
    fn evaluate(&mut self, body: &str, raw: &str, depth: usize) -> Output {
        if self.stopped || self.state.exhausted {
            return Output::Kept;
        }
        if self.evaluations >= MAX_EVALUATIONS {
            self.warn(|| {
                format!("more than {MAX_EVALUATIONS} macros; the rest are left as written")
            });
            return Output::Kept;
        }
        self.evaluations += 1;
        let text = match self.value(body) {
            Ok(Value::Plain(s)) => s,
            Ok(Value::Expandable(s)) => self.expand_value(s, depth),
            Ok(Value::Trim) => return Output::Trim,
            Err(Problem::Stopped) => return Output::Kept,
            Err(problem) => {
                self.warn(|| {
                    let raw = shorten(raw);
                    match problem {
                        Problem::Unknown => format!("unknown macro {raw}"),
                        Problem::NoArguments => format!("macro {raw} takes no arguments"),
                        Problem::NeedsArguments => format!("macro {raw} needs arguments"),
                        Problem::BadDice => {
                            format!("macro {raw}: expected dice like 2d6, d20 or 20")
                        }
                        Problem::NoVariableName => format!("macro {raw} needs a variable name"),
                        Problem::LongVariableName => format!(
                            "macro {raw}: a variable name is at most {MACRO_VARIABLE_NAME_BYTES} bytes"
                        ),
                        Problem::Stopped => String::new(),
                    }
                });
                return Output::Kept;
            }
        };
        if self.charge(text.len()) {
            Output::Text(text)
        } else {
            Output::Kept
        }
    }

    fn expand_value(&mut self, value: String, depth: usize) -> String {
        if !has_macros(&value) {
            return value;
        }
        if depth >= MAX_VALUE_DEPTH {
            self.warn(|| {
                format!("macro values nest more than {MAX_VALUE_DEPTH} levels deep; the rest are left as written")
            });
            return value;
        }
        self.scan(&value, depth + 1)
    }

    fn value(&mut self, body: &str) -> Result<Value, Problem> {
        let (name, args) = split_macro(body).ok_or(Problem::Unknown)?;
        let name = name.trim().to_ascii_lowercase();
        let env = self.env;
        let t = &env.timestamp;
        let plain = |s: &str| Ok(Value::Plain(s.to_string()));
        let expandable = |s: &str| Ok(Value::Expandable(s.to_string()));
        match (name.as_str(), args) {
            ("user", None) => plain(env.user),
            ("char", None) => plain(env.char_name),
            ("description", None) => expandable(env.description),
            ("personality", None) => expandable(env.personality),
            ("scenario", None) => expandable(env.scenario),
            ("persona", None) => expandable(env.persona),
            ("mesexamples", None) => expandable(env.mes_examples),
            ("summary", None) => expandable(env.summary),
            ("model", None) => plain(env.model),
            ("lastmessage", None) => plain(env.last_message),
            ("lastusermessage", None) => plain(env.last_user_message),
            ("lastcharmessage", None) => plain(env.last_char_message),
            ("time", None) => {
                let (pm, hour) = t.hour12();
                let half = if pm { "PM" } else { "AM" };
                Ok(Value::Plain(format!("{hour}:{:02} {half}", t.minute())))
            }
            ("date", None) => {
                let month = MONTHS.get(t.month0() as usize).copied().unwrap_or_default();
                Ok(Value::Plain(format!("{month} {}, {}", t.day(), t.year())))
            }
            ("weekday", None) => {
                let index = t.weekday().num_days_from_monday() as usize;
                plain(WEEKDAYS.get(index).copied().unwrap_or_default())
            }
            ("isodate", None) => Ok(Value::Plain(format!(
                "{:04}-{:02}-{:02}",
                t.year(),
                t.month(),
                t.day()
            ))),
            ("isotime", None) => Ok(Value::Plain(format!("{:02}:{:02}", t.hour(), t.minute()))),
            ("newline", None) => plain("\n"),
            ("trim", None) => Ok(Value::Trim),
            (
                "user" | "char" | "description" | "personality" | "scenario" | "persona"
                | "mesexamples" | "summary" | "model" | "lastmessage" | "lastusermessage"
                | "lastcharmessage" | "time" | "date" | "weekday" | "isodate" | "isotime"
                | "newline" | "trim",
                Some(_),
            ) => Err(Problem::NoArguments),

            ("random" | "pick" | "roll" | "getvar" | "setvar" | "addvar", None) => {
                Err(Problem::NeedsArguments)
            }
            ("random", Some(args)) => {
                let choices = args.choices();
                let index = self.state.random.below(choices.len() as u64) as usize;
                Ok(Value::Plain(
                    choices.into_iter().nth(index).unwrap_or_default(),
                ))
            }
            ("pick", Some(args)) => {
                let choices = args.choices();
                let index = self.pick_seed().below(choices.len() as u64) as usize;
                Ok(Value::Plain(
                    choices.into_iter().nth(index).unwrap_or_default(),
                ))
            }
            ("roll", Some(args)) => {
                let dice = Dice::parse(args.text.trim()).ok_or(Problem::BadDice)?;
                Ok(Value::Plain(dice.roll(&mut self.state.random).to_string()))
            }
            ("getvar", Some(args)) => {
                if args.text.len() > MACRO_VARIABLE_NAME_BYTES + 64 {
                    return Err(Problem::LongVariableName);
                }
                let name = args.text.trim();
                let value = self.state.variables.get(name).cloned().unwrap_or_default();
                Ok(Value::Expandable(value))
            }
            ("setvar", Some(args)) => {
                let (name, value) = args.variable()?;
                self.store(name, value.to_string())?;
                plain("")
            }
            ("addvar", Some(args)) => {
                let (name, delta) = args.variable()?;
                let current = self
                    .state
                    .variables
                    .get(name)
                    .map(String::as_str)
                    .unwrap_or("");
                let sum = add_values(current, delta);
                self.store(name, sum)?;
                plain("")
            }
            _ => Err(Problem::Unknown),
        }
    }

    /// The generator for the next `{{pick}}` at this position: the same session, position and
    /// occurrence always give the same choice.
    fn pick_seed(&mut self) -> SplitMix64 {
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

/// A macro's source as a warning shows it: long ones are cut.
fn shorten(raw: &str) -> String {
    const SHOWN: usize = 80;
    if raw.len() <= SHOWN {
        return raw.to_string();
    }
    format!("{}…", &raw[..char_floor(raw, SHOWN)])
}

/// The largest char boundary of `text` at or below `at`.
fn char_floor(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut end = at;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A cap in words: "2 MiB".
fn in_words(bytes: usize) -> String {
    format!("{} MiB", bytes >> 20)
}

fn last(stack: &mut [Frame]) -> &mut Frame {
    // The bottom frame is never popped while the scan runs.
    let index = stack.len().saturating_sub(1);
    &mut stack[index]
}

enum Value {
    Plain(String),
    /// A value that may itself hold macros (a description with `{{user}}`).
    Expandable(String),
    Trim,
}

/// A macro's arguments: what follows `name::` (`double`) or `name:`.
#[derive(Clone, Copy)]
struct Args<'b> {
    double: bool,
    text: &'b str,
}

impl<'b> Args<'b> {
    /// `random` and `pick` choices: `a::b` as written, or `a, b` trimmed with `\,` for a comma.
    fn choices(self) -> Vec<String> {
        if self.double {
            return self.text.split("::").map(str::to_string).collect();
        }
        let mut choices = Vec::new();
        let mut current = String::new();
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&',') => {
                    chars.next();
                    current.push(',');
                }
                ',' => choices.push(std::mem::take(&mut current).trim().to_string()),
                c => current.push(c),
            }
        }
        choices.push(current.trim().to_string());
        choices
    }

    /// `name::value` for `setvar` and `addvar`; the value may itself contain `::`. The name is
    /// looked for only in the first bytes, where a name can be.
    fn variable(self) -> Result<(&'b str, &'b str), Problem> {
        let head = &self.text[..char_floor(self.text, MACRO_VARIABLE_NAME_BYTES + 64)];
        let (name, value) = match head.find("::") {
            Some(at) => (&self.text[..at], &self.text[at + 2..]),
            None if head.len() < self.text.len() => return Err(Problem::LongVariableName),
            None => (self.text, ""),
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(Problem::NoVariableName);
        }
        if name.len() > MACRO_VARIABLE_NAME_BYTES {
            return Err(Problem::LongVariableName);
        }
        Ok((name, value))
    }
}

/// `name`, `name::args` or `name:args`; `None` when no name ends within [`MACRO_NAME_BYTES`].
fn split_macro(body: &str) -> Option<(&str, Option<Args<'_>>)> {
    let head = &body[..char_floor(body, MACRO_NAME_BYTES + 1)];
    let Some(at) = head.find(':') else {
        return (head.len() == body.len()).then_some((body, None));
    };
    let (name, rest) = (&body[..at], &body[at + 1..]);
    Some(match rest.strip_prefix(':') {
        Some(text) => (name, Some(Args { double: true, text })),
        None => (
            name,
            Some(Args {
                double: false,
                text: rest,
            }),
        ),
    })
}

/// `NdM+K`: N dice of M sides plus K.
struct Dice {
    count: u64,
    sides: u64,
    modifier: i64,
}

impl Dice {
    fn parse(text: &str) -> Option<Dice> {
        // `1000d1000000000+1000000000000` is the longest that can be valid.
        if text.len() > 32 {
            return None;
        }
        let (count, rest) = match text.find(['d', 'D']) {
            Some(at) => (&text[..at], &text[at + 1..]),
            None => ("", text),
        };
        let count = if count.is_empty() {
            1
        } else {
            parse_digits(count)?
        };
        let (sides, modifier) = match rest.find(['+', '-']) {
            Some(at) => {
                let magnitude = parse_digits(&rest[at + 1..])?;
                let magnitude = i64::try_from(magnitude).ok()?;
                let sign = if rest[at..].starts_with('-') { -1 } else { 1 };
                (&rest[..at], sign * magnitude)
            }
            None => (rest, 0),
        };
        let sides = parse_digits(sides)?;
        let fits = (1..=MAX_DICE).contains(&count)
            && (1..=MAX_SIDES).contains(&sides)
            && modifier.abs() <= MAX_DICE_MODIFIER;
        fits.then_some(Dice {
            count,
            sides,
            modifier,
        })
    }

    fn roll(&self, random: &mut SplitMix64) -> i128 {
        let dice: i128 = (0..self.count)
            .map(|_| i128::from(random.below(self.sides)) + 1)
            .sum();
        dice + i128::from(self.modifier)
    }
}

fn parse_digits(text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[derive(Clone, Copy)]
enum Number {
    Int(i64),
    Float(f64),
}

fn parse_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(n) = text.parse::<i64>() {
        return Some(Number::Int(n));
    }
    // Rust also reads "inf" and "NaN"; a variable holding those is text.
    let numeric = text.bytes().any(|b| b.is_ascii_digit())
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    let n = text
        .parse::<f64>()
        .ok()
        .filter(|n| numeric && n.is_finite())?;
    Some(Number::Float(n))
}

/// `{{addvar}}`: a numeric sum when both sides are numbers (unset or empty counts as 0), else
/// the text appended.
fn add_values(current: &str, delta: &str) -> String {
    let base = if current.trim().is_empty() {
        Some(Number::Int(0))
    } else {
        parse_number(current)
    };
    let as_float = |n: Number| match n {
        Number::Int(i) => i as f64,
        Number::Float(f) => f,
    };
    match (base, parse_number(delta)) {
        (Some(Number::Int(a)), Some(Number::Int(b))) if a.checked_add(b).is_some() => {
            (a + b).to_string()
        }
        (Some(a), Some(b)) if (as_float(a) + as_float(b)).is_finite() => {
            (as_float(a) + as_float(b)).to_string()
        }
        _ => format!("{current}{delta}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env() -> MacroEnv<'static> {
        MacroEnv {
            user: "Alice",
            char_name: "Bob",
            description: "{{char}} is a wizard who knows {{user}}.",
            personality: "dry",
            scenario: "a tower",
            persona: "a traveller",
            mes_examples: "<START>",
            summary: "they met",
            model: "gpt-4o",
            last_message: "bye {{user}}",
            last_user_message: "hi",
            last_char_message: "bye {{user}}",
            timestamp: DateTime::parse_from_rfc3339("2026-11-22T15:04:05+01:00").unwrap(),
            session_id: "session-1",
            message_count: 4,
        }
    }

    fn run_in(env: &MacroEnv<'_>, text: &str) -> Expansion {
        let mut state = MacroState::new(env, BTreeMap::new());
        expand(text, env, &mut state, "test")
    }

    fn run(text: &str) -> Expansion {
        run_in(&env(), text)
    }

    fn text(text: &str) -> String {
        let out = run(text);
        assert!(out.warnings.is_empty(), "{text}: {:?}", out.warnings);
        out.text
    }

    #[test]
    fn value_macros_read_the_environment() {
        assert_eq!(
            text("{{user}}|{{char}}|{{personality}}|{{scenario}}|{{persona}}|{{mesExamples}}|{{summary}}|{{model}}"),
            "Alice|Bob|dry|a tower|a traveller|<START>|they met|gpt-4o"
        );
        assert_eq!(text("{{lastUserMessage}}"), "hi");
    }

    #[test]
    fn character_fields_expand_their_own_macros() {
        assert_eq!(text("{{description}}"), "Bob is a wizard who knows Alice.");
    }

    #[test]
    fn chat_messages_are_not_expanded_again() {
        assert_eq!(
            text("{{lastMessage}}/{{lastCharMessage}}"),
            "bye {{user}}/bye {{user}}"
        );
    }

    #[test]
    fn a_value_that_names_itself_stops_with_a_warning() {
        let env = MacroEnv {
            description: "x{{description}}{{description}}",
            ..env()
        };
        let out = run_in(&env, "{{description}}");
        assert!(out.text.starts_with("xxxx"));
        assert!(out.text.contains("{{description}}"));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    }

    #[test]
    fn time_macros_read_the_build_timestamp() {
        assert_eq!(
            text("{{time}}|{{date}}|{{weekday}}|{{isodate}}|{{isotime}}"),
            "3:04 PM|November 22, 2026|Sunday|2026-11-22|15:04"
        );
        let env = MacroEnv {
            timestamp: DateTime::parse_from_rfc3339("2027-01-04T00:07:00-05:00").unwrap(),
            ..env()
        };
        assert_eq!(
            run_in(
                &env,
                "{{time}}|{{date}}|{{weekday}}|{{isodate}}|{{isotime}}"
            )
            .text,
            "12:07 AM|January 4, 2027|Monday|2027-01-04|00:07"
        );
    }

    #[test]
    fn newline_is_a_line_break() {
        assert_eq!(text("a{{newline}}b{{NEWLINE}}"), "a\nb\n");
    }

    #[test]
    fn trim_removes_itself_and_the_space_around_it() {
        assert_eq!(text("a\n\n  {{trim}}\n\n  b"), "ab");
        assert_eq!(text("{{trim}}\n\nstart"), "start");
        assert_eq!(text("end \n{{trim}}"), "end");
        assert_eq!(text("a\n{{trim}}{{newline}} {{user}}"), "aAlice");
        // Within an argument it trims the argument only.
        assert_eq!(
            text("{{setvar::x::  a {{trim}} b}}[{{getvar::x}}]"),
            "[  ab]"
        );
    }

    #[test]
    fn comments_are_removed_and_not_evaluated() {
        assert_eq!(text("a{{// note: keep it short, {{user}} }}b"), "ab");
        assert_eq!(text("a{{ // spaced }}b"), "ab");
        let env = env();
        let mut state = MacroState::new(&env, BTreeMap::new());
        let out = expand("{{//{{setvar::x::1}}}}{{getvar::x}}", &env, &mut state, "p");
        assert_eq!(out.text, "");
        assert!(state.variables().is_empty());
        // An unclosed comment stays as written.
        assert_eq!(run("a {{// {{user}}").text, "a {{// {{user}}");
    }

    #[test]
    fn random_chooses_among_its_arguments() {
        for t in [
            "{{random::a::b::c}}",
            "{{random:a,b,c}}",
            "{{random: a , b,c }}",
            "{{RANDOM::a::b::c}}",
        ] {
            let out = text(t);
            assert!(["a", "b", "c"].contains(&out.as_str()), "{t} gave {out:?}");
        }
        assert_eq!(text("{{random::only}}"), "only");
        assert_eq!(text("{{random:a\\,b}}"), "a,b");
        assert_eq!(text("{{random::  kept  }}"), "  kept  ");
        let out = run("{{random}}");
        assert_eq!(out.text, "{{random}}");
        assert_eq!(out.warnings.len(), 1);
    }

    #[test]
    fn random_choices_are_deterministic_per_session() {
        let t = "{{random::a::b::c::d}}{{random::a::b::c::d}}{{roll::d100}}";
        assert_eq!(run(t).text, run(t).text);
        let ids: Vec<String> = (0..64).map(|i| format!("session-{i}")).collect();
        let outcomes: HashSet<String> = ids
            .iter()
            .map(|id| {
                run_in(
                    &MacroEnv {
                        session_id: id,
                        ..env()
                    },
                    t,
                )
                .text
            })
            .collect();
        assert!(outcomes.len() > 8, "{outcomes:?}");
        let counts: HashSet<String> = (0..64)
            .map(|n| {
                run_in(
                    &MacroEnv {
                        message_count: n,
                        ..env()
                    },
                    t,
                )
                .text
            })
            .collect();
        assert!(counts.len() > 8, "{counts:?}");
    }

    #[test]
    fn random_draws_continue_across_calls_in_one_build() {
        let env = env();
        let mut state = MacroState::new(&env, BTreeMap::new());
        let draws: HashSet<String> = (0..32)
            .map(|_| expand("{{roll::1d1000000}}", &env, &mut state, "p").text)
            .collect();
        assert!(draws.len() > 1);
    }

    #[test]
    fn pick_is_stable_per_session_and_position() {
        let base = env();
        let pick = "{{pick::a::b::c::d::e::f}}";
        let picked = |text: &str, position: &str| {
            let mut state = MacroState::new(&base, BTreeMap::new());
            expand(text, &base, &mut state, position).text
        };
        let alone = picked(pick, "template:x#1");
        // Edits around it, even ones that draw random numbers, do not change it.
        let edited = picked(
            &format!("{{{{random::1::2}}}} intro {{{{roll::3d6}}}}{pick}"),
            "template:x#1",
        );
        assert!(edited.ends_with(&alone), "{edited} vs {alone}");
        // The second pick in a position is its own choice, stable too.
        assert_eq!(
            picked(&format!("{pick}{pick}"), "p"),
            picked(&format!("{pick}|{pick}"), "p").replace('|', "")
        );
        let positions: HashSet<String> = (0..32)
            .map(|i| picked(pick, &format!("template:x#{i}")))
            .collect();
        assert!(positions.len() > 1);
        let sessions: HashSet<String> = (0..32)
            .map(|i| {
                let id = format!("s{i}");
                run_in(
                    &MacroEnv {
                        session_id: &id,
                        ..env()
                    },
                    pick,
                )
                .text
            })
            .collect();
        assert!(sessions.len() > 1);
        assert!(["a", "b", "c"].contains(&text("{{pick:a, b, c}}").as_str()));
    }

    #[test]
    fn roll_throws_dice() {
        for i in 0..50 {
            let id = format!("s{i}");
            let env = MacroEnv {
                session_id: &id,
                ..env()
            };
            let two = run_in(&env, "{{roll::2d6}}").text.parse::<i64>().unwrap();
            assert!((2..=12).contains(&two));
            for t in ["{{roll:d20}}", "{{roll:20}}", "{{roll::1D20}}"] {
                let n = run_in(&env, t).text.parse::<i64>().unwrap();
                assert!((1..=20).contains(&n), "{t} gave {n}");
            }
        }
        assert_eq!(text("{{roll::1d1+2}}"), "3");
        assert_eq!(text("{{roll::3d1-5}}"), "-2");
        for bad in [
            "{{roll::0d6}}",
            "{{roll::d0}}",
            "{{roll::2d}}",
            "{{roll::abc}}",
            "{{roll::99999d6}}",
        ] {
            let out = run(bad);
            assert_eq!(out.text, bad);
            assert_eq!(out.warnings.len(), 1, "{bad}");
        }
    }

    #[test]
    fn variables_get_set_and_add() {
        assert_eq!(text("{{setvar::x::hello}}{{getvar::x}}"), "hello");
        assert_eq!(text("[{{getvar::missing}}]"), "[]");
        assert_eq!(text("{{setvar::n::2}}{{addvar::n::3}}{{getvar::n}}"), "5");
        assert_eq!(text("{{addvar::n::-4}}{{getvar::n}}"), "-4");
        assert_eq!(
            text("{{setvar::n::1.5}}{{addvar::n::2}}{{getvar::n}}"),
            "3.5"
        );
        assert_eq!(
            text("{{setvar::s::ab}}{{addvar::s::cd}}{{getvar::s}}"),
            "abcd"
        );
        assert_eq!(text("{{setvar::s::1}}{{addvar::s::x}}{{getvar::s}}"), "1x");
        assert_eq!(
            text("{{setvar::s::inf}}{{addvar::s::1}}{{getvar::s}}"),
            "inf1"
        );
        assert_eq!(text("{{setvar::u::a::b}}{{getvar::u}}"), "a::b");
        assert_eq!(
            add_values(&i64::MAX.to_string(), "1"),
            (i64::MAX as f64 + 1.0).to_string()
        );
    }

    #[test]
    fn variables_carry_across_calls_and_start_from_the_preset() {
        let env = env();
        let initial = BTreeMap::from([
            ("mood".to_string(), "calm".to_string()),
            ("n".to_string(), "1".to_string()),
        ]);
        let mut state = MacroState::new(&env, initial);
        assert_eq!(
            expand("{{getvar::mood}}", &env, &mut state, "a").text,
            "calm"
        );
        assert_eq!(
            expand(
                "{{setvar::mood::{{user}} is tense}}{{addvar::n::1}}",
                &env,
                &mut state,
                "b"
            )
            .text,
            ""
        );
        assert_eq!(
            expand("{{getvar::mood}}/{{getvar::n}}", &env, &mut state, "c").text,
            "Alice is tense/2"
        );
        assert_eq!(state.variables()["mood"], "Alice is tense");
    }

    #[test]
    fn a_variable_holding_macros_expands_them() {
        let env = env();
        let initial = BTreeMap::from([("greeting".to_string(), "hello {{user}}".to_string())]);
        let mut state = MacroState::new(&env, initial);
        assert_eq!(
            expand("{{getvar::greeting}}", &env, &mut state, "a").text,
            "hello Alice"
        );
    }

    #[test]
    fn names_are_case_insensitive_and_arguments_are_not() {
        assert_eq!(
            text("{{USER}} {{Char}} {{MesExamples}} {{IsoDate}}"),
            "Alice Bob <START> 2026-11-22"
        );
        assert_eq!(
            text("{{SetVar::X::Up}}{{GetVar::X}}[{{getvar::x}}]"),
            "Up[]"
        );
        assert_eq!(text("{{Random::Aa}}"), "Aa");
    }

    #[test]
    fn an_unknown_macro_stays_as_written_with_a_warning() {
        let out = run("a {{foo}} b {{Foo::{{user}}}} {{user::x}}");
        // Macros in its arguments are expanded; the warning shows the source.
        assert_eq!(out.text, "a {{foo}} b {{Foo::Alice}} {{user::x}}");
        assert_eq!(out.warnings.len(), 3, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("{{foo}}"));
        assert!(out.warnings[1].contains("{{Foo::{{user}}}}"));
        // The same unknown macro twice is reported once.
        assert_eq!(run("{{foo}}{{foo}}").warnings.len(), 1);
    }

    #[test]
    fn macros_in_arguments_expand_first() {
        assert_eq!(text("{{setvar::x::{{user}}}}{{getvar::x}}"), "Alice");
        assert_eq!(text("{{random::{{char}}}}"), "Bob");
        let out = text("{{random::{{char}}::{{char}}}}");
        assert_eq!(out, "Bob");
        assert_eq!(
            text("{{setvar::who::char}}{{setvar::name::{{getvar::{{getvar::who}}x}}}}[{{getvar::name}}]"),
            "[]"
        );
        assert_eq!(
            text("{{setvar::charx::deep}}{{setvar::who::char}}{{getvar::{{getvar::who}}x}}"),
            "deep"
        );
    }

    #[test]
    fn unbalanced_braces_stay_as_written() {
        assert_eq!(text("{{user"), "{{user");
        assert_eq!(text("user}}"), "user}}");
        assert_eq!(text("}}{{"), "}}{{");
        assert_eq!(text("{{ hello {{user}}"), "{{ hello Alice");
        assert_eq!(text("{{{user}}}"), "{Alice}");
        assert_eq!(text("{{{{user}}}}"), "{{Alice}}");
        assert_eq!(text("{user} {{user}"), "{user} {{user}");
        assert_eq!(text("{{user}}}}"), "Alice}}");
    }

    #[test]
    fn text_without_macros_is_returned_as_is() {
        let out = run("plain {text} with } and { but no macro");
        assert_eq!(out.text, "plain {text} with } and { but no macro");
        assert!(out.warnings.is_empty());
    }

    #[test]
    fn many_macros_stop_at_the_limit() {
        let text = "{{user}}".repeat(MAX_EVALUATIONS + 5);
        let out = run(&text);
        assert!(out.text.starts_with("AliceAlice"));
        assert!(out.text.ends_with(&"{{user}}".repeat(5)));
        assert_eq!(out.warnings.len(), 1);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!("{}{}", "{{random::".repeat(5_000), "}}".repeat(5_000));
        assert_eq!(text(&deep), "");
        // Past the evaluation limit the outer ones stay as written, in linear time.
        let deeper = format!("{}{}", "{{foo::".repeat(100_000), "}}".repeat(100_000));
        assert_eq!(run(&deeper).text, deeper);
        let open = "{{x".repeat(100_000);
        assert_eq!(run(&open).text, open);
    }

    #[test]
    fn a_variable_doubled_over_and_over_stops_at_its_cap() {
        // 1.3 KB that would double a variable into gigabytes.
        let bomb = format!(
            "{{{{setvar::x::ABCDEFGH}}}}{}{{{{getvar::x}}}}",
            "{{addvar::x::{{getvar::x}}}}".repeat(34)
        );
        let env = env();
        let mut state = MacroState::new(&env, BTreeMap::new());
        let out = expand(&bomb, &env, &mut state, "p");
        assert!(state.variables()["x"].len() <= MACRO_VARIABLE_BYTES);
        assert!(out.text.len() <= bomb.len() + MACRO_EXPANSION_BYTES);
        assert!(state.produced() <= MACRO_EXPANSION_BYTES);
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("MiB"), "{}", out.warnings[0]);
        // What came before the cap was expanded; the macro that crossed it is left as written.
        assert!(out.text.contains("{{addvar::x::"), "kept as written");
    }

    #[test]
    fn a_large_field_fanned_out_stops_at_the_expansion_cap() {
        let description = "d".repeat(100_000);
        let env = MacroEnv {
            description: &description,
            ..env()
        };
        let text = "{{description}}".repeat(5_000);
        let out = run_in(&env, &text);
        assert!(out.text.len() <= text.len() + MACRO_EXPANSION_BYTES);
        assert!(out.text.starts_with(&description));
        assert!(out.text.ends_with("{{description}}"));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(out.warnings[0].contains("2 MiB"), "{}", out.warnings[0]);
    }

    #[test]
    fn the_macros_of_one_build_stop_at_the_build_cap_and_say_so_once() {
        let description = "d".repeat(1 << 20);
        let env = MacroEnv {
            description: &description,
            ..env()
        };
        let mut state = MacroState::new(&env, BTreeMap::new());
        let mut warnings = Vec::new();
        let mut total = 0;
        for i in 0..40 {
            let out = expand("{{description}}", &env, &mut state, &format!("t{i}"));
            total += out.text.len();
            warnings.extend(out.warnings);
        }
        assert!(state.produced() <= MACRO_BUILD_BYTES);
        assert!(total <= MACRO_BUILD_BYTES + 40 * "{{description}}".len());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("16 MiB"), "{}", warnings[0]);
        // Later expansions leave their macros as written.
        assert_eq!(
            expand("{{user}}", &env, &mut state, "late").text,
            "{{user}}"
        );
    }

    #[test]
    fn long_names_are_no_macros_and_cost_no_rereading() {
        // Without a colon in its first bytes a body is no macro name; 200,000 nested ones would
        // take minutes if every level read the text inside it again.
        let deep = format!("{}{}", "{{abc".repeat(200_000), "}}".repeat(200_000));
        assert_eq!(run(&deep).text, deep);
        let long = format!("{{{{{}}}}}", "x".repeat(MACRO_NAME_BYTES + 1));
        let out = run(&long);
        assert_eq!(out.text, long);
        assert!(out.warnings[0].starts_with("unknown macro"));
        // Variable names and dice are looked for in the first bytes only.
        let name = "n".repeat(MACRO_VARIABLE_NAME_BYTES + 1);
        let out = run(&format!("{{{{setvar::{name}::v}}}}"));
        assert!(
            out.warnings[0].contains("at most 256 bytes"),
            "{:?}",
            out.warnings
        );
        let dice = format!("{{{{roll::{}d6}}}}", "1".repeat(40));
        assert_eq!(run(&dice).warnings.len(), 1);
        let nested_dice = format!("{}{}", "{{roll::".repeat(100_000), "}}".repeat(100_000));
        assert_eq!(run(&nested_dice).text, nested_dice);
    }

    fn macro_soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{{"),
            Just("}}"),
            Just("{"),
            Just("}"),
            Just(":"),
            Just("::"),
            Just(","),
            Just("\\"),
            Just(" "),
            Just("\n"),
            Just("//"),
            Just("user"),
            Just("trim"),
            Just("random"),
            Just("pick"),
            Just("roll"),
            Just("2d6"),
            Just("d"),
            Just("+"),
            Just("setvar"),
            Just("getvar"),
            Just("addvar"),
            Just("description"),
            Just("x"),
            Just("1"),
            Just("é"),
            Just("日本"),
        ];
        proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
    }

    /// Soup that can grow: variables fed back into themselves and large fields.
    fn macro_soup_with_growth() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{{setvar::x::abcdefgh}}"),
            Just("{{addvar::x::{{getvar::x}}}}"),
            Just("{{addvar::y::{{getvar::x}}{{getvar::x}}}}"),
            Just("{{setvar::x::{{getvar::y}}{{description}}}}"),
            Just("{{getvar::x}}"),
            Just("{{getvar::y}}"),
            Just("{{description}}"),
            Just("{{persona}}"),
            Just("{{random::{{description}}::{{getvar::x}}}}"),
            Just("{{pick::{{getvar::y}}::a}}"),
            Just("{{trim}}"),
            Just("text "),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_text_expands_without_panic(text in any::<String>()) {
            let out = run(&text);
            if !text.contains("{{") {
                prop_assert_eq!(out.text, text);
                prop_assert!(out.warnings.is_empty());
            }
        }

        #[test]
        fn macro_soup_expands_without_panic_and_deterministically(text in macro_soup()) {
            let first = run(&text);
            let second = run(&text);
            prop_assert_eq!(&first.text, &second.text);
            prop_assert_eq!(first.warnings, second.warnings);
            if !text.contains("{{") {
                prop_assert_eq!(first.text, text);
            }
        }
    }

    proptest! {
        // Each case runs up to 24 expansions over values of 300 KB: a few dozen cases cover the
        // combinations without making the test suite slow.
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn no_macro_soup_exceeds_the_byte_caps(
            text in macro_soup_with_growth(),
            repeat in 1usize..4,
        ) {
            let big = "b".repeat(300_000);
            let env = MacroEnv { description: &big, persona: &big, ..env() };
            let mut state = MacroState::new(&env, BTreeMap::new());
            for i in 0..repeat * 8 {
                let out = expand(&text, &env, &mut state, &format!("p{i}"));
                prop_assert!(out.text.len() <= text.len() + MACRO_EXPANSION_BYTES);
                for value in state.variables().values() {
                    prop_assert!(value.len() <= MACRO_VARIABLE_BYTES);
                }
            }
            prop_assert!(state.produced() <= MACRO_BUILD_BYTES);
        }
    }
}
