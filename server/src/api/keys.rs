//! The caller's API keys: made (the secret shown in that answer only),
//! listed without secrets, revoked. Only a logged-in user manages keys; a
//! key never makes or sees another.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::NoContent;
use heddle_store::api_keys;
use heddle_wire::api_keys::{ApiKeySummary, CreatedApiKey, NewApiKey};

use super::params::KeyPath;
use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// `GET /api/v1/keys`: the caller's keys, newest first.
pub async fn list(State(state): State<AppState>, who: Who) -> Result<Json<Vec<ApiKeySummary>>> {
    Ok(Json(api_keys::list(&state.db, who.user()?).await?))
}

/// `POST /api/v1/keys`: 201 with the key and its secret, shown this once.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    ApiJson(request): ApiJson<NewApiKey>,
) -> Result<Created<CreatedApiKey>> {
    Ok(Created(
        api_keys::create(&state.db, who.user()?, request).await?,
    ))
}

/// `DELETE /api/v1/keys/{id}`: 204; calls with it are refused from now on.
pub async fn revoke(
    State(state): State<AppState>,
    who: Who,
    Path(KeyPath { id }): Path<KeyPath>,
) -> Result<NoContent> {
    api_keys::revoke(&state.db, who.user()?, &id).await?;
    Ok(NoContent)
}
