//! Graph endpoints. Each checks the caller's role on the graph first
//! (see `heddle_wire::access`).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::NoContent;
use heddle_engine::GraphDocument;
use heddle_engine::validate::Problem;
use heddle_store::access::require;
use heddle_store::graphs;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::graphs::{GraphDetail, GraphSummary, VersionSummary};
use heddle_wire::graphs::{GraphId, Saved};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::params::{GraphPath, VersionPath};
use super::responses::{Created, Download};
use super::{ApiError, ApiJson};
use crate::auth::Who;
use crate::state::AppState;

type Result<T> = std::result::Result<T, ApiError>;

/// Reads a document sent by a client; a bad one is a 422 naming where.
fn document(value: Value) -> Result<GraphDocument> {
    Ok(graphs::read_document(value)?)
}

/// The validation problems of a document: against the server's own tools
/// and models, as the editor validates.
fn report(state: &AppState, document: &GraphDocument) -> Vec<Problem> {
    heddle_engine::validate(document, state.runs.registry()).problems
}

/// A graph document as the client sent it or as it is stored: any JSON in
/// transit, described by the engine's format.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct DocumentJson(#[schemars(with = "GraphDocument")] Value);

/// `GET /api/v1/graphs`: the caller's graphs and those shared with them.
pub async fn list(State(state): State<AppState>, who: Who) -> Result<Json<Vec<GraphSummary>>> {
    Ok(Json(graphs::list(&state.db, who.user()?).await?))
}

/// A new graph: empty, named, or from a document.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Create {
    /// Its name (overrides the document's).
    #[serde(default)]
    name: Option<String>,
    /// Its first version.
    #[serde(default)]
    document: Option<DocumentJson>,
}

/// `POST /api/v1/graphs`: `{}` for an empty graph, `{"name": ...}`, or
/// `{"document": {...}}`.
pub async fn create(
    State(state): State<AppState>,
    who: Who,
    ApiJson(body): ApiJson<Create>,
) -> Result<Created<Saved>> {
    let user = who.user()?;
    let document = match (body.document, body.name) {
        (Some(DocumentJson(value)), name) => {
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
    Ok(Created(saved))
}

/// A graph as the API shows it: its record, the caller's role and the
/// document.
#[derive(Serialize, JsonSchema)]
pub struct GraphView {
    id: GraphId,
    name: String,
    version: i64,
    role: Role,
    created_at: String,
    updated_at: String,
    document: DocumentJson,
}

/// `GET /api/v1/graphs/{id}`.
pub async fn get(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<GraphView>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    let GraphDetail {
        id,
        name,
        version,
        created_at,
        updated_at,
        document,
    } = graphs::get(&state.db, &allowed).await?;
    Ok(Json(GraphView {
        id,
        name,
        version,
        role: allowed.role(),
        created_at,
        updated_at,
        document: stored(&document)?,
    }))
}

/// A stored document, read back as JSON.
fn stored(json: &str) -> Result<DocumentJson> {
    serde_json::from_str(json)
        .map(DocumentJson)
        .map_err(|error| {
            tracing::error!(%error, "a stored graph does not read back");
            ApiError(AppError::Internal)
        })
}

/// An edit to save.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Save {
    /// The version the edit was based on.
    base_version: i64,
    document: DocumentJson,
}

/// Where a save left the graph, and what is still wrong with it.
#[derive(Serialize, JsonSchema)]
pub struct SaveReport {
    id: GraphId,
    version: i64,
    updated_at: String,
    /// Validation problems: saving work in progress is allowed.
    problems: Vec<Problem>,
}

/// `PUT /api/v1/graphs/{id}`: saves a new version, or 409 if someone saved
/// since `base_version`. Saving a graph with problems is allowed (work in
/// progress); they come back in `problems`.
pub async fn save(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
    ApiJson(body): ApiJson<Save>,
) -> Result<Json<SaveReport>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    let document = document(body.document.0)?;
    let saved = graphs::save(&state.db, &allowed, body.base_version, &document).await?;
    Ok(Json(SaveReport {
        id: saved.id,
        version: saved.version,
        updated_at: saved.updated_at,
        problems: report(&state, &document),
    }))
}

/// `DELETE /api/v1/graphs/{id}`: the graph, its versions and its runs
/// (owner only).
pub async fn delete(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<NoContent> {
    let allowed = require(&state.db, &who.0, &id, Role::Owner).await?;
    graphs::delete_with_runs(&state.db, &state.runs, state.auth.events(), &allowed).await?;
    Ok(NoContent)
}

/// `GET /api/v1/graphs/{id}/versions`: newest first.
pub async fn versions(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Json<Vec<VersionSummary>>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    Ok(Json(graphs::versions(&state.db, &allowed).await?))
}

/// `GET /api/v1/graphs/{id}/versions/{version}`: that version's document.
pub async fn version(
    State(state): State<AppState>,
    who: Who,
    Path(VersionPath { id, version }): Path<VersionPath>,
) -> Result<Json<DocumentJson>> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    let json = graphs::version(&state.db, &allowed, version).await?;
    Ok(Json(stored(&json)?))
}

/// What a restore made: a new version with an old one's document.
#[derive(Serialize, JsonSchema)]
pub struct Restored {
    id: GraphId,
    version: i64,
    restored_from: i64,
}

