//! Why the first differing message differs (RULES 9.8): the macro, lorebook entry, depth
//! injection, limiter cut, history or template it came from.
//!
//! Each build keeps, for every text the assembler expanded, a hash of the text as written and
//! the macros it evaluated with a hash of each one's output (`BuildResult::macro_traces`). Two
//! builds of the same text that differ first at one macro changed because of that macro; a text
//! that was written differently is the template's own change.

use std::fmt;

use super::align::Pair;
use super::RowKind;
use crate::macros::ExpansionTrace;
use crate::pipeline::{BuildResult, BuiltMessage, Placement, Source, SourceKind};

/// The cause of a difference, as `firstDifference.cause` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A macro's output differs (`{{random}}`, `{{time}}`, `{{lastMessage}}`...); its name as
    /// written.
    Macro(String),
    /// A lorebook entry fired in one build and not in the other.
    Lorebook(String),
    /// A message placed at a depth in the history moved (or came or went) with the history; the
    /// template (or processor) that placed it.
    DepthInjection(String),
    /// The token limiter cut or dropped history in one build and not the other.
    Limiter,
    /// The stored history itself differs: a message added, edited or removed.
    History,
    /// A template differs as written, or is in one build only.
    Template,
    Other,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Macro(name) => write!(f, "macro:{name}"),
            Cause::Lorebook(id) => write!(f, "lorebook:{id}"),
            Cause::DepthInjection(id) => write!(f, "depth-injection:{id}"),
            Cause::Limiter => f.write_str("limiter"),
            Cause::History => f.write_str("history"),
            Cause::Template => f.write_str("template"),
            Cause::Other => f.write_str("other"),
        }
    }
}

/// The cause of row `pair`'s difference between `left` and `right`.
pub fn cause(pair: Pair, left: &BuildResult<'_>, right: &BuildResult<'_>) -> Cause {
    let l = pair.left.map(|i| &left.messages[i]);
    let r = pair.right.map(|j| &right.messages[j]);
    match (pair.kind, l, r) {
        (RowKind::Changed, Some(l), Some(r)) => changed(l, r, left, right),
        (RowKind::Left, Some(m), _) => one_sided(m, right),
        (RowKind::Right, _, Some(m)) => one_sided(m, left),
        _ => Cause::Other,
    }
}

/// A message only one build has; `other` is the build without it.
fn one_sided(m: &BuiltMessage<'_>, other: &BuildResult<'_>) -> Cause {
    let s = m.source();
    if let Placement::Depth { .. } = s.placement {
        if s.kind != SourceKind::Lorebook {
            return Cause::DepthInjection(placer(&s));
        }
    }
    match s.kind {
        SourceKind::Lorebook => Cause::Lorebook(first_entry(&s).to_string()),
        SourceKind::History | SourceKind::Input => match s.history_index {
            Some(i) if limiter_dropped(other, i) => Cause::Limiter,
            _ => Cause::History,
        },
        SourceKind::Template => Cause::Template,
        _ => Cause::Other,
    }
}

/// Two messages of one source whose role or text differ.
fn changed(
    l: &BuiltMessage<'_>,
    r: &BuiltMessage<'_>,
    left: &BuildResult<'_>,
    right: &BuildResult<'_>,
) -> Cause {
    if l.kind().is_history() {
        return if l.truncated() != r.truncated() {
            Cause::Limiter
        } else {
            Cause::History
        };
    }
    // The message's own source, then those of the texts a formatter joined into it, in order.
    let ls: Vec<Source> = std::iter::once(l.source().into_owned())
        .chain(l.merged().iter().cloned())
        .collect();
    let rs: Vec<Source> = std::iter::once(r.source().into_owned())
        .chain(r.merged().iter().cloned())
        .collect();
    for (a, b) in ls.iter().zip(&rs) {
        if a.kind == SourceKind::Lorebook || b.kind == SourceKind::Lorebook {
            let (ea, eb) = (entries(a), entries(b));
            if let Some(id) = eb
                .iter()
                .find(|id| !ea.contains(id))
                .or_else(|| ea.iter().find(|id| !eb.contains(id)))
            {
                return Cause::Lorebook(id.to_string());
            }
        }
        if let Some(found) = by_trace(a, b, left, right) {
            return found;
        }
    }
    if ls.len() != rs.len() {
        // A formatter joined another text into one of them.
        let extra = if ls.len() > rs.len() {
            &ls[rs.len()]
        } else {
            &rs[ls.len()]
        };
        return match extra.kind {
            SourceKind::Lorebook => Cause::Lorebook(first_entry(extra).to_string()),
            SourceKind::Template if matches!(extra.placement, Placement::Depth { .. }) => {
                Cause::DepthInjection(placer(extra))
            }
            kind if kind.is_history() => Cause::History,
            SourceKind::Template => Cause::Template,
            _ => Cause::Other,
        };
    }
    Cause::Other
}

