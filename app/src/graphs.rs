//! Graphs as the app sees them: the types sent to the browser, their rows
//! (in [`ssr`]) and the server functions that read, save, import and
//! delete them: the one way the browser reaches graphs.
//!
//! A graph row holds the graph's JSON document (the engine's format), a
//! version number that every save increments, and ISO-8601 UTC timestamps
//! (so they sort as text).

use heddle_engine::validate::Problem;
use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::access::Role;
use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// A graph's id: a UUID in its hyphenated text form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct GraphId(String);

impl GraphId {
    /// The id, if `text` is a well-formed one (so it can name a graph).
    pub fn parse(text: &str) -> Option<GraphId> {
        let valid = text.len() == 36
            && text.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            });
        valid.then(|| GraphId(text.to_ascii_lowercase()))
    }

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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphSummary {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub node_count: i64,
    /// ISO-8601 UTC, e.g. `2026-11-21T06:40:12.345Z`.
    pub updated_at: String,
    /// The owner's username.
    pub owner: String,
    /// The caller's role on it.
    pub role: Role,
}

/// One saved version of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VersionSummary {
    pub version: i64,
    pub name: String,
    pub node_count: i64,
    pub created_at: String,
    /// Who saved it (`None` before accounts).
    pub author: Option<String>,
    /// What the save changed, in words ("added node `tools`, edited the
    /// system prompt of `agent`"); empty for versions saved before Heddle
    /// kept it.
    #[serde(default)]
    pub summary: String,
    /// The name someone gave the version, if any.
    #[serde(default)]
    pub label: Option<String>,
}

/// Everything the graph page shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphDetail {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The graph document (the engine's JSON format): as stored, or
    /// compact when it is sent to the graph page.
    pub document: String,
}

/// A graph opened by someone: the graph, and what they may do with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenedGraph {
    pub graph: GraphDetail,
    pub role: Role,
}

/// Lists the caller's graphs and those shared with them, most recently
/// changed first.
#[server(endpoint = "list_graphs")]
pub async fn list_graphs() -> Result<Vec<GraphSummary>, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    with_error_status(ssr::list(&crate::db::from_context()?, &user).await)
}

/// Creates a graph, empty or from a starting template (`chat-agent`),
/// returns its id and sends the browser to its page (a client-side
/// navigation when the app is hydrated, a plain redirect when the form was
/// posted without JavaScript).
#[server(endpoint = "create_graph")]
pub async fn create_graph(template: Option<String>) -> Result<GraphId, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    let document = match template.as_deref() {
        None | Some("" | "empty") => None,
        Some(slug) => Some(with_error_status(crate::examples::ssr::template(slug))?),
    };
    let id = with_error_status(ssr::create(&crate::db::from_context()?, &user, document).await)?.id;
    leptos_axum::redirect(&id.href());
    Ok(id)
}

/// Loads one graph the caller may see, with their role on it.
#[server(endpoint = "get_graph")]
pub async fn get_graph(id: String) -> Result<OpenedGraph, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&id, Role::Viewer).await?;
    let mut graph = with_error_status(ssr::get(&db, &allowed).await)?;
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

/// The graph's run in progress (queued or running), if any: the page
/// joins it live.
#[server(endpoint = "active_run")]
pub async fn active_run(graph_id: String) -> Result<Option<String>, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(crate::runs::ssr::active_run(&db, allowed.graph()).await)
}

/// Every saved version of a graph, newest first.
#[server(endpoint = "list_versions")]
pub async fn list_versions(graph_id: String) -> Result<Vec<VersionSummary>, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(ssr::versions(&db, &allowed).await)
}

/// One saved version's document (JSON).
#[server(endpoint = "get_version")]
pub async fn get_version(graph_id: String, version: i64) -> Result<String, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&graph_id, Role::Viewer).await?;
    with_error_status(ssr::version(&db, &allowed, version).await)
}

/// Saves an earlier version as the newest; answers the new version number.
#[server(endpoint = "restore_version")]
pub async fn restore_version(graph_id: String, version: i64) -> Result<i64, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&graph_id, Role::Editor).await?;
    let saved = with_error_status(ssr::restore(&db, &allowed, version).await)?;
    Ok(saved.version)
}

/// Renames a graph (a new version with the new name).
/// Names a version ("before the billing rework"); an empty label takes the
/// name away.
#[server(endpoint = "label_version")]
pub async fn label_version(graph_id: String, version: i64, label: String) -> Result<(), AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&graph_id, Role::Editor).await?;
    with_error_status(ssr::label_version(&db, &allowed, version, &label).await)
}

