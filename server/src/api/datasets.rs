//! Datasets over the API: a graph's evaluation examples, versioned.
//! Viewers read them (any version, a page at a time); editors make,
//! rename and delete datasets and change their examples, each change a
//! new version. An API key acts within its scope on the graphs it names.
//! `from-run` makes an example of a finished run of the graph: its input,
//! and its output as the reference.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::NoContent;
use heddle_store::access::{require, require_run};
use heddle_store::datasets;
use heddle_wire::access::Role;
use heddle_wire::datasets::{
    Dataset, DatasetVersion, ExampleInput, FromRun, MAX_PAGE, NewDataset, NewExamples,
};
use heddle_wire::error::AppError;
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{DatasetPath, ExamplePath, GraphPath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/graphs/{id}/datasets` (viewers and up).
pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<Dataset>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(datasets::list(&state.db, &allowed).await?))
}

/// `POST /api/v1/graphs/{id}/datasets`: 201 with the new, empty dataset.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(new): ApiJson<NewDataset>,
) -> Result<Created<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Created(datasets::create(&state.db, &allowed, new).await?))
}

/// Which version of a dataset, and which of its examples.
#[derive(Deserialize, JsonSchema)]
pub struct VersionQuery {
    /// The version (the latest when not given).
    #[serde(default)]
    version: Option<i64>,
    /// How many examples to skip.
    #[serde(default)]
    offset: u32,
    /// How many examples to give, 1 to 500 (100 when not given).
    #[serde(default = "default_limit")]
    limit: u32,
}

fn default_limit() -> u32 {
    100
}

/// `GET /api/v1/graphs/{id}/datasets/{dataset}`: a version with a page of
/// its examples.
pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(DatasetPath { id, dataset }): Path<DatasetPath>,
    Query(query): Query<VersionQuery>,
) -> Result<Json<DatasetVersion>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    if query.limit == 0 || query.limit as usize > MAX_PAGE {
        return Err(ApiError(AppError::InvalidInput(format!(
            "`limit`: 1 to {MAX_PAGE}"
        ))));
    }
    Ok(Json(
        datasets::version(
            &state.db,
            &allowed,
            &dataset,
            query.version,
            query.offset as usize,
            query.limit as usize,
        )
        .await?,
    ))
}

/// `PUT /api/v1/graphs/{id}/datasets/{dataset}`: renames it.
pub async fn rename(
    State(state): State<AppState>,
    who: Who,
    Path(DatasetPath { id, dataset }): Path<DatasetPath>,
    ApiJson(new): ApiJson<NewDataset>,
) -> Result<Json<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        datasets::rename(&state.db, &allowed, &dataset, new).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/datasets/{dataset}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(DatasetPath { id, dataset }): Path<DatasetPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    datasets::delete(&state.db, &allowed, &dataset).await?;
    Ok(NoContent)
}

/// `POST /api/v1/graphs/{id}/datasets/{dataset}/examples`: adds examples
/// at the end; the dataset at its new version.
pub async fn add(
    State(state): State<AppState>,
    who: Who,
    Path(DatasetPath { id, dataset }): Path<DatasetPath>,
    ApiJson(new): ApiJson<NewExamples>,
) -> Result<Json<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    let examples = new
        .examples
        .into_iter()
        .map(|example| (example, None))
        .collect();
    Ok(Json(
        datasets::add(&state.db, &allowed, &dataset, examples).await?,
    ))
}

/// `POST /api/v1/graphs/{id}/datasets/{dataset}/examples/from-run`: an
/// example made of a finished run of this graph.
pub async fn from_run(
    State(state): State<AppState>,
    who: Who,
    Path(DatasetPath { id, dataset }): Path<DatasetPath>,
    ApiJson(from): ApiJson<FromRun>,
) -> Result<Json<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    // The run must be one the caller may read: one they may not is as
    // unknown here as one that does not exist.
    let on_run = require_run(&state.db, &who.0, &from.run_id, Role::Viewer)
        .await
        .map_err(|_| ApiError(AppError::not_found(format!("run {}", from.run_id))))?;
    Ok(Json(
        datasets::add_from_run(&state.db, &allowed, &state.runs, &on_run, &dataset, from).await?,
    ))
}

/// `PUT /api/v1/graphs/{id}/datasets/{dataset}/examples/{example}`: puts
/// this example in that one's place; the dataset at its new version.
pub async fn replace(
    State(state): State<AppState>,
    who: Who,
    Path(ExamplePath {
        id,
        dataset,
        example,
    }): Path<ExamplePath>,
    ApiJson(new): ApiJson<ExampleInput>,
) -> Result<Json<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        datasets::replace(&state.db, &allowed, &dataset, &example, new).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/datasets/{dataset}/examples/{example}`:
/// the dataset at its new version, without it.
pub async fn remove(
    State(state): State<AppState>,
    who: Who,
    Path(ExamplePath {
        id,
        dataset,
        example,
    }): Path<ExamplePath>,
) -> Result<Json<Dataset>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        datasets::remove(&state.db, &allowed, &dataset, &example).await?,
    ))
}
