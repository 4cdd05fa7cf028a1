//! The server functions for listing, making and revoking API keys.
//!
//! What they send and answer is [`heddle_wire::api_keys`] (re-exported here, so
//! the UI names it `crate::api_keys::…`); the rows and rules are
//! `heddle_store::api_keys`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::api_keys as store;
pub use heddle_wire::api_keys::*;
use leptos::prelude::*;

/// The logged-in user's keys, newest first.
#[server(endpoint = "list_api_keys")]
pub async fn list_api_keys() -> Result<Vec<ApiKeySummary>, AppError> {
    let user = crate::request::require_user()?;
    with_error_status(store::list(&crate::request::db()?, &user).await)
}

/// Makes a key; the answer holds its secret, shown this once.
#[server(endpoint = "create_api_key")]
pub async fn create_api_key(request: NewApiKey) -> Result<CreatedApiKey, AppError> {
    let user = crate::request::require_user()?;
    with_error_status(store::create(&crate::request::db()?, &user, request).await)
}

/// Revokes a key: calls with it are refused from now on.
#[server(endpoint = "revoke_api_key")]
pub async fn revoke_api_key(id: String) -> Result<(), AppError> {
    let user = crate::request::require_user()?;
    with_error_status(store::revoke(&crate::request::db()?, &user, &id).await)
}
