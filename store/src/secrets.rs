//! Secrets in the database, encrypted under the server's key ([`SecretKey`]).
//! Values are read only by [`values`], for a run.

mod cipher;

use std::collections::BTreeMap;

pub use cipher::{KeyError, SecretKey};

use crate::db::Db;
use crate::on_db;

use heddle_wire::AppError;
use heddle_wire::accounts::User;
use heddle_wire::secrets::{MAX_SECRET_BYTES, SecretSummary, check_name};

pub async fn list(db: &Db, user: &User) -> Result<Vec<SecretSummary>, AppError> {
    let rows: Vec<(String, String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT name, created_at, updated_at FROM secrets WHERE user_id = $1 ORDER BY name",
    )
    .bind(user.id.as_str())
    .fetch_all(pool)
    .await)?;
    Ok(rows
        .into_iter()
        .map(|(name, created_at, updated_at)| SecretSummary {
            name,
            created_at,
            updated_at,
        })
        .collect())
}

pub async fn put(
    db: &Db,
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
    on_db!(db, pool => sqlx::query(
        "INSERT INTO secrets (user_id, name, value) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, name) DO UPDATE
         SET value = excluded.value, updated_at = $4",
    )
    .bind(user.id.as_str())
    .bind(name)
    .bind(key.seal(user.id.as_str(), name, value)?)
    .bind(crate::db::now())
    .execute(pool)
    .await
        .map(|done| done.rows_affected()))?;
    tracing::info!(user = %user.id.as_str(), secret = name, "secret saved");
    Ok(())
}

pub async fn delete(db: &Db, user: &User, name: &str) -> Result<(), AppError> {
    let deleted = on_db!(db, pool => sqlx::query("DELETE FROM secrets WHERE user_id = $1 AND name = $2")
        .bind(user.id.as_str())
        .bind(name)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
    if deleted == 0 {
        return Err(AppError::not_found(format!("secret `{name}`")));
    }
    Ok(())
}

/// The names of a user's secrets.
pub async fn names(db: &Db, user_id: &str) -> Result<Vec<String>, AppError> {
    Ok(
        on_db!(db, pool => sqlx::query_scalar("SELECT name FROM secrets WHERE user_id = $1 ORDER BY name")
            .bind(user_id)
            .fetch_all(pool)
            .await)?,
    )
}

/// Every secret of a user, by name: what a run of theirs may use. A value
/// this key cannot open (the key was replaced) is left out and logged: a
/// node naming it then reports the credential as missing.
pub async fn values(
    db: &Db,
    key: &SecretKey,
    user_id: &str,
) -> Result<BTreeMap<String, String>, AppError> {
    let rows: Vec<(String, String)> = on_db!(db, pool => sqlx::query_as("SELECT name, value FROM secrets WHERE user_id = $1")
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
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
pub async fn seal_older(db: &Db, key: &SecretKey) -> Result<usize, AppError> {
    let rows: Vec<(String, String, String)> = on_db!(db, pool => sqlx::query_as("SELECT user_id, name, value FROM secrets")
            .fetch_all(pool)
            .await)?;
    let mut sealed = 0;
    for (user_id, name, value) in rows {
        if SecretKey::is_sealed(&value) {
            continue;
        }
        on_db!(db, pool => sqlx::query("UPDATE secrets SET value = $1 WHERE user_id = $2 AND name = $3 AND value = $4")
            .bind(key.seal(&user_id, &name, &value)?)
            .bind(&user_id)
            .bind(&name)
            .bind(&value)
            .execute(pool)
            .await
        .map(|done| done.rows_affected()))?;
        sealed += 1;
    }
    Ok(sealed)
}
