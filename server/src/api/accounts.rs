//! Account endpoints for scripts: sign up, log in, log out, who am I,
//! change password. They set and clear the same session cookie as the
//! app's forms.

use axum::extract::State;
use axum::response::NoContent;
use axum::{Extension, Json};
use heddle_store::accounts::{self as accounts, ClientAddress};
use heddle_wire::accounts::User;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use super::responses::Created;
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;
use heddle_store::caller::Caller;

type Result<T> = std::result::Result<T, ApiError>;

/// A username and password.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    username: String,
    password: String,
    /// A share link's token: lets an account be made when sign-up is closed.
    #[serde(default)]
    invite: Option<String>,
}

/// `POST /api/v1/auth/signup`: 201 and logged in.
pub async fn sign_up(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    ApiJson(body): ApiJson<Credentials>,
) -> Result<Created<User>> {
    let user = accounts::sign_up(
        &state.db,
        &state.auth,
        &session,
        &body.username,
        &body.password,
        body.invite.as_deref(),
    )
    .await?;
    Ok(Created(user))
}

/// `POST /api/v1/auth/login`.
pub async fn log_in(
    State(state): State<AppState>,
    Extension(client): Extension<ClientAddress>,
    Extension(session): Extension<Session>,
    ApiJson(body): ApiJson<Credentials>,
) -> Result<Json<User>> {
    let user = accounts::authenticate(
        &state.db,
        &state.auth,
        client.0,
        &body.username,
        &body.password,
    )
    .await?;
    accounts::start_session(&state.db, &session, &user).await?;
    Ok(Json(user))
}

/// `POST /api/v1/auth/logout`: 204; the session ends everywhere it is used.
pub async fn log_out(
    State(state): State<AppState>,
    who: Who,
    Extension(session): Extension<Session>,
) -> Result<NoContent> {
    // A key never stands in for the browser's session, not even to end it.
    if let Caller::Key(_) = &who.0 {
        who.user()?;
    }
    accounts::end_session(&state.auth, &session).await?;
    Ok(NoContent)
}

/// `GET /api/v1/auth/me`: the logged-in user (401 when nobody is).
pub async fn me(who: Who) -> Result<Json<Me>> {
    Ok(Json(Me {
        user: who.user()?.clone(),
    }))
}

/// Who is logged in.
#[derive(Serialize, JsonSchema)]
pub struct Me {
    pub user: User,
}

/// The current password, and the one to replace it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPassword {
    current: String,
    new: String,
}

/// `POST /api/v1/auth/password`: 204; the user's other sessions end.
pub async fn change_password(
    State(state): State<AppState>,
    Extension(client): Extension<ClientAddress>,
    who: Who,
    Extension(session): Extension<Session>,
    ApiJson(body): ApiJson<NewPassword>,
) -> Result<NoContent> {
    let user = who.user()?;
    accounts::change_password(
        &state.db,
        &state.auth,
        client.0,
        &session,
        user,
        &body.current,
        &body.new,
    )
    .await?;
    Ok(NoContent)
}
