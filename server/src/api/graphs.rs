//! Graph endpoints.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use heddle_app::error::AppError;
use heddle_app::graphs::ssr as graphs;
use heddle_app::graphs::{GraphDetail, GraphSummary, VersionSummary};
use heddle_app::limits::check_document;
use heddle_engine::{GraphDocument, Registry};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiJson};
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// Reads a document sent by a client; a bad one is a 422 naming where.
fn document(value: Value) -> Result<GraphDocument> {
    GraphDocument::from_value(value).map_err(|error| {
        ApiError(AppError::InvalidGraph {
            message: error.to_string(),
            problems: Vec::new(),
        })
    })
}

/// The validation report of a document, as JSON.
fn report(document: &GraphDocument) -> Value {
    json!(heddle_engine::validate(document, &Registry::new()).problems)
}

pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<GraphSummary>>> {
    Ok(Json(graphs::list(&state.pool).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Create {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    document: Option<Value>,
}

/// `POST /api/v1/graphs`: `{}` for an empty graph, `{"name": ...}`, or
/// `{"document": {...}}`.
pub async fn create(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Create>,
) -> Result<Response> {
    let document = match (body.document, body.name) {
        (Some(value), name) => {
            let mut document = document(value)?;
            if let Some(name) = name {
                document.name = name;
            }
            Some(document)
        }
        (None, Some(name)) => Some(GraphDocument::new(&name)),
        (None, None) => None,
    };
    let saved = graphs::create(&state.pool, document).await?;
    Ok((StatusCode::CREATED, Json(saved)).into_response())
}

pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<Value>> {
    let GraphDetail {
        id,
        name,
        version,
        created_at,
        updated_at,
        document,
    } = graphs::get(&state.pool, &id).await?;
    let document: Value = serde_json::from_str(&document).unwrap_or(Value::Null);
    Ok(Json(json!({
        "id": id, "name": name, "version": version,
        "created_at": created_at, "updated_at": updated_at,
        "document": document,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Save {
    /// The version the edit was based on.
    base_version: i64,
    document: Value,
}

/// `PUT /api/v1/graphs/{id}`: saves a new version, or 409 if someone saved
/// since `base_version`. Saving a graph with problems is allowed (work in
/// progress); they come back in `problems`.
pub async fn save(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Save>,
) -> Result<Json<Value>> {
    let document = document(body.document)?;
    let saved = graphs::save(&state.pool, &id, body.base_version, &document).await?;
    Ok(Json(json!({
        "id": saved.id, "version": saved.version, "updated_at": saved.updated_at,
        "problems": report(&document),
    })))
}

pub async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> Result<StatusCode> {
    let graph = graphs::graph_id(&id)?;
    // Stop its runs first, so nothing writes to rows being deleted.
    for run in state.runs.list(graph.as_str(), 1000).await? {
        if matches!(run.status.as_str(), "queued" | "running") {
            let _ = state.runs.cancel(&run.id).await;
        }
    }
    graphs::delete(&state.pool, graph.as_str()).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn versions(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<VersionSummary>>> {
    Ok(Json(graphs::versions(&state.pool, &id).await?))
}

pub async fn version(
    State(state): State<AppState>,
    Path((id, version)): Path<(String, i64)>,
) -> Result<Json<Value>> {
    let json = graphs::version(&state.pool, &id, version).await?;
    Ok(Json(serde_json::from_str(&json).unwrap_or(Value::Null)))
}

pub async fn restore(
    State(state): State<AppState>,
    Path((id, version)): Path<(String, i64)>,
) -> Result<Json<Value>> {
    let saved = graphs::restore(&state.pool, &id, version).await?;
    Ok(Json(
        json!({"id": saved.id, "version": saved.version, "restored_from": version}),
    ))
}

/// `GET /api/v1/graphs/{id}/export`: the document in the canonical
/// format, as a file download.
pub async fn export(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response> {
    let detail = graphs::get(&state.pool, &id).await?;
    let document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        ApiError(AppError::Internal)
    })?;
    let file = format!("{}.heddle.json", slug(&detail.name));
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file}\""),
            ),
        ],
        document.to_json(),
    )
        .into_response())
}

fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        "graph".into()
    } else {
        slug
    }
}

#[derive(Deserialize)]
pub struct ImportQuery {
    #[serde(default)]
    dry_run: bool,
}

/// `POST /api/v1/graphs/import[?dry_run=true]` with a graph document as
/// the body. A document that is not one (bad JSON, a newer format) is a
/// 422; one with validation problems is imported and the problems listed,
/// so it can be fixed in the editor. A dry run changes nothing and says
/// what would be created.
pub async fn import(
    State(state): State<AppState>,
    Query(query): Query<ImportQuery>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response> {
    let document = document(body)?;
    check_document(&document)?;
    let problems = report(&document);
    if query.dry_run {
        return Ok(Json(json!({
            "dry_run": true,
            "would_create": {
                "name": document.name,
                "nodes": document.nodes.len(),
                "edges": document.edges.len(),
                "channels": document.state.channels.len(),
            },
            "problems": problems,
        }))
        .into_response());
    }
    let saved = graphs::create(&state.pool, Some(document)).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"id": saved.id, "version": saved.version, "problems": problems})),
    )
        .into_response())
}
