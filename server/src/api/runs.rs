//! Run and thread endpoints. Runs and threads take the access of their
//! graph: viewers read them, editors start, cancel and resume them.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use heddle_app::access::Role;
use heddle_app::access::ssr::require;
use heddle_app::error::AppError;
use heddle_app::runs::ssr::{graph_of_run, graph_of_thread};

use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::runs::{ForkRun, RunInfo, StartRun, ThreadInfo};
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `POST /api/v1/graphs/{id}/runs` with `{"input": {...}, "thread_id"?}`:
/// 202, the run queued; watch it on the websocket.
pub async fn start(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<StartRun>,
) -> Result<(StatusCode, Json<RunInfo>)> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Editor).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(state.runs.start(&allowed, request).await?),
    ))
}

/// Checks the caller's role on the graph of run `run_id`. A run the
/// caller cannot see is "not found", like one that does not exist.
async fn on_run(state: &AppState, who: &Who, run_id: &str, needed: Role) -> Result<()> {
    who.user()?;
    let graph = graph_of_run(&state.db, run_id).await?;
    hide_graph(
        require(&state.db, who.0.as_ref(), &graph, needed).await,
        "run",
        run_id,
    )
}

/// The same for a thread.
async fn on_thread(state: &AppState, who: &Who, thread_id: &str, needed: Role) -> Result<()> {
    who.user()?;
    let graph = graph_of_thread(&state.db, thread_id).await?;
    hide_graph(
        require(&state.db, who.0.as_ref(), &graph, needed).await,
        "thread",
        thread_id,
    )
}

fn hide_graph<T>(result: std::result::Result<T, AppError>, what: &str, id: &str) -> Result<()> {
    match result {
        Ok(_) => Ok(()),
        Err(AppError::NotFound { .. }) => Err(AppError::not_found(format!("{what} {id}")).into()),
        Err(error) => Err(error.into()),
    }
}

#[derive(Deserialize)]
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
    Path(id): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<RunInfo>>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    Ok(Json(state.runs.list(&allowed, query.limit).await?))
}

pub async fn threads(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<Vec<ThreadInfo>>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    Ok(Json(state.runs.threads(&allowed).await?))
}

pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<RunInfo>> {
    on_run(&state, &who, &id, Role::Viewer).await?;
    Ok(Json(state.runs.get(&id).await?))
}

#[derive(Deserialize)]
pub struct EventsQuery {
    #[serde(default)]
    from_seq: u64,
}

/// `GET /api/v1/runs/{id}/events?from_seq=N`: every event from `N` on.
pub async fn events(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
) -> Result<Json<Value>> {
    on_run(&state, &who, &id, Role::Viewer).await?;
    let events = state.runs.events(&id, query.from_seq).await?;
    Ok(Json(serde_json::to_value(&events).unwrap_or(Value::Null)))
}

pub async fn cancel(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<RunInfo>> {
    on_run(&state, &who, &id, Role::Editor).await?;
    Ok(Json(state.runs.cancel(&id).await?))
}

/// `POST /api/v1/runs/{id}/fork` with `{"step", "edits"}`: a new run on the
/// same thread from the checkpoint before `step`, with edited channels.
pub async fn fork(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<ForkRun>,
) -> Result<(StatusCode, Json<RunInfo>)> {
    on_run(&state, &who, &id, Role::Editor).await?;
    let user = who.user()?;
    Ok((
        StatusCode::ACCEPTED,
        Json(state.runs.fork(&id, user, request).await?),
    ))
}

/// `GET /api/v1/threads/{id}`: the thread, its newest state and its messages.
pub async fn thread(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    on_thread(&state, &who, &id, Role::Viewer).await?;
    Ok(Json(state.runs.thread(&id).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    value: Value,
}

/// `POST /api/v1/threads/{id}/resume` with `{"value": ...}`.
pub async fn resume(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Resume>,
) -> Result<(StatusCode, Json<RunInfo>)> {
    on_thread(&state, &who, &id, Role::Editor).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(state.runs.resume(&id, body.value).await?),
    ))
}
