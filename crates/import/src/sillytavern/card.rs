//! Character cards V1, V2 and V3 (RULES 7.1): the JSON document, and the two containers it travels
//! in: a PNG text chunk (`ccv3` wins over `chara`, base64 JSON) and a CHARX zip (`card.json`).

use std::io::{Cursor, Read};

use base64::Engine as _;
use promptloom_engine::model::{Character, CharacterNote, Lorebook, Role, DEFAULT_NOTE_DEPTH};
use serde_json::Value;

use super::world_info::{dedupe_ids, entry_from_card, map_entry};
use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};
use promptloom_engine::Said;

/// A character and the lorebook its card carries.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CharacterCard {
    pub character: Character,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lorebook: Option<Lorebook>,
}

pub(crate) const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// How much the PNG decoder may allocate.
const PNG_DECODER_LIMIT: usize = 64 << 20;
/// The text chunks a card travels in; no other text chunk is read.
const CARD_CHUNKS: [&str; 2] = ["ccv3", "chara"];
/// A compressed card chunk may inflate to at most this many bytes: the largest file imported
/// (base64 of a card of about 37 MB).
pub const CARD_CHUNK_LIMIT: usize = crate::MAX_FILE_SIZE as usize;
/// A CHARX may hold at most this many files, and unpack to at most this many bytes.
pub const CHARX_MAX_ENTRIES: usize = 4096;
pub const CHARX_MAX_UNPACKED: u64 = 256 << 20;
/// card.json itself may unpack to at most this many bytes.
pub const CHARX_MAX_CARD_JSON: u64 = 50 << 20;

/// True when the object looks like a character card of any version.
pub(crate) fn looks_like_card(root: &Object) -> bool {
    let spec = json::string(root, "spec").unwrap_or_default();
    if spec.starts_with("chara_card_v") {
        return true;
    }
    if let Some(Value::Object(data)) = root.get("data") {
        if data.get("name").is_some_and(Value::is_string) {
            return true;
        }
    }
    root.get("name").is_some_and(Value::is_string)
        && (root.contains_key("first_mes") || root.contains_key("mes_example"))
}

/// Fields of a card's `data` that are mapped or that describe the card rather than the character.
const CARD_KNOWN: &[&str] = &[
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "alternate_greetings",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
    "tags",
    "character_book",
    "extensions",
    "creator",
    "character_version",
    "creation_date",
    "modification_date",
];

/// Extensions SillyTavern keeps for its own list view.
const EXTENSIONS_IGNORED: &[&str] = &["talkativeness", "fav", "world"];

pub(crate) fn card_from_value(root: &Object) -> Result<Reported<CharacterCard>, Problem> {
    let spec = json::string(root, "spec").unwrap_or_default();
    let (data, format) = match root.get("data") {
        Some(Value::Object(data)) => (
            data,
            match spec.as_str() {
                "chara_card_v3" => "V3",
                _ => "V2",
            },
        ),
        Some(other) if spec.starts_with("chara_card_v") => {
            return Err(Problem::shape(format!(
                "the card's `data` is {}, expected an object",
                json::kind(other)
            )))
        }
        _ if spec.starts_with("chara_card_v") => {
            return Err(Problem::shape("a card without `data`"))
        }
        _ => (root, "V1"),
    };
    let mut report = ImportReport::new(texts::FORMAT_CARD.with("version", format));
    let name = match data.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(Problem::shape("the card's name is empty")),
        _ => return Err(Problem::shape("the card has no name")),
    };
    let tags = json::strings(data, "tags");
    let character = Character {
        name,
        description: json::text(data, "description"),
        personality: json::text(data, "personality"),
        scenario: json::text(data, "scenario"),
        greeting: json::text(data, "first_mes"),
        alternate_greetings: json::strings(data, "alternate_greetings")
            .into_iter()
            .filter(|g| !g.trim().is_empty())
            .collect(),
        example_dialogue: json::text(data, "mes_example"),
        system_prompt: json::text(data, "system_prompt"),
        post_history_instructions: json::text(data, "post_history_instructions"),
        creator_notes: json::text(data, "creator_notes"),
        tags: (!tags.is_empty()).then_some(tags),
        depth_prompt: None,
    };
    let mut character = character;
    if !std::ptr::eq(data, root) {
        for key in json::unknown_set_keys(data, CARD_KNOWN) {
            report.push(format!("data.{key}"), texts::NOT_MAPPED);
        }
    }
    if let Some(Value::Object(ext)) = data.get("extensions") {
        for key in json::unknown_set_keys(ext, EXTENSIONS_IGNORED) {
            if key == "depth_prompt" {
                character.depth_prompt = character_note(&ext[key], &mut report);
            } else {
                report.push(format!("data.extensions.{key}"), texts::NOT_MAPPED);
            }
        }
    }
    let lorebook = match data.get("character_book") {
        None | Some(Value::Null) => None,
        Some(Value::Object(book)) => Some(book_from_value(book, &mut report)),
        Some(other) => {
            report.push(
                "data.character_book",
                texts::NOT_A_LOREBOOK.part("kind", json::kind_text(other)),
            );
            None
        }
    };
    Ok(Reported {
        value: CharacterCard {
            character,
            lorebook,
        },
        report,
    })
}

