//! The server functions for a user's saved secrets.
//!
//! What they send and answer is [`heddle_wire::secrets`] (re-exported here, so
//! the UI names it `crate::secrets::…`); the rows and rules are
//! `heddle_store::secrets`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::secrets as store;
pub use heddle_wire::secrets::*;
use leptos::prelude::*;

/// The logged-in user's secrets (names and dates only).
#[server(endpoint = "list_secrets")]
pub async fn list_secrets() -> Result<Vec<SecretSummary>, AppError> {
    let user = crate::request::require_user()?;
    with_error_status(store::list(&crate::request::db()?, &user).await)
}

/// Saves a secret under `name` (replacing any value it had).
#[server(endpoint = "save_secret")]
pub async fn save_secret(name: String, value: String) -> Result<(), AppError> {
    let user = crate::request::require_user()?;
    with_error_status(
        store::put(
            &crate::request::db()?,
            &crate::request::secret_key()?,
            &user,
            &name,
            &value,
        )
        .await,
    )
}

/// Deletes a secret.
#[server(endpoint = "delete_secret")]
pub async fn delete_secret(name: String) -> Result<(), AppError> {
    let user = crate::request::require_user()?;
    with_error_status(store::delete(&crate::request::db()?, &user, &name).await)
}
