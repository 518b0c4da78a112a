//! `promptloom import` and `promptloom export`: files in and out of the app's database.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use promptloom_import::{import_file, ImportReport};
use promptloom_library::export::{self, ExportFormat};
use promptloom_library::files::write_atomically;
use promptloom_library::{import_into, ImportTarget, LibraryError, LorebookMode, Place};
use promptloom_store::{default_database_path, Store, StoreError};

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A native preset or session, a SillyTavern preset, character card (PNG, JSON, CHARX),
    /// world info file, regex script file, chat (JSONL), settings.json (its world info
    /// settings), instruct template, context template, system prompt or Advanced Formatting
    /// master export.
    pub file: PathBuf,
    /// The database; default: the app's, in the platform's data folder.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// For world info, regex scripts, world info settings, instruct templates and system prompts,
    /// which always go into a preset: the preset to add them to.
    #[arg(long, value_name = "PRESET_ID")]
    pub into: Option<String>,
    /// World info into a preset that has a lorebook: add the entries to it instead of replacing
    /// its entries (an entry id already taken gets a free `<id>-N`). The book's settings stay
    /// either way.
    #[arg(long, requires = "into")]
    pub merge: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The id of a preset (or, for native export, a session).
    pub id: String,
    #[arg(long, default_value = "native", value_parser = export_format())]
    pub to: ExportFormat,
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The command line's name for each export format, and its help.
const EXPORT_FORMATS: [(&str, ExportFormat, &str); 4] = [
    ("native", ExportFormat::Native, "Promptloom's own JSON"),
    (
        "sillytavern",
        ExportFormat::SillyTavernPreset,
        "A SillyTavern chat-completion preset",
    ),
    (
        "sillytavern-card",
        ExportFormat::SillyTavernCard,
        "The preset's character and lorebook as a SillyTavern character card (V2 JSON)",
    ),
    (
        "sillytavern-world-info",
        ExportFormat::SillyTavernWorldInfo,
        "The preset's lorebook as a SillyTavern world info file",
    ),
];

fn export_format() -> impl TypedValueParser<Value = ExportFormat> {
    PossibleValuesParser::new(
        EXPORT_FORMATS.map(|(name, _, help)| PossibleValue::new(name).help(help)),
    )
    .map(|name| {
        EXPORT_FORMATS
            .iter()
            .find(|(n, ..)| *n == name)
            .map_or(ExportFormat::Native, |(_, format, _)| *format)
    })
}

pub(crate) fn open(db: Option<&Path>) -> Result<Store, CliError> {
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

pub(crate) fn store_error(path: &Path, e: StoreError) -> CliError {
    CliError::bad_input(path, e)
}

pub fn import(args: &ImportArgs) -> Result<String, CliError> {
    let file = &args.file;
    // Read and map everything before the database is touched: bad input writes nothing.
    let reported = import_file(file).map_err(|e| CliError::bad_input(file, e.problem))?;
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    let target = ImportTarget {
        into: args.into.as_deref(),
        lorebook: if args.merge {
            LorebookMode::Merge
        } else {
            LorebookMode::Replace
        },
    };
    let kind = reported.value.kind();
    let outcome = import_into(&store, reported.value, target).map_err(|e| match e {
        LibraryError::NeedsPreset { what } => CliError::bad_input(
            file,
            format!("is {what}: say which preset it goes to with --into PRESET_ID"),
        ),
        LibraryError::Store(e) => store_error(&db, e),
        e => CliError::bad_input(file, e),
    })?;
    let what = match &outcome.place {
        Place::Preset { id, name } => match kind {
            "lorebook" => format!("lorebook of preset \"{id}\""),
            "regexRules" => format!("regex rules of preset \"{id}\""),
            "worldInfoSettings" => format!("world info settings of preset \"{id}\""),
            "instructTemplate" => format!("instruct template of preset \"{id}\""),
            "systemPrompt" => format!("system prompt of preset \"{id}\""),
            _ => format!("preset \"{id}\" ({name})"),
        },
        Place::Session { id } => format!("session \"{id}\""),
    };
    let report = render_report(file, &db, &what, &reported.report, &outcome.notes);
    Ok(crate::terminal::escape(&report).into_owned())
}

fn render_report(
    file: &Path,
    db: &Path,
    what: &str,
    report: &ImportReport,
    notes: &[String],
) -> String {
    let mut out = format!(
        "Imported {what} from {} ({}) into {}\n",
        file.display(),
        report.format,
        db.display()
    );
    for note in notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    if report.items.is_empty() {
        out.push_str("Everything was mapped.\n");
    } else {
        out.push_str(&format!("Not mapped ({}):\n", report.items.len()));
        for item in &report.items {
            out.push_str(&format!("  - {item}\n"));
        }
    }
    out
}

pub fn export(args: &ExportArgs) -> Result<String, CliError> {
    let store = open(args.db.as_deref())?;
    let db = store.path().map(Path::to_path_buf).unwrap_or_default();
    let exported = export::stored(&store, &args.id, args.to).map_err(|e| match e {
        LibraryError::Store(e) => store_error(&db, e),
        e => CliError::BadInput {
            file: args.id.clone(),
            problem: e.to_string(),
        },
    })?;
    let text = exported.text;
    let notes: Vec<String> = exported
        .not_mapped
        .iter()
        .map(ToString::to_string)
        .collect();
    for note in &notes {
        eprintln!(
            "promptloom: note: not exported: {}",
            crate::terminal::escape(note)
        );
    }
    match &args.out {
        Some(path) => {
            write_atomically(path, text.as_bytes())
                .map_err(|e| CliError::bad_input(path, format!("cannot write: {e}")))?;
            Ok(format!("Exported \"{}\" to {}\n", args.id, path.display()))
        }
        None => Ok(text),
    }
}
