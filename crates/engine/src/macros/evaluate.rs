//! Evaluation of one macro (RULES 4.2) whose arguments are already expanded, within the caps of
//! RULES 4.4: what each name becomes, the warnings for what stays as written, and the bytes
//! charged against the expansion's and the build's caps.

use chrono::{Datelike, Timelike};

use super::blocks::is_block_tag;
use super::env::{has_macros, MAX_EVALUATIONS, MAX_VALUE_DEPTH};
use super::expander::{Expander, Output, Problem, Value};
use super::idle::idle_duration;
use super::random::Dice;
use super::scan::split_macro;
use super::text::shorten;
use super::trace::{cut, TracedMacro, VariableChange, VariableScope};
use super::variables::Scope;
use crate::limits::MACRO_VARIABLE_NAME_BYTES;
use crate::texts;

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

impl Expander<'_, '_> {
    /// Evaluates one macro whose arguments are already expanded (`body`); `raw` is its source
    /// and `at` where it stands in the text as written (for the macro tracer).
    pub(super) fn evaluate(&mut self, body: &str, raw: &str, at: usize, depth: usize) -> Output {
        if self.state.detail.is_none() {
            return self.outcome(body, raw, depth);
        }
        self.evaluate_traced(body, raw, at, depth)
    }

    /// [`Self::evaluate`] with the macro tracer: the macro, what it became and the variable it
    /// worked on before and after, recorded (RULES 4.6). Block tags and the macros past a cap
    /// are not macros evaluated, and are not recorded.
    fn evaluate_traced(&mut self, body: &str, raw: &str, at: usize, depth: usize) -> Output {
        let open = self.state.detail.as_ref().is_some_and(|d| d.open());
        if !open || is_block_tag(body) || self.stopped || self.state.exhausted {
            return self.outcome(body, raw, depth);
        }
        let variable = traced_variable(body);
        // Cut as the trace keeps it, from the value in place: a long value is never copied
        // whole for every macro that reads it.
        let value = |this: &mut Self| {
            variable.as_ref().and_then(|(scope, name)| {
                let mut ignored = 0;
                Some(cut(this.variables_of(*scope).get(name)?, &mut ignored))
            })
        };
        let before = value(self);
        let output = self.outcome(body, raw, depth);
        let after = value(self);
        let (name, arguments) = match spaced_roll(body) {
            Some(formula) => ("roll", Some(formula)),
            None => split_macro(body).map_or((body, None), |(name, args)| {
                (name.trim(), args.map(|a| a.text))
            }),
        };
        let (text, kept) = match &output {
            Output::Text(text) => (text.as_str(), false),
            Output::Trim => ("", false),
            Output::Kept => (raw, true),
        };
        let mut bytes = 0;
        let traced = TracedMacro {
            position: cut(self.position, &mut bytes),
            message: None,
            offset: u32::try_from(at).unwrap_or(u32::MAX),
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
            block: self.block.map(str::to_string),
            written: cut(raw, &mut bytes),
            name: cut(name, &mut bytes),
            arguments: arguments.map(|a| cut(a, &mut bytes)),
            output: cut(text, &mut bytes),
            kept,
            variable: variable.map(|(scope, name)| VariableChange {
                scope: match scope {
                    Scope::Local => VariableScope::Local,
                    Scope::Global => VariableScope::Global,
                },
                name: cut(&name, &mut bytes),
                before: before.inspect(|v| bytes += v.len()),
                after: after.inspect(|v| bytes += v.len()),
            }),
        };
        if let Some(detail) = &mut self.state.detail {
            detail.record(traced);
        }
        output
    }

