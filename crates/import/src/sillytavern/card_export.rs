//! A character (and its lorebook) -> a SillyTavern character card V2 as JSON, the inverse of the
//! card importer. SillyTavern imports this JSON directly. Lorebook entries keep their keys,
//! logic, order, position (from the strategy), depth and role; what a card cannot hold is
//! reported.

use promptloom_engine::model::{
    AnchorPosition, Character, InjectionStrategy, Lorebook, LorebookEntry, Role, SelectiveLogic,
};
use serde_json::{json, Map, Value};

use super::card::CharacterCard;
use super::world_info::placement_order;
use crate::texts;
use crate::{ImportReport, Reported};

pub fn export_card(card: &CharacterCard) -> Reported<Value> {
    let mut report = ImportReport::new(texts::FORMAT_ST_CARD_V2);
    let c: &Character = &card.character;
    let text = |v: &Option<String>| Value::String(v.clone().unwrap_or_default());
    let mut data = json!({
        "name": c.name,
        "description": text(&c.description),
        "personality": text(&c.personality),
        "scenario": text(&c.scenario),
        "first_mes": text(&c.greeting),
        "mes_example": text(&c.example_dialogue),
        "creator_notes": text(&c.creator_notes),
        "system_prompt": text(&c.system_prompt),
        "post_history_instructions": text(&c.post_history_instructions),
        "tags": c.tags.clone().unwrap_or_default(),
        "alternate_greetings": c.alternate_greetings,
        "extensions": {},
    });
    if let Some(book) = &card.lorebook {
        data["character_book"] = character_book(book, &mut report);
    }
    if let Some(note) = &c.depth_prompt {
        data["extensions"]["depth_prompt"] = json!({
            "prompt": note.prompt,
            "depth": note.depth,
            "role": note.role.as_str(),
        });
    }
    Reported {
        value: json!({ "spec": "chara_card_v2", "spec_version": "2.0", "data": data }),
        report,
    }
}

fn character_book(book: &Lorebook, report: &mut ImportReport) -> Value {
    let entries: Vec<Value> = book
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| entry(i, e, report))
        .collect();
    if book.token_budget != 25 {
        report.push("lorebook.tokenBudget", texts::CARD_TOKEN_BUDGET);
    }
    json!({
        "scan_depth": book.scan_depth,
        "recursive_scanning": book.recursive,
        "extensions": {},
        "entries": entries,
    })
}

fn entry(index: usize, e: &LorebookEntry, report: &mut ImportReport) -> Value {
    let item = format!("lorebook entry {}", e.id);
    let (position, depth) = position_of(&e.strategy).unwrap_or_else(|| {
        report.push(&item, texts::ENTRY_POSITION);
        (0, None)
    });
    if let Some(order) = e.strategy.order {
        if order != placement_order(i64::from(e.order)) {
            report.push(&item, texts::ENTRY_ORDER);
        }
    }
    let mut ext = Map::new();
    ext.insert("position".into(), json!(position));
    ext.insert("selectiveLogic".into(), json!(logic(e.selective_logic)));
    if let Some(d) = depth {
        ext.insert("depth".into(), json!(d));
        ext.insert("role".into(), json!(role_number(e.role)));
    }
    if let Some(p) = e.probability {
        ext.insert("probability".into(), json!(p));
        ext.insert("useProbability".into(), json!(true));
    }
    for (card_key, _, value) in scan_fields(e) {
        ext.insert(card_key.into(), value);
    }
    let id: Value =
        e.id.parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(index as i64));
    json!({
        "id": id,
        "keys": e.keys,
        "secondary_keys": e.secondary_keys,
        "comment": e.name.clone().unwrap_or_default(),
        "content": e.content,
        "constant": e.constant,
        "selective": !e.secondary_keys.is_empty(),
        "insertion_order": e.order,
        "enabled": e.enabled,
        "position": if position == 1 { "after_char" } else { "before_char" },
        "extensions": ext,
    })
}