/// The card's depth prompt (`extensions.depth_prompt`: `prompt`, `depth`, `role`) as the
/// character's note (RULES 5.11.4): the prompt trimmed, none when it is empty; an absent depth
/// is 4 and an absent role system, as SillyTavern reads them; a depth or role it cannot read is
/// reported and read as absent.
fn character_note(value: &Value, report: &mut ImportReport) -> Option<CharacterNote> {
    const ITEM: &str = "data.extensions.depth_prompt";
    let Value::Object(note) = value else {
        report.push(ITEM, texts::NOT_MAPPED);
        return None;
    };
    let prompt = json::string(note, "prompt").unwrap_or_default();
    let prompt = prompt.trim();
    if prompt.is_empty() {
        return None;
    }
    let depth = match note.get("depth") {
        None | Some(Value::Null) => DEFAULT_NOTE_DEPTH,
        Some(v) => match v.as_i64().and_then(|d| u32::try_from(d).ok()) {
            Some(d) => d,
            None => {
                report.push(
                    format!("{ITEM}.depth"),
                    texts::NOTE_DEPTH_UNREADABLE
                        .with("value", v)
                        .with("depth", DEFAULT_NOTE_DEPTH),
                );
                DEFAULT_NOTE_DEPTH
            }
        },
    };
    let role = super::preset::parse_role(note.get("role")).unwrap_or_else(|bad| {
        report.push(
            format!("{ITEM}.role"),
            texts::UNKNOWN_ROLE.with("role", &bad),
        );
        Role::System
    });
    Some(CharacterNote {
        prompt: prompt.to_string(),
        depth,
        role,
    })
}

const BOOK_KNOWN: &[&str] = &[
    "entries",
    "scan_depth",
    "recursive_scanning",
    "name",
    "description",
    "extensions",
    "token_budget",
];

