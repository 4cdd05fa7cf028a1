//! The database side of graphs: rows and queries, shared by the app's
//! server functions and the server's HTTP API.
//!
//! A save names the version it was based on; a save based on anything but
//! the newest version is refused as a conflict, so nobody's work is
//! overwritten. Every save also keeps the new version in `graph_versions`.
//!
//! Transactions that read then write hold the graph's write lock
//! ([`WritePool::begin_write`]), so two saves of one graph never interleave.

use heddle_engine::GraphDocument;

use std::collections::BTreeMap;

use heddle_engine::Registry;
use serde_json::Value;

use crate::access::Allowed;
use crate::access_events::{AccessChange, AccessEvents};
use crate::db::{Db, EngineRuns, WritePool};
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use heddle_wire::graphs::{
    GraphDetail, GraphId, GraphSummary, ImportPreview, Saved, VersionSummary,
};
use heddle_wire::limits::check_document;

#[derive(sqlx::FromRow)]
struct SummaryRow {
    id: String,
    name: String,
    version: i64,
    node_count: i64,
    updated_at: String,
    owner: String,
    rank: i64,
}

impl From<SummaryRow> for GraphSummary {
    fn from(row: SummaryRow) -> Self {
        GraphSummary {
            id: GraphId::from_stored(row.id),
            name: row.name,
            version: row.version,
            node_count: row.node_count,
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
            id: GraphId::from_stored(row.id),
            name: row.name,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
            document: row.graph_json,
        }
    }
}

/// Reads a document a client sent; one that is not a graph document (bad
/// JSON, a newer format) is an invalid graph saying what and where.
pub fn read_document(value: Value) -> Result<GraphDocument, AppError> {
    GraphDocument::from_value(value).map_err(|error| AppError::InvalidGraph {
        message: error.to_string(),
        problems: Vec::new(),
    })
}

/// Checks a document for import by `user`: read, within the limits, its
/// credential names rebound by `bindings`, validated against `registry`,
/// and the credentials it names that `user` has not saved. The document,
/// ready to create, and what an import would make of it.
pub async fn prepare_import(
    db: &Db,
    registry: &Registry,
    user: &User,
    document: Value,
    bindings: &BTreeMap<String, String>,
) -> Result<(GraphDocument, ImportPreview), AppError> {
    let mut document = read_document(document)?;
    check_document(&document)?;
    heddle_engine::credentials::rebind(&mut document, bindings);
    let mine = crate::secrets::names(db, user.id.as_str()).await?;
    let missing_credentials = heddle_engine::credentials::referenced(&document)
        .into_iter()
        .filter(|name| !mine.contains(name))
        .collect();
    let preview = ImportPreview {
        name: document.name.clone(),
        nodes: document.nodes.len(),
        edges: document.edges.len(),
        channels: document.state.channels.len(),
        problems: heddle_engine::validate(&document, registry).problems,
        missing_credentials,
    };
    Ok((document, preview))
}

/// Deletes a graph as its owner asks: its runs are stopped first (nothing
/// may write to rows being deleted), then everything goes, and open
/// websockets on it hear that access changed.
pub async fn delete_with_runs(
    db: &Db,
    runs: &dyn crate::runs::RunControl,
    events: &AccessEvents,
    allowed: &Allowed,
) -> Result<(), AppError> {
    allowed.at_least(Role::Owner)?;
    runs.stop_all(allowed).await?;
    delete(db, allowed).await?;
    events.announce(AccessChange::Graph(allowed.graph().to_string()));
    Ok(())
}

fn not_found(id: &GraphId) -> AppError {
    AppError::not_found(format!("graph {id}"))
}

