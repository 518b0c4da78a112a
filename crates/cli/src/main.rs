//! `promptloom`: the engine, headless (RULES 8). Each subcommand reads files, runs the engine and
//! prints; bad input ends with status 2 and one line on stderr that names the file.

mod assets;
mod connections;
mod count;
mod diff;
mod error;
mod inputs;
mod library;
mod load;
mod lorebook;
mod memory;
mod preview;
mod profiles;
mod request;
mod send;
mod terminal;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "promptloom",
    // The same line as the app's: the workspace version, the commit and a dirty mark.
    version = promptloom_version::VERSION_LINE,
    about = "Assemble and inspect LLM prompt contexts from agent presets."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build the context a model would receive, and show it without sending it.
    Preview(preview::PreviewArgs),
    /// What changed between two builds: this turn against the previous one, or this session
    /// against another; the prefix a prompt cache can reuse and why it ends where it does.
    Diff(diff::DiffArgs),
    /// Test a lorebook: every entry for a text or a session, fired or not, and why.
    Lorebook(lorebook::LorebookArgs),
    /// Import a file into the app's database and print what could not be mapped.
    Import(library::ImportArgs),
    /// Export a preset (native or SillyTavern) or a session (native) from the database.
    Export(library::ExportArgs),
    /// List, add or remove your own model profiles in the app's database.
    Profile(profiles::ProfileArgs),
    /// Send a build through a connection and stream the reply; with --save, keep the turn.
    Send(send::SendArgs),
    /// Where `send` sends: connections and their keys (kept in the OS keychain).
    Connection(connections::ConnectionArgs),
    /// Summarize a stored session's older turns through a connection; with --save, keep it.
    Summarize(memory::SummarizeArgs),
    /// A stored session's long-term memory: index its messages, search them, see the status.
    Memory(memory::MemoryArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Preview(args) => preview::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Lorebook(args) => lorebook::run(&args),
        Command::Import(args) => library::import(&args),
        Command::Export(args) => library::export(&args),
        Command::Profile(args) => profiles::run(&args),
        Command::Connection(args) => connections::run(&args),
        Command::Send(args) => send::run(&args),
        Command::Summarize(args) => memory::summarize(&args),
        Command::Memory(args) => memory::run(&args),
    };
    match outcome.and_then(|text| print(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("promptloom: {}", terminal::escape(&err.to_string()));
            ExitCode::from(err.exit_status())
        }
    }
}

/// Writes the output in one piece. A reader that went away (`| head`) is not an error.
fn print(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(CliError::Output(e.to_string()))
        }
        _ => Ok(()),
    }
}
