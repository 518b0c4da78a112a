//! `promptloom summarize` and `promptloom memory` (RULES 5.15): a stored session's summary made
//! through a connection, and its long-term memory indexed and searched. Sessions are the ones in
//! the database (`promptloom import` puts a file there), named by id.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use promptloom_library::connections;
use promptloom_library::keychain::OsKeychain;
use promptloom_library::memory::{self, Embedder, MemorySettings};
use promptloom_library::summary;
use promptloom_store::Store;

use crate::error::CliError;
use crate::library::open;
use crate::request::about;
use crate::terminal::escape;

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// The stored session's id.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// The connection that writes the summary.
    #[arg(long, value_name = "NAME")]
    pub connection: String,
    /// The model; default: the connection's.
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,
    /// The stored preset whose summary prompt is used; default: the shipped prompt.
    #[arg(long, value_name = "ID")]
    pub preset: Option<String>,
    /// Keep the summary as the session's current one (earlier ones stay, to restore).
    #[arg(long)]
    pub save: bool,
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    pub action: MemoryAction,
    /// The database; default: the app's.
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// Embed the session's messages that have no vector for their text yet (resumes where an
    /// interrupted run stopped; another model re-indexes from nothing).
    Index {
        #[arg(long, value_name = "ID")]
        session: String,
        /// The connection whose embeddings endpoint makes the vectors.
        #[arg(long, value_name = "NAME")]
        connection: String,
        /// The embeddings model; default: the connection's.
        #[arg(long, value_name = "ID")]
        model: Option<String>,
    },
    /// The stored messages closest to a text, with their scores.
    Search {
        #[arg(long, value_name = "ID")]
        session: String,
        #[arg(long, value_name = "TEXT")]
        text: String,
        /// Default: the connection the session was indexed through.
        #[arg(long, value_name = "NAME")]
        connection: Option<String>,
        #[arg(long, value_name = "ID")]
        model: Option<String>,
        /// How many hits at most (1 to 16).
        #[arg(long, default_value_t = 4)]
        top: usize,
        /// The lowest score a hit may have (cosine similarity, -1 to 1).
        #[arg(long, default_value_t = 0.0)]
        threshold: f32,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// How much of the session is indexed, and with which model.
    Status {
        #[arg(long, value_name = "ID")]
        session: String,
    },
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Output(format!("cannot start the network runtime: {e}")))
}

fn embedder(store: &Store, name: &str, model: Option<String>) -> Result<Embedder, CliError> {
    let connection = connections::get(store, name).map_err(|e| about(name, e))?;
    let key = connections::require_key(&connection, &OsKeychain).map_err(|e| about(name, e))?;
    Ok(Embedder::new(connection, key, model))
}

fn session_error(session: &str, e: impl std::fmt::Display) -> CliError {
    CliError::BadInput {
        file: format!("session \"{session}\""),
        problem: e.to_string(),
    }
}

pub fn summarize(args: &SummarizeArgs) -> Result<String, CliError> {
    let store = open(args.db.as_deref())?;
    store
        .get_session(&args.session)
        .map_err(|e| session_error(&args.session, e))?;
    let preset = match &args.preset {
        Some(id) => store.get_preset(id).map_err(|e| CliError::BadInput {
            file: format!("preset \"{id}\""),
            problem: e.to_string(),
        })?,
        None => promptloom_engine::model::parse_preset(
            r#"{"formatVersion": 1, "id": "default", "name": "Default",
                "messageTemplates": [], "contextRecipes": []}"#,
        )
        .map_err(|e| CliError::Output(e.to_string()))?,
    };
    let connection =
        connections::get(&store, &args.connection).map_err(|e| about(&args.connection, e))?;
    let key = connections::require_key(&connection, &OsKeychain)
        .map_err(|e| about(&args.connection, e))?;
    let model = args
        .model
        .clone()
        .or_else(|| connection.default_model.clone())
        .ok_or_else(|| CliError::BadInput {
            file: "--model".into(),
            problem: format!(
                "connection \"{}\" has no default model; say which with --model",
                args.connection
            ),
        })?;
    let made = runtime()?
        .block_on(summary::summarize(
            &store,
            &args.session,
            &preset,
            &connection,
            key,
            &model,
            args.save,
        ))
        .map_err(|e| about(&args.connection, e))?;
    eprintln!(
        "promptloom: the summary covers stored messages {} to {}{}",
        made.first_position,
        made.last_position,
        if args.save {
            format!("; kept as session \"{}\"'s current summary", args.session)
        } else {
            "; not kept (--save keeps it)".to_string()
        }
    );
    Ok(format!("{}\n", escape(&made.text)))
}

