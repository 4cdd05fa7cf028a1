//! What stops a headless command before or outside a run. Each is one line
//! that names the file, the thread or the problem.

use std::path::PathBuf;

use heddle_engine::run::{DurableError, StoreError};
use heddle_engine::validate::Report;

/// Why a command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The graph file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The graph file is not a graph document.
    #[error("{}: {source}", path.display())]
    Format {
        path: PathBuf,
        #[source]
        source: heddle_engine::FormatError,
    },
    /// The graph has errors; each is listed.
    #[error("{} has problems:\n{report}", path.display())]
    Invalid { path: PathBuf, report: Report },
    /// A JSON argument does not parse.
    #[error("--{flag} is not valid JSON: {source}")]
    Json {
        flag: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// Lines of a dataset file are not examples: each problem at
    /// `path:line:`, as compilers write it.
    #[error("{}", dataset_problems(path, problems))]
    Dataset {
        path: PathBuf,
        problems: Vec<heddle_wire::datasets::import::ImportProblem>,
    },
    /// A scorers file has problems; each is listed at its place.
    #[error("{} has problems:\n{}", path.display(), problems.join("\n"))]
    Scorers {
        path: PathBuf,
        problems: Vec<String>,
    },
    /// A recording of replies cannot be read or written.
    #[error("{}: {message}", path.display())]
    Recording { path: PathBuf, message: String },
    /// A flag's value is wrong.
    #[error("--{flag}: {message}")]
    Flag { flag: &'static str, message: String },
    /// The checkpoint store refused or failed.
    #[error(transparent)]
    Durable(#[from] DurableError),
    /// The database could not be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the output failed (a closed pipe).
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

fn dataset_problems(
    path: &std::path::Path,
    problems: &[heddle_wire::datasets::import::ImportProblem],
) -> String {
    let path = path.display();
    problems
        .iter()
        .map(|problem| match problem.line {
            0 => format!("{path}: {}", problem.message),
            line => format!("{path}:{line}: {}", problem.message),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