/// The entry's SillyTavern scan, recursion, timing and group settings that are set, as
/// `(card extensions key, world info file key, value)`.
fn scan_fields(e: &LorebookEntry) -> Vec<(&'static str, &'static str, Value)> {
    let mut out = Vec::new();
    let mut put = |card: &'static str, file: &'static str, value: Option<Value>| {
        if let Some(v) = value {
            out.push((card, file, v));
        }
    };
    put("scan_depth", "scanDepth", e.scan_depth.map(Value::from));
    put(
        "case_sensitive",
        "caseSensitive",
        e.case_sensitive.map(Value::from),
    );
    put(
        "match_whole_words",
        "matchWholeWords",
        e.match_whole_words.map(Value::from),
    );
    put(
        "exclude_recursion",
        "excludeRecursion",
        e.exclude_recursion.then_some(Value::Bool(true)),
    );
    put(
        "prevent_recursion",
        "preventRecursion",
        e.prevent_recursion.then_some(Value::Bool(true)),
    );
    // SillyTavern writes level 1 as `true`.
    put(
        "delay_until_recursion",
        "delayUntilRecursion",
        e.delay_until_recursion.map(|l| {
            if l == 1 {
                Value::Bool(true)
            } else {
                Value::from(l)
            }
        }),
    );
    put("sticky", "sticky", e.sticky.map(Value::from));
    put("cooldown", "cooldown", e.cooldown.map(Value::from));
    put("delay", "delay", e.delay.map(Value::from));
    put("group", "group", e.group.clone().map(Value::from));
    put(
        "group_override",
        "groupOverride",
        e.group_override.then_some(Value::Bool(true)),
    );
    put(
        "group_weight",
        "groupWeight",
        e.group_weight.map(Value::from),
    );
    put(
        "use_group_scoring",
        "useGroupScoring",
        e.use_group_scoring.map(Value::from),
    );
    out
}

/// SillyTavern's position number (and depth) for a strategy, the inverse of the importer's
/// `position_strategy`.
fn position_of(s: &InjectionStrategy) -> Option<(i64, Option<u32>)> {
    if let Some(d) = s.depth {
        return Some((4, Some(d)));
    }
    let side = s.anchor_position.unwrap_or(AnchorPosition::After);
    Some(match (s.anchor_target.as_deref()?, side) {
        ("worldInfoBefore", AnchorPosition::After) => (0, None),
        ("worldInfoAfter", AnchorPosition::After) => (1, None),
        ("authorsNote", AnchorPosition::Before) => (2, None),
        ("authorsNote", AnchorPosition::After) => (3, None),
        ("dialogueExamples", AnchorPosition::Before) => (5, None),
        ("dialogueExamples", AnchorPosition::After) => (6, None),
        _ => return None,
    })
}

fn logic(l: SelectiveLogic) -> i64 {
    match l {
        SelectiveLogic::AndAny => 0,
        SelectiveLogic::NotAll => 1,
        SelectiveLogic::NotAny => 2,
        SelectiveLogic::AndAll => 3,
    }
}

fn role_number(r: Role) -> i64 {
    match r {
        Role::User => 1,
        Role::Assistant => 2,
        _ => 0,
    }
}

/// A lorebook -> a SillyTavern world info file (`{"entries": {"0": {...}}}`), the inverse of the
/// world info importer: the same keys, logic, order, position, depth and role as a card's book.
pub fn export_world_info(book: &Lorebook) -> Reported<Value> {
    let mut report = ImportReport::new(texts::FORMAT_ST_WORLD_INFO);
    let defaults = Lorebook::default();
    let settings = [
        ("lorebook.scanDepth", book.scan_depth != defaults.scan_depth),
        (
            "lorebook.tokenBudget",
            book.token_budget != defaults.token_budget,
        ),
        ("lorebook.recursive", book.recursive != defaults.recursive),
        (
            "lorebook.caseSensitive",
            book.case_sensitive != defaults.case_sensitive,
        ),
        (
            "lorebook.matchWholeWords",
            book.match_whole_words != defaults.match_whole_words,
        ),
        ("lorebook.minActivations", book.min_activations != 0),
        (
            "lorebook.minActivationsDepthMax",
            book.min_activations_depth_max != 0,
        ),
        ("lorebook.maxRecursionSteps", book.max_recursion_steps != 0),
        ("lorebook.budgetCap", book.budget_cap != 0),
        ("lorebook.useGroupScoring", book.use_group_scoring),
    ];
    for (item, differs) in settings {
        if differs {
            report.push(item, texts::GLOBAL_SETTING);
        }
    }
    let mut entries = Map::new();
    for (i, e) in book.entries.iter().enumerate() {
        let card_entry = entry(i, e, &mut report);
        let ext = &card_entry["extensions"];
        let mut wi = json!({
            "uid": i,
            "key": e.keys,
            "keysecondary": e.secondary_keys,
            "comment": e.name.clone().unwrap_or_default(),
            "content": e.content,
            "constant": e.constant,
            "selective": !e.secondary_keys.is_empty(),
            "selectiveLogic": ext["selectiveLogic"],
            "order": e.order,
            "position": ext["position"],
            "disable": !e.enabled,
        });
        for key in ["depth", "role", "probability", "useProbability"] {
            if let Some(v) = ext.get(key) {
                wi[key] = v.clone();
            }
        }
        for (_, file_key, value) in scan_fields(e) {
            wi[file_key] = value;
        }
        if e.id != i.to_string() {
            report.push(
                format!("lorebook entry {}", e.id),
                texts::UID.with("uid", i),
            );
        }
        entries.insert(i.to_string(), wi);
    }
    Reported {
        value: json!({ "entries": entries }),
        report,
    }
}