/// What the expansions of sources `a` (left) and `b` (right) say: the template written
/// differently, or the first macro whose output differs.
fn by_trace(
    a: &Source,
    b: &Source,
    left: &BuildResult<'_>,
    right: &BuildResult<'_>,
) -> Option<Cause> {
    let ta = trace(&left.macro_traces, a)?;
    let tb = trace(&right.macro_traces, b)?;
    if ta.text != tb.text {
        // A template written differently; any other text (an author's note, a processor's)
        // is not one the preset holds.
        return Some(if a.kind == SourceKind::Template {
            Cause::Template
        } else {
            Cause::Other
        });
    }
    let differs = ta
        .macros
        .iter()
        .zip(&tb.macros)
        .find(|(x, y)| x != y)
        .map(|(x, _)| x)
        .or_else(|| {
            let (longer, shorter) = if ta.macros.len() > tb.macros.len() {
                (ta, tb)
            } else {
                (tb, ta)
            };
            longer.macros.get(shorter.macros.len())
        })?;
    let name = differs.name.as_str();
    // The lorebook's texts written by a template: the entry that fired in one build only.
    if name.eq_ignore_ascii_case("wiBefore") || name.eq_ignore_ascii_case("wiAfter") {
        if let Some(id) = lorebook_difference(left, right) {
            return Some(Cause::Lorebook(id));
        }
    }
    Some(Cause::Macro(name.to_string()))
}

/// The expansion of the text `source` came from: where the assembler expanded it.
fn trace<'t>(traces: &'t [ExpansionTrace], source: &Source) -> Option<&'t ExpansionTrace> {
    let position = source.expansion_position();
    traces.iter().find(|t| t.position == position)
}

/// The first entry that fired in one build only: the right build's first, else the left's.
fn lorebook_difference(left: &BuildResult<'_>, right: &BuildResult<'_>) -> Option<String> {
    let ids = |r: &BuildResult<'_>| -> Vec<String> {
        r.lorebook
            .as_ref()
            .map(|l| l.activated.iter().map(|a| a.entry_id.clone()).collect())
            .unwrap_or_default()
    };
    let (a, b) = (ids(left), ids(right));
    b.iter()
        .find(|id| !a.contains(id))
        .or_else(|| a.iter().find(|id| !b.contains(id)))
        .cloned()
}

/// Whether the token limiter of `result` dropped the stored message `index`.
fn limiter_dropped(result: &BuildResult<'_>, index: u32) -> bool {
    result.dropped.iter().any(|d| {
        d.processor == "token-limiter"
            && d.source.history_index.is_some_and(|first| {
                first <= index && index <= d.last_history_index.unwrap_or(first)
            })
    })
}

/// The template (or processor, or kind) that placed a message.
fn placer(s: &Source) -> String {
    s.template_id
        .clone()
        .or_else(|| s.processor.clone())
        .unwrap_or_else(|| s.kind.as_str().to_string())
}

/// The entries of a lorebook message (several when their texts were joined into one).
fn entries(s: &Source) -> Vec<&str> {
    s.entry_id
        .as_deref()
        .map(|ids| ids.split(", ").collect())
        .unwrap_or_default()
}

fn first_entry(s: &Source) -> &str {
    s.entry_id
        .as_deref()
        .and_then(|ids| ids.split(", ").next())
        .unwrap_or("")
}
