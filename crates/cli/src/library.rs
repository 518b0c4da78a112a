//! `promptloom import` and `promptloom export`: files in and out of the app's database.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use promptloom_engine::model::AgentPreset;
use promptloom_import::{card_preset, import_file, ImportReport, Imported};
use promptloom_store::{default_database_path, Store, StoreError};

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A native preset or session, a SillyTavern preset, character card (PNG, JSON, CHARX),
    /// world info file, regex script file or chat (JSONL).
    pub file: PathBuf,
    /// The database; default: the app's, in the platform's data folder.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// For world info and regex scripts: the preset to add them to (regex scripts without it
    /// join the shared library).
    #[arg(long, value_name = "PRESET_ID")]
    pub into: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The id of a preset (or, for native export, a session).
    pub id: String,
    #[arg(long, value_enum, default_value_t = ExportFormat::Native)]
    pub to: ExportFormat,
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Promptloom's own JSON.
    Native,
    /// A SillyTavern chat-completion preset.
    Sillytavern,
    /// The preset's character and lorebook as a SillyTavern character card (V2 JSON).
    SillytavernCard,
    /// The preset's lorebook as a SillyTavern world info file.
    SillytavernWorldInfo,
}

fn open(db: Option<&Path>) -> Result<Store, CliError> {
    let path = match db {
        Some(p) => p.to_path_buf(),
        None => default_database_path().ok_or_else(|| CliError::BadInput {
            file: "database".into(),
            problem: "no data folder is known here; give --db PATH".into(),
        })?,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| CliError::io(parent, &e))?;
    }
    Store::open(&path).map_err(|e| store_error(&path, e))
}

fn store_error(path: &Path, e: StoreError) -> CliError {
    CliError::bad_input(path, e)
}

pub fn import(args: &ImportArgs) -> Result<String, CliError> {
    let file = &args.file;
    // Read and map everything before the database is touched: bad input writes nothing.
    let reported = import_file(file).map_err(|e| CliError::bad_input(file, e.problem))?;
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    let fail = |e| store_error(&db, e);
    let what = match reported.value {
        Imported::Preset { preset } => save_preset(&store, *preset).map_err(fail)?,
        Imported::Character(card) => save_preset(&store, card_preset(&card)).map_err(fail)?,
        Imported::Session { mut session } => {
            session.id = store.free_session_id(&session.id).map_err(fail)?;
            store.save_session(&session).map_err(fail)?;
            format!("session \"{}\"", session.id)
        }
        Imported::Lorebook { lorebook } => {
            let id = args.into.as_deref().ok_or_else(|| {
                CliError::bad_input(
                    file,
                    "is world info: say which preset it goes to with --into PRESET_ID",
                )
            })?;
            let mut preset = store.get_preset(id).map_err(fail)?;
            preset.lorebook = Some(lorebook);
            store.save_preset(&preset).map_err(fail)?;
            format!("lorebook of preset \"{id}\"")
        }
        Imported::RegexRules { rules } => match args.into.as_deref() {
            Some(id) => {
                let mut preset = store.get_preset(id).map_err(fail)?;
                preset
                    .regex_rules
                    .get_or_insert_with(Vec::new)
                    .extend(rules);
                store.save_preset(&preset).map_err(fail)?;
                format!("regex rules of preset \"{id}\"")
            }
            None => {
                let mut library = store.regex_rules().map_err(fail)?;
                library.retain(|r| !rules.iter().any(|n| n.id == r.id));
                let count = rules.len();
                library.extend(rules);
                store.save_regex_rules(&library).map_err(fail)?;
                format!("{count} regex rules into the shared library")
            }
        },
    };
    Ok(crate::terminal::escape(&render_report(file, &db, &what, &reported.report)).into_owned())
}

/// Saves an imported preset under its id, or the first free `<id>-N`, never over another.
fn save_preset(store: &Store, mut preset: AgentPreset) -> Result<String, StoreError> {
    preset.id = store.free_preset_id(&preset.id)?;
    store.save_preset(&preset)?;
    Ok(format!("preset \"{}\" ({})", preset.id, preset.name))
}

fn render_report(file: &Path, db: &Path, what: &str, report: &ImportReport) -> String {
    let mut out = format!(
        "Imported {what} from {} ({}) into {}\n",
        file.display(),
        report.format,
        db.display()
    );
    if report.items.is_empty() {
        out.push_str("Everything was mapped.\n");
    } else {
        out.push_str(&format!("Not mapped ({}):\n", report.items.len()));
        for item in &report.items {
            out.push_str(&format!("  - {}: {}\n", item.item, item.message));
        }
    }
    out
}

pub fn export(args: &ExportArgs) -> Result<String, CliError> {
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    let preset = match store.get_preset(&args.id) {
        Ok(p) => Some(p),
        Err(StoreError::NotFound { .. }) => None,
        Err(e) => return Err(store_error(&db, e)),
    };
    let (text, notes) = match (args.to, preset) {
        (format, Some(p)) => {
            let to = match format {
                ExportFormat::Native => promptloom_import::ExportFormat::Native,
                ExportFormat::Sillytavern => promptloom_import::ExportFormat::SillyTavernPreset,
                ExportFormat::SillytavernCard => promptloom_import::ExportFormat::SillyTavernCard,
                ExportFormat::SillytavernWorldInfo => {
                    promptloom_import::ExportFormat::SillyTavernWorldInfo
                }
            };
            let reported =
                promptloom_import::export_preset_as(&p, to).map_err(|e| CliError::BadInput {
                    file: args.id.clone(),
                    problem: e.to_string(),
                })?;
            let notes = reported
                .report
                .items
                .iter()
                .map(|i| format!("{}: {}", i.item, i.message))
                .collect();
            (reported.value, notes)
        }
        (ExportFormat::Native, None) => match store.get_session(&args.id) {
            Ok(s) => (promptloom_import::native::export_session(&s), Vec::new()),
            Err(e) => return Err(store_error(&db, e)),
        },
        (_, None) => {
            return Err(store_error(
                &db,
                StoreError::NotFound {
                    kind: "preset",
                    id: args.id.clone(),
                },
            ))
        }
    };
    for note in &notes {
        eprintln!(
            "promptloom: note: not exported: {}",
            crate::terminal::escape(note)
        );
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| CliError::io(path, &e))?;
            Ok(format!("Exported \"{}\" to {}\n", args.id, path.display()))
        }
        None => Ok(text),
    }
}