pub fn run(args: &MemoryArgs) -> Result<String, CliError> {
    let store = open(args.db.as_deref())?;
    match &args.action {
        MemoryAction::Index {
            session,
            connection,
            model,
        } => {
            store
                .get_session(session)
                .map_err(|e| session_error(session, e))?;
            let embedder = embedder(&store, connection, model.clone())?;
            let report = runtime()?
                .block_on(memory::index_session(
                    &store,
                    session,
                    &embedder,
                    |done, all| {
                        eprintln!("promptloom: embedded {done} of {all}");
                    },
                ))
                .map_err(|e| about(connection, e))?;
            let mut out = format!(
                "session \"{session}\": {} embedded, {} unchanged, {} removed with model \"{}\" ({} numbers)\n",
                report.embedded,
                report.unchanged,
                report.removed,
                escape(&report.model),
                report.dim
            );
            if report.stale > 0 {
                out.push_str(&format!(
                    "{} vectors of another model were removed first: the session was indexed again\n",
                    report.stale
                ));
            }
            Ok(out)
        }
        MemoryAction::Status { session } => {
            let status =
                memory::index_status(&store, session).map_err(|e| session_error(session, e))?;
            Ok(format!(
                "session \"{session}\": {} of {} messages indexed{}; {} to embed\n",
                status.messages - status.pending,
                status.messages,
                status
                    .model
                    .map(|m| format!(" with \"{}\"", escape(&m)))
                    .unwrap_or_default(),
                status.pending
            ))
        }
        MemoryAction::Search {
            session,
            text,
            connection,
            model,
            top,
            threshold,
            format,
        } => {
            let stored = store
                .get_session(session)
                .map_err(|e| session_error(session, e))?;
            let state = store
                .memory_state(session)
                .map_err(|e| session_error(session, e))?
                .ok_or_else(|| {
                    session_error(
                        session,
                        "it has no memory index yet; run promptloom memory index first",
                    )
                })?;
            let name = connection
                .clone()
                .or(state.connection.clone())
                .ok_or_else(|| CliError::BadInput {
                    file: "--connection".into(),
                    problem: "the index does not name its connection; give --connection".into(),
                })?;
            let model = model.clone().or(Some(state.model.clone()));
            let embedder = embedder(&store, &name, model)?;
            let index = memory::MemoryIndex::load(&store, session)
                .map_err(|e| session_error(session, e))?
                .unwrap_or_default();
            let settings = MemorySettings {
                top_k: *top,
                threshold: *threshold,
                skip_recent: 0,
                ..MemorySettings::default()
            };
            let rt = runtime()?;
            let (used, mut vectors) = rt
                .block_on(embedder.embed(&[text.as_str()]))
                .map_err(|e| about(&name, e))?;
            if used != index.model {
                return Err(session_error(
                    session,
                    format!(
                        "it is indexed with \"{}\", not \"{}\": vectors of two models do not \
                         compare; search with the index's model or index it again",
                        escape(&index.model),
                        escape(&used)
                    ),
                ));
            }
            let query = vectors.pop().unwrap_or_default();
            let started = std::time::Instant::now();
            let hits = memory::hits_for(&index, &stored, &query, &settings)
                .map_err(|e| session_error(session, e))?;
            let took = started.elapsed();
            match format {
                Format::Json => {
                    let mut json = serde_json::to_string_pretty(&serde_json::json!({
                        "session": session,
                        "model": index.model,
                        "searchedMs": took.as_secs_f64() * 1000.0,
                        "hits": hits,
                    }))
                    .map_err(|e| CliError::Output(e.to_string()))?;
                    json.push('\n');
                    Ok(json)
                }
                Format::Text => {
                    let mut out = String::new();
                    for h in &hits {
                        out.push_str(&format!(
                            "{:.3}  #{} {}: {}\n",
                            h.score,
                            h.index.map_or(-1, i64::from),
                            h.role.as_str(),
                            escape(&h.text)
                        ));
                    }
                    if hits.is_empty() {
                        out.push_str("no stored message is close enough\n");
                    }
                    Ok(out)
                }
            }
        }
    }
}

/// `preview --stored-session ID [--memory NAME]`: the build over stored session `id` with its
/// current summary's coverage, and with what its memory recalls for the input (RULES 5.15). A
/// search that fails or runs out of time leaves the build without memory, and it says why.
pub fn stored_inputs(
    inputs: &mut crate::inputs::Inputs,
    db: Option<&std::path::Path>,
    id: &str,
    memory_connection: Option<&str>,
) -> Result<(), CliError> {
    let store = open(db)?;
    let session = store.get_session(id).map_err(|e| session_error(id, e))?;
    let current = store
        .current_summary(id)
        .map_err(|e| session_error(id, e))?;
    inputs.options.summarized_through = summary::summarized_through(&session, current.as_ref());
    if let Some(name) = memory_connection {
        let state = store.memory_state(id).map_err(|e| session_error(id, e))?;
        let embedder = embedder(&store, name, state.map(|s| s.model))?;
        let input = inputs.options.input.clone().unwrap_or_default();
        let found = runtime()?.block_on(memory::recall(
            &store,
            &memory::MemoryCache::new(),
            &session,
            &embedder,
            &input,
            &MemorySettings::default(),
        ));
        inputs.options.memory = found.hits;
        inputs.options.memory_skipped = found.skipped;
    }
    inputs.session = session;
    Ok(())
}
