//! The database side of graphs: rows and queries, shared by the app's
//! server functions and the server's HTTP API.
//!
//! A save names the version it was based on; a save based on anything but
//! the newest version is refused as a conflict, so nobody's work is
//! overwritten. Every save also keeps the new version in `graph_versions`.
//!
//! Transactions that read then write begin IMMEDIATE: a deferred one would
//! fail at once, not wait, when a run commits a checkpoint in between.

use heddle_engine::GraphDocument;
use sqlx::SqlitePool;

use super::{GraphDetail, GraphId, GraphSummary, VersionSummary};
use crate::access::Role;
use crate::access::ssr::Allowed;
use crate::accounts::User;
use crate::error::AppError;
use crate::limits::check_document;

/// The pool the server provides to every request's context.
pub fn pool() -> Result<SqlitePool, AppError> {
    leptos::prelude::use_context::<SqlitePool>().ok_or_else(|| {
        tracing::error!("no database pool in the request context");
        AppError::Internal
    })
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: String,
    name: String,
    version: i64,
    node_count: Option<i64>,
    updated_at: String,
    owner: String,
    rank: i64,
}

impl From<SummaryRow> for GraphSummary {
    fn from(row: SummaryRow) -> Self {
        GraphSummary {
            id: GraphId(row.id),
            name: row.name,
            version: row.version,
            node_count: row.node_count.unwrap_or(0),
            updated_at: row.updated_at,
            owner: row.owner,
            role: match row.rank {
                3 => Role::Owner,
                2 => Role::Editor,
                _ => Role::Viewer,
            },
        }
    }
}

#[derive(sqlx::FromRow)]
struct DetailRow {
    id: String,
    name: String,
    version: i64,
    created_at: String,
    updated_at: String,
    graph_json: String,
}

impl From<DetailRow> for GraphDetail {
    fn from(row: DetailRow) -> Self {
        GraphDetail {
            id: GraphId(row.id),
            name: row.name,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
            document: row.graph_json,
        }
    }
}

/// Where a save left the graph.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Saved {
    pub id: GraphId,
    pub version: i64,
    pub updated_at: String,
}

/// A graph id from a URL, or "not found" (a malformed id names nothing).
pub fn graph_id(text: &str) -> Result<GraphId, AppError> {
    GraphId::parse(text).ok_or_else(|| AppError::not_found(format!("graph {text}")))
}

fn not_found(id: &GraphId) -> AppError {
    AppError::not_found(format!("graph {id}"))
}

/// The graphs `user` owns or was given a role on (directly, or through a
/// share link that still works), most recently changed first.
pub async fn list(pool: &SqlitePool, user: &User) -> Result<Vec<GraphSummary>, AppError> {
    let rows: Vec<SummaryRow> = sqlx::query_as(
        "WITH grants (graph_id, rank) AS (
             SELECT id, 3 FROM graphs WHERE owner_id = ?1
             UNION ALL
             SELECT graph_id, CASE role WHEN 'editor' THEN 2 ELSE 1 END
               FROM graph_members WHERE user_id = ?1
             UNION ALL
             SELECT l.graph_id, CASE l.role WHEN 'editor' THEN 2 ELSE 1 END
               FROM link_grants lg JOIN share_links l ON l.id = lg.link_id
              WHERE lg.user_id = ?1 AND l.revoked_at IS NULL
                AND (l.expires_at IS NULL
                     OR l.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
         ),
         best AS (SELECT graph_id, MAX(rank) AS rank FROM grants GROUP BY graph_id)
         SELECT g.id, g.name, g.version, g.updated_at,
                json_array_length(g.graph_json, '$.nodes') AS node_count,
                COALESCE(u.username, '') AS owner, b.rank
         FROM best b JOIN graphs g ON g.id = b.graph_id
         LEFT JOIN users u ON u.id = g.owner_id
         ORDER BY g.updated_at DESC, g.rowid DESC",
    )
    .bind(user.id.as_str())
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(GraphSummary::from).collect())
}

