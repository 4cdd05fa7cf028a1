//! The server functions for a graph's datasets: listing, making and
//! deleting them, reading a version's examples, and changing them (adding,
//! editing, removing, or a finished run as an example).
//!
//! What they send and answer is [`heddle_wire::datasets`] (re-exported
//! here, so the UI names it `crate::datasets::…`); the rows and rules are
//! `heddle_store::datasets`, which a server function calls after reading
//! its request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::datasets as store;
pub use heddle_wire::datasets::*;
use leptos::prelude::*;

/// The graph's datasets (viewers and up).
#[server(endpoint = "list_datasets")]
pub async fn list_datasets(graph_id: String) -> Result<Vec<Dataset>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed).await)
}

/// Makes an empty dataset (editors).
#[server(endpoint = "create_dataset", input = leptos::server_fn::codec::Json)]
pub async fn create_dataset(graph_id: String, new: NewDataset) -> Result<Dataset, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::create(&db, &allowed, new).await)
}

/// Adds an example made of a finished run of the graph to a dataset
/// (editors): the run's input, and its output as the reference.
#[server(endpoint = "add_run_to_dataset", input = leptos::server_fn::codec::Json)]
pub async fn add_run_to_dataset(
    graph_id: String,
    dataset_id: String,
    from: FromRun,
) -> Result<Dataset, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    let caller = crate::request::caller();
    let run = with_error_status(
        heddle_store::access::require_run(
            &db,
            caller.as_ref(),
            &from.run_id,
            crate::access::Role::Viewer,
        )
        .await,
    )?;
    let runs = crate::runs::control()?;
    with_error_status(
        store::add_from_run(&db, &allowed, runs.as_ref(), &run, &dataset_id, from).await,
    )
}

/// A page of a dataset's latest version (viewers and up).
#[server(endpoint = "dataset_examples")]
pub async fn dataset_examples(
    graph_id: String,
    dataset_id: String,
    offset: usize,
    limit: usize,
) -> Result<DatasetVersion, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(
        store::version(
            &db,
            &allowed,
            &dataset_id,
            None,
            offset,
            limit.clamp(1, MAX_PAGE),
        )
        .await,
    )
}

/// Adds examples at the end of a dataset: a new version (editors).
#[server(endpoint = "add_examples", input = leptos::server_fn::codec::Json)]
pub async fn add_examples(
    graph_id: String,
    dataset_id: String,
    new: NewExamples,
) -> Result<Dataset, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    let examples = new
        .examples
        .into_iter()
        .map(|example| (example, None))
        .collect();
    with_error_status(store::add(&db, &allowed, &dataset_id, examples).await)
}

/// Puts an edited example in the place of one: a new version (editors).
#[server(endpoint = "replace_example", input = leptos::server_fn::codec::Json)]
pub async fn replace_example(
    graph_id: String,
    dataset_id: String,
    example_id: String,
    example: ExampleInput,
) -> Result<Dataset, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::replace(&db, &allowed, &dataset_id, &example_id, example).await)
}

/// Removes an example: a new version (editors).
#[server(endpoint = "remove_example")]
pub async fn remove_example(
    graph_id: String,
    dataset_id: String,
    example_id: String,
) -> Result<Dataset, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::remove(&db, &allowed, &dataset_id, &example_id).await)
}

/// Deletes a dataset and all its versions (editors); refused while
/// experiments or a publishing gate name it.
#[server(endpoint = "delete_dataset")]
pub async fn delete_dataset(graph_id: String, dataset_id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::delete(&db, &allowed, &dataset_id).await)
}
