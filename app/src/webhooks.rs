//! The server functions for a graph's webhooks.
//!
//! What they send and answer is [`heddle_wire::webhooks`] (re-exported here, so
//! the UI names it `crate::webhooks::…`); the rows and rules are
//! `heddle_store::webhooks`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::webhooks as store;
pub use heddle_wire::webhooks::*;
use leptos::prelude::*;

/// The graph's hooks (viewers and up).
#[server(endpoint = "list_webhooks")]
pub async fn list_webhooks(graph_id: String) -> Result<Vec<Webhook>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed).await)
}

/// Makes a hook (editors); the answer holds its URL, shown this once.
#[server(endpoint = "create_webhook", input = leptos::server_fn::codec::Json)]
pub async fn create_webhook(
    graph_id: String,
    settings: WebhookSettings,
) -> Result<WebhookUrl, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::create(&db, &allowed, settings).await)
}

/// Changes a hook's settings (editors).
#[server(endpoint = "update_webhook", input = leptos::server_fn::codec::Json)]
pub async fn update_webhook(
    graph_id: String,
    id: String,
    settings: WebhookSettings,
) -> Result<Webhook, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::update(&db, &allowed, &id, settings).await)
}

/// Gives a hook a new URL; the old one stops working (editors).
#[server(endpoint = "regenerate_webhook")]
pub async fn regenerate_webhook(graph_id: String, id: String) -> Result<WebhookUrl, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::regenerate(&db, &allowed, &id).await)
}

/// Deletes a hook (editors).
#[server(endpoint = "delete_webhook")]
pub async fn delete_webhook(graph_id: String, id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::delete(&db, &allowed, &id).await)
}
