//! The `graph_publications` table: one row per published graph, naming a
//! stored version (a foreign key, so it cannot name one that does not
//! exist, and goes with its graph).

use crate::access::Allowed;
use crate::db::Db;
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;

use heddle_wire::publishing::Publication;

/// The graph's live version, if any.
pub async fn publication(db: &Db, allowed: &Allowed) -> Result<Option<Publication>, AppError> {
    let row: Option<(i64, String, Option<String>)> = on_db!(db, pool => sqlx::query_as(
        "SELECT p.version, p.published_at, u.username
         FROM graph_publications p LEFT JOIN users u ON u.id = p.published_by
         WHERE p.graph_id = $1",
    )
    .bind(allowed.graph().as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(
        row.map(|(version, published_at, published_by)| Publication {
            version,
            published_at,
            published_by,
        }),
    )
}

/// Makes `version` live, replacing whatever was.
pub async fn publish(db: &Db, allowed: &Allowed, version: i64) -> Result<Publication, AppError> {
    allowed.at_least(Role::Editor)?;
    let graph = allowed.graph().as_str();
    let exists: Option<i64> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT version FROM graph_versions WHERE graph_id = $1 AND version = $2",
    )
    .bind(graph)
    .bind(version)
    .fetch_optional(pool)
    .await)?;
    if exists.is_none() {
        return Err(AppError::InvalidInput(format!(
            "`version`: graph {graph} has no version {version}"
        )));
    }
    // The graph's gate, if it has one, may hold the version back.
    let live = publication(db, allowed).await?.map(|live| live.version);
    crate::experiments::gate::check(db, allowed, version, live).await?;
    on_db!(db, pool => sqlx::query(
        "INSERT INTO graph_publications (graph_id, version, published_at, published_by)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (graph_id) DO UPDATE
            SET version = excluded.version, published_at = excluded.published_at,
                published_by = excluded.published_by",
    )
    .bind(graph)
    .bind(version)
    .bind(crate::db::now())
    .bind(allowed.user().id.as_str())
    .execute(pool)
    .await
    .map(|_| ()))?;
    tracing::info!(graph, version, "version published");
    publication(db, allowed).await?.ok_or(AppError::Internal)
}

/// Takes the graph offline (nothing to do when it was not published).
pub async fn unpublish(db: &Db, allowed: &Allowed) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    on_db!(db, pool => sqlx::query("DELETE FROM graph_publications WHERE graph_id = $1")
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    tracing::info!(graph = %allowed.graph(), "graph unpublished");
    Ok(())
}
