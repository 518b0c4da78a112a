//! `history-operations` (priority 150, off by default): the operations of RULES 5.3 on the history,
//! run through its per-role indices. One operation per preset:
//!
//! - `truncate`: keep the first or last N, remove the first or last N, or keep a range
//!   `[rangeStart, rangeEnd)` (an end of 0 means "to the end"). With a `role`, the operation
//!   counts only that role's messages and leaves the other roles alone ("keep the last 5 user
//!   messages").
//! - `filter`: keep the messages whose role is listed (all when none is), that contain one of
//!   `contentContains` (when any is given) and none of `contentExcludes`. Lists are separated by
//!   commas or new lines.
//! - `clear`: remove the history, keeping system messages if `keepSystemMessage`.
//!
//! The pending input (the message about to be sent) is never removed. What is removed is listed
//! in the result with the operation as its reason.

use std::collections::HashSet;

use crate::cache::ByStoredText;
use crate::model::Role;
use crate::pipeline::{
    option_said, ConfigField, DroppedItem, PipelineContext, Processor, ProcessorDescriptor,
    ResolvedConfig, SourceKind,
};
use crate::said::Said;
use crate::texts;
use crate::EngineError;

pub struct HistoryOperations;

const ID: &str = "history-operations";
const OPERATIONS: &[&str] = &["truncate", "filter", "clear"];
const TRUNCATE_MODES: &[&str] = &[
    "keepLast",
    "keepFirst",
    "removeFirst",
    "removeLast",
    "range",
];
const ROLES: &[&str] = &["any", "system", "user", "assistant", "tool"];

impl Processor for HistoryOperations {
    fn descriptor(&self) -> ProcessorDescriptor {
        ProcessorDescriptor {
            id: ID,
            name: "History operations",
            description: "Truncates, filters or clears the chat history before assembly.",
            priority: 150,
            is_core: false,
            default_enabled: false,
            config_fields: vec![
                ConfigField::select("operation", "Operation", OPERATIONS, "truncate"),
                ConfigField::select("truncateMode", "Truncate", TRUNCATE_MODES, "keepLast"),
                ConfigField::number("count", "N", 20.0)
                    .describe("How many messages keep/remove counts."),
                ConfigField::number("rangeStart", "Range start", 0.0),
                ConfigField::number("rangeEnd", "Range end", 0.0)
                    .describe("Exclusive; 0 means to the end."),
                ConfigField::select("role", "Only this role", ROLES, "any")
                    .describe("Truncate counts only this role's messages; the others stay."),
                ConfigField::text("roles", "Keep roles", "")
                    .describe("Filter: roles to keep, e.g. \"user, assistant\"."),
                ConfigField::text("contentContains", "Content contains", "")
                    .describe("Filter: keep messages containing one of these."),
                ConfigField::text("contentExcludes", "Content excludes", "")
                    .describe("Filter: drop messages containing any of these."),
                ConfigField::boolean("keepSystemMessage", "Keep system messages", true)
                    .describe("Clear: system messages stay."),
            ],
        }
    }

