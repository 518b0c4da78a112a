//! SillyTavern world info: the standalone file (`{"entries": {"0": {...}}}`) and the entry mapping
//! shared with the `character_book` of character cards (RULES 6, 7.2).
//!
//! Positions (SillyTavern's `world_info_position`): 0 before and 1 after the character definitions
//! become the anchors `worldInfoBefore` / `worldInfoAfter` (after them); 2/3, the top and bottom
//! of the author's note, become before/after the anchor `authorsNote`; 5/6, the top and bottom of
//! the example messages, become before/after `dialogueExamples`; 4 is a depth injection with the
//! entry's role. SillyTavern puts a higher `order` nearer the end of the prompt, this model puts a
//! higher strategy order first, so the strategy's order is 200 − order; the entry's own `order`
//! (its budget priority, higher first in both) is kept as it is.

use std::collections::HashSet;

use promptloom_engine::model::{
    AnchorPosition, InjectionStrategy, Lorebook, LorebookEntry, Role, SelectiveLogic,
};
use serde_json::Value;

use crate::json::{self, Object};
use crate::texts;
use crate::{ImportReport, Problem, Reported};

/// SillyTavern's default depth for "at depth" entries.
const DEFAULT_WI_DEPTH: i64 = 4;

/// One world info entry read from either source, before mapping.
#[derive(Debug, Default)]
pub(crate) struct StEntry {
    pub id: String,
    pub name: Option<String>,
    pub keys: Vec<String>,
    pub secondary_keys: Vec<String>,
    /// `selective: false` tells SillyTavern to ignore the secondary keys.
    pub selective: Option<bool>,
    pub selective_logic: Option<i64>,
    pub constant: bool,
    pub enabled: bool,
    pub content: String,
    pub order: Option<i64>,
    pub position: Option<i64>,
    /// A `position` that is not a number, as written: SillyTavern places such an entry nowhere.
    pub unplaced: Option<String>,
    pub depth: Option<i64>,
    pub role: Option<i64>,
    pub probability: Option<f64>,
    pub use_probability: Option<bool>,
    pub scan: ScanFields,
    /// Settings that are set and that this model has no place for: `(key, value)`.
    pub unmapped: Vec<String>,
}

/// SillyTavern's per-entry scan, recursion, timing and group settings, as read.
#[derive(Debug, Default)]
pub(crate) struct ScanFields {
    pub scan_depth: Option<i64>,
    pub case_sensitive: Option<bool>,
    pub match_whole_words: Option<bool>,
    pub exclude_recursion: bool,
    pub prevent_recursion: bool,
    /// `true` is level 1; `false` and 0 are off.
    pub delay_until_recursion: Option<i64>,
    pub sticky: Option<i64>,
    pub cooldown: Option<i64>,
    pub delay: Option<i64>,
    pub group: Option<String>,
    pub group_override: bool,
    pub group_weight: Option<i64>,
    pub use_group_scoring: Option<bool>,
}

/// The names of [`ScanFields`] in a world info file, and in a card entry's `extensions`.
const SCAN_NAMES: [(&str, &str); 13] = [
    ("scanDepth", "scan_depth"),
    ("caseSensitive", "case_sensitive"),
    ("matchWholeWords", "match_whole_words"),
    ("excludeRecursion", "exclude_recursion"),
    ("preventRecursion", "prevent_recursion"),
    ("delayUntilRecursion", "delay_until_recursion"),
    ("sticky", "sticky"),
    ("cooldown", "cooldown"),
    ("delay", "delay"),
    ("group", "group"),
    ("groupOverride", "group_override"),
    ("groupWeight", "group_weight"),
    ("useGroupScoring", "use_group_scoring"),
];

/// Reads the scan fields of `obj` under the names `name` picks from [`SCAN_NAMES`].
fn scan_fields(
    obj: &Object,
    name: fn(&(&'static str, &'static str)) -> &'static str,
) -> ScanFields {
    let n = |i: usize| name(&SCAN_NAMES[i]);
    let delay_until_recursion = match obj.get(n(5)) {
        Some(Value::Bool(true)) => Some(1),
        Some(Value::Bool(false)) | None | Some(Value::Null) => None,
        Some(v) => json::value_int(v),
    }
    .filter(|level| *level > 0);
    ScanFields {
        scan_depth: json::int(obj, n(0)),
        case_sensitive: json::boolean(obj, n(1)),
        match_whole_words: json::boolean(obj, n(2)),
        exclude_recursion: json::boolean(obj, n(3)).unwrap_or(false),
        prevent_recursion: json::boolean(obj, n(4)).unwrap_or(false),
        delay_until_recursion,
        sticky: json::int(obj, n(6)).filter(|v| *v > 0),
        cooldown: json::int(obj, n(7)).filter(|v| *v > 0),
        delay: json::int(obj, n(8)).filter(|v| *v > 0),
        group: json::text(obj, n(9)).filter(|g| !g.trim().is_empty()),
        group_override: json::boolean(obj, n(10)).unwrap_or(false),
        group_weight: json::int(obj, n(11)),
        use_group_scoring: json::boolean(obj, n(12)),
    }
}

