//! The server functions for a graph's chat widgets.
//!
//! What they send and answer is [`heddle_wire::widgets`] (re-exported here, so
//! the UI names it `crate::widgets::…`); the rows and rules are
//! `heddle_store::widgets`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::widgets as store;
pub use heddle_wire::widgets::*;
use leptos::prelude::*;

/// The graph's widgets (viewers and up).
#[server(endpoint = "list_widgets")]
pub async fn list_widgets(graph_id: String) -> Result<Vec<Widget>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed).await)
}

/// Makes a widget (editors).
#[server(endpoint = "create_widget", input = leptos::server_fn::codec::Json)]
pub async fn create_widget(graph_id: String, settings: WidgetSettings) -> Result<Widget, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::create(&db, &allowed, settings).await)
}

/// Changes a widget (editors).
#[server(endpoint = "update_widget", input = leptos::server_fn::codec::Json)]
pub async fn update_widget(
    graph_id: String,
    id: String,
    settings: WidgetSettings,
) -> Result<Widget, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::update(&db, &allowed, &id, settings).await)
}

/// Deletes a widget (editors): pages embedding it show it unavailable.
#[server(endpoint = "delete_widget")]
pub async fn delete_widget(graph_id: String, id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::delete(&db, &allowed, &id).await)
}
