//! `promptloom connection`: where `send` sends, kept in the app's database by name, and each
//! connection's API key, kept in the OS keychain only (`set-key` reads it from standard input,
//! never from an argument, which other users could see in the process list).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use promptloom_library::connections::{self, KeyRemoved};
use promptloom_library::keychain::OsKeychain;
use promptloom_library::LibraryError;
use promptloom_send::{well_known, ApiKey, Connection, Dialect, Timeouts};

use crate::error::CliError;
use crate::library::{open, store_error};
use crate::terminal::escape;

#[derive(Debug, Args)]
pub struct ConnectionArgs {
    #[command(subcommand)]
    pub action: ConnectionAction,
    /// The database; default: the app's, in the platform's data folder.
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ConnectionAction {
    /// Add a connection (one of the same name is replaced, and that is said).
    Add {
        name: String,
        /// openai, anthropic, gemini or openai-compatible.
        #[arg(long)]
        dialect: String,
        /// The API's base URL; for openai, anthropic and gemini the provider's own by default.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// The model sent to when `send` names none.
        #[arg(long, value_name = "ID")]
        model: Option<String>,
        /// Read the key from this environment variable instead of the keychain.
        #[arg(long, value_name = "VAR")]
        key_env: Option<String>,
        /// A header sent with every request, `Name: value`; may be given more than once.
        #[arg(long, value_name = "HEADER")]
        header: Vec<String>,
        /// Fields merged into every request body, a JSON object.
        #[arg(long, value_name = "JSON")]
        extra_body: Option<String>,
        #[command(flatten)]
        timeouts: TimeoutArgs,
    },
    /// List the connections: name, dialect, URL, default model and where the key is.
    List,
    /// Remove a connection and the key kept for it.
    Remove { name: String },
    /// Keep the key of a connection in the OS keychain, read from standard input.
    SetKey { name: String },
}

/// The connection's own timeouts, in seconds (1 to 86400); unset ones keep the defaults.
#[derive(Debug, Args)]
pub struct TimeoutArgs {
    /// Seconds to open the connection (default 10).
    #[arg(long, value_name = "SECS")]
    connect_timeout: Option<u32>,
    /// Seconds from the request to the reply's first byte (default 60).
    #[arg(long, value_name = "SECS")]
    first_byte_timeout: Option<u32>,
    /// Seconds between two parts of the reply (default 60).
    #[arg(long, value_name = "SECS")]
    idle_timeout: Option<u32>,
    /// Seconds for the whole send, retries included (default 600).
    #[arg(long, value_name = "SECS")]
    total_timeout: Option<u32>,
}

impl TimeoutArgs {
    fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect_secs: self.connect_timeout,
            first_byte_secs: self.first_byte_timeout,
            idle_secs: self.idle_timeout,
            total_secs: self.total_timeout,
        }
    }
}

pub fn run(args: &ConnectionArgs) -> Result<String, CliError> {
    // Everything a user typed is checked before the database is opened: bad input writes nothing.
    let added = match &args.action {
        ConnectionAction::Add {
            name,
            dialect,
            base_url,
            model,
            key_env,
            header,
            extra_body,
            timeouts,
        } => Some(
            connection(
                name,
                dialect,
                base_url.as_deref(),
                model,
                key_env,
                header,
                extra_body.as_deref(),
            )
            .and_then(|mut c| {
                c.timeouts = timeouts.timeouts();
                checked(c)
            })?,
        ),
        _ => None,
    };
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    let failed = |e: LibraryError| match e {
        LibraryError::Store(e) => store_error(&db, e),
        e => CliError::BadInput {
            file: "connection".into(),
            problem: e.to_string(),
        },
    };
    Ok(match &args.action {
        ConnectionAction::Add { .. } => {
            let connection = added.expect("checked above");
            let replaced = connections::add(&store, &connection).map_err(failed)?;
            format!(
                "{} connection \"{}\" ({}, {}) in {}\n",
                if replaced { "Replaced" } else { "Added" },
                escape(&connection.name),
                connection.dialect,
                escape(&connection.base_url),
                db.display()
            )
        }
        ConnectionAction::List => {
            let listed = connections::list(&store).map_err(failed)?;
            if listed.is_empty() {
                return Ok("No connections; add one with `promptloom connection add`.\n".into());
            }
            let mut out = String::new();
            for c in listed {
                let key = match &c.key_env {
                    Some(var) => format!("key from ${var}"),
                    None => match connections::has_key(&c, &OsKeychain) {
                        Ok(true) => "key in the keychain".into(),
                        Ok(false) => "no key".into(),
                        Err(e) => format!("keychain unavailable ({e})"),
                    },
                };
                out.push_str(&format!(
                    "{}  {}  {}  {}  {}{}\n",
                    escape(&c.name),
                    c.dialect,
                    escape(&c.base_url),
                    c.default_model.as_deref().map(escape).unwrap_or("-".into()),
                    key,
                    timeouts_said(&c.timeouts)
                ));
            }
            out
        }
        ConnectionAction::Remove { name } => {
            let key = match connections::remove(&store, &OsKeychain, name).map_err(failed)? {
                KeyRemoved::Removed => " and its key".to_string(),
                KeyRemoved::NoneKept => String::new(),
                KeyRemoved::NotReached(e) => format!(" (its key, if one was kept: {e})"),
            };
            format!(
                "Removed connection \"{}\"{key} from {}\n",
                escape(name),
                db.display()
            )
        }
        ConnectionAction::SetKey { name } => {
            // Which connection first: nobody types a key for one that is not there.
            connections::get(&store, name).map_err(failed)?;
            let key = read_key()?;
            connections::set_key(&store, &OsKeychain, name, &key).map_err(failed)?;
            format!(
                "Kept the key of connection \"{}\" in the OS keychain\n",
                escape(name)
            )
        }
    })
}