/// Copies a graph `user` may see into a new graph they own, named
/// "Copy of ...".
pub async fn copy(pool: &SqlitePool, user: Option<&User>, id: &str) -> Result<Saved, AppError> {
    let allowed = crate::access::ssr::require(pool, user, id, Role::Viewer).await?;
    let detail = get(pool, &allowed).await?;
    let mut document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        AppError::Internal
    })?;
    document.name = format!("Copy of {}", display_name(&document));
    create(pool, allowed.user(), Some(document)).await
}

/// Creates a graph from `document`, or an empty one named "Untitled
/// graph N" when there is none.
pub async fn create(
    pool: &SqlitePool,
    owner: &User,
    document: Option<GraphDocument>,
) -> Result<Saved, AppError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let document = match document {
        Some(document) => document,
        None => {
            let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM graphs WHERE owner_id = ?")
                .bind(owner.id.as_str())
                .fetch_one(&mut *tx)
                .await?;
            GraphDocument::new(&format!("Untitled graph {}", count + 1))
        }
    };
    check_document(&document)?;
    let json = document.to_json();
    let name = display_name(&document);
    let id = uuid::Uuid::new_v4().to_string();
    let updated_at: String = sqlx::query_scalar(
        "INSERT INTO graphs (id, name, graph_json, owner_id) VALUES (?, ?, ?, ?) RETURNING updated_at",
    )
    .bind(&id)
    .bind(&name)
    .bind(&json)
    .bind(owner.id.as_str())
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("INSERT INTO graph_versions (graph_id, version, name, graph_json, created_at, author_id) VALUES (?, 1, ?, ?, ?, ?)")
        .bind(&id)
        .bind(&name)
        .bind(&json)
        .bind(&updated_at)
        .bind(owner.id.as_str())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    tracing::info!(graph = %id, %name, "graph created");
    Ok(Saved {
        id: GraphId(id),
        version: 1,
        updated_at,
    })
}

/// The name a document is listed under (never empty).
fn display_name(document: &GraphDocument) -> String {
    let name = document.name.trim();
    if name.is_empty() {
        "Untitled graph".to_string()
    } else {
        name.chars().take(200).collect()
    }
}

/// A graph's newest version, for a caller [`require`] allowed to see it.
///
/// [`require`]: crate::access::ssr::require
pub async fn get(pool: &SqlitePool, allowed: &Allowed) -> Result<GraphDetail, AppError> {
    let id = allowed.graph();
    let row: Option<DetailRow> = sqlx::query_as(
        "SELECT id, name, version, created_at, updated_at, graph_json
         FROM graphs WHERE id = ?",
    )
    .bind(id.as_str())
    .fetch_optional(pool)
    .await?;
    row.map(GraphDetail::from).ok_or_else(|| not_found(id))
}

/// Saves `document` as the next version, if `base_version` is the newest.
pub async fn save(
    pool: &SqlitePool,
    allowed: &Allowed,
    base_version: i64,
    document: &GraphDocument,
) -> Result<Saved, AppError> {
    allowed.at_least(Role::Editor)?;
    let (id, author) = (allowed.graph().clone(), allowed.user());
    check_document(document)?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let current: Option<i64> = sqlx::query_scalar("SELECT version FROM graphs WHERE id = ?")
        .bind(id.as_str())
        .fetch_optional(&mut *tx)
        .await?;
    let current = current.ok_or_else(|| not_found(&id))?;
    if current != base_version {
        return Err(AppError::Conflict {
            base_version,
            current_version: current,
        });
    }
    let version = current + 1;
    let json = document.to_json();
    let name = display_name(document);
    let updated_at: String = sqlx::query_scalar(
        "UPDATE graphs SET graph_json = ?, name = ?, version = ?,
                updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         WHERE id = ? AND version = ?
         RETURNING updated_at",
    )
    .bind(&json)
    .bind(&name)
    .bind(version)
    .bind(id.as_str())
    .bind(current)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query("INSERT INTO graph_versions (graph_id, version, name, graph_json, created_at, author_id) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(id.as_str())
        .bind(version)
        .bind(&name)
        .bind(&json)
        .bind(&updated_at)
        .bind(author.id.as_str())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Saved {
        id,
        version,
        updated_at,
    })
}

