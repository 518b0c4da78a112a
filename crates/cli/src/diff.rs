//! `promptloom diff` (RULES 8.6, 9.8): this turn against the previous one, or this session against
//! another, built with one preset for one model: the stable prefix, the first difference and its
//! cause, and the messages row by row with their token differences.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};
use promptloom_engine::cache::BuildCache;
use promptloom_engine::diff::{diff, previous_turn, BuildDiff, ChangeOp, DiffRow, RowKind, Side};

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::inputs::{build_of, inputs, warn, BuildArgs};
use crate::load;
use crate::preview::text::group;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("other").required(true).args(["previous_turn", "against"])))]
pub struct DiffArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// Compare with the previous turn: the session without its newest exchange (its newest user
    /// message and the replies after it), built at the time that exchange began.
    #[arg(long)]
    pub previous_turn: bool,
    /// Compare with this session (native JSON or a SillyTavern chat), built the same way: it
    /// is the left side, --session the right.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// A summary and the rows, runs of same messages folded.
    Text,
    /// One JSON object: stablePrefix, firstDifference, messages, leftTokens, rightTokens and
    /// breakpoints.
    Json,
}

pub fn run(args: &DiffArgs) -> Result<String, CliError> {
    let b = &args.build;
    let mut right = inputs(b)?;
    // The causes are named from what each build's macros made (RULES 9.8).
    right.options.trace_macros = true;
    let about = b.session.as_deref().unwrap_or(&b.preset);
    if args.previous_turn && b.session.is_none() {
        return Err(CliError::BadInput {
            file: "--previous-turn".into(),
            problem: "compares a session's last two turns: name the session with --session".into(),
        });
    }
    let left = match &args.against {
        Some(path) => {
            let other = load::session(path)?;
            right.other(
                other.value,
                right.options.timestamp,
                right.options.input.clone(),
            )
        }
        None => {
            let earlier = previous_turn(&right.session, &right.options.timestamp)
                .map_err(|e| CliError::engine(about, &e))?;
            let at = earlier.timestamp.unwrap_or(right.options.timestamp);
            right.other(earlier.session, at, None)
        }
    };
    let cache = BuildCache::new();
    let left_assets = FileAssets::new(args.against.as_deref().or(b.session.as_deref()));
    let right_assets = FileAssets::new(b.session.as_deref());
    let l = build_of(b, &left, &left_assets, &cache)?;
    let r = build_of(b, &right, &right_assets, &cache)?;
    let d = diff(
        Side {
            result: &l,
            session: &left.session,
            assets: &left_assets,
        },
        Side {
            result: &r,
            session: &right.session,
            assets: &right_assets,
        },
        &cache,
    )
    .map_err(|e| CliError::engine(about, &e))?;
    warn(&r);
    match args.format {
        DiffFormat::Json => {
            let mut text =
                serde_json::to_string_pretty(&d).map_err(|e| CliError::Output(e.to_string()))?;
            text.push('\n');
            Ok(text)
        }
        DiffFormat::Text => Ok(render(&d)),
    }
}

/// How many same rows stay shown next to a difference; longer runs are folded.
const CONTEXT: usize = 1;
/// How many characters of a piece of text a row shows.
const SHOWN_CHARS: usize = 60;

fn render(d: &BuildDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Stable prefix:    {} tokens, {} bytes",
        group(d.stable_prefix.tokens),
        group(d.stable_prefix.bytes)
    );
    match &d.first_difference {
        Some(f) => {
            let place = match f.message_index {
                Some(i) => format!("message {i}"),
                None => "outside the messages".into(),
            };
            let source = f
                .source
                .as_ref()
                .map(|s| format!(" ({})", s.badge()))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "First difference: {place}{source}, byte {} of its text: {}",
                f.offset, f.cause
            );
        }
        None => out.push_str("First difference: none, the two requests are the same\n"),
    }
    let delta = i64::from(d.right_tokens) - i64::from(d.left_tokens);
    let _ = writeln!(
        out,
        "Tokens:           {} -> {} ({delta:+})",
        group(d.left_tokens),
        group(d.right_tokens)
    );
    for b in &d.breakpoints {
        let at = b
            .depth
            .map_or("the system part".to_string(), |d| format!("depth {d}"));
        let stable = if b.stable { "stable" } else { "changed" };
        let _ = writeln!(
            out,
            "Cache breakpoint: after message {} ({at}): {stable}",
            b.message_index
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:>5} {:>5}  {:<8} {:>7}  source",
        "left", "right", "row", "delta"
    );
    let keep = |i: usize| {
        let near = |j: usize| d.messages.get(j).is_some_and(|r| r.kind != RowKind::Same);
        d.messages[i].kind != RowKind::Same
            || (1..=CONTEXT).any(|k| near(i + k) || (i >= k && near(i - k)))
    };
    let mut folded = 0;
    for (i, row) in d.messages.iter().enumerate() {
        if !keep(i) {
            folded += 1;
            continue;
        }
        if folded > 0 {
            let _ = writeln!(out, "{:>13}  ... {folded} same", "");
            folded = 0;
        }
        row_lines(&mut out, row);
    }
    if folded > 0 {
        let _ = writeln!(out, "{:>13}  ... {folded} same", "");
    }
    out
}

fn row_lines(out: &mut String, row: &DiffRow) {
    let index = |i: Option<u32>| i.map_or("-".to_string(), |i| i.to_string());
    let kind = match row.kind {
        RowKind::Same => "same",
        RowKind::Changed => "changed",
        RowKind::Left => "before",
        RowKind::Right => "now",
    };
    let _ = writeln!(
        out,
        "{:>5} {:>5}  {kind:<8} {:>7}  {} {}",
        index(row.left),
        index(row.right),
        format!("{:+}", row.token_delta),
        row.role.as_str(),
        crate::terminal::escape(&row.source.badge())
    );
    let mut pieces = String::new();
    for c in &row.changes {
        let mark = match c.op {
            ChangeOp::Equal => continue,
            ChangeOp::Delete => '-',
            ChangeOp::Insert => '+',
        };
        let _ = write!(pieces, " {mark}[{}]", short(&c.text));
    }
    if let Some(text) = &row.text {
        let _ = write!(pieces, " \"{}\"", short(text));
    }
    if !pieces.is_empty() {
        let _ = writeln!(
            out,
            "{:>13}  {}",
            "",
            crate::terminal::escape(pieces.trim_start())
        );
    }
}

/// A piece of text on one line, at most [`SHOWN_CHARS`] characters.
fn short(text: &str) -> String {
    let one_line = text.replace(['\r', '\n'], "⏎");
    match one_line.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}