/// Fields of a world info file entry that are mapped, or that only matter to SillyTavern's editor.
const WI_FILE_KNOWN: &[&str] = &[
    "uid",
    "key",
    "keysecondary",
    "comment",
    "content",
    "constant",
    "selective",
    "selectiveLogic",
    "order",
    "position",
    "disable",
    "depth",
    "role",
    "probability",
    "useProbability",
    "displayIndex",
    "addMemo",
    "extensions",
    "scanDepth",
    "caseSensitive",
    "matchWholeWords",
    "excludeRecursion",
    "preventRecursion",
    "delayUntilRecursion",
    "sticky",
    "cooldown",
    "delay",
    "group",
    "groupOverride",
    "groupWeight",
    "useGroupScoring",
];

pub(crate) fn entry_from_wi_file(key: &str, obj: &Object) -> StEntry {
    let mut unmapped: Vec<String> = json::unknown_set_keys(obj, WI_FILE_KNOWN)
        .into_iter()
        .map(str::to_owned)
        .collect();
    // Only a depth entry's depth and role mean anything.
    if json::int(obj, "position") != Some(4) {
        unmapped.retain(|k| k != "depth" && k != "role");
    }
    StEntry {
        id: json::string(obj, "uid").unwrap_or_else(|| key.to_owned()),
        name: json::text(obj, "comment"),
        keys: json::strings(obj, "key"),
        secondary_keys: json::strings(obj, "keysecondary"),
        selective: json::boolean(obj, "selective"),
        selective_logic: json::int(obj, "selectiveLogic"),
        constant: json::boolean(obj, "constant").unwrap_or(false),
        enabled: !json::boolean(obj, "disable").unwrap_or(false),
        content: entry_content(obj),
        order: json::int(obj, "order"),
        position: json::int(obj, "position"),
        unplaced: match obj.get("position") {
            None | Some(Value::Null) => None,
            Some(v) => json::value_int(v).is_none().then(|| v.to_string()),
        },
        depth: json::int(obj, "depth"),
        role: json::int(obj, "role"),
        probability: json::float(obj, "probability"),
        use_probability: json::boolean(obj, "useProbability"),
        scan: scan_fields(obj, |(file, _)| file),
        unmapped,
    }
}

const CARD_ENTRY_KNOWN: &[&str] = &[
    "id",
    "keys",
    "secondary_keys",
    "comment",
    "name",
    "content",
    "constant",
    "selective",
    "insertion_order",
    "enabled",
    "position",
    "extensions",
    "use_regex",
];

const CARD_ENTRY_EXTENSIONS_KNOWN: &[&str] = &[
    "position",
    "depth",
    "role",
    "selectiveLogic",
    "probability",
    "useProbability",
    "display_index",
    "addMemo",
    "scan_depth",
    "case_sensitive",
    "match_whole_words",
    "exclude_recursion",
    "prevent_recursion",
    "delay_until_recursion",
    "sticky",
    "cooldown",
    "delay",
    "group",
    "group_override",
    "group_weight",
    "use_group_scoring",
];

