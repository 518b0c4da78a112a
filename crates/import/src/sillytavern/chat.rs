//! SillyTavern chat files (JSONL: a metadata line with `user_name` / `character_name`, then one
//! message per line) -> a session.
//!
//! `is_user` messages are the user's, the rest the character's. `is_system` messages are hidden
//! from the prompt in SillyTavern (its own notes, and messages hidden with /hide, which keep
//! `is_user`), so they are left out and reported; narrator messages (`extra.type` "narrator",
//! not `is_system`) are sent there as system messages, and so here.
//! A message's other swipes are kept as its swipes, the chosen one as its content.
//! `chat_metadata.variables` become the session's variables, and the `note_*` keys its author's
//! note.

use std::collections::BTreeMap;
use std::sync::Arc;

use promptloom_engine::model::{
    validate_session, AuthorsNote, ChatMessage, NotePosition, Role, Session, Swipe, UserProfile,
    FORMAT_VERSION,
};

use super::world_info::clamp_u32;
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};

/// True when the object is a chat file's metadata line (or a one-line chat).
pub(crate) fn looks_like_chat_header(obj: &Object) -> bool {
    obj.contains_key("user_name")
        || obj.contains_key("character_name")
        || obj.contains_key("chat_metadata")
}

pub(crate) fn looks_like_chat_message(obj: &Object) -> bool {
    obj.contains_key("mes") && (obj.contains_key("is_user") || obj.contains_key("name"))
}

/// Parses the lines of a chat file. Every non-empty line must be a JSON object.
pub(crate) fn parse_lines(text: &str) -> Result<Vec<(usize, Object)>, Problem> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(obj)) => lines.push((i + 1, obj)),
            Ok(other) => {
                return Err(Problem::shape(format!(
                    "line {}: {} instead of a chat line",
                    i + 1,
                    json::kind(&other)
                )))
            }
            Err(e) => return Err(Problem::NotJson(format!("line {}: {e}", i + 1))),
        }
    }
    Ok(lines)
}

pub(crate) fn session_from_lines(
    file: &str,
    lines: Vec<(usize, Object)>,
) -> Result<Reported<Session>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_CHAT);
    let mut lines = lines.into_iter().peekable();
    let header = match lines.peek() {
        Some((_, first)) if !looks_like_chat_message(first) => lines.next().map(|(_, o)| o),
        _ => None,
    };
    let user_name = header.as_ref().and_then(|h| json::text(h, "user_name"));
    let mut variables = None;
    let mut authors_note = None;
    if let Some(Value::Object(meta)) = header.as_ref().and_then(|h| h.get("chat_metadata")) {
        variables = local_variables(meta, &mut report);
        authors_note = note(meta, &mut report);
        let keys = json::unknown_set_keys(
            meta,
            &[
                "integrity",
                "chat_id_hash",
                "tainted",
                "lastInContextMessageId",
                "variables",
                "note_prompt",
                "note_interval",
                "note_position",
                "note_depth",
                "note_role",
            ],
        );
        if !keys.is_empty() {
            report.push(
                format!("chat_metadata: {}", keys.join(", ")),
                texts::NOT_MAPPED,
            );
        }
    }
    let mut messages = Vec::new();
    for (line, obj) in lines {
        let item = format!("line {line}");
        let Some(content) = json::string(&obj, "mes") else {
            report.push(item, texts::NO_MES);
            continue;
        };
        let extra = obj.get("extra").and_then(Value::as_object);
        let narrator = extra.and_then(|e| json::text(e, "type")).as_deref() == Some("narrator");
        // SillyTavern leaves every `is_system` message out of the prompt and the world info scan:
        // its own notes and the messages hidden with /hide, which keep `is_user` (script.js,
        // `hideMessages`; openai.js and world-info.js skip `is_system`). A narrator's message
        // (`extra.type` "narrator", `is_system` false) goes as a system message.
        let role = if json::boolean(&obj, "is_system").unwrap_or(false) {
            report.push(item, texts::HIDDEN);
            continue;
        } else if narrator {
            Role::System
        } else if json::boolean(&obj, "is_user").unwrap_or(false) {
            Role::User
        } else {
            Role::Assistant
        };
        let (swipes, swipe_at) = swipes(&obj, &content);
        // SillyTavern takes the carriage returns out of every message it sends (openai.js,
        // setOpenAIMessages); they are taken out here once, not in every build.
        let content = if content.contains('\r') {
            content.replace('\r', "")
        } else {
            content
        };
        if let Some(extra) = extra {
            for key in ["image", "file", "inline_image"] {
                if extra.get(key).is_some_and(json::is_set) {
                    report.push(&item, texts::ATTACHMENT_NOT_IMPORTED.with("key", key));
                }
            }
        }
        messages.push(ChatMessage {
            id: Some(format!("m{}", messages.len() + 1).into()),
            role,
            name: json::text(&obj, "name").map(Arc::from),
            content: Arc::from(content.as_str()),
            attachments: Vec::new(),
            created_at: json::string(&obj, "send_date"),
            reply: None,
            swipes,
            swipe_at,
        });
    }
    let stem = json::file_stem(file);
    let session = Session {
        format_version: FORMAT_VERSION,
        id: json::slug(stem),
        // SillyTavern names chat files after the character and the date: a title already.
        title: Some(stem.to_owned()),
        user_profile: user_name.map(|name| UserProfile {
            name,
            content: None,
        }),
        summary: None,
        messages,
        variables,
        authors_note,
    };
    validate_session(&session)?;
    Ok(Reported {
        value: session,
        report,
    })
}

