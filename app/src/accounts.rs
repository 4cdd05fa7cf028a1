//! The server functions for log-in, sign-up, log-out and password changes.
//!
//! What they send and answer is [`heddle_wire::accounts`] (re-exported here, so
//! the UI names it `crate::accounts::…`); the rows and rules are
//! `heddle_store::accounts`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::accounts as store;
pub use heddle_wire::accounts::*;
use leptos::prelude::*;

/// Who is logged in, if anyone.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<User>, AppError> {
    Ok(crate::request::caller())
}

/// What the log-in and sign-up pages show.
#[server(endpoint = "auth_status")]
pub async fn get_auth_status() -> Result<AuthStatus, AppError> {
    let db = crate::request::db()?;
    let auth = crate::request::auth()?;
    Ok(AuthStatus {
        needs_setup: with_error_status(store::user_count(&db).await)? == 0,
        signup_open: auth.signup_open(),
        user: crate::request::caller(),
    })
}

/// Logs in and goes to `next` (a path on this site), or home.
#[server(endpoint = "log_in")]
pub async fn log_in(
    username: String,
    password: String,
    #[server(default)] next: Option<String>,
) -> Result<(), AppError> {
    with_error_status(here::log_in_here(&username, &password).await)?;
    leptos_axum::redirect(&safe_next(next.as_deref()));
    Ok(())
}

/// Creates an account (the owner's on a fresh server), logs it in and goes
/// to `next`. `invite` is a share link's token: with sign-up closed, only
/// a valid one lets a new account be made.
#[server(endpoint = "sign_up")]
pub async fn sign_up(
    username: String,
    password: String,
    #[server(default)] next: Option<String>,
    #[server(default)] invite: Option<String>,
) -> Result<(), AppError> {
    with_error_status(here::sign_up_here(&username, &password, invite.as_deref()).await)?;
    leptos_axum::redirect(&safe_next(next.as_deref()));
    Ok(())
}

/// Logs out: the session ends on the server, also for open websockets.
#[server(endpoint = "log_out")]
pub async fn log_out() -> Result<(), AppError> {
    with_error_status(here::log_out_here().await)?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// Changes the logged-in user's password; their other sessions end.
#[server(endpoint = "change_password")]
pub async fn change_password(current: String, new: String) -> Result<(), AppError> {
    with_error_status(here::change_password_here(&current, &new).await)
}

/// The bodies of the server functions for logging in, signing up, logging out and changing a password: the store's
/// calls with the database, the caller and the settings read from the request.
#[cfg(feature = "ssr")]
mod here {
    use heddle_store::accounts::*;
    use heddle_wire::AppError;
    use heddle_wire::accounts::*;

    /// The server functions' versions: database, settings and session from the
    /// request context.
    pub(super) async fn log_in_here(username: &str, password: &str) -> Result<User, AppError> {
        let db = crate::request::db()?;
        let user = authenticate(
            &db,
            &crate::request::auth()?,
            crate::request::client_address(),
            username,
            password,
        )
        .await?;
        start_session(&db, &crate::request::session()?, &user).await?;
        Ok(user)
    }

    pub(super) async fn sign_up_here(
        username: &str,
        password: &str,
        invite: Option<&str>,
    ) -> Result<User, AppError> {
        let db = crate::request::db()?;
        sign_up(
            &db,
            &crate::request::auth()?,
            &crate::request::session()?,
            username,
            password,
            invite,
        )
        .await
    }

    pub(super) async fn log_out_here() -> Result<(), AppError> {
        end_session(&crate::request::auth()?, &crate::request::session()?).await
    }

    pub(super) async fn change_password_here(current: &str, new: &str) -> Result<(), AppError> {
        let user = crate::request::require_user()?;
        let db = crate::request::db()?;
        change_password(
            &db,
            &crate::request::auth()?,
            crate::request::client_address(),
            &crate::request::session()?,
            &user,
            current,
            new,
        )
        .await
    }
}
