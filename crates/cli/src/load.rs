//! Reading the files a command names. Native documents go straight to the engine's parser, whose
//! errors carry the JSON path; everything else (SillyTavern presets, character cards, chats,
//! world info) goes through the importers, whose reports come back as notes.

use std::path::Path;

use promptloom_engine::model::{parse_preset, parse_session, AgentPreset, Session};
use promptloom_import::{card_preset, CharacterCard, Imported, MAX_FILE_SIZE};
use serde_json::Value;

use crate::error::CliError;

/// A document with what its importer could not map, one line each.
pub struct Loaded<T> {
    pub value: T,
    pub notes: Vec<String>,
}

/// A preset: native, a SillyTavern preset, or a character card (which becomes a preset with a
/// SillyTavern-like recipe).
pub fn preset(path: &Path) -> Result<Loaded<AgentPreset>, CliError> {
    match read(path)? {
        Read::Native(text) => native(path, parse_preset(&text)),
        Read::Imported(Imported::Preset { preset }, notes) => Ok(Loaded {
            value: *preset,
            notes,
        }),
        Read::Imported(Imported::Character(card), notes) => Ok(Loaded {
            value: card_preset(&card),
            notes,
        }),
        Read::Imported(other, _) => Err(wrong_kind(path, &other, "a preset")),
    }
}

/// A session: native or a SillyTavern chat (JSONL).
pub fn session(path: &Path) -> Result<Loaded<Session>, CliError> {
    match read(path)? {
        Read::Native(text) => native(path, parse_session(&text)),
        Read::Imported(Imported::Session { session }, notes) => Ok(Loaded {
            value: session,
            notes,
        }),
        Read::Imported(other, _) => Err(wrong_kind(path, &other, "a session")),
    }
}

/// A character: a card (PNG, JSON, CHARX) or a native preset that has one.
pub fn character(path: &Path) -> Result<Loaded<CharacterCard>, CliError> {
    let from_preset = |preset: AgentPreset, notes| match preset.character {
        Some(character) => Ok(Loaded {
            value: CharacterCard {
                character,
                lorebook: preset.lorebook,
            },
            notes,
        }),
        None => Err(CliError::bad_input(path, "the preset has no character")),
    };
    match read(path)? {
        Read::Native(text) => {
            let preset = parse_preset(&text).map_err(|e| CliError::engine(path, &e))?;
            from_preset(preset, Vec::new())
        }
        Read::Imported(Imported::Character(card), notes) => Ok(Loaded { value: card, notes }),
        Read::Imported(Imported::Preset { preset }, notes) => from_preset(*preset, notes),
        Read::Imported(other, _) => Err(wrong_kind(path, &other, "a character card")),
    }
}

// One short-lived value per file read: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum Read {
    /// Native JSON text, for the engine's own parser.
    Native(String),
    Imported(Imported, Vec<String>),
}

fn read(path: &Path) -> Result<Read, CliError> {
    let size = std::fs::metadata(path)
        .map_err(|e| CliError::io(path, &e))?
        .len();
    if size > MAX_FILE_SIZE {
        return Err(CliError::bad_input(
            path,
            format!("the file is {size} bytes; files over 50 MB are not read"),
        ));
    }
    let bytes = read_bounded(path)?;
    if let Ok(text) = std::str::from_utf8(&bytes) {
        if is_native(text) {
            return Ok(Read::Native(text.to_string()));
        }
    }
    let name = path.display().to_string();
    let reported = promptloom_import::import_bytes(&name, &bytes)
        .map_err(|e| CliError::bad_input(path, e.problem))?;
    let notes = reported
        .report
        .items
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(Read::Imported(reported.value, notes))
}

/// The bytes of `path`, at most 50 MB of them: a file that grew after its size was looked at, or
/// a device that never ends, is refused the same way.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = promptloom_import::read_limited(path).map_err(|e| CliError::io(path, &e))?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(CliError::bad_input(path, "files over 50 MB are not read"));
    }
    Ok(bytes)
}

/// Whether the engine should read `text` itself: a native document, or JSON that is no
/// importable format (so that the engine's precise errors name the field).
fn is_native(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(root)) => {
            root.contains_key("formatVersion")
                || ["messageTemplates", "contextRecipes", "presetMessages"]
                    .iter()
                    .any(|k| root.contains_key(*k))
        }
        // Not an object at all: the engine says "expected a JSON object".
        Ok(_) => true,
        // Not one JSON document: a chat (JSON lines) is for the importer; anything else is
        // not JSON, which the engine reports with line and column.
        Err(_) => !looks_like_json_lines(text),
    }
}

fn looks_like_json_lines(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first_two: Vec<&str> = lines.by_ref().take(2).collect();
    first_two.len() == 2
        && first_two
            .iter()
            .all(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v.is_object()))
}

fn native<T>(
    path: &Path,
    parsed: Result<T, promptloom_engine::EngineError>,
) -> Result<Loaded<T>, CliError> {
    parsed
        .map(|value| Loaded {
            value,
            notes: Vec::new(),
        })
        .map_err(|e| CliError::engine(path, &e))
}

fn wrong_kind(path: &Path, found: &Imported, wanted: &str) -> CliError {
    CliError::bad_input(path, format!("is a {}, not {wanted}", kind_in_words(found)))
}

fn kind_in_words(imported: &Imported) -> &'static str {
    match imported {
        Imported::Preset { .. } => "preset",
        Imported::Character(_) => "character card",
        Imported::Lorebook { .. } => "world info file",
        Imported::RegexRules { .. } => "regex script file",
        Imported::Session { .. } => "chat",
        Imported::WorldInfoSettings { .. } => "SillyTavern settings file",
        Imported::InstructTemplate { .. } => "SillyTavern instruct template",
        Imported::SystemPrompt { .. } => "SillyTavern system prompt",
    }
}
