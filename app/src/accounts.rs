//! Accounts: who is logged in, and the server functions behind the log-in,
//! sign-up, log-out and password forms.
//!
//! The first visitor of a fresh server creates the owner account in one
//! step (and claims any graph made before accounts existed). After that,
//! sign-up is open unless the server runs with `HEDDLE_SIGNUP=closed`, in
//! which case only someone holding a valid share link can make an account.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// A user's id: a UUID.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct UserId(pub(crate) String);

impl UserId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A logged-in user, as pages and checks see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct User {
    pub id: UserId,
    pub username: String,
}

/// What the log-in page needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthStatus {
    /// Nobody has an account yet: the page offers to create the owner's.
    pub needs_setup: bool,
    /// Anyone may sign up (otherwise only with a share link).
    pub signup_open: bool,
    /// Who is logged in, if anyone.
    pub user: Option<User>,
}

/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// The longest password accepted (hashing cost stays bounded).
pub const MAX_PASSWORD_CHARS: usize = 256;

/// Who is logged in, if anyone.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<User>, AppError> {
    Ok(ssr::caller())
}

/// What the log-in and sign-up pages show.
#[server(endpoint = "auth_status")]
pub async fn get_auth_status() -> Result<AuthStatus, AppError> {
    let db = crate::db::from_context()?;
    let auth = ssr::auth()?;
    Ok(AuthStatus {
        needs_setup: with_error_status(ssr::user_count(&db).await)? == 0,
        signup_open: auth.signup_open(),
        user: ssr::caller(),
    })
}

/// Logs in and goes to `next` (a path on this site), or home.
#[server(endpoint = "log_in")]
pub async fn log_in(
    username: String,
    password: String,
    #[server(default)] next: Option<String>,
) -> Result<(), AppError> {
    with_error_status(ssr::log_in_here(&username, &password).await)?;
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
    with_error_status(ssr::sign_up_here(&username, &password, invite.as_deref()).await)?;
    leptos_axum::redirect(&safe_next(next.as_deref()));
    Ok(())
}

/// Logs out: the session ends on the server, also for open websockets.
#[server(endpoint = "log_out")]
pub async fn log_out() -> Result<(), AppError> {
    with_error_status(ssr::log_out_here().await)?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// Changes the logged-in user's password; their other sessions end.
#[server(endpoint = "change_password")]
pub async fn change_password(current: String, new: String) -> Result<(), AppError> {
    with_error_status(ssr::change_password_here(&current, &new).await)
}

/// `next` if it is a path on this site, else `/`: a log-in link can never
/// send anyone elsewhere.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && !path.chars().any(char::is_control) =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

/// Percent-encodes `text` for a URL's query (everything but unreserved
/// characters and `/`).
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(feature = "ssr")]
pub mod ssr;

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/graphs/x")), "/graphs/x");
        for bad in [
            "https://evil.example",
            "//evil.example",
            "/\\evil",
            "graphs",
            "",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
