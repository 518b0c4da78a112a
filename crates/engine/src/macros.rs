//! SPEC 4 macros (first cut: the value macros; the full set lands with its own tests).

use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};

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

pub struct MacroState {
    variables: BTreeMap<String, String>,
}

impl MacroState {
    pub fn new(_env: &MacroEnv<'_>, variables: BTreeMap<String, String>) -> Self {
        MacroState { variables }
    }
    pub fn variables(&self) -> &BTreeMap<String, String> {
        &self.variables
    }
}

pub struct Expansion {
    pub text: String,
    pub warnings: Vec<String>,
}

pub fn has_macros(text: &str) -> bool {
    text.contains("{{")
}

pub fn expand(
    text: &str,
    env: &MacroEnv<'_>,
    _state: &mut MacroState,
    _position: &str,
) -> Expansion {
    let mut out = text.to_string();
    for (name, value) in [
        ("user", env.user),
        ("char", env.char_name),
        ("description", env.description),
        ("personality", env.personality),
        ("scenario", env.scenario),
        ("persona", env.persona),
        ("mesExamples", env.mes_examples),
        ("summary", env.summary),
        ("model", env.model),
    ] {
        out = out.replace(&format!("{{{{{name}}}}}"), value);
    }
    Expansion {
        text: out,
        warnings: Vec::new(),
    }
}