    fn execute(
        &self,
        ctx: &mut PipelineContext<'_, '_>,
        config: &ResolvedConfig,
    ) -> Result<(), EngineError> {
        let n = ctx.history.len();
        let operation = config.str("operation");
        let remove: HashSet<usize> = match operation {
            "truncate" => {
                let role = parse_role(config.str("role"));
                let positions: Vec<usize> = match role {
                    Some(role) => ctx
                        .history
                        .positions_of(role)
                        .iter()
                        .map(|&p| p as usize)
                        .collect(),
                    None => (0..n).collect(),
                };
                let keep = truncate(&positions, config);
                let keep: HashSet<usize> = keep.iter().copied().collect();
                positions
                    .into_iter()
                    .filter(|p| !keep.contains(p))
                    .collect()
            }
            "filter" => {
                let roles: Vec<Role> = list(config.str("roles")).filter_map(parse_role).collect();
                let (contains_list, excludes_list) =
                    (config.str("contentContains"), config.str("contentExcludes"));
                let contains = AnyOf::new(list(contains_list).collect());
                let excludes = AnyOf::new(list(excludes_list).collect());
                let passes = |text: &str| {
                    contains.as_ref().is_none_or(|c| c.is_in(text))
                        && !excludes.as_ref().is_some_and(|e| e.is_in(text))
                };
                // Whether a stored message passes the texts is kept between builds, so a
                // rebuild after a template edit searches no history it has seen.
                let texts = (contains.is_some() || excludes.is_some())
                    .then(|| texts_key(contains_list, excludes_list));
                let session = ctx.session;
                let generation = ctx.blackboard.stored_texts;
                let mut memo = texts.map(|key| {
                    let mut memo = ctx.cache.take_kept::<HistoryMatches>(&session.id, key);
                    memo.rows.sync(session, generation);
                    memo
                });
                let mut remove = HashSet::new();
                // Over the stored messages as loaded, unchanged since the last build with these
                // roles, what it removed: the rest is looked at.
                let loaded = ctx.history.loaded();
                let whole = loaded == session.messages.len() && generation.is_some();
                let reused = memo
                    .as_ref()
                    .and_then(|m| m.removed.as_ref())
                    .filter(|r| whole && Some(r.generation) == generation && r.roles == roles);
                let from = match reused {
                    Some(r) => {
                        remove.extend(r.stored.iter().map(|&i| i as usize));
                        loaded
                    }
                    None => 0,
                };
                let reused = reused.is_some();
                for (i, m) in ctx.history.iter().enumerate().skip(from) {
                    let kept = (roles.is_empty() || roles.contains(&m.role))
                        && match (&mut memo, m.stored_text(), m.history_index()) {
                            // Its stored text, held by the memo: read only when it changed.
                            (Some(memo), Some((h, stored)), _) => {
                                let known = memo.rows.get_stored(h, || &stored.content).copied();
                                known.unwrap_or_else(|| {
                                    let passed = passes(&stored.content);
                                    memo.rows.set_stored(h, &stored.content, passed);
                                    passed
                                })
                            }
                            (Some(memo), None, Some(h)) if m.kind() == SourceKind::History => {
                                let h = h as usize;
                                let known = memo.rows.get(h, m.content_arc()).copied();
                                known.unwrap_or_else(|| {
                                    let passed = passes(m.content());
                                    memo.rows.set(h, m.content_arc(), passed);
                                    passed
                                })
                            }
                            _ => passes(m.content()),
                        };
                    if !kept {
                        remove.insert(i);
                    }
                }
                if let (Some(key), Some(mut memo)) = (texts, memo) {
                    if let (false, true, Some(generation)) = (reused, whole, generation) {
                        let mut stored: Vec<u32> = remove
                            .iter()
                            .filter(|&&i| i < loaded)
                            .map(|&i| i as u32)
                            .collect();
                        stored.sort_unstable();
                        memo.removed = Some(Removed {
                            generation,
                            roles: roles.clone(),
                            stored,
                        });
                    }
                    memo.rows.truncate(session.messages.len());
                    ctx.cache.keep(&session.id, key, memo);
                }
                remove
            }
            _ => {
                let keep_system = config.bool("keepSystemMessage");
                ctx.history
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| !(keep_system && m.role == Role::System))
                    .map(|(i, _)| i)
                    .collect()
            }
        };
        let remove: HashSet<usize> = remove
            .into_iter()
            .filter(|&i| {
                ctx.history
                    .get(i)
                    .is_some_and(|m| m.kind() != SourceKind::Input)
            })
            .collect();
        if remove.is_empty() {
            ctx.info(
                ID,
                texts::NOTHING_REMOVED.part(
                    "operation",
                    option_said(ID, "operation", OPERATIONS, operation),
                ),
            );
            return Ok(());
        }
        let reason = describe(operation, config);
        let mut dropped: Vec<DroppedItem> = Vec::new();
        for i in (0..n).filter(|i| remove.contains(i)) {
            let Some(m) = ctx.history.get(i) else {
                continue;
            };
            DroppedItem::push_history_run(&mut dropped, ID, m, &reason);
        }
        ctx.history.retain_indexed(|i, _| !remove.contains(&i));
        ctx.dropped.extend(dropped);
        ctx.info(
            ID,
            texts::HISTORY_REMOVED
                .part("reason", reason)
                .with("removed", remove.len())
                .with("total", n),
        );
        Ok(())
    }
}