    /// What one macro becomes, or why it stays as written.
    fn outcome(&mut self, body: &str, raw: &str, depth: usize) -> Output {
        // Block tags were resolved, or warned about, before the scan.
        if is_block_tag(body) || self.stopped || self.state.exhausted {
            return Output::Kept;
        }
        if self.evaluations >= MAX_EVALUATIONS {
            self.warn(|| texts::TOO_MANY_MACROS.with("count", MAX_EVALUATIONS));
            return Output::Kept;
        }
        self.evaluations += 1;
        let text = match self.value(body) {
            Ok(Value::Plain(s)) => s,
            Ok(Value::Expandable(s)) => self.expand_value(s, depth),
            Ok(Value::Trim) => return Output::Trim,
            Err(Problem::Stopped) => return Output::Kept,
            Err(problem) => {
                let text = match problem {
                    Problem::Unknown => texts::UNKNOWN_MACRO,
                    Problem::NoArguments => texts::NO_ARGUMENTS,
                    Problem::NeedsArguments => texts::NEEDS_ARGUMENTS,
                    Problem::BadDice => texts::BAD_DICE,
                    Problem::NoVariableName => texts::NO_VARIABLE_NAME,
                    Problem::LongVariableName => texts::LONG_VARIABLE_NAME,
                    Problem::Stopped => return Output::Kept,
                };
                self.warn(|| {
                    let said = text.with("macro", shorten(raw));
                    match problem {
                        Problem::LongVariableName => said.with("bytes", MACRO_VARIABLE_NAME_BYTES),
                        _ => said,
                    }
                });
                return Output::Kept;
            }
        };
        if self.charge(text.len()) {
            if self.state.tracing {
                let name = match spaced_roll(body) {
                    Some(_) => "roll",
                    None => split_macro(body).map_or("", |(name, _)| name.trim()),
                };
                self.state.record(name, &text);
            }
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
            self.warn(|| texts::NESTED_TOO_DEEP.with("depth", MAX_VALUE_DEPTH));
            return value;
        }
        self.expand_text(&value, depth + 1)
    }

    /// `text`'s blocks resolved, then its macros expanded (RULES 4.2).
    pub(super) fn expand_text(&mut self, text: &str, depth: usize) -> String {
        if self.state.detail.is_none() {
            let resolved = self.resolve_blocks(text, depth);
            return self.scan(&resolved, depth);
        }
        // The macro tracer names each macro's place in the text as written: the runs of text
        // the blocks keep are noted for this text (and the enclosing text's put back after).
        let outer = self.segments.replace(Vec::new());
        let resolved = self.resolve_blocks(text, depth);
        let out = self.scan(&resolved, depth);
        self.segments = outer;
        out
    }

    fn value(&mut self, body: &str) -> Result<Value, Problem> {
        if let Some(formula) = spaced_roll(body) {
            self.impure = true;
            let dice = Dice::parse(formula.trim()).ok_or(Problem::BadDice)?;
            return Ok(Value::Plain(dice.roll(&mut self.state.random).to_string()));
        }
        let (name, args) = split_macro(body).ok_or(Problem::Unknown)?;
        let name = name.trim().to_ascii_lowercase();
        self.impure |= reads_more_than_env(&name);
        let env = self.env;
        let t = &env.timestamp;
        let plain = |s: &str| Ok(Value::Plain(s.to_string()));
        let expandable = |s: &str| Ok(Value::Expandable(s.to_string()));
        match (name.as_str(), args) {
            ("user", None) => plain(env.user),
            ("char", None) => plain(env.char_name),
            // One character, no group: the group is the character, and everyone but the
            // character is the user.
            ("group" | "groupnotmuted" | "charifnotgroup", None) => plain(env.char_name),
            ("notchar", None) => plain(env.user),
            ("description", None) => expandable(env.description),
            ("personality", None) => expandable(env.personality),
            ("scenario", None) => expandable(env.scenario),
            ("persona", None) => expandable(env.persona),
            ("mesexamples", None) => expandable(env.mes_examples),
            ("wibefore" | "lorebefore", None) => expandable(env.wi_before),
            ("wiafter" | "loreafter", None) => expandable(env.wi_after),
            ("summary", None) => expandable(env.summary),
            ("model", None) => plain(env.model),
            ("lastmessage", None) => plain(env.last_message),
            ("lastusermessage", None) => plain(env.last_user_message),
            ("lastcharmessage", None) => plain(env.last_char_message),
            ("lastmessageid", None) => Ok(Value::Plain(index_text(env.last_message_id))),
            ("firstincludedmessageid", None) => {
                Ok(Value::Plain(index_text(env.first_included_message_id)))
            }
            ("idle_duration", None) => Ok(Value::Plain(idle_duration(env.idle_since, t))),
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
                "user"
                | "char"
                | "group"
                | "groupnotmuted"
                | "charifnotgroup"
                | "notchar"
                | "description"
                | "personality"
                | "scenario"
                | "persona"
                | "mesexamples"
                | "wibefore"
                | "lorebefore"
                | "wiafter"
                | "loreafter"
                | "summary"
                | "model"
                | "lastmessage"
                | "lastusermessage"
                | "lastcharmessage"
                | "lastmessageid"
                | "firstincludedmessageid"
                | "idle_duration"
                | "time"
                | "date"
                | "weekday"
                | "isodate"
                | "isotime"
                | "newline"
                | "trim",
                Some(_),
            ) => Err(Problem::NoArguments),

            (
                "random" | "pick" | "roll" | "getvar" | "setvar" | "addvar" | "incvar" | "decvar"
                | "hasvar" | "varexists" | "deletevar" | "flushvar" | "getglobalvar"
                | "setglobalvar" | "addglobalvar" | "incglobalvar" | "decglobalvar"
                | "hasglobalvar" | "globalvarexists" | "deleteglobalvar" | "flushglobalvar",
                None,
            ) => Err(Problem::NeedsArguments),
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
            ("getvar" | "getglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let name = args.variable_name()?;
                Ok(Value::Expandable(self.read(scope, name)))
            }
            ("setvar" | "setglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let (name, value) = args.variable()?;
                self.store(scope, name, value.to_string())?;
                plain("")
            }
            ("addvar" | "addglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let (name, delta) = args.variable()?;
                self.add(scope, name, delta)?;
                plain("")
            }
            ("incvar" | "incglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let name = args.variable_name()?;
                Ok(Value::Plain(self.add(scope, name, "1")?))
            }
            ("decvar" | "decglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let name = args.variable_name()?;
                Ok(Value::Plain(self.add(scope, name, "-1")?))
            }
            ("hasvar" | "varexists" | "hasglobalvar" | "globalvarexists", Some(args)) => {
                let scope = scope_of(&name);
                let name = args.variable_name()?;
                let set = self.is_set(scope, name);
                plain(if set { "true" } else { "false" })
            }
            ("deletevar" | "flushvar" | "deleteglobalvar" | "flushglobalvar", Some(args)) => {
                let scope = scope_of(&name);
                let name = args.variable_name()?;
                self.delete(scope, name);
                plain("")
            }
            _ => Err(Problem::Unknown),
        }
    }
}

