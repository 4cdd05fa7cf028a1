//! Graphs as the app sees them: the types sent to the browser, their rows in
//! SQLite and the server functions that read and create them.
//!
//! A graph row holds the graph's JSON document (the engine's format), a
//! version number that every save increments, and timestamps written by
//! SQLite itself as ISO-8601 UTC strings (so they sort as text).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// A graph's id: a UUID in its hyphenated text form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GraphId(String);

impl GraphId {
    /// The id as it appears in URLs and in the database.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path of the graph's page.
    pub fn href(&self) -> String {
        format!("/graphs/{}", self.0)
    }
}

impl std::fmt::Display for GraphId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One line of the graphs list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphSummary {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub node_count: i64,
    /// ISO-8601 UTC, e.g. `2026-11-21T06:40:12.345Z`.
    pub updated_at: String,
}

/// Everything the graph page shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphDetail {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The graph document as stored (the engine's JSON format).
    pub document: String,
}

/// Lists every graph, most recently changed first.
#[server(endpoint = "list_graphs")]
pub async fn list_graphs() -> Result<Vec<GraphSummary>, AppError> {
    with_error_status(ssr::list(&ssr::pool()?).await)
}

/// Creates an empty graph, returns its id and sends the browser to its page
/// (a client-side navigation when the app is hydrated, a plain redirect when
/// the form was posted without JavaScript).
#[server(endpoint = "create_graph")]
pub async fn create_graph() -> Result<GraphId, AppError> {
    let id = with_error_status(ssr::create(&ssr::pool()?).await)?;
    leptos_axum::redirect(&id.href());
    Ok(id)
}

/// Loads one graph.
#[server(endpoint = "get_graph")]
pub async fn get_graph(id: String) -> Result<GraphDetail, AppError> {
    with_error_status(ssr::get(&ssr::pool()?, &id).await)
}

/// Shows an ISO-8601 UTC timestamp as `2026-11-21 06:40 UTC`: the same text
/// on the server and in the browser, so hydration never disagrees.
pub fn display_timestamp(iso: &str) -> String {
    match (iso.get(0..10), iso.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => iso.to_string(),
    }
}

#[cfg(feature = "ssr")]
pub mod ssr {
    //! The database side: rows and queries.

    use sqlx::SqlitePool;

    use super::{GraphDetail, GraphId, GraphSummary};
    use crate::error::AppError;

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
    }

    impl From<SummaryRow> for GraphSummary {
        fn from(row: SummaryRow) -> Self {
            GraphSummary {
                id: GraphId(row.id),
                name: row.name,
                version: row.version,
                node_count: row.node_count.unwrap_or(0),
                updated_at: row.updated_at,
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

    pub async fn list(pool: &SqlitePool) -> Result<Vec<GraphSummary>, AppError> {
        let rows: Vec<SummaryRow> = sqlx::query_as(
            "SELECT id, name, version, updated_at,
                    json_array_length(graph_json, '$.nodes') AS node_count
             FROM graphs
             ORDER BY updated_at DESC, rowid DESC",
        )
        .fetch_all(pool)
        .await?;
        Ok(rows.into_iter().map(GraphSummary::from).collect())
    }

    pub async fn create(pool: &SqlitePool) -> Result<GraphId, AppError> {
        let mut tx = pool.begin().await?;
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM graphs")
            .fetch_one(&mut *tx)
            .await?;
        let name = format!("Untitled graph {}", count + 1);
        let document = heddle_engine::GraphDocument::new(&name);
        let json = document.to_json();
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query("INSERT INTO graphs (id, name, graph_json) VALUES (?, ?, ?)")
            .bind(&id)
            .bind(&name)
            .bind(&json)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(graph = %id, %name, "graph created");
        Ok(GraphId(id))
    }

    pub async fn get(pool: &SqlitePool, id: &str) -> Result<GraphDetail, AppError> {
        let not_found = || AppError::NotFound {
            what: format!("graph {id}"),
        };
        // A malformed id can name no graph: answer as for any unknown one.
        let Ok(id) = uuid::Uuid::parse_str(id) else {
            return Err(not_found());
        };
        let row: Option<DetailRow> = sqlx::query_as(
            "SELECT id, name, version, created_at, updated_at, graph_json
             FROM graphs WHERE id = ?",
        )
        .bind(id.hyphenated().to_string())
        .fetch_optional(pool)
        .await?;
        row.map(GraphDetail::from).ok_or_else(not_found)
    }
}

#[cfg(test)]
mod tests {
    use super::display_timestamp;

    #[test]
    fn timestamps_show_date_and_minutes() {
        assert_eq!(
            display_timestamp("2026-11-21T06:40:12.345Z"),
            "2026-11-21 06:40 UTC"
        );
    }

    #[test]
    fn odd_timestamps_are_shown_as_they_are() {
        assert_eq!(display_timestamp("yesterday"), "yesterday");
    }
}
