//! Secrets in SQLite, encrypted under the server's key ([`SecretKey`]).
//! Values are read only by [`values`], for a run.

mod cipher;

use std::collections::BTreeMap;

pub use cipher::{KeyError, SecretKey};

use sqlx::SqlitePool;

use super::{MAX_SECRET_BYTES, SecretSummary, check_name};
use crate::accounts::User;
use crate::error::AppError;

pub async fn list(pool: &SqlitePool, user: &User) -> Result<Vec<SecretSummary>, AppError> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT name, created_at, updated_at FROM secrets WHERE user_id = ? ORDER BY name",
    )
    .bind(user.id.as_str())
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(name, created_at, updated_at)| SecretSummary {
            name,
            created_at,
            updated_at,
        })
        .collect())
}

/// The server's secret key, from the request context.
pub fn key() -> Result<SecretKey, AppError> {
    leptos::prelude::use_context::<SecretKey>().ok_or_else(|| {
        tracing::error!("no secret key in the request context");
        AppError::Internal
    })
}

pub async fn put(
    pool: &SqlitePool,
    key: &SecretKey,
    user: &User,
    name: &str,
    value: &str,
) -> Result<(), AppError> {
    check_name(name)?;
    if value.is_empty() {
        return Err(AppError::InvalidInput(
            "a secret's value cannot be empty".into(),
        ));
    }
    if value.len() > MAX_SECRET_BYTES {
        return Err(AppError::TooLarge(format!(
            "a secret's value may be at most {MAX_SECRET_BYTES} bytes"
        )));
    }
    sqlx::query(
        "INSERT INTO secrets (user_id, name, value) VALUES (?, ?, ?)
         ON CONFLICT (user_id, name) DO UPDATE
         SET value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
    )
    .bind(user.id.as_str())
    .bind(name)
    .bind(key.seal(user.id.as_str(), name, value)?)
    .execute(pool)
    .await?;
    tracing::info!(user = %user.id.as_str(), secret = name, "secret saved");
    Ok(())
}

pub async fn delete(pool: &SqlitePool, user: &User, name: &str) -> Result<(), AppError> {
    let deleted = sqlx::query("DELETE FROM secrets WHERE user_id = ? AND name = ?")
        .bind(user.id.as_str())
        .bind(name)
        .execute(pool)
        .await?
        .rows_affected();
    if deleted == 0 {
        return Err(AppError::not_found(format!("secret `{name}`")));
    }
    Ok(())
}

/// The names of a user's secrets.
pub async fn names(pool: &SqlitePool, user_id: &str) -> Result<Vec<String>, AppError> {
    Ok(
        sqlx::query_scalar("SELECT name FROM secrets WHERE user_id = ? ORDER BY name")
            .bind(user_id)
            .fetch_all(pool)
            .await?,
    )
}

/// Every secret of a user, by name: what a run of theirs may use. A value
/// this key cannot open (the key was replaced) is left out and logged: a
/// node naming it then reports the credential as missing.
pub async fn values(
    pool: &SqlitePool,
    key: &SecretKey,
    user_id: &str,
) -> Result<BTreeMap<String, String>, AppError> {
    let rows: Vec<(String, String)> =
        sqlx::query_as("SELECT name, value FROM secrets WHERE user_id = ?")
            .bind(user_id)
            .fetch_all(pool)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(name, stored)| match key.open(user_id, &name, &stored) {
            Some(value) => Some((name, value)),
            None => {
                tracing::error!(user = user_id, secret = %name, "a secret does not open with this server's key");
                None
            }
        })
        .collect())
}

/// Seals the secrets saved before they were encrypted (at start).
pub async fn seal_older(pool: &SqlitePool, key: &SecretKey) -> Result<usize, AppError> {
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT user_id, name, value FROM secrets")
            .fetch_all(pool)
            .await?;
    let mut sealed = 0;
    for (user_id, name, value) in rows {
        if SecretKey::is_sealed(&value) {
            continue;
        }
        sqlx::query("UPDATE secrets SET value = ? WHERE user_id = ? AND name = ? AND value = ?")
            .bind(key.seal(&user_id, &name, &value)?)
            .bind(&user_id)
            .bind(&name)
            .bind(&value)
            .execute(pool)
            .await?;
        sealed += 1;
    }
    Ok(sealed)
}