pub async fn versions(
    pool: &SqlitePool,
    allowed: &Allowed,
) -> Result<Vec<VersionSummary>, AppError> {
    /// version, name, node count, time, author
    type Row = (i64, String, Option<i64>, String, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT v.version, v.name, json_array_length(v.graph_json, '$.nodes'), v.created_at,
                u.username
         FROM graph_versions v LEFT JOIN users u ON u.id = v.author_id
         WHERE v.graph_id = ? ORDER BY v.version DESC",
    )
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(version, name, nodes, created_at, author)| VersionSummary {
                version,
                name,
                node_count: nodes.unwrap_or(0),
                created_at,
                author,
            },
        )
        .collect())
}

/// One stored version's document.
pub async fn version(
    pool: &SqlitePool,
    allowed: &Allowed,
    version: i64,
) -> Result<String, AppError> {
    let id = allowed.graph();
    let json: Option<String> = sqlx::query_scalar(
        "SELECT graph_json FROM graph_versions WHERE graph_id = ? AND version = ?",
    )
    .bind(id.as_str())
    .bind(version)
    .fetch_optional(pool)
    .await?;
    json.ok_or_else(|| AppError::not_found(format!("version {version} of graph {id}")))
}

/// Saves an earlier version as the newest one (history is kept whole).
pub async fn restore(
    pool: &SqlitePool,
    allowed: &Allowed,
    version_number: i64,
) -> Result<Saved, AppError> {
    let json = version(pool, allowed, version_number).await?;
    let document = GraphDocument::from_json(&json).map_err(|error| {
        tracing::error!(graph = %allowed.graph(), version = version_number, %error, "a stored version does not read back");
        AppError::Internal
    })?;
    let current = get(pool, allowed).await?.version;
    save(pool, allowed, current, &document).await
}

/// Deletes a graph with its versions, threads, runs, checkpoints and
/// events, all in one transaction.
pub async fn delete(pool: &SqlitePool, allowed: &Allowed) -> Result<(), AppError> {
    allowed.at_least(Role::Owner)?;
    let id = allowed.graph();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("DELETE FROM heddle_runs WHERE run_id IN (SELECT id FROM runs WHERE graph_id = ?)")
        .bind(id.as_str())
        .execute(&mut *tx)
        .await?;
    let deleted = sqlx::query("DELETE FROM graphs WHERE id = ?")
        .bind(id.as_str())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if deleted == 0 {
        return Err(not_found(id));
    }
    tx.commit().await?;
    tracing::info!(graph = %id, "graph deleted");
    Ok(())
}

/// The newest run of a graph that is queued or running.
pub async fn active_run(pool: &SqlitePool, graph: &GraphId) -> Result<Option<String>, AppError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM runs WHERE graph_id = ? AND status IN ('queued', 'running')
         ORDER BY created_at DESC, rowid DESC LIMIT 1",
    )
    .bind(graph.as_str())
    .fetch_optional(pool)
    .await?)
}

/// Renames a graph: saves its newest version again under `name`.
pub async fn rename(pool: &SqlitePool, allowed: &Allowed, name: &str) -> Result<(), AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(AppError::InvalidInput(
            "a graph's name is 1 to 200 characters".into(),
        ));
    }
    let detail = get(pool, allowed).await?;
    let mut document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        AppError::Internal
    })?;
    document.name = name.to_string();
    save(pool, allowed, detail.version, &document)
        .await
        .map(|_| ())
}