/// `POST /api/v1/graphs/{id}/versions/{version}/restore`.
pub async fn restore(
    State(state): State<AppState>,
    who: Who,
    Path(VersionPath { id, version }): Path<VersionPath>,
) -> Result<Json<Restored>> {
    let allowed = require(&state.db, &who.0, &id, Role::Editor).await?;
    let saved = graphs::restore(&state.db, &allowed, version).await?;
    Ok(Json(Restored {
        id: saved.id,
        version: saved.version,
        restored_from: version,
    }))
}

/// `GET /api/v1/graphs/{id}/export`: the document in the canonical
/// format, as a file download.
pub async fn export(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Download> {
    let allowed = require(&state.db, &who.0, &id, Role::Viewer).await?;
    let detail = graphs::get(&state.db, &allowed).await?;
    let document = GraphDocument::from_json(&detail.document).map_err(|error| {
        tracing::error!(graph = %detail.id, %error, "a stored graph does not read back");
        ApiError(AppError::Internal)
    })?;
    Ok(Download {
        file: format!("{}.heddle.json", slug(&detail.name)),
        json: document.to_json(),
    })
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

/// `?dry_run=true`: say what an import would create, change nothing.
#[derive(Deserialize, JsonSchema)]
pub struct ImportQuery {
    #[serde(default)]
    dry_run: bool,
}

/// An import: a graph document, or one with its credentials bound to the
/// importer's own secrets.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct ImportBody(Value);

/// The wrapped form of an import.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportWithBindings {
    document: DocumentJson,
    /// The document's credential names mapped to the importer's secrets.
    #[serde(default)]
    bindings: BTreeMap<String, String>,
}

impl JsonSchema for ImportBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ImportBody".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let bare = generator.subschema_for::<GraphDocument>();
        let wrapped = generator.subschema_for::<ImportWithBindings>();
        schemars::json_schema!({ "anyOf": [bare, wrapped] })
    }
}

/// What an import would create.
#[derive(Serialize, JsonSchema)]
pub struct WouldCreate {
    name: String,
    nodes: usize,
    edges: usize,
    channels: usize,
}

/// A dry run's answer.
#[derive(Serialize, JsonSchema)]
pub struct DryRun {
    /// Always `true`.
    dry_run: bool,
    would_create: WouldCreate,
    problems: Vec<Problem>,
    /// Credentials the document names that the importer has not saved or
    /// bound: the real import would be refused for them.
    missing_credentials: Vec<String>,
}

/// An import's result.
#[derive(Serialize, JsonSchema)]
pub struct Imported {
    id: GraphId,
    version: i64,
    /// Validation problems: fix them in the editor.
    problems: Vec<Problem>,
}

/// A dry run answers 200, an import 201.
pub enum ImportAnswer {
    DryRun(DryRun),
    Imported(Created<Imported>),
}

impl axum::response::IntoResponse for ImportAnswer {
    fn into_response(self) -> axum::response::Response {
        match self {
            ImportAnswer::DryRun(dry_run) => Json(dry_run).into_response(),
            ImportAnswer::Imported(created) => created.into_response(),
        }
    }
}

impl aide::OperationOutput for ImportAnswer {
    type Inner = Imported;

    fn inferred_responses(
        ctx: &mut aide::generate::GenContext,
        operation: &mut aide::openapi::Operation,
    ) -> Vec<(Option<aide::openapi::StatusCode>, aide::openapi::Response)> {
        let mut responses = Json::<DryRun>::inferred_responses(ctx, operation);
        responses.extend(Created::<Imported>::inferred_responses(ctx, operation));
        responses
    }
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
    ApiJson(ImportBody(body)): ApiJson<ImportBody>,
) -> Result<ImportAnswer> {
    let user = who.user()?;
    let (body, bindings) = match body {
        Value::Object(fields)
            if fields.contains_key("document") && !fields.contains_key("nodes") =>
        {
            let wrapped: ImportWithBindings =
                serde_path_to_error::deserialize(Value::Object(fields)).map_err(|error| {
                    let path = error.path().to_string();
                    ApiError::invalid(format!("`{path}`: {}", error.into_inner()))
                })?;
            (wrapped.document.0, wrapped.bindings)
        }
        body => (body, BTreeMap::new()),
    };
    let (document, preview) =
        graphs::prepare_import(&state.db, state.runs.registry(), user, body, &bindings).await?;
    if query.dry_run {
        return Ok(ImportAnswer::DryRun(DryRun {
            dry_run: true,
            would_create: WouldCreate {
                name: preview.name,
                nodes: preview.nodes,
                edges: preview.edges,
                channels: preview.channels,
            },
            problems: preview.problems,
            missing_credentials: preview.missing_credentials,
        }));
    }
    if !preview.missing_credentials.is_empty() {
        return Err(ApiError(AppError::MissingCredentials {
            names: preview.missing_credentials,
        }));
    }
    let saved = graphs::create(&state.db, user, Some(document)).await?;
    Ok(ImportAnswer::Imported(Created(Imported {
        id: saved.id,
        version: saved.version,
        problems: preview.problems,
    })))
}

/// `POST /api/v1/graphs/{id}/copy`: a copy of a graph the caller may see,
/// owned by them.
pub async fn copy(
    State(state): State<AppState>,
    who: Who,
    Path(GraphPath { id }): Path<GraphPath>,
) -> Result<Created<Saved>> {
    let saved = graphs::copy(&state.db, Some(who.user()?), &id).await?;
    Ok(Created(saved))
}