fn book_from_value(book: &Object, report: &mut ImportReport) -> Lorebook {
    // SillyTavern does not read a card book's own scan depth or recursion: its world info
    // settings decide (world-info.js, convertCharacterBook), and a fresh SillyTavern's scan 2
    // messages, recursively, which are the book's defaults here too.
    let mut lorebook = Lorebook::default();
    for key in ["scan_depth", "recursive_scanning"] {
        if book.get(key).is_some_and(|v| !v.is_null()) {
            report.push(
                format!("data.character_book.{key}"),
                texts::BOOK_SETTING_UNREAD,
            );
        }
    }
    if let Some(budget) = json::int(book, "token_budget").filter(|b| *b > 0) {
        report.push(
            "data.character_book.token_budget",
            texts::TOKEN_BUDGET
                .with("budget", budget)
                .with("percent", lorebook.token_budget),
        );
    }
    for key in json::unknown_set_keys(book, BOOK_KNOWN) {
        report.push(format!("data.character_book.{key}"), texts::NOT_MAPPED);
    }
    match book.get("entries") {
        Some(Value::Array(items)) => {
            for (i, value) in items.iter().enumerate() {
                let item = format!("data.character_book.entries[{i}]");
                let Value::Object(obj) = value else {
                    report.push(
                        &item,
                        texts::NOT_AN_ENTRY.part("kind", json::kind_text(value)),
                    );
                    continue;
                };
                let entry = entry_from_card(i, obj);
                lorebook.entries.push(map_entry(entry, &item, report));
            }
        }
        None | Some(Value::Null) => {}
        Some(other) => report.push(
            "data.character_book.entries",
            texts::NOT_A_LIST.part("kind", json::kind_text(other)),
        ),
    }
    dedupe_ids(&mut lorebook.entries, report);
    lorebook
}

/// Reads the card text out of a PNG: `ccv3` if present, else `chara`. Returns the chunk's keyword
/// and the decoded JSON text. The whole file is read, so a truncated PNG is an error even when the
/// card chunk came before the damage.
pub(crate) fn card_json_from_png(
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<(String, String), Problem> {
    if !bytes.starts_with(PNG_SIGNATURE) {
        return Err(Problem::BadPng("no PNG signature".into()));
    }
    let mut options = png::DecodeOptions::default();
    // By default a text chunk with a bad checksum is dropped in silence; for a card that would
    // read as "no card" instead of "damaged".
    options.set_skip_ancillary_crc_failures(false);
    let mut decoder = png::Decoder::new_with_options(Cursor::new(bytes), options);
    decoder.set_limits(png::Limits {
        bytes: PNG_DECODER_LIMIT,
    });
    let mut reader = decoder
        .read_info()
        .map_err(|e| Problem::BadPng(e.to_string()))?;
    reader
        .finish()
        .map_err(|e| Problem::BadPng(e.to_string()))?;
    let info = reader.info();
    // Only the card's own chunks are read. Any other text chunk (a "Comment", say) stays
    // compressed: inflated, a few megabytes of it can ask for gigabytes.
    let is_card = |keyword: &str| CARD_CHUNKS.iter().any(|k| keyword.eq_ignore_ascii_case(k));
    let mut chunks: Vec<(String, String)> = info
        .uncompressed_latin1_text
        .iter()
        .filter(|c| is_card(&c.keyword))
        .map(|c| (c.keyword.clone(), c.text.clone()))
        .collect();
    for chunk in info
        .compressed_latin1_text
        .iter()
        .filter(|c| is_card(&c.keyword))
    {
        let mut chunk = chunk.clone();
        let text = chunk
            .decompress_text_with_limit(CARD_CHUNK_LIMIT)
            .and_then(|()| chunk.get_text());
        chunks.push((chunk.keyword.clone(), inflated(&chunk.keyword, text)?));
    }
    for chunk in info.utf8_text.iter().filter(|c| is_card(&c.keyword)) {
        let mut chunk = chunk.clone();
        let text = chunk
            .decompress_text_with_limit(CARD_CHUNK_LIMIT)
            .and_then(|()| chunk.get_text());
        chunks.push((chunk.keyword.clone(), inflated(&chunk.keyword, text)?));
    }
    let find = |keyword: &str| {
        chunks
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(keyword))
            .map(|(_, text)| text.as_str())
    };
    match (find("ccv3"), find("chara")) {
        (None, None) => Err(Problem::PngWithoutCard),
        (Some(v3), chara) => match decode_card_base64("ccv3", v3) {
            Ok(text) => Ok(("ccv3".into(), text)),
            Err(e) => match chara.map(|c| decode_card_base64("chara", c)) {
                Some(Ok(text)) => {
                    report.push("ccv3", texts::CCV3_UNREADABLE.part("why", Said::plain(&e)));
                    Ok(("chara".into(), text))
                }
                _ => Err(e),
            },
        },
        (None, Some(chara)) => Ok(("chara".into(), decode_card_base64("chara", chara)?)),
    }
}

