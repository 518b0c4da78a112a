//! Promptloom's importers: SillyTavern's presets, character cards (PNG, JSON, CHARX), world info,
//! regex scripts, chats and Advanced Formatting (instruct and context templates, system prompts
//! and their master export), and native documents -> the engine's model (RULES 7). Every importer
//! returns its result with an [`ImportReport`] of what it could not map, item by item; bad input is
//! an [`ImportError`] that names the file and the problem. Nothing here writes anywhere.

mod error;
mod json;
pub mod native;
mod report;
pub mod sillytavern;
pub mod texts;

use std::io::Read;
use std::path::Path;

use promptloom_engine::instruct::InstructTemplate;
use promptloom_engine::model::{AgentPreset, Lorebook, RegexRule, Session};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::{ImportError, Problem};
pub use report::{ImportReport, ReportItem, Reported};
pub use sillytavern::card::CharacterCard;
pub use sillytavern::card_export::export_card as export_sillytavern_card;
pub use sillytavern::card_export::export_world_info as export_sillytavern_world_info;
pub use sillytavern::card_preset::{card_preset, overlay_character};
pub use sillytavern::export::export_preset as export_sillytavern_preset;
pub use sillytavern::sysprompt::{reads_system_prompt, SystemPrompt};
pub use sillytavern::world_info_settings::{
    looks_like_world_info_settings, world_info_settings_from_value, WorldInfoSettings,
};

/// The files a preset can be written as: the one list both front doors use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// Promptloom's own JSON, exact.
    Native,
    /// A SillyTavern chat-completion preset.
    SillyTavernPreset,
    /// The preset's character and lorebook as a SillyTavern character card (V2 JSON).
    SillyTavernCard,
    /// The preset's lorebook as a SillyTavern world info file.
    SillyTavernWorldInfo,
}

/// A preset that has nothing to write in the format asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("preset \"{preset}\" has no character to export as a card")]
    NoCharacter { preset: String },
    #[error("preset \"{preset}\" has no lorebook to export as world info")]
    NoLorebook { preset: String },
}

/// `preset` as the text of a file in `format`, with what that format could not hold.
pub fn export_preset_as(
    preset: &AgentPreset,
    format: ExportFormat,
) -> Result<Reported<String>, ExportError> {
    let pretty = |reported: Reported<Value>| Reported {
        // Serialising a `Value` cannot fail.
        value: serde_json::to_string_pretty(&reported.value).unwrap_or_default() + "\n",
        report: reported.report,
    };
    Ok(match format {
        ExportFormat::Native => Reported {
            value: native::export_preset(preset),
            report: ImportReport::new(texts::FORMAT_PROMPTLOOM_PRESET),
        },
        ExportFormat::SillyTavernPreset => pretty(export_sillytavern_preset(preset)),
        ExportFormat::SillyTavernCard => {
            let character = preset
                .character
                .clone()
                .ok_or_else(|| ExportError::NoCharacter {
                    preset: preset.id.clone(),
                })?;
            pretty(export_sillytavern_card(&CharacterCard {
                character,
                lorebook: preset.lorebook.clone(),
            }))
        }
        ExportFormat::SillyTavernWorldInfo => {
            let lorebook = preset
                .lorebook
                .as_ref()
                .ok_or_else(|| ExportError::NoLorebook {
                    preset: preset.id.clone(),
                })?;
            pretty(export_sillytavern_world_info(lorebook))
        }
    })
}

/// Files larger than this are refused before they are read (RULES 7.3).
pub const MAX_FILE_SIZE: u64 = 50 * 1024 * 1024;

/// What a file turned out to be.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Imported {
    Preset {
        preset: Box<AgentPreset>,
    },
    Character(CharacterCard),
    Lorebook {
        lorebook: Lorebook,
    },
    RegexRules {
        rules: Vec<RegexRule>,
    },
    Session {
        session: Session,
    },
    /// SillyTavern's global world info settings (its `settings.json`), for a preset's lorebook.
    WorldInfoSettings {
        settings: WorldInfoSettings,
    },
    /// A SillyTavern instruct template, for a preset's text completion (its `instruct`).
    InstructTemplate {
        template: InstructTemplate,
    },
    /// A SillyTavern system prompt, for a preset (its variable `systemPrompt`).
    SystemPrompt {
        prompt: SystemPrompt,
    },
}

impl Imported {
    pub fn kind(&self) -> &'static str {
        match self {
            Imported::Preset { .. } => "preset",
            Imported::Character(_) => "character",
            Imported::Lorebook { .. } => "lorebook",
            Imported::RegexRules { .. } => "regexRules",
            Imported::Session { .. } => "session",
            Imported::WorldInfoSettings { .. } => "worldInfoSettings",
            Imported::InstructTemplate { .. } => "instructTemplate",
            Imported::SystemPrompt { .. } => "systemPrompt",
        }
    }
}

