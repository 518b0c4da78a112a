//! `promptloom profile`: the user's own model profiles in the app's database, which the app's
//! preview looks up before the built-in ones.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use promptloom_library::{profiles, LibraryError};

use crate::error::CliError;
use crate::library::{open, store_error};
use crate::load::read_bounded;

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(subcommand)]
    pub action: ProfileAction,
    /// The database; default: the app's, in the platform's data folder.
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ProfileAction {
    /// List the user's model profiles: id, the models they cover, window and format.
    List,
    /// Add a model profile from a JSON file (one of the same id is replaced, and that is said).
    Add { file: PathBuf },
    /// Remove the user's model profile `id`.
    Remove { id: String },
}

pub fn run(args: &ProfileArgs) -> Result<String, CliError> {
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    Ok(match &args.action {
        ProfileAction::List => {
            let listed = store.model_profiles().map_err(|e| store_error(&db, e))?;
            if listed.is_empty() {
                return Ok("No model profiles of your own; the built-in ones apply.\n".into());
            }
            let mut out = String::new();
            for p in listed {
                out.push_str(&format!(
                    "{}  {}  {} tokens, {}\n",
                    p.id,
                    p.patterns.join(", "),
                    p.context_window,
                    serde_json::to_value(p.provider_format)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ));
            }
            out
        }
        ProfileAction::Add { file } => {
            // Read and checked before the database is touched: a bad file writes nothing.
            let bytes = read_bounded(file)?;
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| CliError::bad_input(file, "not UTF-8 text"))?;
            let name = file.display().to_string();
            let bad = |e| match e {
                LibraryError::BadProfile { problem, .. } => CliError::bad_input(file, problem),
                e => CliError::bad_input(file, e),
            };
            let mut profile = profiles::parse(&name, text).map_err(bad)?;
            let folder = file
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            profiles::settle_tokenizer_file(&name, &mut profile, folder).map_err(bad)?;
            let replaced = profiles::add(&store, &profile).map_err(|e| match e {
                LibraryError::Store(e) => store_error(&db, e),
                e => CliError::bad_input(&db, e),
            })?;
            format!(
                "{} model profile \"{}\" ({}) in {}\n",
                if replaced { "Replaced" } else { "Added" },
                profile.id,
                profile.patterns.join(", "),
                db.display()
            )
        }
        ProfileAction::Remove { id } => {
            store
                .delete_model_profile(id)
                .map_err(|e| store_error(&db, e))?;
            format!("Removed model profile \"{id}\" from {}\n", db.display())
        }
    })
}
