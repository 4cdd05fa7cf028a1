//! The server functions for runs and threads: listing, starting, cancelling, forking and resuming them.
//!
//! What they send and answer is [`heddle_wire::runs`] (re-exported here, so
//! the UI names it `crate::runs::…`); the rows and rules are
//! `heddle_store::runs`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
use heddle_engine::ids::{RunId, ThreadId};
use heddle_engine::run::Event;
#[cfg(feature = "ssr")]
use heddle_store::runs as store;
pub use heddle_wire::runs::*;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde_json::Value;

/// The graph's runs, newest first (at most 50).
#[server(endpoint = "list_runs")]
pub async fn list_runs(graph_id: String) -> Result<Vec<RunInfo>, AppError> {
    use crate::http_status::with_error_status;
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed, 50).await)
}

/// The run manager the server provides, for a server function.
#[cfg(feature = "ssr")]
pub(crate) fn control() -> Result<std::sync::Arc<dyn store::RunControl>, AppError> {
    use_context::<std::sync::Arc<dyn store::RunControl>>().ok_or_else(|| {
        tracing::error!("no run manager in the request context");
        AppError::Internal
    })
}

/// A run of the caller's, found through its graph (`needed` there).
#[cfg(feature = "ssr")]
async fn on_run(
    run_id: &RunId,
    needed: crate::access::Role,
) -> Result<heddle_store::access::OnRun, AppError> {
    let db = crate::request::db()?;
    let caller = crate::request::caller();
    heddle_store::access::require_run(&db, caller.as_ref(), run_id, needed).await
}

/// A thread of the caller's, found through its graph (`needed` there).
#[cfg(feature = "ssr")]
async fn on_thread(
    thread_id: &ThreadId,
    needed: crate::access::Role,
) -> Result<heddle_store::access::OnThread, AppError> {
    let db = crate::request::db()?;
    let caller = crate::request::caller();
    heddle_store::access::require_thread(&db, caller.as_ref(), thread_id, needed).await
}

/// Starts a run of the graph's newest version (editors); it waits for a
/// free slot on the server.
#[server(endpoint = "start_run", input = Json)]
pub async fn start_run(graph_id: String, request: StartRequest) -> Result<RunInfo, AppError> {
    use crate::http_status::with_error_status;
    let (_, allowed) = crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(control()?.start(&allowed, request).await)
}

/// One run (viewers).
#[server(endpoint = "get_run", input = Json)]
pub async fn get_run(run_id: RunId) -> Result<RunInfo, AppError> {
    use crate::http_status::with_error_status;
    let run = with_error_status(on_run(&run_id, crate::access::Role::Viewer).await)?;
    with_error_status(control()?.get(&run).await)
}

/// Stops a run: a running one at once, a queued one before it starts, a
/// paused one for good (editors).
#[server(endpoint = "cancel_run", input = Json)]
pub async fn cancel_run(run_id: RunId) -> Result<RunInfo, AppError> {
    use crate::http_status::with_error_status;
    let run = with_error_status(on_run(&run_id, crate::access::Role::Editor).await)?;
    with_error_status(control()?.cancel(&run).await)
}

/// Forks a run: a new run on its thread from a step, with edited
/// channels (editors).
#[server(endpoint = "fork_run", input = Json)]
pub async fn fork_run(run_id: RunId, request: ForkRequest) -> Result<RunInfo, AppError> {
    use crate::http_status::with_error_status;
    let run = with_error_status(on_run(&run_id, crate::access::Role::Editor).await)?;
    with_error_status(control()?.fork(&run, request).await)
}

/// A run's events from `from_seq` on: stored, then not yet stored
/// (viewers).
#[server(endpoint = "run_events", input = Json)]
pub async fn run_events(run_id: RunId, from_seq: u64) -> Result<Vec<Event>, AppError> {
    use crate::http_status::with_error_status;
    let run = with_error_status(on_run(&run_id, crate::access::Role::Viewer).await)?;
    let events = with_error_status(control()?.events(&run, from_seq).await)?;
    Ok(events.iter().map(|event| Event::clone(event)).collect())
}

/// The state of the checkpoint of the run's thread that its first event
/// builds on (`EventPayload::base_checkpoint`), for a view of a run read
/// from its events (viewers).
#[server(endpoint = "run_base", input = Json)]
pub async fn run_base(
    run_id: RunId,
    checkpoint: String,
) -> Result<Option<serde_json::Map<String, Value>>, AppError> {
    use crate::http_status::with_error_status;
    let run = with_error_status(on_run(&run_id, crate::access::Role::Viewer).await)?;
    with_error_status(control()?.base_state(&run, &checkpoint).await)
}

/// What the graph's runs used over the last 30 days with runs (viewers).
#[server(endpoint = "usage_of_graph", input = Json)]
pub async fn usage_of_graph(graph_id: String) -> Result<GraphUsage, AppError> {
    use crate::http_status::with_error_status;
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::usage(&db, &allowed, 30).await)
}

/// A graph's threads, most recently active first (viewers).
#[server(endpoint = "list_threads", input = Json)]
pub async fn list_threads(graph_id: String) -> Result<Vec<ThreadInfo>, AppError> {
    use crate::http_status::with_error_status;
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::threads(&db, &allowed).await)
}

/// A thread with its newest state and messages (viewers).
#[server(endpoint = "get_thread", input = Json)]
pub async fn get_thread(thread_id: ThreadId) -> Result<ThreadView, AppError> {
    use crate::http_status::with_error_status;
    let thread = with_error_status(on_thread(&thread_id, crate::access::Role::Viewer).await)?;
    with_error_status(control()?.thread(&thread).await)
}

/// Answers a paused thread: its run goes on with `value` (editors).
#[server(endpoint = "resume_thread", input = Json)]
pub async fn resume_thread(thread_id: ThreadId, value: Value) -> Result<RunInfo, AppError> {
    use crate::http_status::with_error_status;
    let thread = with_error_status(on_thread(&thread_id, crate::access::Role::Editor).await)?;
    with_error_status(control()?.resume(&thread, value).await)
}