/// Whether the macro of this (lower-case) name reads more than the environment: the clock, the
/// idle time, the random stream, a pick's seed or the variables. Unknown names stay as written,
/// which depends on the name alone.
fn reads_more_than_env(name: &str) -> bool {
    matches!(
        name,
        "idle_duration"
            | "time"
            | "date"
            | "weekday"
            | "isodate"
            | "isotime"
            | "random"
            | "pick"
            | "roll"
    ) || name.contains("var")
}

/// The variable a variable macro works on, for the macro tracer; `None` for other macros and
/// for a variable macro without a usable name.
fn traced_variable(body: &str) -> Option<(Scope, String)> {
    let (name, args) = split_macro(body)?;
    let name = name.trim().to_ascii_lowercase();
    let args = args?;
    let variable = match name.as_str() {
        "setvar" | "setglobalvar" | "addvar" | "addglobalvar" => args.variable().ok()?.0,
        "getvar" | "getglobalvar" | "incvar" | "incglobalvar" | "decvar" | "decglobalvar"
        | "hasvar" | "varexists" | "hasglobalvar" | "globalvarexists" | "deletevar"
        | "flushvar" | "deleteglobalvar" | "flushglobalvar" => args.variable_name().ok()?,
        _ => return None,
    };
    Some((scope_of(&name), variable.to_string()))
}

/// The variables a variable macro of this (lower-case) name works on.
fn scope_of(name: &str) -> Scope {
    if name.contains("global") {
        Scope::Global
    } else {
        Scope::Local
    }
}

/// `roll 3d6`: the formula of a roll written with a space instead of a colon.
fn spaced_roll(body: &str) -> Option<&str> {
    let head = body.as_bytes().get(..5)?;
    (head[..4].eq_ignore_ascii_case(b"roll") && head[4].is_ascii_whitespace()).then(|| &body[5..])
}

/// A message index as the id macros say it: empty when there is none.
fn index_text(index: Option<usize>) -> String {
    index.map(|i| i.to_string()).unwrap_or_default()
}
