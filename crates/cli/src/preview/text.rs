//! `--format text`: the build as a listing for people: a header, each message with its role,
//! tokens and provenance badge and its content indented, then the totals, what was dropped and
//! the warnings. Plain text, aligned columns, no colours.

use std::fmt::Write;

use promptloom_engine::pipeline::{DropAction, DroppedItem};

use super::Preview;

pub fn render(p: &Preview<'_>) -> String {
    let r = p.result;
    let mut out = String::new();

    // Header.
    field(
        &mut out,
        "Preset",
        &format!("{}  ({})", p.preset.name, p.preset.id),
    );
    match r.recipe.as_deref() {
        Some(id) => {
            let recipe = p.preset.context_recipes.iter().find(|c| c.id == id);
            let filters = recipe
                .map(|c| c.model_filter.join(", "))
                .unwrap_or_default();
            field(&mut out, "Recipe", &format!("{id}  [{filters}]"));
            if let Some(name) = recipe.and_then(|c| c.name.as_deref()) {
                field(&mut out, "", name);
            }
        }
        None => field(&mut out, "Recipe", "(none)"),
    }
    field(&mut out, "Model", p.model);
    // The profile and tokenizer the build used, as it reports them.
    let profile = &r.model_profile;
    let profile_name = profile.name.as_deref().unwrap_or(&profile.id);
    field(
        &mut out,
        "Profile",
        &format!("{profile_name}  ({})", r.profile),
    );
    let exactness = if r.tokenizer.exact {
        "exact"
    } else {
        "estimate"
    };
    field(
        &mut out,
        "Tokenizer",
        &format!("{} ({exactness})", r.tokenizer.vocabulary.name()),
    );
    out.push('\n');

    // Messages.
    let index_width = digits(r.messages.len().saturating_sub(1)).max(1);
    let token_width = r
        .messages
        .iter()
        .map(|m| shown_tokens(m).len())
        .max()
        .unwrap_or(0)
        .max("tokens".len());
    let role_width = "assistant".len();
    let _ = writeln!(
        out,
        "{:>index_width$}  {:<role_width$}  {:>token_width$}  source",
        "#", "role", "tokens"
    );
    if r.messages.is_empty() {
        out.push_str("(no messages)\n");
    }
    for (i, m) in r.messages.iter().enumerate() {
        let mut badge = m.source().badge();
        for part in m.merged() {
            let _ = write!(badge, " + {}", part.badge());
        }
        if let Some(name) = &m.name() {
            let _ = write!(badge, " · name {name}");
        }
        if m.truncated() {
            badge.push_str(" · truncated");
        }
        let _ = writeln!(
            out,
            "{i:>index_width$}  {:<role_width$}  {:>token_width$}  {badge}",
            m.role.as_str(),
            shown_tokens(m)
        );
        // The content hangs under the role column behind a bar that keeps blank lines visible;
        // long lines wrap, their continuations marked with a dotted bar.
        let indent = index_width + 2;
        let room = p.width.saturating_sub(indent + 2).max(MIN_TEXT_WIDTH);
        for line in m.content().lines() {
            for (k, piece) in wrap(line, room).into_iter().enumerate() {
                let bar = if k == 0 { '│' } else { '┆' };
                let _ = writeln!(out, "{:indent$}{bar} {piece}", "");
                trim_line_end(&mut out);
            }
        }
        out.push('\n');
    }

    // Totals.
    let t = &r.tokens;
    if r.messages.iter().any(|m| !m.exact) {
        out.push_str("(~ marks an estimated count)\n\n");
    }
    let estimate = if t.exact { "" } else { ", estimated" };
    let mut total = format!(
        "{} of {} tokens{estimate}  ({} messages)",
        group(t.total),
        group(t.budget),
        r.messages.len()
    );
    if let Some(over) = t.over_budget {
        let _ = write!(total, "  OVER BUDGET by {}", group(over));
    }
    field(&mut out, "Total", &total);
    if let Some(exact) = p.exact {
        field(&mut out, "Exact", &exact_line(exact));
    }
    field(
        &mut out,
        "Window",
        &format!(
            "{} tokens, {} reserved for the reply",
            group(t.context_window),
            group(t.reserved_reply)
        ),
    );
    let by_source: Vec<String> = t
        .by_source
        .iter()
        .map(|(kind, n)| format!("{kind} {}", group(*n)))
        .collect();
    if !by_source.is_empty() {
        field(&mut out, "By source", &by_source.join(" · "));
    }

    // What the lorebook activated and why (its cuts are among the dropped items).
    if let Some(book) = &r.lorebook {
        list(
            &mut out,
            "Lorebook",
            book.activated
                .iter()
                .map(|a| format!("{} ({} tokens): {}", a.entry_id, group(a.tokens), a.reason))
                .collect(),
        );
    }

    // Dropped and warnings.
    list(
        &mut out,
        "Dropped",
        r.dropped.iter().map(dropped_line).collect(),
    );
    list(
        &mut out,
        "Warnings",
        r.warnings
            .iter()
            .map(|w| format!("[{}] {}", w.processor, w.message))
            .collect(),
    );
    if let Some(trace) = &r.macro_trace {
        macro_listing(&mut out, trace);
    }
    out
}

