//! The headless commands of `heddle`: run, resume, validate, eval, threads,
//! history, recover, prune. They use the same engine as the server, and the same
//! database file by default, so runs, threads and checkpoints share one store
//! (the app lists the runs the server started).
//!
//! Exit codes: 0 the run finished (or the command succeeded), 1 the run
//! failed or was cancelled, 2 the input was bad (a missing file, bad JSON,
//! an invalid graph, a refused resume), 3 the run paused for input, 4 an
//! evaluation's score fell under its `--min-score`.

mod error;
mod eval;
mod inspect;
mod print;
mod prune;
mod run;
mod validate;

pub use error::CliError;
pub use eval::eval;
pub use inspect::{history, threads};
pub use prune::prune;
pub use run::{open_store, recover, resume, run};
pub use validate::validate;

/// How a command ended, as the process's exit code; ordered from best
/// to worst, so several runs report the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Finished, or the command did what it was asked.
    Done,
    /// The run paused, waiting to be resumed.
    Paused,
    /// The run failed or was cancelled.
    Failed,
    /// An evaluation scored under a `--min-score`.
    BelowThreshold,
    /// The run's input was refused.
    Rejected,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Done => 0,
            Outcome::Failed => 1,
            Outcome::Rejected => 2,
            Outcome::Paused => 3,
            Outcome::BelowThreshold => 4,
        }
    }
}

impl CliError {
    /// The process exit code: 2 when what was given was wrong, 1 when the
    /// database or the output failed.
    pub fn code(&self) -> u8 {
        match self {
            CliError::Store(_) | CliError::Output(_) => 1,
            _ => 2,
        }
    }
}
