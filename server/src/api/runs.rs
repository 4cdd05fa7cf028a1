//! Run and thread endpoints.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, ApiJson};
use crate::runs::{RunInfo, StartRun, ThreadInfo};
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `POST /api/v1/graphs/{id}/runs` with `{"input": {...}, "thread_id"?}`:
/// 202, the run queued; watch it on the websocket.
pub async fn start(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(request): ApiJson<StartRun>,
) -> Result<(StatusCode, Json<RunInfo>)> {
    Ok((
        StatusCode::ACCEPTED,
        Json(state.runs.start(&id, request).await?),
    ))
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
    Path(id): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<RunInfo>>> {
    Ok(Json(state.runs.list(&id, query.limit).await?))
}

pub async fn threads(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<ThreadInfo>>> {
    Ok(Json(state.runs.threads(&id).await?))
}

pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<RunInfo>> {
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
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
) -> Result<Json<Value>> {
    let events = state.runs.events(&id, query.from_seq).await?;
    Ok(Json(serde_json::to_value(&events).unwrap_or(Value::Null)))
}

pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunInfo>> {
    Ok(Json(state.runs.cancel(&id).await?))
}

/// `GET /api/v1/threads/{id}`: the thread, its newest state and its messages.
pub async fn thread(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
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
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Resume>,
) -> Result<(StatusCode, Json<RunInfo>)> {
    Ok((
        StatusCode::ACCEPTED,
        Json(state.runs.resume(&id, body.value).await?),
    ))
}
