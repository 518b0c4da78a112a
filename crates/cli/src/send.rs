//! `promptloom send`: one build sent through a connection, the reply streamed to standard output
//! as it arrives, usage and timings on standard error, and with `--save` the turn appended to
//! the session file (whole or not at all): a continuation into the last reply, the user's
//! impersonated message and a quiet answer nowhere (RULES 5.14). The body sent is the one `preview --connection`
//! prints, byte for byte; nothing is sent before every input, the connection and its key are
//! known good, and nothing is written when the send fails.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use promptloom_engine::cache::BuildCache;
use promptloom_engine::model::parse_session;
use promptloom_engine::GenerationType;
use promptloom_library::calibration::{self, Sample};
use promptloom_library::connections;
use promptloom_library::keychain::OsKeychain;
use promptloom_library::send;
use promptloom_send::{CancellationToken, SendOptions, StreamEvent};

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::inputs::{build_of, inputs, warn, BuildArgs};
use crate::library::open;
use crate::request::{about, request};

#[derive(Debug, Args)]
pub struct SendArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// The connection to send through (`promptloom connection add`).
    #[arg(long, value_name = "NAME")]
    pub connection: String,
    /// The database the connection is kept in; default: the app's.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Append the input and the reply to the session file (a native session), replacing it
    /// whole: a temporary file beside it, then renamed over it.
    #[arg(long)]
    pub save: bool,
}

pub fn run(args: &SendArgs) -> Result<String, CliError> {
    let build_args = &args.build;
    // A session that --save cannot write back as it was read is refused before anything else.
    let saved_to = if args.save {
        let path = build_args
            .session
            .as_deref()
            .ok_or_else(|| CliError::BadInput {
                file: "--save".into(),
                problem: "needs --session FILE to append the turn to".into(),
            })?;
        let text = crate::load::read_bounded(path)?;
        let text =
            std::str::from_utf8(&text).map_err(|_| CliError::bad_input(path, "not UTF-8 text"))?;
        parse_session(text).map_err(|_| {
            CliError::bad_input(
                path,
                "--save writes native sessions only; import this one first (promptloom import)",
            )
        })?;
        Some(path.to_path_buf())
    } else {
        None
    };
    let inputs = inputs(build_args)?;
    let kind = build_args.generation_type.generation_type();
    // A continuation needs a reply to continue (RULES 5.14): nothing is sent without one.
    send::check_sendable(&inputs.session, kind).map_err(|e| CliError::BadInput {
        file: build_args
            .session
            .as_deref()
            .map_or("the session".into(), |p| p.display().to_string()),
        problem: format!("--type {}: {e}", kind.as_str()),
    })?;
    let assets = FileAssets::new(build_args.session.as_deref());
    let tokens = BuildCache::new();
    let result = build_of(build_args, &inputs, &assets, &tokens)?;
    // What was built must continue the last reply as stored (RULES 5.14).
    send::check_built(&inputs.session, &result.reply_start).map_err(|e| CliError::BadInput {
        file: build_args
            .session
            .as_deref()
            .map_or("the session".into(), |p| p.display().to_string()),
        problem: format!("--type {}: {e}", kind.as_str()),
    })?;
    let prepared = request(
        args.db.as_deref(),
        &args.connection,
        build_args,
        &result,
        &inputs.session,
        &assets,
    )?;
    let key = connections::require_key(&prepared.connection, &OsKeychain)
        .map_err(|e| about(&args.connection, e))?;
    warn(&result);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Output(format!("cannot start the network runtime: {e}")))?;
    let mut stdout = std::io::stdout();
    // Exactly the reply for a pipe or a file; on a terminal, with its control characters
    // shown as escapes (a server's text is a stranger's).
    let on_terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut written = Ok(());
    // The reply begins with its prefill (RULES 5.14): shown before what arrives.
    if let Some(prefill) = result.reply_start.prefill.as_deref() {
        written = write_shown(&mut stdout, prefill, on_terminal);
    }
    let reply = runtime
        .block_on(promptloom_send::send(
            &prepared.connection,
            key,
            Some(&build_args.model),
            prepared.body.into_bytes(),
            prepared.call,
            &SendOptions::for_connection(&prepared.connection),
            &CancellationToken::new(),
            |event| {
                if let StreamEvent::Delta(text) = event {
                    if written.is_ok() {
                        written = write_shown(&mut stdout, text, on_terminal);
                    }
                }
            },
        ))
        .map_err(|e| CliError::Send {
            connection: args.connection.clone(),
            problem: e.to_string(),
        })?;
    written.map_err(|e| CliError::Output(e.to_string()))?;

    let counted = result.tokens.total;
    eprintln!("{}", usage_line(&reply, counted));
    // The provider's count beside ours, kept per model (as the app does); a database that
    // cannot take it is said, and the reply stands.
    if let (Some(provider), false) = (reply.usage.prompt_tokens, reply.incomplete) {
        let sample = Sample {
            provider: u32::try_from(provider).unwrap_or(u32::MAX),
            counted,
        };
        let kept = open(args.db.as_deref()).and_then(|store| {
            calibration::add(&store, &build_args.model, sample)
                .map_err(|e| about(&args.connection, e))
        });
        if let Err(e) = kept {
            eprintln!("promptloom: warning: the token counts were not kept: {e}");
        }
    }
    let stored = result.reply_start.reply_text(&reply.text);
    if let (Some(path), GenerationType::Impersonate | GenerationType::Quiet) = (&saved_to, kind) {
        // The user's next message and a quiet request's answer are printed, never stored.
        eprintln!(
            "promptloom: a {} reply is not stored; {} is unchanged",
            kind.as_str(),
            path.display()
        );
    } else if let Some(path) = saved_to {
        let info = send::reply_info(&prepared.connection, &build_args.model, &reply, counted);
        let input = build_args.input.as_deref();
        // A continuation goes onto the reply it continued, as it was built (RULES 5.14).
        let continued = match kind {
            GenerationType::Continue => inputs.session.messages.last().map(|m| &*m.content),
            _ => None,
        };
        save_turn(&path, kind, input, continued, &stored, info).map_err(|problem| {
            // The reply is never dropped: kept beside the session, and the error says where; a
            // continuation with the reply it continues.
            let whole = format!("{}{stored}", continued.unwrap_or(""));
            let kept = recovery_file(&path, &whole);
            CliError::BadInput {
                file: path.display().to_string(),
                problem: format!("{problem}; the turn was not appended{kept}"),
            }
        })?;
        match kind {
            GenerationType::Continue => {
                eprintln!(
                    "promptloom: the last reply was continued in {}",
                    path.display()
                )
            }
            _ => eprintln!("promptloom: the turn was appended to {}", path.display()),
        }
    }
    Ok("\n".into())
}

