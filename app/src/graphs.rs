//! The server functions for reading, saving, importing and deleting graphs: the one way the browser reaches them.
//!
//! What they send and answer is [`heddle_wire::graphs`] (re-exported here, so
//! the UI names it `crate::graphs::…`); the rows and rules are
//! `heddle_store::graphs`, which a server function calls after reading its
//! request (`crate::request`).

#[cfg(feature = "ssr")]
use crate::access::Role;
use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::graphs as store;
pub use heddle_wire::graphs::*;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde_json::Value;

/// Lists the caller's graphs and those shared with them, most recently
/// changed first.
#[server(endpoint = "list_graphs")]
pub async fn list_graphs() -> Result<Vec<GraphSummary>, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    with_error_status(store::list(&crate::request::db()?, &user).await)
}

/// Creates a graph, empty or from a starting template (`chat-agent`),
/// returns its id and sends the browser to its page (a client-side
/// navigation when the app is hydrated, a plain redirect when the form was
/// posted without JavaScript).
#[server(endpoint = "create_graph")]
pub async fn create_graph(template: Option<String>) -> Result<GraphId, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    let document = match template.as_deref() {
        None | Some("" | "empty") => None,
        Some(slug) => Some(with_error_status(heddle_store::examples::template(slug))?),
    };
    let id = with_error_status(store::create(&crate::request::db()?, &user, document).await)?.id;
    leptos_axum::redirect(&id.just_made_href());
    Ok(id)
}

/// Loads one graph the caller may see, with their role on it.
#[server(endpoint = "get_graph")]
pub async fn get_graph(id: String) -> Result<OpenedGraph, AppError> {
    let (db, allowed) = crate::request::require_here(&id, Role::Viewer).await?;
    let mut graph = with_error_status(store::get(&db, &allowed).await)?;
    // The page carries it inside its HTML, escaped twice: stored pretty,
    // a 500-node graph's indentation alone was 200 KB of it.
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&graph.document) {
        graph.document = value.to_string();
    }
    Ok(OpenedGraph {
        graph,
        role: allowed.role(),
    })
}

/// The run the graph's page shows as it opens: the one in progress
/// (queued or running), which it joins live, else the newest started from
/// the editor (see [`heddle_store::runs::run_to_show`]).
#[server(endpoint = "run_to_show")]
pub async fn run_to_show(graph_id: String) -> Result<Option<String>, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(heddle_store::runs::run_to_show(&db, allowed.graph()).await)
}

/// Every saved version of a graph, newest first.
#[server(endpoint = "list_versions")]
pub async fn list_versions(graph_id: String) -> Result<Vec<VersionSummary>, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(store::versions(&db, &allowed).await)
}

/// One saved version's document (JSON).
#[server(endpoint = "get_version")]
pub async fn get_version(graph_id: String, version: i64) -> Result<String, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(store::version(&db, &allowed, version).await)
}

/// Saves an earlier version as the newest; answers the new version number.
#[server(endpoint = "restore_version")]
pub async fn restore_version(graph_id: String, version: i64) -> Result<i64, AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Editor).await?;
    let saved = with_error_status(store::restore(&db, &allowed, version).await)?;
    Ok(saved.version)
}

/// Renames a graph (a new version with the new name).
/// Names a version ("before the billing rework"); an empty label takes the
/// name away.
#[server(endpoint = "label_version")]
pub async fn label_version(graph_id: String, version: i64, label: String) -> Result<(), AppError> {
    let (db, allowed) = crate::request::require_here(&graph_id, Role::Editor).await?;
    with_error_status(store::label_version(&db, &allowed, version, &label).await)
}

#[server(endpoint = "rename_graph")]
pub async fn rename_graph(id: String, name: String) -> Result<(), AppError> {
    let (db, allowed) = crate::request::require_here(&id, Role::Editor).await?;
    with_error_status(store::rename(&db, &allowed, &name).await)
}

/// Saves `document` as the next version of graph `id`, if `base_version`
/// is the newest (else a conflict: nothing is overwritten). Editors.
#[server(endpoint = "save_graph", input = Json)]
pub async fn save_graph(id: String, base_version: i64, document: Value) -> Result<Saved, AppError> {
    let (db, allowed) = crate::request::require_here(&id, Role::Editor).await?;
    let document = with_error_status(store::read_document(document))?;
    with_error_status(store::save(&db, &allowed, base_version, &document).await)
}

/// Saves `document` as a new graph of the caller's own.
#[server(endpoint = "save_as_new_graph", input = Json)]
pub async fn save_as_new_graph(document: Value) -> Result<Saved, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    let document = with_error_status(store::read_document(document))?;
    with_error_status(store::create(&crate::request::db()?, &user, Some(document)).await)
}

/// Deletes a graph with its versions, runs and shares (the owner); its
/// runs are stopped first.
#[server(endpoint = "delete_graph", input = Json)]
pub async fn delete_graph(id: String) -> Result<(), AppError> {
    let (db, allowed) = crate::request::require_here(&id, Role::Owner).await?;
    let runs = with_error_status(crate::runs::control())?;
    let auth = with_error_status(crate::request::auth())?;
    with_error_status(store::delete_with_runs(&db, runs.as_ref(), auth.events(), &allowed).await)
}

/// What importing `document` would create (a dry run: nothing changes).
#[server(endpoint = "check_import", input = Json)]
pub async fn check_import(document: Value) -> Result<ImportPreview, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    let registry = crate::request::validation_registry();
    let db = crate::request::db()?;
    let (_, preview) = with_error_status(
        store::prepare_import(&db, &registry, &user, document, &Default::default()).await,
    )?;
    Ok(preview)
}

/// Imports `document` as a new graph of the caller's; refused while it
/// names credentials they have not saved.
#[server(endpoint = "import_graph", input = Json)]
pub async fn import_graph(document: Value) -> Result<Saved, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    let registry = crate::request::validation_registry();
    let db = crate::request::db()?;
    let (document, preview) = with_error_status(
        store::prepare_import(&db, &registry, &user, document, &Default::default()).await,
    )?;
    if !preview.missing_credentials.is_empty() {
        return with_error_status(Err(AppError::MissingCredentials {
            names: preview.missing_credentials,
        }));
    }
    with_error_status(store::create(&db, &user, Some(document)).await)
}

/// Copies a graph the caller may see into a new graph of their own, and
/// opens it.
#[server(endpoint = "copy_graph")]
pub async fn copy_graph(id: String) -> Result<GraphId, AppError> {
    let db = crate::request::db()?;
    let caller = crate::request::caller();
    let copy = with_error_status(store::copy(&db, caller.as_ref(), &id).await)?;
    leptos_axum::redirect(&copy.id.just_made_href());
    Ok(copy.id)
}