/// The graphs `user` owns or was given a role on (directly, or through a
/// share link that still works), most recently changed first.
pub async fn list(db: &Db, user: &User) -> Result<Vec<GraphSummary>, AppError> {
    let now = crate::db::now();
    let rows: Vec<SummaryRow> = on_db!(db, pool => sqlx::query_as(
        "WITH grants (graph_id, rank) AS (
             SELECT id, CAST(3 AS BIGINT) FROM graphs WHERE owner_id = $1
             UNION ALL
             SELECT graph_id, CAST(CASE role WHEN 'editor' THEN 2 ELSE 1 END AS BIGINT)
               FROM graph_members WHERE user_id = $1
             UNION ALL
             SELECT l.graph_id, CAST(CASE l.role WHEN 'editor' THEN 2 ELSE 1 END AS BIGINT)
               FROM link_grants lg JOIN share_links l ON l.id = lg.link_id
              WHERE lg.user_id = $1 AND l.revoked_at IS NULL
                AND (l.expires_at IS NULL OR l.expires_at > $2)
         ),
         best AS (SELECT graph_id, MAX(rank) AS rank FROM grants GROUP BY graph_id)
         SELECT g.id, g.name, g.version, g.updated_at, g.node_count,
                COALESCE(u.username, '') AS owner, b.rank
         FROM best b JOIN graphs g ON g.id = b.graph_id
         LEFT JOIN users u ON u.id = g.owner_id
         ORDER BY g.updated_at DESC, g.rowid DESC",
    )
    .bind(user.id.as_str())
    .bind(&now)
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(GraphSummary::from).collect())
}

/// Copies a graph `user` may see into a new graph they own, named
/// "Copy of ...".
pub async fn copy(db: &Db, user: Option<&User>, id: &str) -> Result<Saved, AppError> {
    let allowed = crate::access::require(db, user, id, Role::Viewer).await?;
    let detail = get(db, &allowed).await?;
    let mut document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        AppError::Internal
    })?;
    document.name = format!("Copy of {}", display_name(&document));
    create(db, allowed.user(), Some(document)).await
}

/// Creates a graph from `document`, or an empty one named "Untitled
/// graph N" when there is none.
pub async fn create(
    db: &Db,
    owner: &User,
    document: Option<GraphDocument>,
) -> Result<Saved, AppError> {
    if let Some(document) = &document {
        check_document(document)?;
    }
    let id = uuid::Uuid::new_v4().to_string();
    let lock = format!("graphs of {}", owner.id.as_str());
    let (name, updated_at) = on_db!(db, pool => {
        let mut tx = pool.begin_write(&lock).await?;
        let document = match document {
            Some(document) => document,
            None => {
                let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM graphs WHERE owner_id = $1")
                    .bind(owner.id.as_str())
                    .fetch_one(&mut *tx)
                    .await?;
                GraphDocument::new(&format!("Untitled graph {}", count + 1))
            }
        };
        let json = document.to_json();
        let name = display_name(&document);
        let nodes = node_count(&document);
        let updated_at: String = sqlx::query_scalar(
            "INSERT INTO graphs (id, name, graph_json, owner_id, node_count) VALUES ($1, $2, $3, $4, $5)
             RETURNING updated_at",
        )
        .bind(&id)
        .bind(&name)
        .bind(&json)
        .bind(owner.id.as_str())
        .bind(nodes)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO graph_versions (graph_id, version, name, graph_json, created_at, author_id, node_count, summary)
             VALUES ($1, 1, $2, $3, $4, $5, $6, 'created the graph')",
        )
        .bind(&id)
        .bind(&name)
        .bind(&json)
        .bind(&updated_at)
        .bind(owner.id.as_str())
        .bind(nodes)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok::<_, AppError>((name, updated_at))
    })?;
    tracing::info!(graph = %id, %name, "graph created");
    Ok(Saved {
        id: GraphId::from_stored(id),
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

/// How many nodes a document has, as the lists show it.
fn node_count(document: &GraphDocument) -> i64 {
    i64::try_from(document.nodes.len()).unwrap_or(i64::MAX)
}

/// A graph's newest version, for a caller [`require`] allowed to see it.
///
/// [`require`]: crate::access::require
pub async fn get(db: &Db, allowed: &Allowed) -> Result<GraphDetail, AppError> {
    let id = allowed.graph();
    let row: Option<DetailRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, name, version, created_at, updated_at, graph_json
         FROM graphs WHERE id = $1",
    )
    .bind(id.as_str())
    .fetch_optional(pool)
    .await)?;
    row.map(GraphDetail::from).ok_or_else(|| not_found(id))
}

