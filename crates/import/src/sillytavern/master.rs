//! SillyTavern's master export of Advanced Formatting (preset-manager.js, performMasterExport):
//! one JSON object with a section per kind, `instruct`, `context`, `sysprompt` and (when chosen)
//! `preset`, the text-completion sampler settings. It becomes one preset (RULES 7.2): the context
//! template's recipe ([`super::context`]), the instruct template as the preset's own, the system
//! prompt as its variable `systemPrompt`. A section with no place here is reported.

use promptloom_engine::instruct::InstructTemplate;
use promptloom_engine::model::AgentPreset;
use serde_json::Value;

use super::context::{self, Parts, StContext};
use super::instruct::{self, StInstruct};
use super::sysprompt;
use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};

/// The sections read.
const SECTIONS: &[&str] = &["instruct", "context", "sysprompt"];

/// True when `root` is a master export: one of its sections is an object of its kind, as
/// SillyTavern tells them (an instruct template's sequences, a context template's story string, a
/// system prompt's content).
pub fn looks_like_master_export(root: &Object) -> bool {
    let section = |key: &str, test: fn(&Object) -> bool| match root.get(key) {
        Some(Value::Object(s)) => test(s),
        _ => false,
    };
    section("instruct", instruct::looks_like_instruct)
        || section("context", context::looks_like_context)
        || section("sysprompt", |s| s.contains_key("content"))
}

/// A section's object; an error when it is there but not an object.
fn section<'o>(root: &'o Object, key: &str) -> Result<Option<&'o Object>, Problem> {
    match root.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(s)) => Ok(Some(s)),
        Some(other) => Err(Problem::shape(format!(
            "`{key}` is {}, expected an object",
            json::kind(other)
        ))),
    }
}

/// The instruct section, read; `None` without one.
fn instruct_section(
    stem: &str,
    root: &Object,
    report: &mut ImportReport,
) -> Result<Option<StInstruct>, Problem> {
    let Some(s) = section(root, "instruct")? else {
        return Ok(None);
    };
    if !instruct::looks_like_instruct(s) {
        return Err(Problem::shape(
            "`instruct` is not an instruct template (no `input_sequence` and `output_sequence`)",
        ));
    }
    instruct::instruct_from_value(stem, s, "instruct.", report).map(Some)
}

/// A master export as one preset.
pub(crate) fn preset_from_master(
    file: &str,
    root: &Object,
) -> Result<Reported<AgentPreset>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_MASTER);
    let stem = json::file_stem(file);
    let mut st_instruct = instruct_section(stem, root, &mut report)?;
    if let Some(s) = section(root, "instruct")? {
        if json::boolean(s, "enabled") == Some(false) {
            report.push("instruct.enabled", texts::INSTRUCT_OFF);
            st_instruct = None;
        }
    }
    let context: StContext = match section(root, "context")? {
        Some(s) => {
            if !context::looks_like_context(s) {
                return Err(Problem::shape(
                    "`context` is not a context template (no `story_string`)",
                ));
            }
            context::context_from_value(s, "context.", &mut report)?
        }
        None => {
            report.push("context", texts::DEFAULT_CONTEXT);
            context::default_context()
        }
    };
    let system_prompt = match section(root, "sysprompt")? {
        Some(s) => {
            let prompt = sysprompt::sysprompt_from_value(stem, s, "sysprompt.", &mut report)?;
            if json::boolean(s, "enabled") == Some(false) {
                report.push("sysprompt.enabled", texts::SYSPROMPT_OFF);
                Some(String::new())
            } else {
                Some(prompt.content)
            }
        }
        None => None,
    };
    // An old instruct template's own system prompt, when no system prompt comes with it.
    let system_prompt =
        system_prompt.or_else(|| st_instruct.as_ref().and_then(|i| i.system_prompt.clone()));
    for (key, value) in root {
        if SECTIONS.contains(&key.as_str()) || !json::is_set(value) {
            continue;
        }
        let said = match key.as_str() {
            "preset" => texts::SAMPLER_SECTION,
            _ => texts::NOT_MAPPED,
        };
        report.push(key.clone(), said);
    }
    let preset = context::preset_from_parts(
        Parts {
            stem,
            context: &context,
            at: if root.contains_key("context") {
                "context."
            } else {
                ""
            },
            instruct: st_instruct.as_ref(),
            system_prompt: system_prompt.as_deref(),
        },
        &mut report,
    )?;
    Ok(Reported {
        value: preset,
        report,
    })
}

/// The instruct template of a master export, without the rest (for a template asked for alone);
/// the other sections are said not to be read.
pub(crate) fn instruct_of_master(
    file: &str,
    root: &Object,
) -> Result<Reported<InstructTemplate>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_MASTER);
    let stem = json::file_stem(file);
    let Some(st) = instruct_section(stem, root, &mut report)? else {
        return Err(Problem::shape(
            "a master export without an `instruct` section",
        ));
    };
    instruct_only_report(&st, "instruct.", &mut report);
    for key in root.keys().filter(|k| k.as_str() != "instruct") {
        if root.get(key).is_some_and(json::is_set) {
            report.push(key.clone(), texts::SECTION_NOT_READ);
        }
    }
    Ok(Reported {
        value: st.template,
        report,
    })
}

/// What an instruct template read alone cannot carry: the parts SillyTavern puts into the story
/// string and the chat.
pub(crate) fn instruct_only_report(st: &StInstruct, at: &str, report: &mut ImportReport) {
    let said = |report: &mut ImportReport, key: &str, text: &str| {
        if !text.is_empty() {
            report.push(format!("{at}{key}"), texts::NEEDS_CONTEXT);
        }
    };
    said(report, "system_sequence_prefix", &st.system_prompt_prefix);
    said(report, "system_sequence_suffix", &st.system_prompt_suffix);
    said(report, "story_string_prefix", &st.story_string_prefix);
    said(report, "story_string_suffix", &st.story_string_suffix);
    said(report, "user_alignment_message", &st.user_alignment_message);
    if st.system_prompt.is_some() {
        report.push(format!("{at}system_prompt"), texts::OLD_SYSTEM_PROMPT);
    }
}
