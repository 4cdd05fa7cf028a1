//! Chat widgets over the API: editors make, change and delete a graph's
//! widgets; viewers list them. (The widget's own public endpoints are in
//! `crate::widget`.)

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::access::{require, require_person};
use heddle_store::widgets;
use heddle_wire::access::Role;
use heddle_wire::widgets::{Widget, WidgetSettings};

use super::params::{GraphPath, WidgetPath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/graphs/{id}/widgets` (viewers and up).
pub async fn list(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<Widget>>> {
    let allowed = require_person(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(widgets::list(&state.db, &allowed).await?))
}

/// `POST /api/v1/graphs/{id}/widgets`: 201 with the widget and its token.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(settings): ApiJson<WidgetSettings>,
) -> Result<Created<Widget>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Created(
        widgets::create(&state.db, &allowed, settings).await?,
    ))
}

/// `PUT /api/v1/graphs/{id}/widgets/{widget}`.
pub async fn update(
    State(state): State<AppState>,
    who: Who,
    Path(WidgetPath { id, widget }): Path<WidgetPath>,
    ApiJson(settings): ApiJson<WidgetSettings>,
) -> Result<Json<Widget>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        widgets::update(&state.db, &allowed, &widget, settings).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/widgets/{widget}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(WidgetPath { id, widget }): Path<WidgetPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    widgets::delete(&state.db, &allowed, &widget).await?;
    Ok(NoContent)
}
