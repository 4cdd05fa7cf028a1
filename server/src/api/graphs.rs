//! Graph endpoints. Each checks the caller's role on the graph first
//! (see `heddle_app::access`).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use heddle_app::access::Role;
use heddle_app::access::ssr::require;
use heddle_app::error::AppError;
use heddle_app::graphs::ssr as graphs;
use heddle_app::graphs::{GraphDetail, GraphSummary, VersionSummary};
use heddle_engine::GraphDocument;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// Reads a document sent by a client; a bad one is a 422 naming where.
fn document(value: Value) -> Result<GraphDocument> {
    Ok(graphs::read_document(value)?)
}

/// The validation report of a document, as JSON: against the server's own
/// tools and models, as the editor validates.
fn report(state: &AppState, document: &GraphDocument) -> Value {
    json!(heddle_engine::validate(document, state.runs.registry()).problems)
}

/// `GET /api/v1/graphs`: the caller's graphs and those shared with them.
pub async fn list(State(state): State<AppState>, who: Who) -> Result<Json<Vec<GraphSummary>>> {
    Ok(Json(graphs::list(&state.db, who.user()?).await?))
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
    who: Who,
    ApiJson(body): ApiJson<Create>,
) -> Result<Response> {
    let user = who.user()?;
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
    let saved = graphs::create(&state.db, user, document).await?;
    Ok((StatusCode::CREATED, Json(saved)).into_response())
}

pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    let GraphDetail {
        id,
        name,
        version,
        created_at,
        updated_at,
        document,
    } = graphs::get(&state.db, &allowed).await?;
    let document: Value = serde_json::from_str(&document).unwrap_or(Value::Null);
    Ok(Json(json!({
        "id": id, "name": name, "version": version, "role": allowed.role(),
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
    who: Who,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Save>,
) -> Result<Json<Value>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Editor).await?;
    let document = document(body.document)?;
    let saved = graphs::save(&state.db, &allowed, body.base_version, &document).await?;
    Ok(Json(json!({
        "id": saved.id, "version": saved.version, "updated_at": saved.updated_at,
        "problems": report(&state, &document),
    })))
}

pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Owner).await?;
    graphs::delete_with_runs(&state.db, &state.runs, state.auth.events(), &allowed).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn versions(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Json<Vec<VersionSummary>>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    Ok(Json(graphs::versions(&state.db, &allowed).await?))
}

pub async fn version(
    State(state): State<AppState>,
    who: Who,
    Path((id, version)): Path<(String, i64)>,
) -> Result<Json<Value>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    let json = graphs::version(&state.db, &allowed, version).await?;
    Ok(Json(serde_json::from_str(&json).unwrap_or(Value::Null)))
}

pub async fn restore(
    State(state): State<AppState>,
    who: Who,
    Path((id, version)): Path<(String, i64)>,
) -> Result<Json<Value>> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Editor).await?;
    let saved = graphs::restore(&state.db, &allowed, version).await?;
    Ok(Json(
        json!({"id": saved.id, "version": saved.version, "restored_from": version}),
    ))
}

/// `GET /api/v1/graphs/{id}/export`: the document in the canonical
/// format, as a file download.
pub async fn export(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Response> {
    let allowed = require(&state.db, who.0.as_ref(), &id, Role::Viewer).await?;
    let detail = graphs::get(&state.db, &allowed).await?;
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
/// the body, or `{"document": {...}, "bindings": {"their-name": "my-secret"}}`.
/// A document that is not one (bad JSON, a newer format) is a 422; one with
/// validation problems is imported and the problems listed, so it can be
/// fixed in the editor. Credentials it names must be the importer's own
/// secrets, or be bound to them: otherwise it is a 422 listing the missing
/// names (a dry run lists them too). A dry run changes nothing and says
/// what would be created.
pub async fn import(
    State(state): State<AppState>,
    who: Who,
    Query(query): Query<ImportQuery>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Response> {
    let user = who.user()?;
    let (body, bindings) = match body {
        Value::Object(mut fields)
            if fields.contains_key("document") && !fields.contains_key("nodes") =>
        {
            let bindings: BTreeMap<String, String> = match fields.remove("bindings") {
                Some(value) => serde_json::from_value(value).map_err(|error| {
                    ApiError::invalid(format!("`bindings` must map names to names: {error}"))
                })?,
                None => BTreeMap::new(),
            };
            (fields.remove("document").unwrap_or(Value::Null), bindings)
        }
        body => (body, BTreeMap::new()),
    };
    let (document, preview) =
        graphs::prepare_import(&state.db, state.runs.registry(), user, body, &bindings).await?;
    let problems = json!(preview.problems);
    if query.dry_run {
        return Ok(Json(json!({
            "dry_run": true,
            "would_create": {
                "name": preview.name,
                "nodes": preview.nodes,
                "edges": preview.edges,
                "channels": preview.channels,
            },
            "problems": problems,
            "missing_credentials": preview.missing_credentials,
        }))
        .into_response());
    }
    if !preview.missing_credentials.is_empty() {
        return Err(ApiError(AppError::MissingCredentials {
            names: preview.missing_credentials,
        }));
    }
    let saved = graphs::create(&state.db, user, Some(document)).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"id": saved.id, "version": saved.version, "problems": problems})),
    )
        .into_response())
}

/// `POST /api/v1/graphs/{id}/copy`: a copy of a graph the caller may see,
/// owned by them.
pub async fn copy(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Response> {
    let saved = graphs::copy(&state.db, who.0.as_ref(), &id).await?;
    Ok((StatusCode::CREATED, Json(saved)).into_response())
}