/// What png says when text does not inflate within its limit. Its errors cannot be matched on,
/// so the limit's own is made (two bytes of text, a limit of one) and told apart by its words.
fn limit_error() -> String {
    let mut probe = png::text_metadata::ZTXtChunk::new("probe", "ab");
    match probe.compress_text() {
        Ok(()) => probe
            .decompress_text_with_limit(1)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// The text of a compressed card chunk, or why it is damage: it does not inflate, or not within
/// [`CARD_CHUNK_LIMIT`].
fn inflated(keyword: &str, text: Result<String, png::DecodingError>) -> Result<String, Problem> {
    text.map_err(|e| {
        Problem::BadPng(if e.to_string() == limit_error() {
            format!(
                "the `{keyword}` chunk does not inflate within {} MB",
                CARD_CHUNK_LIMIT >> 20
            )
        } else {
            format!("the `{keyword}` chunk does not inflate ({e})")
        })
    })
}

fn decode_card_base64(chunk: &str, text: &str) -> Result<String, Problem> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD_PAD_INDIFFERENT
        .decode(compact.as_bytes())
        .map_err(|e| Problem::BadBase64 {
            chunk: chunk.into(),
            reason: e.to_string(),
        })?;
    String::from_utf8(bytes).map_err(|_| Problem::BadBase64 {
        chunk: chunk.into(),
        reason: "the decoded bytes are not UTF-8 text".into(),
    })
}

/// Reads `card.json` out of a CHARX archive, refusing archives with too many files or that unpack
/// too large. The declared sizes are checked first, and card.json is read through a limit, since a
/// zip's declared sizes may lie.
pub(crate) fn card_json_from_charx(
    bytes: &[u8],
    report: &mut ImportReport,
) -> Result<String, Problem> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| Problem::BadZip(e.to_string()))?;
    if archive.len() > CHARX_MAX_ENTRIES {
        return Err(Problem::ZipBomb(format!(
            "{} files; at most {CHARX_MAX_ENTRIES} are read",
            archive.len()
        )));
    }
    if let Some(total) = archive.decompressed_size() {
        if total > u128::from(CHARX_MAX_UNPACKED) {
            return Err(Problem::ZipBomb(format!(
                "{total} bytes unpacked; at most {CHARX_MAX_UNPACKED} are read"
            )));
        }
    }
    let index = archive
        .index_for_name("card.json")
        .ok_or(Problem::CharxWithoutCard)?;
    let mut text = String::new();
    {
        let file = archive
            .by_index(index)
            .map_err(|e| Problem::BadZip(e.to_string()))?;
        if file.size() > CHARX_MAX_CARD_JSON {
            return Err(Problem::ZipBomb(format!(
                "card.json is {} bytes unpacked; at most {CHARX_MAX_CARD_JSON} are read",
                file.size()
            )));
        }
        let mut limited = file.take(CHARX_MAX_CARD_JSON + 1);
        let mut raw = Vec::new();
        limited
            .read_to_end(&mut raw)
            .map_err(|e| Problem::BadZip(format!("card.json: {e}")))?;
        if raw.len() as u64 > CHARX_MAX_CARD_JSON {
            return Err(Problem::ZipBomb(format!(
                "card.json unpacks past {CHARX_MAX_CARD_JSON} bytes"
            )));
        }
        text.push_str(
            std::str::from_utf8(&raw)
                .map_err(|_| Problem::NotJson("card.json is not UTF-8 text".into()))?,
        );
    }
    let others = archive.len() - 1;
    if others > 0 {
        report.push("assets", texts::ARCHIVE_FILES.with("count", others));
    }
    Ok(text)
}