/// `--trace macros`: each expansion on a line (its number, where, the macro as written, what it
/// became, the variable it changed), then the variables before and after.
fn macro_listing(out: &mut String, trace: &promptloom_engine::macros::MacroTrace) {
    out.push_str("\nMacros\n");
    if trace.expansions.is_empty() {
        out.push_str("  (none)\n");
    }
    let width = digits(trace.expansions.len().saturating_sub(1)).max(1);
    for (i, e) in trace.expansions.iter().enumerate() {
        let message = e
            .message
            .map_or_else(|| "-".to_string(), |m| format!("#{m}"));
        let block = e
            .block
            .as_deref()
            .map_or_else(String::new, |b| format!("#{b} "));
        let depth = if e.depth > 0 {
            format!(" (in a value, level {})", e.depth)
        } else {
            String::new()
        };
        let outcome = if e.kept {
            "stays as written".to_string()
        } else {
            format!("→ {:?}", e.output)
        };
        let _ = writeln!(
            out,
            "  {i:>width$}  {} @{} msg {message}{depth}  {block}{}  {outcome}",
            e.position, e.offset, e.written
        );
        if let Some(v) = &e.variable {
            let shown =
                |x: &Option<String>| x.as_ref().map_or("(unset)".into(), |s| format!("{s:?}"));
            let scope = match v.scope {
                promptloom_engine::macros::VariableScope::Local => "local",
                promptloom_engine::macros::VariableScope::Global => "global",
            };
            let _ = writeln!(
                out,
                "  {:width$}  {scope} {}: {} → {}",
                "",
                v.name,
                shown(&v.before),
                shown(&v.after)
            );
        }
    }
    if let Some(note) = &trace.stopped {
        let _ = writeln!(out, "  ({note})");
    }
    let vars = |out: &mut String, label: &str, state: &promptloom_engine::macros::VariableState| {
        let mut items: Vec<String> = state
            .local
            .iter()
            .map(|(k, v)| format!("{k} = {v:?}"))
            .collect();
        items.extend(
            state
                .global
                .iter()
                .map(|(k, v)| format!("global {k} = {v:?}")),
        );
        list(out, label, items);
    };
    out.push('\n');
    vars(out, "Before", &trace.before);
    vars(out, "After", &trace.after);
}

/// The provider's count beside ours: `1,234 tokens (Anthropic count_tokens through claude),
/// +34 against our 1,200 (+2.8 %)`, and `kept` when no request was made.
fn exact_line(e: &crate::count::Exact) -> String {
    let d = e.difference();
    let sign = if d > 0 {
        "+"
    } else if d < 0 {
        "-"
    } else {
        "±"
    };
    let mut line = format!(
        "{} tokens ({} through {}), {sign}{} against our {}",
        group(e.tokens),
        e.provider,
        e.connection,
        group(u32::try_from(d.unsigned_abs()).unwrap_or(u32::MAX)),
        group(e.counted)
    );
    if e.counted > 0 {
        let percent = d as f64 / f64::from(e.counted) * 100.0;
        let _ = write!(line, " ({sign}{:.1} %)", percent.abs());
    }
    if e.cached {
        line.push_str(", kept from an earlier count");
    }
    line
}