/// A connection from the command's arguments (its timeouts aside), not yet checked.
fn connection(
    name: &str,
    dialect: &str,
    base_url: Option<&str>,
    model: &Option<String>,
    key_env: &Option<String>,
    headers: &[String],
    extra_body: Option<&str>,
) -> Result<Connection, CliError> {
    let bad = |problem: String| CliError::BadInput {
        file: "connection".into(),
        problem,
    };
    let dialect: Dialect = dialect.parse().map_err(|e| bad(format!("{e}")))?;
    let base_url = match base_url {
        Some(url) => url.to_string(),
        None => well_known()
            .into_iter()
            .find(|w| w.dialect == dialect && dialect != Dialect::OpenaiCompatible)
            .map(|w| w.base_url.to_string())
            .ok_or_else(|| bad(format!("{dialect} needs --base-url")))?,
    };
    let mut c = Connection::new(name, dialect, base_url);
    c.default_model = model.clone();
    c.key_env = key_env.clone();
    for header in headers {
        let (k, v) = header
            .split_once(':')
            .ok_or_else(|| bad(format!("--header {header:?} is not `Name: value`")))?;
        c.extra_headers
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    if let Some(json) = extra_body {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| bad(format!("--extra-body is not JSON: {e}")))?;
        let serde_json::Value::Object(fields) = value else {
            return Err(bad("--extra-body must be a JSON object".into()));
        };
        c.extra_body = fields;
    }
    Ok(c)
}

/// `  timeouts: connect 5 s, total 1800 s` for the ones set; nothing when none is.
fn timeouts_said(t: &Timeouts) -> String {
    let set: Vec<String> = [
        ("connect", t.connect_secs),
        ("first byte", t.first_byte_secs),
        ("idle", t.idle_secs),
        ("total", t.total_secs),
    ]
    .into_iter()
    .filter_map(|(name, secs)| secs.map(|s| format!("{name} {s} s")))
    .collect();
    if set.is_empty() {
        String::new()
    } else {
        format!("  timeouts: {}", set.join(", "))
    }
}

fn checked(c: Connection) -> Result<Connection, CliError> {
    c.validate().map_err(|e| CliError::BadInput {
        file: "connection".into(),
        problem: e.to_string(),
    })?;
    Ok(c)
}

/// The key from standard input: its first line, at most 8 KiB.
fn read_key() -> Result<ApiKey, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .take(8 << 10)
        .read_to_string(&mut text)
        .map_err(|e| CliError::BadInput {
            file: "standard input".into(),
            problem: format!("cannot read the key: {e}"),
        })?;
    let key = ApiKey::new(text.lines().next().unwrap_or_default());
    if key.is_empty() {
        return Err(CliError::BadInput {
            file: "standard input".into(),
            problem: "no key: give it on standard input, e.g. `promptloom connection set-key NAME < key.txt`".into(),
        });
    }
    Ok(key)
}