/// Saves `document` as the next version, if `base_version` is the newest.
/// The version records what changed since the one before, in words. The
/// newest version's very document makes no new version: it is answered.
pub async fn save(
    db: &Db,
    allowed: &Allowed,
    base_version: i64,
    document: &GraphDocument,
) -> Result<Saved, AppError> {
    save_noted(db, allowed, base_version, document, None).await
}

/// [`save`], with what the version is (`note`) said instead of worked out.
async fn save_noted(
    db: &Db,
    allowed: &Allowed,
    base_version: i64,
    document: &GraphDocument,
    note: Option<String>,
) -> Result<Saved, AppError> {
    allowed.at_least(Role::Editor)?;
    let (id, author) = (allowed.graph().clone(), allowed.user());
    check_document(document)?;
    let json = document.to_json();
    let name = display_name(document);
    let nodes = node_count(document);
    let lock = format!("graph {}", id.as_str());
    let (version, updated_at) = on_db!(db, pool => {
        let mut tx = pool.begin_write(&lock).await?;
        let current: Option<(i64, String, String)> =
            sqlx::query_as("SELECT version, graph_json, updated_at FROM graphs WHERE id = $1")
                .bind(id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let (current, previous, previous_at) = current.ok_or_else(|| not_found(&id))?;
        if current != base_version {
            return Err(AppError::Conflict {
                base_version,
                current_version: current,
            });
        }
        // The same graph again (an edit undone before the save went out):
        // no version that changes nothing, and a run of the current one
        // is still of what is on screen.
        if previous == json {
            return Ok(Saved {
                id: id.clone(),
                version: current,
                updated_at: previous_at,
            });
        }
        let summary = note.clone().unwrap_or_else(|| {
            // A stored version that no longer reads is described as a whole.
            GraphDocument::from_json(&previous).map_or_else(
                |_| "replaced the graph".to_string(),
                |previous| {
                    heddle_engine::format::summary(&heddle_engine::format::changes(
                        &previous, document,
                    ))
                },
            )
        });
        let version = current + 1;
        let updated_at: String = sqlx::query_scalar(
            "UPDATE graphs SET graph_json = $1, name = $2, version = $3, node_count = $4, updated_at = $5
             WHERE id = $6 AND version = $7
             RETURNING updated_at",
        )
        .bind(&json)
        .bind(&name)
        .bind(version)
        .bind(nodes)
        .bind(crate::db::now())
        .bind(id.as_str())
        .bind(current)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO graph_versions (graph_id, version, name, graph_json, created_at, author_id, node_count, summary)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(id.as_str())
        .bind(version)
        .bind(&name)
        .bind(&json)
        .bind(&updated_at)
        .bind(author.id.as_str())
        .bind(nodes)
        .bind(&summary)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok::<_, AppError>((version, updated_at))
    })?;
    Ok(Saved {
        id,
        version,
        updated_at,
    })
}

pub async fn versions(db: &Db, allowed: &Allowed) -> Result<Vec<VersionSummary>, AppError> {
    /// version, name, node count, time, author, what changed, its label
    type Row = (
        i64,
        String,
        i64,
        String,
        Option<String>,
        String,
        Option<String>,
    );
    let rows: Vec<Row> = on_db!(db, pool => sqlx::query_as(
        "SELECT v.version, v.name, v.node_count, v.created_at, u.username, v.summary, v.label
         FROM graph_versions v LEFT JOIN users u ON u.id = v.author_id
         WHERE v.graph_id = $1 ORDER BY v.version DESC",
    )
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    Ok(rows
        .into_iter()
        .map(
            |(version, name, node_count, created_at, author, summary, label)| VersionSummary {
                version,
                name,
                node_count,
                created_at,
                author,
                summary,
                label,
            },
        )
        .collect())
}

/// One stored version's document.
pub async fn version(db: &Db, allowed: &Allowed, version: i64) -> Result<String, AppError> {
    let id = allowed.graph();
    let json: Option<String> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT graph_json FROM graph_versions WHERE graph_id = $1 AND version = $2",
    )
    .bind(id.as_str())
    .bind(version)
    .fetch_optional(pool)
    .await)?;
    json.ok_or_else(|| AppError::not_found(format!("version {version} of graph {id}")))
}