/// An entry of a card's `character_book` (character card V2/V3 with SillyTavern's extensions).
pub(crate) fn entry_from_card(index: usize, obj: &Object) -> StEntry {
    let empty = Object::new();
    let ext = match obj.get("extensions") {
        Some(Value::Object(e)) => e,
        _ => &empty,
    };
    let mut unmapped: Vec<String> = json::unknown_set_keys(obj, CARD_ENTRY_KNOWN)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let position = json::int(ext, "position").or_else(|| match obj.get("position") {
        Some(Value::String(s)) if s == "after_char" => Some(1),
        Some(Value::String(s)) if s == "before_char" => Some(0),
        _ => None,
    });
    unmapped.extend(
        json::unknown_set_keys(ext, CARD_ENTRY_EXTENSIONS_KNOWN)
            .into_iter()
            .map(|k| format!("extensions.{k}")),
    );
    if position != Some(4) {
        unmapped.retain(|k| k != "extensions.depth" && k != "extensions.role");
    }
    // `use_regex` is left alone: SillyTavern writes it as true on every entry of a card it saves
    // and never reads it back; a key is a regular expression when it is written `/pattern/flags`
    // (world-info.js, `parseRegexFromString`), so "cat" stays a word and does not fire on
    // "concatenate".
    let keys = json::strings(obj, "keys");
    let secondary_keys = json::strings(obj, "secondary_keys");
    StEntry {
        id: json::string(obj, "id").unwrap_or_else(|| index.to_string()),
        name: json::text(obj, "comment").or_else(|| json::text(obj, "name")),
        keys,
        secondary_keys,
        selective: json::boolean(obj, "selective"),
        selective_logic: json::int(ext, "selectiveLogic"),
        constant: json::boolean(obj, "constant").unwrap_or(false),
        enabled: json::boolean(obj, "enabled").unwrap_or(true),
        content: entry_content(obj),
        order: json::int(obj, "insertion_order"),
        position,
        unplaced: None,
        depth: json::int(ext, "depth"),
        role: json::int(ext, "role"),
        probability: json::float(ext, "probability"),
        use_probability: json::boolean(ext, "useProbability"),
        scan: scan_fields(ext, |(_, card)| card),
        unmapped,
    }
}

/// Where an entry goes, from SillyTavern's position number.
pub(crate) fn position_strategy(
    position: i64,
    depth: Option<i64>,
    order: i32,
) -> Option<InjectionStrategy> {
    let anchor = |target: &str, side: AnchorPosition| InjectionStrategy {
        depth: None,
        anchor_target: Some(target.into()),
        anchor_position: Some(side),
        order: Some(order),
    };
    Some(match position {
        0 => anchor("worldInfoBefore", AnchorPosition::After),
        1 => anchor("worldInfoAfter", AnchorPosition::After),
        2 => anchor("authorsNote", AnchorPosition::Before),
        3 => anchor("authorsNote", AnchorPosition::After),
        4 => InjectionStrategy {
            depth: Some(clamp_u32(depth.unwrap_or(DEFAULT_WI_DEPTH))),
            anchor_target: None,
            anchor_position: None,
            order: Some(order),
        },
        5 => anchor("dialogueExamples", AnchorPosition::Before),
        6 => anchor("dialogueExamples", AnchorPosition::After),
        _ => return None,
    })
}

/// SillyTavern's message role numbers (`extension_prompt_roles`).
pub(crate) fn role_from_number(role: i64) -> Option<Role> {
    match role {
        0 => Some(Role::System),
        1 => Some(Role::User),
        2 => Some(Role::Assistant),
        _ => None,
    }
}

pub(crate) fn clamp_u32(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

pub(crate) fn clamp_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX })
}

/// SillyTavern's `injection_order` / entry order -> this model's placement order (RULES 7.2).
pub(crate) fn placement_order(st_order: i64) -> i32 {
    clamp_i32(200i64.saturating_sub(st_order))
}