/// Reads a file of any importable kind. The size is checked before anything is read, and the
/// read itself stops past the limit (the file may grow in between).
pub fn import_file(path: &Path) -> Result<Reported<Imported>, ImportError> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let err = |problem| ImportError::new(file.clone(), problem);
    let size = std::fs::metadata(path)
        .map_err(|e| err(Problem::Io(e.to_string())))?
        .len();
    check_size(size).map_err(err)?;
    let bytes = read_limited(path).map_err(|e| err(Problem::Io(e.to_string())))?;
    import_bytes(&file, &bytes)
}

/// The bytes of `path`, reading at most one byte past [`MAX_FILE_SIZE`]: a file over the limit
/// (one that grew after its size was looked at, or a device that never ends) comes back longer
/// than the limit without being read whole, and the caller refuses it.
pub fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn check_size(size: u64) -> Result<(), Problem> {
    if size > MAX_FILE_SIZE {
        Err(Problem::TooLarge {
            size,
            limit: MAX_FILE_SIZE,
        })
    } else {
        Ok(())
    }
}

/// Sniffs the kind of `bytes` and imports them. `file` is the name used in errors and for the ids
/// of what is made (a preset's id comes from its file name).
///
/// PNG signature -> character card; zip signature -> CHARX; JSON with `formatVersion` -> native
/// preset or session; `prompts`/`prompt_order` -> SillyTavern preset; a card `spec`, `data.name`
/// or a V1 card's fields -> character card; `entries` -> world info; `findRegex` -> regex
/// scripts; lines of JSON (or a chat header) -> chat; SillyTavern's `settings.json` -> its world
/// info settings; `input_sequence` and `output_sequence` -> instruct template; `story_string`
/// -> context template (a preset); `name` and `content` alone -> system prompt; `instruct`,
/// `context` or `sysprompt` sections -> master export (a preset).
pub fn import_bytes(file: &str, bytes: &[u8]) -> Result<Reported<Imported>, ImportError> {
    sniff_and_import(file, bytes).map_err(|p| ImportError::new(file, p))
}

fn sniff_and_import(file: &str, bytes: &[u8]) -> Result<Reported<Imported>, Problem> {
    check_size(bytes.len() as u64)?;
    if bytes.starts_with(sillytavern::card::PNG_SIGNATURE) {
        return card_png(bytes).map(character);
    }
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return card_charx(bytes).map(character);
    }
    let text = utf8(bytes)?;
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(e) => {
            // A chat file is several JSON lines, which is not one JSON document.
            if let Ok(lines) = sillytavern::chat::parse_lines(text) {
                let chat_like = lines.first().is_some_and(|(_, first)| {
                    sillytavern::chat::looks_like_chat_header(first)
                        || sillytavern::chat::looks_like_chat_message(first)
                });
                if lines.len() > 1 && chat_like {
                    return chat_lines(file, lines).map(session);
                }
            }
            return Err(Problem::NotJson(e.to_string()));
        }
    };
    if sillytavern::regex::looks_like_regex(&value) {
        return sillytavern::regex::rules_from_value(&value).map(|r| map(r, rules));
    }
    let Value::Object(root) = &value else {
        return Err(Problem::UnknownFormat(format!(
            "{} at the top level, not an object",
            json::kind(&value)
        )));
    };
    if root.contains_key("formatVersion") {
        return native::import_value(value);
    }
    if sillytavern::preset::looks_like_preset(root) {
        return sillytavern::preset::preset_from_value(file, root).map(|r| map(r, preset));
    }
    if let Some(formatting) = advanced_formatting(file, root) {
        return formatting;
    }
    if sillytavern::card::looks_like_card(root) {
        return sillytavern::card::card_from_value(root).map(character);
    }
    if root.contains_key("entries") {
        return sillytavern::world_info::lorebook_from_value(root).map(|r| map(r, lorebook));
    }
    if sillytavern::chat::looks_like_chat_header(root)
        || sillytavern::chat::looks_like_chat_message(root)
    {
        return chat_lines(file, vec![(1, root.clone())]).map(session);
    }
    if looks_like_world_info_settings(root) {
        return world_info_settings_from_value(root)
            .map(|r| map(r, |settings| Imported::WorldInfoSettings { settings }));
    }
    let mut keys: Vec<&str> = root.keys().map(String::as_str).take(8).collect();
    if root.len() > keys.len() {
        keys.push("...");
    }
    Err(Problem::UnknownFormat(format!(
        "a JSON object with keys {}",
        if keys.is_empty() {
            "(none)".into()
        } else {
            keys.join(", ")
        }
    )))
}

