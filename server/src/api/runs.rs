//! Run and thread endpoints. Runs and threads take the access of their
//! graph: viewers read them, editors start, cancel and resume them.

use heddle_engine::ids::RunId;
use heddle_engine::ids::ThreadId;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use heddle_engine::run::Event;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use heddle_store::access::{require, require_run, require_thread};
use heddle_wire::access::Role;
use heddle_wire::runs::{GraphUsage, ThreadView};

use super::params::{GraphPath, RunPath, ThreadPath};
use super::responses::Accepted;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::runs::{ForkRequest, RunInfo, StartRequest, ThreadInfo};
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `POST /api/v1/graphs/{id}/runs` with `{"input": {...}, "thread_id"?}`:
/// 202, the run queued; watch it on the websocket.
pub async fn start(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(request): ApiJson<StartRequest>,
) -> Result<Accepted<RunInfo>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Accepted(state.runs.start(&allowed, request).await?))
}

/// How many runs to list, newest first (100 by default).
#[derive(Deserialize, JsonSchema)]
pub struct ListQuery {
    #[serde(default = "default_limit")]
    limit: i64,
}

fn default_limit() -> i64 {
    100
}

pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<RunInfo>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(state.runs.list(&allowed, query.limit).await?))
}

pub async fn threads(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<ThreadInfo>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(state.runs.threads(&allowed).await?))
}

/// How many days of usage to list (the last 30 with runs by default).
#[derive(Deserialize, JsonSchema)]
pub struct UsageQuery {
    #[serde(default = "default_days")]
    days: i64,
}

fn default_days() -> i64 {
    30
}

pub async fn usage(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    Query(query): Query<UsageQuery>,
) -> Result<Json<GraphUsage>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(
        heddle_store::runs::usage(&state.db, &allowed, query.days).await?,
    ))
}

pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(RunPath { id }): Path<RunPath>,
) -> Result<Json<RunInfo>> {
    let run = require_run(&state.db, &who.0, &RunId::from(id), Role::Viewer).await?;
    Ok(Json(state.runs.get(&run).await?))
}

/// The first event's sequence number to return (0 by default).
#[derive(Deserialize, JsonSchema)]
pub struct EventsQuery {
    #[serde(default)]
    from_seq: u64,
}

/// `GET /api/v1/runs/{id}/events?from_seq=N`: every event from `N` on.
pub async fn events(
    State(state): State<AppState>,
    who: Who,
    Path(RunPath { id }): Path<RunPath>,
    Query(query): Query<EventsQuery>,
) -> Result<Json<Vec<Arc<Event>>>> {
    let run = require_run(&state.db, &who.0, &RunId::from(id), Role::Viewer).await?;
    Ok(Json(state.runs.events(&run, query.from_seq).await?))
}

pub async fn cancel(
    State(state): State<AppState>,
    who: Who,
    Path(RunPath { id }): Path<RunPath>,
) -> Result<Json<RunInfo>> {
    let run = require_run(&state.db, &who.0, &RunId::from(id), Role::Editor).await?;
    Ok(Json(state.runs.cancel(&run).await?))
}

/// `POST /api/v1/runs/{id}/fork` with `{"step", "edits"}`: a new run on the
/// same thread from the checkpoint before `step`, with edited channels.
pub async fn fork(
    State(state): State<AppState>,
    who: Who,
    Path(RunPath { id }): Path<RunPath>,
    ApiJson(request): ApiJson<ForkRequest>,
) -> Result<Accepted<RunInfo>> {
    let run = require_run(&state.db, &who.0, &RunId::from(id), Role::Editor).await?;
    Ok(Accepted(state.runs.fork(&run, request).await?))
}

/// `GET /api/v1/threads/{id}`: the thread, its newest state and its messages.
pub async fn thread(
    State(state): State<AppState>,
    who: Who,
    Path(ThreadPath { id }): Path<ThreadPath>,
) -> Result<Json<ThreadView>> {
    let thread = require_thread(&state.db, &who.0, &ThreadId::from(id), Role::Viewer).await?;
    Ok(Json(state.runs.thread(&thread).await?))
}

/// The answer to the question the thread paused on.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    value: Value,
}

/// `POST /api/v1/threads/{id}/resume` with `{"value": ...}`.
pub async fn resume(
    State(state): State<AppState>,
    who: Who,
    Path(ThreadPath { id }): Path<ThreadPath>,
    ApiJson(body): ApiJson<Resume>,
) -> Result<Accepted<RunInfo>> {
    let thread = require_thread(&state.db, &who.0, &ThreadId::from(id), Role::Editor).await?;
    Ok(Accepted(state.runs.resume(&thread, body.value).await?))
}
