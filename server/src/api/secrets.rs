//! The caller's secrets: names and dates out, values in (never out).

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::secrets;
use heddle_wire::secrets::SecretSummary;
use schemars::JsonSchema;
use serde::Deserialize;

use super::params::SecretPath;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/secrets`.
pub async fn list(State(state): State<AppState>, who: Who) -> Result<Json<Vec<SecretSummary>>> {
    Ok(Json(secrets::list(&state.db, who.user()?).await?))
}

/// A secret's value: stored encrypted, never shown back.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretValue {
    value: String,
}

/// `PUT /api/v1/secrets/{name}` with `{"value": "..."}`: 204.
pub async fn put(
    State(state): State<AppState>,
    who: Who,
    Path(SecretPath { name }): Path<SecretPath>,
    ApiJson(body): ApiJson<SecretValue>,
) -> Result<NoContent> {
    secrets::put(
        &state.db,
        state.runs.secret_key(),
        who.user()?,
        &name,
        &body.value,
    )
    .await?;
    Ok(NoContent)
}

/// `DELETE /api/v1/secrets/{name}`: 204.
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(SecretPath { name }): Path<SecretPath>,
) -> Result<NoContent> {
    secrets::delete(&state.db, who.user()?, &name).await?;
    Ok(NoContent)
}
