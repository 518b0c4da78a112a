//! Lenient readers over `serde_json::Value`. SillyTavern files were written by many versions and
//! hand edits: numbers come as strings, lists as single strings, absent and `null` mean the same.

use crate::texts;
use promptloom_engine::Text;
use serde_json::{Map, Value};

pub(crate) type Object = Map<String, Value>;

pub(crate) fn string(obj: &Object, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A string field that is absent, `null` or empty reads as `None`, as SillyTavern writes `""` for
/// "not set".
pub(crate) fn text(obj: &Object, key: &str) -> Option<String> {
    string(obj, key).filter(|s| !s.is_empty())
}

pub(crate) fn int(obj: &Object, key: &str) -> Option<i64> {
    value_int(obj.get(key)?)
}

pub(crate) fn value_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn float(obj: &Object, key: &str) -> Option<f64> {
    match obj.get(key)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|f| f.is_finite())
}

pub(crate) fn boolean(obj: &Object, key: &str) -> Option<bool> {
    match obj.get(key)? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_i64().map(|i| i != 0),
        Value::String(s) => match s.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A list of strings; a lone string is a list of one, non-strings are left out.
pub(crate) fn strings(obj: &Object, key: &str) -> Vec<String> {
    match obj.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|s| !s.trim().is_empty())
            .collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// True when a value carries a setting worth reporting as "not mapped": not `null`, `false`, `0`,
/// `""`, `[]` or `{}`.
pub(crate) fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The keys of `obj` that are set and not in `known`.
pub(crate) fn unknown_set_keys<'a>(obj: &'a Object, known: &[&str]) -> Vec<&'a str> {
    obj.iter()
        .filter(|(k, v)| !known.contains(&k.as_str()) && is_set(v))
        .map(|(k, _)| k.as_str())
        .collect()
}

/// A short description of a value's JSON type, for shape errors.
pub(crate) fn kind(value: &Value) -> &'static str {
    kind_text(value).english
}

/// [`kind`] as a text of the reports.
pub(crate) fn kind_text(value: &Value) -> Text {
    match value {
        Value::Null => texts::KIND_NULL,
        Value::Bool(_) => texts::KIND_BOOLEAN,
        Value::Number(_) => texts::KIND_NUMBER,
        Value::String(_) => texts::KIND_STRING,
        Value::Array(_) => texts::KIND_ARRAY,
        Value::Object(_) => texts::KIND_OBJECT,
    }
}

/// A stable id made from a file name: lower case letters, digits and dashes.
pub(crate) fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "imported".into()
    } else {
        out
    }
}

/// The file name without directories and extension: `Default.json` -> `Default`.
pub(crate) fn file_stem(file: &str) -> &str {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}
