//! The `api_keys` and `api_key_graphs` tables, and the one way a bearer
//! secret becomes a [`KeyGrant`]: its SHA-256 looked up, refused when
//! unknown, revoked or expired.

use sha2::{Digest, Sha256};

use crate::caller::KeyGrant;
use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::api_keys::{
    ApiKeySummary, CreatedApiKey, KeyGraph, KeyScope, MAX_KEY_GRAPHS, NewApiKey,
};
use heddle_wire::graphs::GraphId;

/// What every secret starts with, so that one pasted in the wrong place
/// is recognised (and secret scanners can find leaked ones).
pub const SECRET_PREFIX: &str = "heddle_";

/// How many characters of a secret are kept to tell keys apart.
const SHOWN_CHARS: usize = SECRET_PREFIX.len() + 6;

/// How often `last_used_at` is written for a key in steady use: not on
/// every call.
const LAST_USED_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The SHA-256 of a secret, as stored.
fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A new secret: the prefix and 256 random bits as hex.
fn new_secret() -> Result<String, AppError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| {
        tracing::error!(%error, "no randomness for an API key");
        AppError::Internal
    })?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{SECRET_PREFIX}{hex}"))
}

/// Makes a key for `user` on graphs they can run.
pub async fn create(db: &Db, user: &User, request: NewApiKey) -> Result<CreatedApiKey, AppError> {
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(AppError::InvalidInput(
            "`name`: a key's name is 1 to 64 characters".into(),
        ));
    }
    if request.graphs.is_empty() || request.graphs.len() > MAX_KEY_GRAPHS {
        return Err(AppError::InvalidInput(format!(
            "`graphs`: a key works on 1 to {MAX_KEY_GRAPHS} graphs"
        )));
    }
    let expires_at = match request.expires_in_days {
        None => None,
        Some(days @ 1..=3650) => Some(crate::db::hours_from_now(i64::from(days) * 24)),
        Some(days) => {
            return Err(AppError::InvalidInput(format!(
                "`expires_in_days`: 1 to 3650 days, not {days}"
            )));
        }
    };
    let mut graphs: Vec<GraphId> = Vec::with_capacity(request.graphs.len());
    let mut first = None;
    for (index, graph) in request.graphs.iter().enumerate() {
        // The key can never do more than its maker: each graph must be one
        // they can run now.
        let allowed = crate::access::require(db, user, graph.as_str(), Role::Editor)
            .await
            .map_err(|error| match error {
                AppError::NotFound { what } => {
                    AppError::InvalidInput(format!("`graphs[{index}]`: {what} was not found"))
                }
                AppError::Forbidden(why) => {
                    AppError::InvalidInput(format!("`graphs[{index}]`: {why}"))
                }
                other => other,
            })?;
        first.get_or_insert(allowed);
        if let Some(canonical) = GraphId::parse(graph.as_str())
            && !graphs.contains(&canonical)
        {
            graphs.push(canonical);
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let secret = new_secret()?;
    let prefix: String = secret.chars().take(SHOWN_CHARS).collect();
    on_db!(db, pool => {
        let mut tx = pool.begin().await?;
        sqlx::query(
            "INSERT INTO api_keys (id, user_id, name, prefix, secret_sha256, scope, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&id)
        .bind(user.id.as_str())
        .bind(name)
        .bind(&prefix)
        .bind(digest(&secret))
        .bind(request.scope.as_str())
        .bind(crate::db::now())
        .bind(&expires_at)
        .execute(&mut *tx)
        .await?;
        for graph in &graphs {
            sqlx::query("INSERT INTO api_key_graphs (key_id, graph_id) VALUES ($1, $2)")
                .bind(&id)
                .bind(graph.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await
    })?;
    tracing::info!(key = %id, user = %user.username, "API key made");
    let key = list(db, user)
        .await?
        .into_iter()
        .find(|key| key.id == id)
        .ok_or(AppError::Internal)?;
    let (example_input, published) = match &first {
        Some(allowed) => example_input(db, allowed).await?,
        None => (serde_json::Map::new(), false),
    };
    Ok(CreatedApiKey {
        key,
        secret,
        example_input,
        published,
    })
}

/// The sample input for the key's first graph, from the version a key runs
/// (the published one, else the newest), and whether one is published.
async fn example_input(
    db: &Db,
    allowed: &crate::access::Allowed,
) -> Result<(serde_json::Map<String, serde_json::Value>, bool), AppError> {
    let published = crate::publishing::publication(db, allowed).await?;
    let json = match &published {
        Some(publication) => crate::graphs::version(db, allowed, publication.version).await?,
        None => crate::graphs::get(db, allowed).await?.document,
    };
    // A stored document that no longer reads (a newer format) has no sample;
    // the key is made all the same.
    let input = serde_json::from_str(&json)
        .ok()
        .and_then(|value| crate::graphs::read_document(value).ok())
        .map(|document| heddle_engine::kinds::sample_input(&document))
        .unwrap_or_default();
    Ok((input, published.is_some()))
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    id: String,
    name: String,
    prefix: String,
    scope: String,
    created_at: String,
    expires_at: Option<String>,
    last_used_at: Option<String>,
    revoked_at: Option<String>,
}

/// `user`'s keys, newest first, with the graphs each names (those the
/// user can still see).
pub async fn list(db: &Db, user: &User) -> Result<Vec<ApiKeySummary>, AppError> {
    let rows: Vec<KeyRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, name, prefix, scope, created_at, expires_at, last_used_at, revoked_at
         FROM api_keys WHERE user_id = $1 ORDER BY created_at DESC, id",
    )
    .bind(user.id.as_str())
    .fetch_all(pool)
    .await)?;
    let named: Vec<(String, String, String)> = on_db!(db, pool => sqlx::query_as(
        "SELECT kg.key_id, g.id, g.name FROM api_key_graphs kg
         JOIN api_keys k ON k.id = kg.key_id JOIN graphs g ON g.id = kg.graph_id
         WHERE k.user_id = $1 ORDER BY g.name, g.id",
    )
    .bind(user.id.as_str())
    .fetch_all(pool)
    .await)?;
    let now = crate::db::now();
    rows.into_iter()
        .map(|row| {
            let scope = KeyScope::parse(&row.scope).ok_or_else(|| {
                tracing::error!(key = %row.id, "a stored key's scope does not read back");
                AppError::Internal
            })?;
            let graphs = named
                .iter()
                .filter(|(key, _, _)| *key == row.id)
                .filter_map(|(_, id, name)| {
                    Some(KeyGraph {
                        id: GraphId::parse(id)?,
                        name: name.clone(),
                    })
                })
                .collect();
            let active = row.revoked_at.is_none()
                && row
                    .expires_at
                    .as_deref()
                    .is_none_or(|until| until > now.as_str());
            Ok(ApiKeySummary {
                id: row.id,
                name: row.name,
                prefix: row.prefix,
                scope,
                graphs,
                created_at: row.created_at,
                expires_at: row.expires_at,
                last_used_at: row.last_used_at,
                revoked_at: row.revoked_at,
                active,
            })
        })
        .collect()
}

/// Revokes one of `user`'s keys (revoking it again changes nothing).
pub async fn revoke(db: &Db, user: &User, id: &str) -> Result<(), AppError> {
    let found: Option<String> = on_db!(db, pool => sqlx::query_scalar(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1)
         WHERE id = $2 AND user_id = $3 RETURNING id",
    )
    .bind(crate::db::now())
    .bind(id)
    .bind(user.id.as_str())
    .fetch_optional(pool)
    .await)?;
    match found {
        Some(_) => {
            tracing::info!(key = %id, user = %user.username, "API key revoked");
            Ok(())
        }
        None => Err(AppError::not_found(format!("API key {id}"))),
    }
}

#[derive(sqlx::FromRow)]
struct GrantRow {
    id: String,
    name: String,
    scope: String,
    user_id: String,
    expires_at: Option<String>,
    revoked_at: Option<String>,
    last_used_at: Option<String>,
}

/// The key a bearer secret names, if it works now; 401 saying why not.
pub async fn grant(db: &Db, secret: &str) -> Result<KeyGrant, AppError> {
    let refused = |why: &str| AppError::Unauthorized(format!("API key refused: {why}"));
    if !secret.starts_with(SECRET_PREFIX) {
        return Err(refused(
            "not a Heddle API key (they start with `heddle_`); make one under Settings, API keys",
        ));
    }
    let row: Option<GrantRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, name, scope, user_id, expires_at, revoked_at, last_used_at
         FROM api_keys WHERE secret_sha256 = $1",
    )
    .bind(digest(secret))
    .fetch_optional(pool)
    .await)?;
    let Some(GrantRow {
        id,
        name,
        scope,
        user_id,
        expires_at,
        revoked_at,
        last_used_at,
    }) = row
    else {
        return Err(refused("no such key"));
    };
    let now = crate::db::now();
    if let Some(at) = revoked_at {
        return Err(refused(&format!("key `{name}` was revoked at {at}")));
    }
    if let Some(until) = expires_at.filter(|until| *until <= now) {
        return Err(refused(&format!("key `{name}` expired at {until}")));
    }
    let scope = KeyScope::parse(&scope).ok_or(AppError::Internal)?;
    let owner = crate::accounts::user_by_id(db, &user_id)
        .await?
        .ok_or_else(|| refused("the key's owner no longer exists"))?;
    let graphs: Vec<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT graph_id FROM api_key_graphs WHERE key_id = $1",
    )
    .bind(&id)
    .fetch_all(pool)
    .await)?;
    // A key in steady use is noted once a minute, not written on every
    // call (a write on SQLite takes the database's one write lock).
    if last_used_at.is_none_or(|at| at < crate::db::ago(LAST_USED_EVERY)) {
        touch(db, &id).await;
    }
    Ok(KeyGrant::new(
        id,
        name,
        owner,
        scope,
        graphs.iter().filter_map(|id| GraphId::parse(id)).collect(),
    ))
}

/// Notes that a key was used, at most once per [`LAST_USED_EVERY`]; a
/// failure to note it does not refuse the call.
async fn touch(db: &Db, id: &str) {
    let now = crate::db::now();
    let before = crate::db::ago(LAST_USED_EVERY);
    let written = on_db!(db, pool => sqlx::query(
        "UPDATE api_keys SET last_used_at = $1
         WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
    )
    .bind(&now)
    .bind(id)
    .bind(&before)
    .execute(pool)
    .await
    .map(|_| ()));
    if let Err(error) = written {
        tracing::warn!(key = %id, %error, "cannot note an API key's use");
    }
}

#[cfg(test)]
mod tests {
    use super::{SECRET_PREFIX, digest, new_secret};

    #[test]
    fn secrets_are_long_random_and_stored_as_their_digest() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert!(a.starts_with(SECRET_PREFIX) && a.len() == SECRET_PREFIX.len() + 64);
        assert_eq!(digest(&a).len(), 64);
        assert_ne!(digest(&a), digest(&b));
        assert!(!digest(&a).contains(&a[SECRET_PREFIX.len()..]));
    }
}