/// Whether each of a session's stored messages passed one filter's texts, by stored position,
/// and which the last build with them removed.
#[derive(Debug, Default)]
struct HistoryMatches {
    rows: ByStoredText<bool>,
    removed: Option<Removed>,
}

/// The stored messages a filter's last build removed, while the session's stored texts were of
/// `generation` ([`ByStoredText::sync`]) and the history was the stored messages as loaded.
#[derive(Debug)]
struct Removed {
    generation: u64,
    roles: Vec<Role>,
    stored: Vec<u32>,
}

/// Identifies a filter's texts: what decides whether a message passes them.
fn texts_key(contains: &str, excludes: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for list in [contains, excludes] {
        h.update(&(list.len() as u64).to_le_bytes());
        h.update(list.as_bytes());
    }
    h.digest()
}

fn parse_role(s: &str) -> Option<Role> {
    match s.trim().to_ascii_lowercase().as_str() {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn count(config: &ResolvedConfig, key: &str) -> usize {
    config.number(key).map_or(0, |n| n.max(0.0) as usize)
}

/// The positions `truncate` keeps out of `positions` (ascending).
fn truncate(positions: &[usize], config: &ResolvedConfig) -> Vec<usize> {
    let len = positions.len();
    let n = count(config, "count").min(len);
    let kept = match config.str("truncateMode") {
        "keepFirst" => &positions[..n],
        "removeFirst" => &positions[n..],
        "removeLast" => &positions[..len - n],
        "range" => {
            let end = match count(config, "rangeEnd") {
                0 => len,
                e => e.min(len),
            };
            let start = count(config, "rangeStart").min(end);
            &positions[start..end]
        }
        _ => &positions[len - n..],
    };
    kept.to_vec()
}

/// The reason of what `operation` removed.
fn describe(operation: &str, config: &ResolvedConfig) -> Said {
    match operation {
        "truncate" => {
            let role = match config.str("role") {
                "any" | "" => None,
                r => Some(r),
            };
            let (plain, with_role) = match config.str("truncateMode") {
                "range" => (texts::TRUNCATE_RANGE, texts::TRUNCATE_RANGE_ROLE),
                _ => (texts::TRUNCATE, texts::TRUNCATE_ROLE),
            };
            let said = match role {
                Some(role) => with_role.part("role", option_said(ID, "role", ROLES, role)),
                None => plain.into(),
            };
            match config.str("truncateMode") {
                "range" => said
                    .with("start", count(config, "rangeStart"))
                    .with("end", count(config, "rangeEnd")),
                mode => said
                    .part(
                        "mode",
                        option_said(ID, "truncateMode", TRUNCATE_MODES, mode),
                    )
                    .with("count", count(config, "count")),
            }
        }
        "filter" => texts::FILTER.into(),
        _ => texts::CLEAR.into(),
    }
}

/// Any of a list of texts, looked for in every message of a long history at once (one pass
/// per message whatever the list's length); `None` for an empty list.
enum AnyOf<'a> {
    Automaton(aho_corasick::AhoCorasick),
    /// Where the automaton cannot be built (a list too large for it): one search per text.
    Each(Vec<&'a str>),
}

impl<'a> AnyOf<'a> {
    fn new(texts: Vec<&'a str>) -> Option<Self> {
        if texts.is_empty() {
            return None;
        }
        Some(match aho_corasick::AhoCorasick::new(&texts) {
            Ok(automaton) => AnyOf::Automaton(automaton),
            Err(_) => AnyOf::Each(texts),
        })
    }

    fn is_in(&self, text: &str) -> bool {
        match self {
            AnyOf::Automaton(automaton) => automaton.is_match(text),
            AnyOf::Each(texts) => texts.iter().any(|t| text.contains(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processors::testing::run_on_history;
    use serde_json::json;

    const H: &[(Role, &str)] = &[
        (Role::System, "s0"),
        (Role::User, "u1 apple"),
        (Role::Assistant, "a2"),
        (Role::User, "u3 pear"),
        (Role::Assistant, "a4 apple"),
        (Role::User, "u5"),
    ];

    /// Runs the operation and returns the history left, as the assembler would receive it.
    fn left(settings: &[(&str, serde_json::Value)]) -> (Vec<String>, crate::BuildResult<'static>) {
        let (history, result) = run_on_history(&HistoryOperations, settings, H);
        (
            history.iter().map(|m| m.content().to_string()).collect(),
            result,
        )
    }

    #[test]
    fn truncate_keep_last_n() {
        let (h, r) = left(&[("count", json!(2))]);
        assert_eq!(h, ["a4 apple", "u5"]);
        assert_eq!(r.dropped.len(), 1);
        assert_eq!(
            (r.dropped[0].count, r.dropped[0].last_history_index),
            (4, Some(3))
        );
    }

    #[test]
    fn truncate_modes() {
        let run = |mode: &str, extra: &[(&str, serde_json::Value)]| {
            let mut s = vec![("truncateMode", json!(mode)), ("count", json!(2))];
            s.extend(extra.iter().cloned());
            left(&s).0
        };
        assert_eq!(run("keepFirst", &[]), ["s0", "u1 apple"]);
        assert_eq!(run("removeFirst", &[]), ["a2", "u3 pear", "a4 apple", "u5"]);
        assert_eq!(run("removeLast", &[]), ["s0", "u1 apple", "a2", "u3 pear"]);
        assert_eq!(
            run("range", &[("rangeStart", json!(1)), ("rangeEnd", json!(3))]),
            ["u1 apple", "a2"]
        );
        assert_eq!(
            run("range", &[("rangeStart", json!(4))]),
            ["a4 apple", "u5"]
        );
    }

    #[test]
    fn truncate_by_role_leaves_other_roles_alone() {
        let (h, _) = left(&[("role", json!("user")), ("count", json!(1))]);
        assert_eq!(h, ["s0", "a2", "a4 apple", "u5"]);
    }

    #[test]
    fn filter_by_roles_and_content() {
        let (h, _) = left(&[
            ("operation", json!("filter")),
            ("roles", json!("user, assistant")),
        ]);
        assert_eq!(h, ["u1 apple", "a2", "u3 pear", "a4 apple", "u5"]);
        let (h, _) = left(&[
            ("operation", json!("filter")),
            ("contentContains", json!("apple\npear")),
        ]);
        assert_eq!(h, ["u1 apple", "u3 pear", "a4 apple"]);
        let (h, _) = left(&[
            ("operation", json!("filter")),
            ("contentExcludes", json!("apple")),
        ]);
        assert_eq!(h, ["s0", "a2", "u3 pear", "u5"]);
    }

    #[test]
    fn clear_keeps_system_messages_when_asked() {
        let (h, _) = left(&[("operation", json!("clear"))]);
        assert_eq!(h, ["s0"]);
        let (h, _) = left(&[
            ("operation", json!("clear")),
            ("keepSystemMessage", json!(false)),
        ]);
        assert!(h.is_empty());
    }

    #[test]
    fn per_role_indices_stay_right_after_removal() {
        let settings = [
            ("operation", json!("filter")),
            ("contentExcludes", json!("u3")),
        ];
        let (history, _) = run_on_history(&HistoryOperations, &settings, H);
        assert_eq!(history.count_by_role(Role::User), 2);
        assert_eq!(
            history.last_of_role(Role::User).map(|m| m.content()),
            Some("u5")
        );
        let recent: Vec<&str> = history
            .recent_by_role(Role::User, 2)
            .iter()
            .filter_map(|&p| history.get(p as usize))
            .map(|m| m.content())
            .collect();
        assert_eq!(recent, ["u1 apple", "u5"]);
    }
}
