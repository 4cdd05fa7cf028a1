//! Sharing endpoints: the owner's links and members, and opening a link.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::sharing;
use heddle_wire::sharing::{Accepted, Grant, MemberAccess, ShareLink, Sharing};
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::{GraphPath, LinkPath, MemberPath, TokenPath};
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/graphs/{id}/sharing`: links and members (owner only).
pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Sharing>> {
    Ok(Json(
        sharing::sharing(&state.db, Some(who.user()?), &id).await?,
    ))
}

/// A share link to make: the role it grants, when it expires, and
/// optionally a run (and step) it opens at.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLink {
    role: Grant,
    #[serde(default)]
    expires_in_hours: Option<u32>,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    step: Option<i64>,
}

/// `POST /api/v1/graphs/{id}/links`: 201 with the link (owner only).
pub async fn create_link(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(body): ApiJson<NewLink>,
) -> Result<Created<ShareLink>> {
    let link = sharing::create_link(
        &state.db,
        Some(who.user()?),
        &id,
        body.role,
        body.expires_in_hours,
        body.run_id,
        body.step,
    )
    .await?;
    Ok(Created(link))
}

/// `DELETE /api/v1/graphs/{id}/links/{link}`: revokes it (owner only).
pub async fn revoke_link(
    State(state): State<AppState>,
    who: Who,
    Path(LinkPath { id, link }): Path<LinkPath>,
) -> Result<NoContent> {
    sharing::revoke_link(
        &state.db,
        state.auth.events(),
        Some(who.user()?),
        &id,
        &link,
    )
    .await?;
    Ok(NoContent)
}

/// The access to give a teammate.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberRole {
    /// `viewer`, `editor`, or `none` to remove.
    role: MemberAccess,
}

/// `PUT /api/v1/graphs/{id}/members/{username}` (owner only).
pub async fn set_member(
    State(state): State<AppState>,
    who: Who,
    Path(MemberPath { id, username }): Path<MemberPath>,
    ApiJson(body): ApiJson<MemberRole>,
) -> Result<NoContent> {
    sharing::set_member(
        &state.db,
        state.auth.events(),
        Some(who.user()?),
        &id,
        &username,
        body.role,
    )
    .await?;
    Ok(NoContent)
}

/// `POST /api/v1/share/{token}`: opens a link as the caller.
pub async fn accept(
    State(state): State<AppState>,
    who: Who,
    Path(TokenPath { token }): Path<TokenPath>,
) -> Result<Json<Accepted>> {
    Ok(Json(
        sharing::accept(&state.db, Some(who.user()?), &token).await?,
    ))
}
