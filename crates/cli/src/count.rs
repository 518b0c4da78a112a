//! `preview --count-exactly NAME`: the provider's own count of the request `send` would send
//! through connection NAME (Anthropic's count_tokens, Gemini's countTokens), printed beside ours.
//! Counts are kept per content in the database, so asking again for the same request makes no
//! request.

use std::path::Path;

use promptloom_engine::model::Session;
use promptloom_engine::BuildResult;
use promptloom_library::connections;
use promptloom_library::count;
use promptloom_library::keychain::OsKeychain;
use promptloom_send::SendOptions;
use serde::Serialize;

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::inputs::BuildArgs;
use crate::library::{open, store_error};
use crate::request::{about, request};

/// The provider's count beside ours.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exact {
    /// The provider's count of the request's input tokens.
    pub tokens: u32,
    /// Ours of the same build.
    pub counted: u32,
    /// `Anthropic count_tokens` or `Gemini countTokens`.
    pub provider: &'static str,
    pub connection: String,
    /// Kept from an earlier count of the same content: no request was made.
    pub cached: bool,
}

impl Exact {
    /// The provider's count less ours.
    pub fn difference(&self) -> i64 {
        i64::from(self.tokens) - i64::from(self.counted)
    }
}

/// Asks connection `name` to count the request `send` would send for `result` (or answers from
/// the counts kept in the database).
pub fn exactly(
    db: Option<&Path>,
    name: &str,
    args: &BuildArgs,
    result: &BuildResult<'_>,
    session: &Session,
    assets: &FileAssets,
) -> Result<Exact, CliError> {
    let prepared = request(db, name, args, result, session, assets)?;
    let connection = prepared.connection;
    let counting =
        count::counting(&connection, &args.model, &prepared.body).map_err(|e| about(name, e))?;
    let store = open(db)?;
    let db_path = store.path().map(Path::to_path_buf).unwrap_or_default();
    let kept = |e| match e {
        promptloom_library::LibraryError::Store(e) => store_error(&db_path, e),
        e => about(name, e),
    };
    let mut exact = Exact {
        tokens: 0,
        counted: result.tokens.total,
        provider: counting.request.endpoint.name(),
        connection: name.to_string(),
        cached: false,
    };
    if let Some(tokens) = count::cached(&store, &counting).map_err(kept)? {
        exact.tokens = tokens;
        exact.cached = true;
        return Ok(exact);
    }
    let key = connections::require_key(&connection, &OsKeychain).map_err(|e| about(name, e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Output(format!("cannot start the network runtime: {e}")))?;
    let tokens = runtime
        .block_on(promptloom_send::count_tokens(
            &connection,
            key,
            &counting.request,
            &SendOptions::for_connection(&connection),
        ))
        .map_err(|e| CliError::Send {
            connection: name.to_string(),
            problem: e.to_string(),
        })?;
    exact.tokens = u32::try_from(tokens).unwrap_or(u32::MAX);
    count::keep(&store, &counting, exact.tokens).map_err(kept)?;
    Ok(exact)
}
