//! What can go wrong in the command, as one line for stderr.

use std::fmt;
use std::path::Path;

use promptloom_engine::EngineError;

#[derive(Debug)]
pub enum CliError {
    /// A file the user named could not be used: `file: problem`. Exit status 2.
    BadInput { file: String, problem: String },
    /// Writing the output failed. Exit status 1.
    Output(String),
    /// A send that failed at the provider or on the way to it (after every input was good):
    /// `connection NAME: problem`. Exit status 3.
    Send { connection: String, problem: String },
}

impl CliError {
    pub fn bad_input(file: &Path, problem: impl fmt::Display) -> Self {
        CliError::BadInput {
            file: file.display().to_string(),
            problem: problem.to_string(),
        }
    }

    /// An engine error about `file`; its message already carries the JSON path.
    pub fn engine(file: &Path, err: &EngineError) -> Self {
        Self::bad_input(file, err)
    }

    /// An unreadable file, in words rather than an OS error number where the cause is common.
    pub fn io(file: &Path, err: &std::io::Error) -> Self {
        use std::io::ErrorKind::*;
        let problem = match err.kind() {
            NotFound => "no such file".to_string(),
            PermissionDenied => "permission denied".to_string(),
            IsADirectory => "is a directory, not a file".to_string(),
            InvalidData => "not UTF-8 text".to_string(),
            _ => format!("cannot read: {err}"),
        };
        Self::bad_input(file, problem)
    }

    pub fn exit_status(&self) -> u8 {
        match self {
            CliError::BadInput { .. } => 2,
            CliError::Output(_) => 1,
            CliError::Send { .. } => 3,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line, whatever the underlying message holds.
        let one_line = |s: &str| s.trim().replace(['\r', '\n'], " ");
        match self {
            CliError::BadInput { file, problem } => write!(f, "{file}: {}", one_line(problem)),
            CliError::Send {
                connection,
                problem,
            } => write!(f, "connection {connection}: {}", one_line(problem)),
            CliError::Output(message) => {
                write!(f, "cannot write the output: {}", one_line(message))
            }
        }
    }
}
