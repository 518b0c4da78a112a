//! The request `send` would send for a build through a named connection: what `send` sends,
//! what `preview --connection` prints and what `preview --count-exactly` asks a provider to
//! count.

use std::path::Path;

use promptloom_engine::model::Session;
use promptloom_engine::BuildResult;
use promptloom_library::{connections, send, LibraryError};
use promptloom_send::{Call, Connection};

use crate::assets::FileAssets;
use crate::error::CliError;
use crate::inputs::BuildArgs;
use crate::library::{open, store_error};

/// The request for a build through the connection `name`, and its body's format.
pub struct Prepared {
    pub connection: Connection,
    /// The body format's name (`openai-chat`, `llamacpp`...).
    pub format: &'static str,
    pub call: Call,
    pub body: String,
}

/// The request `send` would send for `result` through connection `name`, always streamed.
pub fn request(
    db: Option<&Path>,
    name: &str,
    args: &BuildArgs,
    result: &BuildResult<'_>,
    session: &Session,
    assets: &FileAssets,
) -> Result<Prepared, CliError> {
    let store = open(db)?;
    let db_path = store.path().map(Path::to_path_buf).unwrap_or_default();
    let connection = connections::get(&store, name).map_err(|e| match e {
        LibraryError::Store(e) => store_error(&db_path, e),
        e => about(name, e),
    })?;
    let has_key = connection.key_env.is_some() || connection.dialect.needs_key();
    let request = send::request(
        &connection,
        result,
        session,
        assets,
        &args.model,
        true,
        has_key,
    )
    .map_err(|e| match e {
        LibraryError::Engine(e) => {
            CliError::engine(args.session.as_deref().unwrap_or(&args.preset), &e)
        }
        e => about(name, e),
    })?;
    for w in &request.warnings {
        eprintln!(
            "promptloom: warning: [{}] {}",
            connection.dialect,
            crate::terminal::escape(&w.to_string())
        );
    }
    Ok(Prepared {
        format: request.format,
        call: request.call,
        connection,
        body: request.body,
    })
}

pub(crate) fn about(name: &str, e: impl std::fmt::Display) -> CliError {
    CliError::BadInput {
        file: format!("connection {name}"),
        problem: e.to_string(),
    }
}