/// Appends the turn to the session file as it is now, under the lock beside it: re-read after
/// the reply ended, so a turn another `send --save` or an edit wrote meanwhile is kept.
fn save_turn(
    path: &std::path::Path,
    kind: GenerationType,
    input: Option<&str>,
    continued: Option<&str>,
    reply: &str,
    info: promptloom_engine::model::ReplyInfo,
) -> Result<(), String> {
    let _lock = promptloom_library::files::lock_beside(path, std::time::Duration::from_secs(30))
        .map_err(|e| format!("the session is locked: {e}"))?;
    let text = crate::load::read_bounded(path).map_err(|e| e.to_string())?;
    let mut session = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| parse_session(t).ok())
        .ok_or("the session file changed during the send and is no longer a native session")?;
    if let Some(continued) = continued {
        send::check_still_last(&session, continued).map_err(|e| e.to_string())?;
    }
    send::keep_reply(&mut session, kind, false, input, reply, info).map_err(|e| e.to_string())?;
    let mut text = serde_json::to_string_pretty(&session).map_err(|e| e.to_string())?;
    text.push('\n');
    promptloom_library::files::write_atomically(path, text.as_bytes()).map_err(|e| e.to_string())
}

/// `text` on standard output: exactly, or on a terminal with its control characters escaped.
fn write_shown(out: &mut std::io::Stdout, text: &str, on_terminal: bool) -> std::io::Result<()> {
    let shown = match on_terminal {
        true => crate::terminal::escape(text),
        false => std::borrow::Cow::Borrowed(text),
    };
    out.write_all(shown.as_bytes()).and_then(|()| out.flush())
}

/// Keeps `reply` in a file beside `session` (`NAME.reply-SECONDS.txt`); says where, or that it
/// could not.
fn recovery_file(session: &std::path::Path, reply: &str) -> String {
    match promptloom_library::files::keep_reply(session, None, reply) {
        Ok(file) => format!(" (the reply is kept in {})", file.display()),
        Err(e) => format!(" (and the reply could not be kept either: {e})"),
    }
}

/// What the provider said the turn cost, beside our count, and how long it took.
fn usage_line(reply: &promptloom_send::Reply, counted: u32) -> String {
    let n = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
    let mut line = format!(
        "promptloom: prompt {} tokens (counted {counted}), reply {} tokens",
        n(reply.usage.prompt_tokens),
        n(reply.usage.completion_tokens)
    );
    if let Some(first) = reply.time_to_first_token {
        line.push_str(&format!(", first text after {} ms", first.as_millis()));
    }
    line.push_str(&format!(", {} ms in all", reply.total_time.as_millis()));
    if let Some(reason) = &reply.finish_reason {
        line.push_str(&format!(", finished: {}", crate::terminal::escape(reason)));
    }
    if reply.incomplete {
        line.push_str(", incomplete");
    }
    line
}