/// A stored version's document, for the run manager going on with a run
/// whose access was already decided (a fork runs the version its source
/// ran).
pub async fn stored_version(
    db: &Db,
    graph_id: &GraphId,
    version: i64,
) -> Result<Option<String>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_scalar(
        "SELECT graph_json FROM graph_versions WHERE graph_id = $1 AND version = $2",
    )
    .bind(graph_id.as_str())
    .bind(version)
    .fetch_optional(pool)
    .await)?)
}

/// Saves an earlier version as the newest one (history is kept whole).
pub async fn restore(db: &Db, allowed: &Allowed, version_number: i64) -> Result<Saved, AppError> {
    let json = version(db, allowed, version_number).await?;
    let document = GraphDocument::from_json(&json).map_err(|error| {
        tracing::error!(graph = %allowed.graph(), version = version_number, %error, "a stored version does not read back");
        AppError::Internal
    })?;
    let current = get(db, allowed).await?.version;
    let note = format!("restored version {version_number}");
    save_noted(db, allowed, current, &document, Some(note)).await
}

/// Names version `version_number` ("before the billing rework"), or with
/// an empty label takes its name away. Editors and owners only.
pub async fn label_version(
    db: &Db,
    allowed: &Allowed,
    version_number: i64,
    label: &str,
) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    let label = label.trim();
    if label.chars().count() > 80 {
        return Err(AppError::InvalidInput(
            "label: a version's name is at most 80 characters".into(),
        ));
    }
    if label.chars().any(char::is_control) {
        return Err(AppError::InvalidInput(
            "label: a version's name is one line of text".into(),
        ));
    }
    let label = (!label.is_empty()).then_some(label);
    let changed = on_db!(db, pool => sqlx::query(
        "UPDATE graph_versions SET label = $1 WHERE graph_id = $2 AND version = $3",
    )
    .bind(label)
    .bind(allowed.graph().as_str())
    .bind(version_number)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    if changed == 0 {
        return Err(AppError::not_found(format!("version {version_number}")));
    }
    Ok(())
}

/// Deletes a graph with its versions, threads, runs, checkpoints and
/// events, all in one transaction.
pub async fn delete(db: &Db, allowed: &Allowed) -> Result<(), AppError> {
    allowed.at_least(Role::Owner)?;
    let id = allowed.graph();
    let lock = format!("graph {}", id.as_str());
    on_db!(db, pool => {
        let mut tx = pool.begin_write(&lock).await?;
        // The engine's run records are not tied to ours by a foreign key
        // (the engine knows no app tables): the engine deletes them, with
        // their checkpoints and events, in this transaction.
        let runs: Vec<String> = sqlx::query_scalar("SELECT id FROM runs WHERE graph_id = $1")
            .bind(id.as_str())
            .fetch_all(&mut *tx)
            .await?;
        pool.delete_engine_runs(&mut tx, &runs).await.map_err(|error| {
            tracing::error!(%error, graph = %id, "cannot delete the graph's runs");
            AppError::Internal
        })?;
        let deleted = sqlx::query("DELETE FROM graphs WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if deleted == 0 {
            return Err(not_found(id));
        }
        tx.commit().await?;
        Ok::<_, AppError>(())
    })?;
    tracing::info!(graph = %id, "graph deleted");
    Ok(())
}

/// Renames a graph: saves its newest version again under `name`.
pub async fn rename(db: &Db, allowed: &Allowed, name: &str) -> Result<(), AppError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 {
        return Err(AppError::InvalidInput(
            "a graph's name is 1 to 200 characters".into(),
        ));
    }
    let detail = get(db, allowed).await?;
    let mut document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        AppError::Internal
    })?;
    document.name = name.to_string();
    save(db, allowed, detail.version, &document)
        .await
        .map(|_| ())
}
