//! Schedules over the API: editors make, change and delete a graph's
//! schedules; viewers list them with their next times and last fire.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::access::{require, require_person};
use heddle_store::schedules;
use heddle_wire::access::Role;
use heddle_wire::schedules::{Schedule, ScheduleSettings};

use super::params::{GraphPath, SchedulePath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/graphs/{id}/schedules` (viewers and up).
pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<Schedule>>> {
    let allowed = require_person(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(schedules::list(&state.db, &allowed).await?))
}

/// `POST /api/v1/graphs/{id}/schedules`: 201 with the schedule.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(settings): ApiJson<ScheduleSettings>,
) -> Result<Created<Schedule>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Created(
        schedules::create(&state.db, &allowed, settings).await?,
    ))
}

/// `PUT /api/v1/graphs/{id}/schedules/{schedule}`.
pub async fn update(
    State(state): State<AppState>,
    who: Who,
    Path(SchedulePath { id, schedule }): Path<SchedulePath>,
    ApiJson(settings): ApiJson<ScheduleSettings>,
) -> Result<Json<Schedule>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        schedules::update(&state.db, &allowed, &schedule, settings).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/schedules/{schedule}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(SchedulePath { id, schedule }): Path<SchedulePath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    schedules::delete(&state.db, &allowed, &schedule).await?;
    Ok(NoContent)
}
