//! Account endpoints for scripts: sign up, log in, log out, who am I,
//! change password. They set and clear the same session cookie as the
//! app's forms.

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use heddle_app::accounts::User;
use heddle_app::accounts::ssr::{self as accounts, ClientAddress};
use serde::Deserialize;
use serde_json::{Value, json};
use tower_sessions::Session;

use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

#[derive(Deserialize)]
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
    session: Session,
    ApiJson(body): ApiJson<Credentials>,
) -> Result<(StatusCode, Json<User>)> {
    let user = accounts::sign_up(
        &state.db,
        &state.auth,
        &session,
        &body.username,
        &body.password,
        body.invite.as_deref(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(user)))
}

/// `POST /api/v1/auth/login`.
pub async fn log_in(
    State(state): State<AppState>,
    Extension(client): Extension<ClientAddress>,
    session: Session,
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
pub async fn log_out(State(state): State<AppState>, session: Session) -> Result<StatusCode> {
    accounts::end_session(&state.auth, &session).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/auth/me`: the logged-in user (401 when nobody is).
pub async fn me(who: Who) -> Result<Json<Value>> {
    Ok(Json(json!({ "user": who.user()? })))
}

#[derive(Deserialize)]
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
    session: Session,
    ApiJson(body): ApiJson<NewPassword>,
) -> Result<StatusCode> {
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
    Ok(StatusCode::NO_CONTENT)
}