/// SillyTavern's Advanced Formatting files, told apart by the keys SillyTavern itself tests:
/// `None` when `root` is none of them.
fn advanced_formatting(
    file: &str,
    root: &json::Object,
) -> Option<Result<Reported<Imported>, Problem>> {
    use sillytavern::{context, instruct, master, sysprompt};
    let stem = json::file_stem(file);
    if instruct::looks_like_instruct(root) {
        let mut report = ImportReport::new(texts::FORMAT_ST_INSTRUCT);
        return Some(
            instruct::instruct_from_value(stem, root, "", &mut report).map(|st| {
                master::instruct_only_report(&st, "", &mut report);
                Reported {
                    value: Imported::InstructTemplate {
                        template: st.template,
                    },
                    report,
                }
            }),
        );
    }
    if context::looks_like_context(root) {
        let mut report = ImportReport::new(texts::FORMAT_ST_CONTEXT);
        let run = |report: &mut ImportReport| {
            let st = context::context_from_value(root, "", report)?;
            context::preset_from_parts(
                context::Parts {
                    stem,
                    context: &st,
                    at: "",
                    instruct: None,
                    system_prompt: None,
                },
                report,
            )
        };
        return Some(run(&mut report).map(|p| Reported {
            value: preset(p),
            report,
        }));
    }
    if sysprompt::looks_like_sysprompt(root) {
        let mut report = ImportReport::new(texts::FORMAT_ST_SYSPROMPT);
        return Some(
            sysprompt::sysprompt_from_value(stem, root, "", &mut report).map(|prompt| Reported {
                value: Imported::SystemPrompt { prompt },
                report,
            }),
        );
    }
    if master::looks_like_master_export(root) {
        return Some(master::preset_from_master(file, root).map(|r| map(r, preset)));
    }
    None
}

/// An instruct template from a file (the CLI's `--instruct FILE`): Promptloom's own JSON
/// (`InstructTemplate::parse`), a SillyTavern instruct template, or the instruct section of a
/// SillyTavern master export. Errors name the file; the report says what did not come through.
pub fn instruct_template_file(path: &Path) -> Result<Reported<InstructTemplate>, ImportError> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let run = || {
        let size = std::fs::metadata(path)
            .map_err(|e| Problem::Io(e.to_string()))?
            .len();
        check_size(size)?;
        let bytes = read_limited(path).map_err(|e| Problem::Io(e.to_string()))?;
        instruct_template_bytes(&file, &bytes)
    };
    run().map_err(|p| ImportError::new(file.clone(), p))
}

/// [`instruct_template_file`] over bytes already read; `file` names them.
pub fn instruct_template_bytes(
    file: &str,
    bytes: &[u8],
) -> Result<Reported<InstructTemplate>, Problem> {
    check_size(bytes.len() as u64)?;
    let text = utf8(bytes)?;
    let value: Value = serde_json::from_str(text).map_err(|e| Problem::NotJson(e.to_string()))?;
    if let Value::Object(root) = &value {
        let stem = json::file_stem(file);
        if sillytavern::instruct::looks_like_instruct(root) {
            let mut report = ImportReport::new(texts::FORMAT_ST_INSTRUCT);
            let st = sillytavern::instruct::instruct_from_value(stem, root, "", &mut report)?;
            sillytavern::master::instruct_only_report(&st, "", &mut report);
            return Ok(Reported {
                value: st.template,
                report,
            });
        }
        if sillytavern::master::looks_like_master_export(root) {
            return sillytavern::master::instruct_of_master(file, root);
        }
    }
    let template = InstructTemplate::parse(file, text)?;
    Ok(Reported {
        value: template,
        report: ImportReport::new(texts::FORMAT_PROMPTLOOM_INSTRUCT),
    })
}

fn utf8(bytes: &[u8]) -> Result<&str, Problem> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| Problem::NotJson(format!("not UTF-8 text ({e})")))
}

fn map<T>(r: Reported<T>, f: impl FnOnce(T) -> Imported) -> Reported<Imported> {
    Reported {
        value: f(r.value),
        report: r.report,
    }
}

fn character(r: Reported<CharacterCard>) -> Reported<Imported> {
    map(r, Imported::Character)
}
fn session(r: Reported<Session>) -> Reported<Imported> {
    map(r, |session| Imported::Session { session })
}
fn preset(preset: AgentPreset) -> Imported {
    Imported::Preset {
        preset: Box::new(preset),
    }
}
fn lorebook(lorebook: Lorebook) -> Imported {
    Imported::Lorebook { lorebook }
}
fn rules(rules: Vec<RegexRule>) -> Imported {
    Imported::RegexRules { rules }
}

