//! Variables (RULES 4.2, 4.3): the local ones (the session's) and the global ones (a build's
//! own). `{{setvar}}`, `{{addvar}}`, `{{incvar}}` and `{{decvar}}` store values within the
//! variable's cap; adding adds numbers and appends anything else.

use super::expander::{Expander, Problem};
use super::scan::Args;
use super::text::{char_floor, in_words, shorten};
use crate::limits::{MACRO_VARIABLE_BYTES, MACRO_VARIABLE_NAME_BYTES};
use crate::texts;

/// Which variables a macro reads or writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    Local,
    Global,
}

impl Expander<'_, '_> {
    pub(super) fn variables_of(
        &mut self,
        scope: Scope,
    ) -> &mut std::collections::BTreeMap<String, String> {
        match scope {
            Scope::Local => &mut self.state.variables,
            Scope::Global => &mut self.state.globals,
        }
    }

    /// The value of variable `name`, empty when it is not set.
    pub(super) fn read(&mut self, scope: Scope, name: &str) -> String {
        self.variables_of(scope)
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    pub(super) fn is_set(&mut self, scope: Scope, name: &str) -> bool {
        self.variables_of(scope).contains_key(name)
    }

    pub(super) fn delete(&mut self, scope: Scope, name: &str) {
        self.variables_of(scope).remove(name);
    }

    /// `delta` added to variable `name` (see [`add_values`]) and stored; the new value.
    pub(super) fn add(&mut self, scope: Scope, name: &str, delta: &str) -> Result<String, Problem> {
        let sum = add_values(&self.read(scope, name), delta);
        self.store(scope, name, sum.clone())?;
        Ok(sum)
    }

    /// Stores `value` in variable `name`, within the variable's and the expansions' caps.
    pub(super) fn store(&mut self, scope: Scope, name: &str, value: String) -> Result<(), Problem> {
        if value.len() > MACRO_VARIABLE_BYTES {
            self.stopped = true;
            self.warn(|| {
                texts::VARIABLE_TOO_LARGE
                    .with("name", shorten(name))
                    .with("size", in_words(MACRO_VARIABLE_BYTES))
            });
            return Err(Problem::Stopped);
        }
        if !self.charge(value.len()) {
            return Err(Problem::Stopped);
        }
        self.variables_of(scope).insert(name.to_string(), value);
        Ok(())
    }
}

impl<'b> Args<'b> {
    /// The variable name of `getvar`, `incvar` and the like: the whole argument, trimmed.
    pub(super) fn variable_name(self) -> Result<&'b str, Problem> {
        if self.text.len() > MACRO_VARIABLE_NAME_BYTES + 64 {
            return Err(Problem::LongVariableName);
        }
        let name = self.text.trim();
        if name.is_empty() {
            return Err(Problem::NoVariableName);
        }
        if name.len() > MACRO_VARIABLE_NAME_BYTES {
            return Err(Problem::LongVariableName);
        }
        Ok(name)
    }

    /// `name::value` for `setvar` and `addvar`; the value may itself contain `::`. The name is
    /// looked for only in the first bytes, where a name can be.
    pub(super) fn variable(self) -> Result<(&'b str, &'b str), Problem> {
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
pub(super) fn add_values(current: &str, delta: &str) -> String {
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
