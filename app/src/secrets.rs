//! Secrets: model API keys and tool credentials, stored per user on the
//! server and referred to from graphs by name (`"credential": "openai"`).
//! A value is written once and never sent back: the browser only ever sees
//! names and dates, an export only ever holds the name.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// A stored secret, without its value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SecretSummary {
    pub name: String,
    pub created_at: String,
    pub updated_at: String,
}

/// The largest secret value accepted.
pub const MAX_SECRET_BYTES: usize = 16 * 1024;

/// The logged-in user's secrets (names and dates only).
#[server(endpoint = "list_secrets")]
pub async fn list_secrets() -> Result<Vec<SecretSummary>, AppError> {
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(ssr::list(&crate::db::from_context()?, &user).await)
}

/// Saves a secret under `name` (replacing any value it had).
#[server(endpoint = "save_secret")]
pub async fn save_secret(name: String, value: String) -> Result<(), AppError> {
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(
        ssr::put(
            &crate::db::from_context()?,
            &ssr::key()?,
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
    let user = crate::accounts::ssr::require_user()?;
    with_error_status(ssr::delete(&crate::db::from_context()?, &user, &name).await)
}

/// Checks a secret's name: 1 to 64 letters, digits, `-`, `_` or `.`.
pub fn check_name(name: &str) -> Result<(), AppError> {
    let valid = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(AppError::InvalidInput(format!(
            "a secret's name is 1 to 64 letters, digits, `-`, `_` or `.`, not `{name}`"
        )))
    }
}

#[cfg(feature = "ssr")]
pub mod ssr;