/// Maps one entry, reporting under `item` what did not come through.
pub(crate) fn map_entry(entry: StEntry, item: &str, report: &mut ImportReport) -> LorebookEntry {
    let st_order = entry.order.unwrap_or(100);
    let placement = placement_order(st_order);
    let position = entry.position.unwrap_or(0);
    // SillyTavern sends an entry only at one of its positions; at any other it activates the
    // entry and places it nowhere (RULES 7.2), so it comes in switched off.
    let mut enabled = entry.enabled;
    let strategy = match (
        &entry.unplaced,
        position_strategy(position, entry.depth, placement),
    ) {
        (None, Some(strategy)) => strategy,
        (unplaced, _) => {
            let written = unplaced.clone().unwrap_or_else(|| position.to_string());
            report.push(item, texts::UNKNOWN_POSITION.with("position", written));
            enabled = false;
            position_strategy(0, None, placement).unwrap_or_default()
        }
    };
    if matches!(position, 2 | 3) {
        report.push(item, texts::AUTHORS_NOTE);
    }
    let role = if position == 4 {
        match entry.role {
            None => Role::System,
            Some(n) => role_from_number(n).unwrap_or_else(|| {
                report.push(item, texts::UNKNOWN_ENTRY_ROLE.with("role", n));
                Role::System
            }),
        }
    } else {
        Role::System
    };
    let selective_logic = match entry.selective_logic.unwrap_or(0) {
        0 => SelectiveLogic::AndAny,
        1 => SelectiveLogic::NotAll,
        2 => SelectiveLogic::NotAny,
        3 => SelectiveLogic::AndAll,
        other => {
            report.push(item, texts::UNKNOWN_LOGIC.with("logic", other));
            SelectiveLogic::AndAny
        }
    };
    let mut secondary_keys = entry.secondary_keys;
    if entry.selective == Some(false) && !secondary_keys.is_empty() {
        report.push(item, texts::SECONDARY_KEYS_LEFT_OUT);
        secondary_keys.clear();
    }
    let probability = match (entry.use_probability, entry.probability) {
        (Some(false), _) | (_, None) => None,
        (_, Some(p)) if p >= 100.0 => None,
        (_, Some(p)) => Some(p.clamp(0.0, 100.0).round() as u32),
    };
    if !entry.unmapped.is_empty() {
        report.push(
            item,
            texts::NOT_MAPPED_FIELDS.with("fields", entry.unmapped.join(", ")),
        );
    }
    let scan = entry.scan;
    let count = |n: Option<i64>| n.map(clamp_u32);
    // 100 is SillyTavern's default weight, written on every entry; it is left absent here.
    let group_weight = scan.group_weight.filter(|w| *w != 100);
    LorebookEntry {
        scan_depth: scan.scan_depth.filter(|d| *d >= 0).map(clamp_u32),
        case_sensitive: scan.case_sensitive,
        match_whole_words: scan.match_whole_words,
        exclude_recursion: scan.exclude_recursion,
        prevent_recursion: scan.prevent_recursion,
        delay_until_recursion: count(scan.delay_until_recursion),
        sticky: count(scan.sticky),
        cooldown: count(scan.cooldown),
        delay: count(scan.delay),
        group: scan.group,
        group_override: scan.group_override,
        group_weight: count(group_weight),
        use_group_scoring: scan.use_group_scoring,
        id: entry.id,
        name: entry.name,
        keys: entry.keys,
        secondary_keys,
        selective_logic,
        constant: entry.constant,
        enabled,
        content: entry.content,
        order: clamp_i32(st_order),
        strategy,
        role,
        probability,
    }
}

/// Gives every entry a distinct id, reporting the ones changed.
pub(crate) fn dedupe_ids(entries: &mut [LorebookEntry], report: &mut ImportReport) {
    let mut seen = HashSet::new();
    for entry in entries.iter_mut() {
        if entry.id.trim().is_empty() {
            entry.id = "entry".into();
        }
        if !seen.insert(entry.id.clone()) {
            let mut n = 2;
            while seen.contains(&format!("{}-{n}", entry.id)) {
                n += 1;
            }
            let new_id = format!("{}-{n}", entry.id);
            report.push(
                format!("entry {}", entry.id),
                texts::DUPLICATE_ID.with("id", &new_id),
            );
            entry.id = new_id.clone();
            seen.insert(new_id);
        }
    }
}

/// A standalone SillyTavern world info file. The file carries no scan settings (they live in the
/// user's settings), so the lorebook takes this model's defaults, which are SillyTavern's.
pub(crate) fn lorebook_from_value(root: &Object) -> Result<Reported<Lorebook>, Problem> {
    let mut report = ImportReport::new(texts::FORMAT_ST_WORLD_INFO);
    let mut entries = Vec::new();
    let mut list: Vec<(String, &Value)> = match root.get("entries") {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        Some(other) => {
            return Err(Problem::shape(format!(
                "`entries` is {}, expected an object keyed by uid",
                json::kind(other)
            )))
        }
        None => return Err(Problem::shape("no `entries`")),
    };
    // The map is keyed by uid; read it in uid order (as numbers: "2" before "10").
    list.sort_by_key(|(key, _)| (key.parse::<u64>().unwrap_or(u64::MAX), key.clone()));
    for (key, value) in list {
        let item = format!("entries.{key}");
        let Value::Object(obj) = value else {
            report.push(
                &item,
                texts::NOT_AN_ENTRY.part("kind", json::kind_text(value)),
            );
            continue;
        };
        let entry = entry_from_wi_file(&key, obj);
        entries.push(map_entry(entry, &item, &mut report));
    }
    dedupe_ids(&mut entries, &mut report);
    for key in json::unknown_set_keys(root, &["entries", "name", "description"]) {
        report.push(key, texts::NOT_MAPPED);
    }
    Ok(Reported {
        value: Lorebook {
            entries,
            ..Lorebook::default()
        },
        report,
    })
}

/// An entry's content without carriage returns: SillyTavern's prompt never carries them (its
/// editor keeps entries with plain line breaks), so neither does the imported entry.
fn entry_content(obj: &Object) -> String {
    let content = json::string(obj, "content").unwrap_or_default();
    if content.contains('\r') {
        content.replace('\r', "")
    } else {
        content
    }
}
