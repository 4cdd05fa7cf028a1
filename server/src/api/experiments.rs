//! Experiments over the API: a graph version run over a dataset version,
//! every example an ordinary run, scored when it ends. Viewers read them;
//! editors, and API keys that may run the graph, start them; editors
//! cancel and delete them (a key cancels only those it started). The
//! graph's publishing gate lives here too: a version goes live only when
//! its experiment scores no worse than the live version's.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::NoContent;
use heddle_store::access::{Principal, require, require_to_run};
use heddle_store::experiments;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::experiments::{
    Experiment, ExperimentItems, NewExperiment, NewPublishGate, PublishGate,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{ExperimentPath, GraphPath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/graphs/{id}/experiments`: the newest 50, newest first
/// (viewers and up).
pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<Experiment>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(experiments::list(&state.db, &allowed).await?))
}

/// `POST /api/v1/graphs/{id}/experiments`: 201 with the experiment, its
/// examples queued a window at a time.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(new): ApiJson<NewExperiment>,
) -> Result<Created<Experiment>> {
    // A key needs the `read` scope too: it names any version, drafts
    // included, and reads what they answer.
    require(&state.db, &who.0, &id, Role::Viewer).await?;
    let allowed = require_to_run(&state.db, &who.0, &id).await?;
    let version = state
        .runs
        .version_to_run(&allowed, new.graph_version)
        .await?;
    Ok(Created(
        experiments::create(
            &state.db,
            &allowed,
            &new,
            version,
            &state.runs.registry().model_names(),
        )
        .await?,
    ))
}

/// `GET /api/v1/graphs/{id}/experiments/{experiment}`: its progress and
/// scores so far.
pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(ExperimentPath { id, experiment }): Path<ExperimentPath>,
) -> Result<Json<Experiment>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(
        experiments::get(&state.db, &allowed, &experiment).await?,
    ))
}

/// Which of an experiment's runs.
#[derive(Deserialize, JsonSchema)]
pub struct ItemsQuery {
    /// How many to skip.
    #[serde(default)]
    offset: u32,
    /// How many to give, 1 to 500 (100 when not given).
    #[serde(default = "default_limit")]
    limit: u32,
}

fn default_limit() -> u32 {
    100
}

/// `GET /api/v1/graphs/{id}/experiments/{experiment}/items`: a page of
/// its runs with their outputs and scores, in the dataset's order.
pub async fn items(
    State(state): State<AppState>,
    who: Who,
    Path(ExperimentPath { id, experiment }): Path<ExperimentPath>,
    Query(query): Query<ItemsQuery>,
) -> Result<Json<ExperimentItems>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    if query.limit == 0 || query.limit as usize > experiments::MAX_ITEMS_PAGE {
        return Err(ApiError(AppError::InvalidInput(format!(
            "`limit`: 1 to {}",
            experiments::MAX_ITEMS_PAGE
        ))));
    }
    Ok(Json(
        experiments::items(
            &state.db,
            &allowed,
            &experiment,
            query.offset as usize,
            query.limit as usize,
        )
        .await?,
    ))
}

/// `POST /api/v1/graphs/{id}/experiments/{experiment}/cancel`: no more of
/// its examples start, and those running are cancelled.
pub async fn cancel(
    State(state): State<AppState>,
    who: Who,
    Path(ExperimentPath { id, experiment }): Path<ExperimentPath>,
) -> Result<Json<Experiment>> {
    let allowed = require_to_run(&state.db, &who.0, &id).await?;
    let going = experiments::cancel(&state.db, &allowed, &experiment).await?;
    crate::experiments::cancel_runs(&state.runs, Principal::from(&who.0), &going).await;
    Ok(Json(
        experiments::get(&state.db, &allowed, &experiment).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/experiments/{experiment}`: 204; its runs
/// stay.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(ExperimentPath { id, experiment }): Path<ExperimentPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    experiments::delete(&state.db, &allowed, &experiment).await?;
    Ok(NoContent)
}

/// `GET /api/v1/graphs/{id}/publish-gate`: the graph's gate on publishing,
/// or `null` (viewers and up).
pub async fn gate(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Option<PublishGate>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(experiments::gate::get(&state.db, &allowed).await?))
}

/// `PUT /api/v1/graphs/{id}/publish-gate`: a version goes live only when
/// its experiment on this dataset version scores no worse than the live
/// one's (editors).
pub async fn set_gate(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(new): ApiJson<NewPublishGate>,
) -> Result<Json<PublishGate>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        experiments::gate::set(&state.db, &allowed, &new).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/publish-gate`: 204; any version may go
/// live again (editors).
pub async fn remove_gate(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    experiments::gate::remove(&state.db, &allowed).await?;
    Ok(NoContent)
}