fn card_png(bytes: &[u8]) -> Result<Reported<CharacterCard>, Problem> {
    let mut pre = ImportReport::default();
    let (chunk, text) = sillytavern::card::card_json_from_png(bytes, &mut pre)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Problem::NotJson(format!("the card in the `{chunk}` chunk: {e}")))?;
    card_value(&value, pre, &format!("(PNG, `{chunk}` chunk)"))
}

fn card_charx(bytes: &[u8]) -> Result<Reported<CharacterCard>, Problem> {
    let mut pre = ImportReport::default();
    let text = sillytavern::card::card_json_from_charx(bytes, &mut pre)?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| Problem::NotJson(format!("card.json: {e}")))?;
    card_value(&value, pre, "(CHARX)")
}

fn card_value(
    value: &Value,
    pre: ImportReport,
    container: &str,
) -> Result<Reported<CharacterCard>, Problem> {
    let Value::Object(root) = value else {
        return Err(Problem::shape(format!(
            "the card is {}, not an object",
            json::kind(value)
        )));
    };
    let mut reported = sillytavern::card::card_from_value(root)?;
    let card = reported.report.format_said.clone();
    reported.report.set_format(
        texts::FORMAT_CARD_IN
            .part("card", card)
            .with("container", container),
    );
    let mut items = pre.items;
    items.append(&mut reported.report.items);
    reported.report.items = items;
    Ok(reported)
}

fn chat_lines(file: &str, lines: Vec<(usize, json::Object)>) -> Result<Reported<Session>, Problem> {
    sillytavern::chat::session_from_lines(file, lines)
}

// The per-format entry points, for callers that know what they hold and for the property tests.

/// A SillyTavern chat-completion preset.
pub fn import_sillytavern_preset(
    file: &str,
    bytes: &[u8],
) -> Result<Reported<AgentPreset>, ImportError> {
    let run = || {
        let root = json_object(bytes)?;
        sillytavern::preset::preset_from_value(file, &root)
    };
    run().map_err(|p| ImportError::new(file, p))
}

/// A character card as JSON (V1, V2 or V3).
pub fn import_card_json(file: &str, bytes: &[u8]) -> Result<Reported<CharacterCard>, ImportError> {
    let run = || {
        let root = json_object(bytes)?;
        sillytavern::card::card_from_value(&root)
    };
    run().map_err(|p| ImportError::new(file, p))
}

/// A character card in a PNG.
pub fn import_card_png(file: &str, bytes: &[u8]) -> Result<Reported<CharacterCard>, ImportError> {
    check_size(bytes.len() as u64)
        .and_then(|()| card_png(bytes))
        .map_err(|p| ImportError::new(file, p))
}

/// A character card in a CHARX archive.
pub fn import_card_charx(file: &str, bytes: &[u8]) -> Result<Reported<CharacterCard>, ImportError> {
    check_size(bytes.len() as u64)
        .and_then(|()| card_charx(bytes))
        .map_err(|p| ImportError::new(file, p))
}

/// A SillyTavern world info file.
pub fn import_world_info(file: &str, bytes: &[u8]) -> Result<Reported<Lorebook>, ImportError> {
    let run = || {
        let root = json_object(bytes)?;
        sillytavern::world_info::lorebook_from_value(&root)
    };
    run().map_err(|p| ImportError::new(file, p))
}

/// SillyTavern regex scripts: one script object or a list of them.
pub fn import_regex_scripts(
    file: &str,
    bytes: &[u8],
) -> Result<Reported<Vec<RegexRule>>, ImportError> {
    let run = || {
        check_size(bytes.len() as u64)?;
        let value: Value =
            serde_json::from_str(utf8(bytes)?).map_err(|e| Problem::NotJson(e.to_string()))?;
        sillytavern::regex::rules_from_value(&value)
    };
    run().map_err(|p| ImportError::new(file, p))
}

/// A SillyTavern chat file (JSONL).
pub fn import_chat(file: &str, bytes: &[u8]) -> Result<Reported<Session>, ImportError> {
    let run = || {
        check_size(bytes.len() as u64)?;
        let lines = sillytavern::chat::parse_lines(utf8(bytes)?)?;
        if lines.is_empty() {
            return Err(Problem::shape("an empty chat file"));
        }
        chat_lines(file, lines)
    };
    run().map_err(|p| ImportError::new(file, p))
}

fn json_object(bytes: &[u8]) -> Result<json::Object, Problem> {
    check_size(bytes.len() as u64)?;
    match serde_json::from_str::<Value>(utf8(bytes)?) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(other) => Err(Problem::shape(format!(
            "{} instead of an object",
            json::kind(&other)
        ))),
        Err(e) => Err(Problem::NotJson(e.to_string())),
    }
}