const LABEL_WIDTH: usize = 11;

/// Content is never wrapped narrower than this, however narrow the terminal says it is.
const MIN_TEXT_WIDTH: usize = 30;

/// Splits `line` into pieces of at most `width` characters at spaces; a word longer than the
/// width is cut. Leading white space (indentation in the content) is kept on the first piece.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut current_len = 0;
    let indent_len = line.len() - line.trim_start().len();
    let (indent, rest) = line.split_at(indent_len);
    current.push_str(indent);
    current_len += indent.chars().count();
    for word in rest.split(' ') {
        let word_len = word.chars().count();
        if current_len > indent.chars().count() && current_len + 1 + word_len > width {
            pieces.push(std::mem::take(&mut current));
            current_len = 0;
        } else if current_len > indent.chars().count() {
            current.push(' ');
            current_len += 1;
        }
        let mut chars = word.chars().peekable();
        while chars.peek().is_some() {
            if current_len == width {
                pieces.push(std::mem::take(&mut current));
                current_len = 0;
            }
            if let Some(c) = chars.next() {
                current.push(c);
                current_len += 1;
            }
        }
    }
    pieces.push(current);
    pieces
}

/// Removes the trailing spaces of the last line written (a blank content line ends in "│ ").
fn trim_line_end(out: &mut String) {
    let body = out.trim_end_matches('\n').trim_end_matches(' ').len();
    out.truncate(body);
    out.push('\n');
}

fn field(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "{label:<LABEL_WIDTH$}{value}");
}

/// A labelled list: "none" when empty, else one item a line under the label.
fn list(out: &mut String, label: &str, items: Vec<String>) {
    if items.is_empty() {
        field(out, label, "none");
        return;
    }
    field(out, label, &items.len().to_string());
    for item in items {
        let _ = writeln!(out, "{:LABEL_WIDTH$}{item}", "");
    }
}

fn dropped_line(d: &DroppedItem) -> String {
    let action = match d.action {
        DropAction::Dropped => "dropped",
        DropAction::Truncated => "cut",
    };
    let mut what = d.source.badge();
    if let (Some(first), Some(last)) = (d.source.history_index, d.last_history_index) {
        if d.count > 1 {
            let _ = write!(what, "..#{last}");
        } else if last != first {
            let _ = write!(what, " (to #{last})");
        }
    }
    let mut size = Vec::new();
    if d.count > 1 {
        size.push(format!("{} messages", d.count));
    }
    if let Some(tokens) = d.tokens {
        size.push(format!("{} tokens", group(tokens)));
    }
    let size = if size.is_empty() {
        String::new()
    } else {
        format!(" ({})", size.join(", "))
    };
    format!("{action} {what}{size}: {}", d.reason)
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

/// 191808 -> "191,808".
pub(crate) fn group(n: u32) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A message's tokens as the listing shows them: `~` before an estimate.
fn shown_tokens(m: &promptloom_engine::pipeline::BuiltMessage<'_>) -> String {
    if m.exact {
        group(m.tokens)
    } else {
        format!("~{}", group(m.tokens))
    }
}

#[cfg(test)]
mod tests {
    use super::{group, wrap};

    #[test]
    fn long_lines_wrap_at_spaces_and_keep_their_indentation() {
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("short line", 10), ["short line"]);
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert_eq!(wrap("  - item one two", 10), ["  - item", "one two"]);
        assert_eq!(wrap("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
        assert_eq!(wrap("ä ö ü ß", 3), ["ä ö", "ü ß"], "characters, not bytes");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(191_808), "191,808");
        assert_eq!(group(1_048_576), "1,048,576");
    }
}
