//! The run calls the page makes, through the app's typed server functions
//! ([`crate::runs`]): start (with an input, on a thread, up to a node),
//! stop, resume a pause, fork from a step, and read a graph's runs and
//! threads and a run's events. Errors are the server's messages.

use heddle_engine::run::Event;
use serde_json::Value;

use crate::editor::persist::Persistence;
use crate::error::AppError;
use crate::runs::{ForkRequest, RunInfo, StartRequest, ThreadInfo, ThreadView};

fn message(error: AppError) -> String {
    error.to_string()
}

/// Starts a run of the graph as the editor shows it: edits not saved yet
/// are saved first, and the run names that very version. When the save
/// fails (a conflict, the server unreachable), nothing starts and the
/// message says why. `shown` is the page's [`Persistence`]; without one
/// (a page that edits nothing) the newest version runs.
pub async fn start_run(
    graph_id: &str,
    shown: Option<Persistence>,
    mut request: StartRequest,
) -> Result<RunInfo, String> {
    if let Some(shown) = shown {
        request.graph_version = Some(shown.saved_version().await?);
    }
    crate::runs::start_run(graph_id.to_string(), request)
        .await
        .map_err(message)
}

/// Stops a run.
pub async fn cancel_run(run_id: &str) -> Result<(), String> {
    crate::runs::cancel_run(run_id.to_string())
        .await
        .map(drop)
        .map_err(message)
}

/// Answers a paused thread.
pub async fn resume(thread_id: &str, value: Value) -> Result<(), String> {
    crate::runs::resume_thread(thread_id.to_string(), value)
        .await
        .map(drop)
        .map_err(message)
}

/// Forks a run before `step` with `edits`, at `start_at` when given.
pub async fn fork(
    run_id: &str,
    step: u32,
    edits: serde_json::Map<String, Value>,
    start_at: Option<String>,
) -> Result<RunInfo, String> {
    let request = ForkRequest {
        step,
        edits,
        start_at,
    };
    crate::runs::fork_run(run_id.to_string(), request)
        .await
        .map_err(message)
}

/// A run's record (its thread, status, output).
pub async fn run(run_id: &str) -> Result<RunInfo, String> {
    crate::runs::get_run(run_id.to_string())
        .await
        .map_err(message)
}

/// The graph's threads, newest first.
pub async fn threads(graph_id: &str) -> Result<Vec<ThreadInfo>, String> {
    crate::runs::list_threads(graph_id.to_string())
        .await
        .map_err(message)
}

/// A thread with its newest state.
pub async fn thread(thread_id: &str) -> Result<ThreadView, String> {
    crate::runs::get_thread(thread_id.to_string())
        .await
        .map_err(message)
}

/// The graph's runs, newest first (the 50 newest).
pub async fn runs(graph_id: &str) -> Result<Vec<RunInfo>, String> {
    crate::runs::list_runs(graph_id.to_string())
        .await
        .map_err(message)
}

/// A run's events, in order.
pub async fn events(run_id: &str) -> Result<Vec<Event>, String> {
    crate::runs::run_events(run_id.to_string(), 0)
        .await
        .map_err(message)
}
