//! Native Promptloom documents (RULES 2, 7): read through the engine's own parse functions and
//! written back exactly.

use promptloom_engine::model::{self, AgentPreset, Session};
use serde_json::Value;

use crate::{texts, ImportReport, Imported, Problem, Reported};

/// A native document: a session when it has `messages` and no preset fields, else a preset.
pub(crate) fn import_value(value: Value) -> Result<Reported<Imported>, Problem> {
    let is_session = value.get("messages").is_some()
        && value.get("messageTemplates").is_none()
        && value.get("contextRecipes").is_none()
        && value.get("presetMessages").is_none();
    if is_session {
        let session = model::session_from_value(value)?;
        Ok(Reported {
            value: Imported::Session { session },
            report: ImportReport::new(texts::FORMAT_PROMPTLOOM_SESSION),
        })
    } else {
        let preset = model::preset_from_value(value)?;
        Ok(Reported {
            value: Imported::Preset {
                preset: Box::new(preset),
            },
            report: ImportReport::new(texts::FORMAT_PROMPTLOOM_PRESET),
        })
    }
}

/// A preset as native JSON; `parse_preset` reads back the same preset.
pub fn export_preset(preset: &AgentPreset) -> String {
    to_json(preset)
}

/// A session as native JSON; `parse_session` reads back the same session.
pub fn export_session(session: &Session) -> String {
    to_json(session)
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    // The model's types serialise to plain JSON (string keys, no non-finite floats): this cannot
    // fail, and an empty string would show if it ever did.
    serde_json::to_string_pretty(value).unwrap_or_default()
}
