//! The server functions for a graph's experiments: listing them with
//! their scores, starting one, reading one's runs, cancelling one.
//!
//! What they send and answer is [`heddle_wire::experiments`] (re-exported
//! here); the rows and rules are `heddle_store::experiments`, and the runs
//! are the server's experiment driver's (`server/src/experiments.rs`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::experiments as store;
pub use heddle_wire::experiments::*;
use leptos::prelude::*;

/// The graph's newest experiments, with their progress and scores
/// (viewers and up).
#[server(endpoint = "list_experiments")]
pub async fn list_experiments(graph_id: String) -> Result<Vec<Experiment>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed).await)
}

/// Starts an experiment (editors): the server runs its examples a window
/// at a time.
#[server(endpoint = "start_experiment", input = leptos::server_fn::codec::Json)]
pub async fn start_experiment(
    graph_id: String,
    new: NewExperiment,
) -> Result<Experiment, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    let runs = crate::runs::control()?;
    let version = with_error_status(runs.version_to_run(&allowed, new.graph_version).await)?;
    with_error_status(store::create(&db, &allowed, &new, version, &runs.model_names()).await)
}

/// The runs of an experiment with their outputs and scores, in the
/// dataset's order (the first 500).
#[server(endpoint = "read_experiment_items")]
pub async fn read_experiment_items(
    graph_id: String,
    experiment_id: String,
) -> Result<ExperimentItems, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::items(&db, &allowed, &experiment_id, 0, store::MAX_ITEMS_PAGE).await)
}

/// Cancels a running experiment and the runs it has going (editors).
#[server(endpoint = "cancel_experiment")]
pub async fn cancel_experiment(graph_id: String, experiment_id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    let going = with_error_status(store::cancel(&db, &allowed, &experiment_id).await)?;
    let runs = crate::runs::control()?;
    let caller = crate::request::caller();
    for run_id in going {
        // Each through its own access decision; one that ended meanwhile
        // has nothing to stop.
        if let Ok(run) = heddle_store::access::require_run(
            &db,
            caller.as_ref(),
            &run_id,
            crate::access::Role::Editor,
        )
        .await
        {
            let _ = runs.cancel(&run).await;
        }
    }
    Ok(())
}

/// The graph's gate on publishing, if it has one (viewers and up).
#[server(endpoint = "get_publish_gate")]
pub async fn get_publish_gate(graph_id: String) -> Result<Option<PublishGate>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::gate::get(&db, &allowed).await)
}

/// Sets the graph's gate on publishing (editors).
#[server(endpoint = "set_publish_gate", input = leptos::server_fn::codec::Json)]
pub async fn set_publish_gate(
    graph_id: String,
    gate: NewPublishGate,
) -> Result<PublishGate, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::gate::set(&db, &allowed, &gate).await)
}

/// Removes the graph's gate on publishing (editors).
#[server(endpoint = "remove_publish_gate")]
pub async fn remove_publish_gate(graph_id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::gate::remove(&db, &allowed).await)
}