#[server(endpoint = "rename_graph")]
pub async fn rename_graph(id: String, name: String) -> Result<(), AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&id, Role::Editor).await?;
    with_error_status(ssr::rename(&db, &allowed, &name).await)
}

/// Where a save left the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saved {
    pub id: GraphId,
    pub version: i64,
    pub updated_at: String,
}

/// What an import would create, and what stands in its way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportPreview {
    pub name: String,
    pub nodes: usize,
    pub edges: usize,
    pub channels: usize,
    /// Validation problems: an import with them is allowed (fix them in
    /// the editor).
    pub problems: Vec<Problem>,
    /// Credentials it names that the importer has not saved: these stop it.
    pub missing_credentials: Vec<String>,
}

/// Saves `document` as the next version of graph `id`, if `base_version`
/// is the newest (else a conflict: nothing is overwritten). Editors.
#[server(endpoint = "save_graph", input = Json)]
pub async fn save_graph(id: String, base_version: i64, document: Value) -> Result<Saved, AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&id, Role::Editor).await?;
    let document = with_error_status(ssr::read_document(document))?;
    with_error_status(ssr::save(&db, &allowed, base_version, &document).await)
}

/// Saves `document` as a new graph of the caller's own.
#[server(endpoint = "save_as_new_graph", input = Json)]
pub async fn save_as_new_graph(document: Value) -> Result<Saved, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    let document = with_error_status(ssr::read_document(document))?;
    with_error_status(ssr::create(&crate::db::from_context()?, &user, Some(document)).await)
}

/// Deletes a graph with its versions, runs and shares (the owner); its
/// runs are stopped first.
#[server(endpoint = "delete_graph", input = Json)]
pub async fn delete_graph(id: String) -> Result<(), AppError> {
    let (db, allowed) = crate::access::ssr::require_here(&id, Role::Owner).await?;
    let runs = with_error_status(crate::runs::control())?;
    let auth = with_error_status(crate::accounts::ssr::auth())?;
    with_error_status(ssr::delete_with_runs(&db, runs.as_ref(), auth.events(), &allowed).await)
}

/// What importing `document` would create (a dry run: nothing changes).
#[server(endpoint = "check_import", input = Json)]
pub async fn check_import(document: Value) -> Result<ImportPreview, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    let registry = ssr::validation_registry();
    let db = crate::db::from_context()?;
    let (_, preview) = with_error_status(
        ssr::prepare_import(&db, &registry, &user, document, &Default::default()).await,
    )?;
    Ok(preview)
}

/// Imports `document` as a new graph of the caller's; refused while it
/// names credentials they have not saved.
#[server(endpoint = "import_graph", input = Json)]
pub async fn import_graph(document: Value) -> Result<Saved, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    let registry = ssr::validation_registry();
    let db = crate::db::from_context()?;
    let (document, preview) = with_error_status(
        ssr::prepare_import(&db, &registry, &user, document, &Default::default()).await,
    )?;
    if !preview.missing_credentials.is_empty() {
        return with_error_status(Err(AppError::MissingCredentials {
            names: preview.missing_credentials,
        }));
    }
    with_error_status(ssr::create(&db, &user, Some(document)).await)
}

/// Copies a graph the caller may see into a new graph of their own, and
/// opens it.
#[server(endpoint = "copy_graph")]
pub async fn copy_graph(id: String) -> Result<GraphId, AppError> {
    let db = crate::db::from_context()?;
    let caller = crate::accounts::ssr::caller();
    let copy = with_error_status(ssr::copy(&db, caller.as_ref(), &id).await)?;
    leptos_axum::redirect(&copy.id.href());
    Ok(copy.id)
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
pub mod ssr;

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
    fn graph_ids_must_be_uuids() {
        use super::GraphId;
        assert!(GraphId::parse("3F2A0000-0000-4000-8000-000000000000").is_some());
        assert_eq!(
            GraphId::parse("3F2A0000-0000-4000-8000-000000000000")
                .unwrap()
                .as_str(),
            "3f2a0000-0000-4000-8000-000000000000"
        );
        for bad in [
            "",
            "x",
            "3f2a0000-0000-4000-8000-00000000000z",
            "3f2a0000000004000800000000000000000",
        ] {
            assert!(GraphId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn odd_timestamps_are_shown_as_they_are() {
        assert_eq!(display_timestamp("yesterday"), "yesterday");
    }
}
