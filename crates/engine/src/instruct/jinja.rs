//! Checking an instruct template against a model's own Jinja `chat_template` (RULES 5.12): the
//! same messages rendered through both, and where the two strings first differ.
//!
//! A template from a stranger is bounded: its text is at most [`MAX_JINJA_BYTES`], its run at
//! most [`JINJA_FUEL`] steps (a loop that does not end runs out of fuel), and its output at most
//! [`MAX_OUTPUT_BYTES`]. Past any of them the check is an error naming the limit.

use minijinja::{context, Environment, Error, ErrorKind, Value};
use serde::Serialize;

use super::{render, InstructTemplate, Turn};
use crate::model::Role;
use crate::EngineError;

/// Bytes of a chat template, at most (published ones are a few KiB).
pub const MAX_JINJA_BYTES: usize = 256 * 1024;
/// Steps of one render, at most: a published template over a long chat takes a few thousand.
pub const JINJA_FUEL: u64 = 2_000_000;
/// Bytes of a rendered string, at most.
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// The tokens a chat template reads besides the messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    pub bos: String,
    pub eos: String,
    /// The day the render is for: Llama 3.1's templates read it as `date_string` (as llama.cpp
    /// passes it) or through `strftime_now`, and an instruct template's `{today}` is written
    /// from it. Without one, a template's own default day stands.
    pub now: Option<chrono::DateTime<chrono::FixedOffset>>,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub struct JinjaCheck {
    /// The instruct template's string.
    pub ours: String,
    /// The chat template's string.
    pub theirs: String,
    /// The byte where they first differ; none when they are identical.
    pub first_difference: Option<u32>,
}

impl JinjaCheck {
    pub fn identical(&self) -> bool {
        self.first_difference.is_none()
    }
}

/// Renders `turns` through `chat_template` (named `name` in errors) with the generation prompt,
/// as a server that applies the model's template would.
pub fn render_chat_template(
    name: &str,
    chat_template: &str,
    turns: &[Turn<'_>],
    tokens: &SpecialTokens,
) -> Result<String, EngineError> {
    let fail = |message: String| EngineError::Invalid {
        path: format!("chat template \"{name}\""),
        message,
    };
    if chat_template.len() > MAX_JINJA_BYTES {
        return Err(fail(format!(
            "{} bytes; at most {MAX_JINJA_BYTES}",
            chat_template.len()
        )));
    }
    let mut env = Environment::new();
    env.set_fuel(Some(JINJA_FUEL));
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |message: String| -> Result<Value, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        },
    );
    if let Some(now) = tokens.now {
        env.add_function("strftime_now", move |format: String| -> String {
            use std::fmt::Write;
            let mut out = String::new();
            // A format chrono cannot write gives the empty string.
            let _ = write!(out, "{}", now.format(&format));
            out
        });
    }
    let template = env
        .template_from_str(chat_template)
        .map_err(|e| fail(describe(&e)))?;
    let messages: Vec<Value> = turns
        .iter()
        .map(|t| {
            context! {
                role => match t.role {
                    Role::System => "system",
                    Role::User | Role::Tool => "user",
                    Role::Assistant => "assistant",
                },
                content => t.content,
            }
        })
        .collect();
    // Only a given day is passed: a template's `is defined` test keeps its own default.
    let day = match tokens.now {
        Some(now) => context! { date_string => now.format("%d %b %Y").to_string() },
        None => context! {},
    };
    let out = template
        .render(context! {
            messages => messages,
            add_generation_prompt => true,
            bos_token => tokens.bos.as_str(),
            eos_token => tokens.eos.as_str(),
            ..day
        })
        .map_err(|e| fail(describe(&e)))?;
    if out.len() > MAX_OUTPUT_BYTES {
        return Err(fail(format!(
            "wrote {} bytes; at most {MAX_OUTPUT_BYTES}",
            out.len()
        )));
    }
    Ok(out)
}

/// Where an error happened and what it was: the line and the kind, with the template's message.
fn describe(e: &Error) -> String {
    let place = e.line().map(|l| format!("line {l}: ")).unwrap_or_default();
    let what = match e.kind() {
        ErrorKind::OutOfFuel => "ran out of steps (a loop that does not end?)".to_string(),
        _ => e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_string),
    };
    format!("{place}{what}")
}

/// The messages as both templates write them: each message's text as the instruct template
/// gives it to the model (its name before it, trimmed as the template trims), so that the check
/// compares the formats, not the names a chat template cannot write.
pub fn check(
    template: &InstructTemplate,
    name: &str,
    chat_template: &str,
    turns: &[Turn<'_>],
    tokens: &SpecialTokens,
) -> Result<JinjaCheck, EngineError> {
    let bodies: Vec<String> = turns
        .iter()
        .map(|t| super::body(template, t).into_owned())
        .collect();
    let plain: Vec<Turn<'_>> = turns
        .iter()
        .zip(&bodies)
        .map(|(t, b)| Turn {
            role: t.role,
            name: None,
            content: b,
            unwrapped: t.unwrapped,
        })
        .collect();
    let template = match &tokens.now {
        Some(now) => template.dated(now),
        None => std::borrow::Cow::Borrowed(template),
    };
    let ours = render(&template, &plain).prompt;
    let mut theirs = render_chat_template(name, chat_template, &plain, tokens)?;
    // A server whose model adds the BOS token takes the template's own BOS text off the
    // string (llama.cpp does), as the instruct template leaves it out.
    if template.server_adds_bos && !template.bos.is_empty() && theirs.starts_with(&template.bos) {
        theirs.drain(..template.bos.len());
    }
    let first_difference = ours
        .bytes()
        .zip(theirs.bytes())
        .position(|(a, b)| a != b)
        .or_else(|| (ours.len() != theirs.len()).then(|| ours.len().min(theirs.len())))
        .map(|i| i as u32);
    Ok(JinjaCheck {
        ours,
        theirs,
        first_difference,
    })
}
