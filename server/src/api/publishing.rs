//! Publishing endpoints: which version of a graph calls from outside run.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::access::require;
use heddle_store::publishing;
use heddle_wire::access::Role;
use heddle_wire::publishing::Publication;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::params::GraphPath;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// A graph's publication: `null` when no version is live.
#[derive(Serialize, JsonSchema)]
pub struct Published {
    published: Option<Publication>,
}

/// `GET /api/v1/graphs/{id}/published` (viewers and up).
pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Published>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(Published {
        published: publishing::publication(&state.db, &allowed).await?,
    }))
}

/// The version to make live.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Publish {
    /// A saved version's number (publishing an older one rolls back).
    version: i64,
}

/// `PUT /api/v1/graphs/{id}/published`: makes a version live (editors and
/// owners).
pub async fn put(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(body): ApiJson<Publish>,
) -> Result<Json<Publication>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    Ok(Json(
        publishing::publish(&state.db, &allowed, body.version).await?,
    ))
}

/// `DELETE /api/v1/graphs/{id}/published`: takes the graph offline
/// (editors and owners).
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    publishing::unpublish(&state.db, &allowed).await?;
    Ok(NoContent)
}