/// `chat_metadata.variables`, SillyTavern's local variables: strings as they are, numbers and
/// booleans as their text, lists and objects as their JSON text (reported), nulls left out
/// (reported). None when the chat has none.
fn local_variables(meta: &Object, report: &mut ImportReport) -> Option<BTreeMap<String, String>> {
    let Some(Value::Object(all)) = meta.get("variables") else {
        return None;
    };
    let mut variables = BTreeMap::new();
    for (name, value) in all {
        let item = format!("chat_metadata.variables.{name}");
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => {
                report.push(item, texts::VARIABLE_NULL);
                continue;
            }
            other => {
                report.push(
                    item,
                    texts::VARIABLE_NOT_TEXT.part("kind", json::kind_text(other)),
                );
                other.to_string()
            }
        };
        variables.insert(name.clone(), text);
    }
    (!variables.is_empty()).then_some(variables)
}

/// The author's note of `chat_metadata` (`note_prompt`, `note_interval`, `note_position`,
/// `note_depth`, `note_role`); none when the chat sets none of them. What is absent, or a value
/// SillyTavern does not have (reported), takes SillyTavern's default.
fn note(meta: &Object, report: &mut ImportReport) -> Option<AuthorsNote> {
    const KEYS: [&str; 5] = [
        "note_prompt",
        "note_interval",
        "note_position",
        "note_depth",
        "note_role",
    ];
    if !KEYS
        .iter()
        .any(|k| meta.get(*k).is_some_and(|v| !v.is_null()))
    {
        return None;
    }
    let defaults = AuthorsNote::default();
    let mut unknown = |key: &str, default: &str| {
        if let Some(value) = meta.get(key).filter(|v| !v.is_null()) {
            report.push(
                format!("chat_metadata.{key}"),
                texts::NOTE_UNKNOWN_VALUE
                    .with("value", value.to_string())
                    .with("default", default),
            );
        }
    };
    let position = match json::int(meta, "note_position") {
        Some(0) => NotePosition::InPrompt,
        Some(1) => NotePosition::InChat,
        Some(2) => NotePosition::BeforePrompt,
        _ => {
            unknown("note_position", "1");
            defaults.position
        }
    };
    let role = match json::int(meta, "note_role") {
        Some(0) => Role::System,
        Some(1) => Role::User,
        Some(2) => Role::Assistant,
        _ => {
            unknown("note_role", "0");
            defaults.role
        }
    };
    let depth = match json::int(meta, "note_depth") {
        Some(d) if d >= 0 => clamp_u32(d),
        _ => {
            unknown("note_depth", "4");
            defaults.depth
        }
    };
    // An interval of 0 or below is "never" in SillyTavern.
    let interval = match json::int(meta, "note_interval") {
        Some(i) => clamp_u32(i.max(0)),
        None => {
            unknown("note_interval", "1");
            defaults.interval
        }
    };
    Some(AuthorsNote {
        content: json::string(meta, "note_prompt").unwrap_or_default(),
        position,
        depth,
        role,
        interval,
    })
}

/// The other replies SillyTavern kept for a message (`swipes`, the one shown at `swipe_id`), in
/// their order without the one shown (`mes`), and where the shown one stands among them (none:
/// last).
fn swipes(obj: &Object, shown: &str) -> (Vec<Swipe>, Option<u32>) {
    let Some(Value::Array(all)) = obj.get("swipes") else {
        return (Vec::new(), None);
    };
    let texts: Vec<&str> = all.iter().filter_map(Value::as_str).collect();
    if texts.len() < 2 {
        return (Vec::new(), None);
    }
    // The shown swipe is the message itself; without a usable swipe_id, the first swipe equal to
    // it is, and when none is, the message stands after them all.
    let at = obj
        .get("swipe_id")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .filter(|&i| i < texts.len())
        .or_else(|| texts.iter().position(|t| *t == shown));
    let others = texts
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != at)
        .map(|(_, t)| Swipe {
            content: t.to_string(),
            reply: None,
        })
        .collect::<Vec<_>>();
    let position = at.unwrap_or(others.len());
    let swipe_at = (position != others.len()).then_some(position as u32);
    (others, swipe_at)
}
