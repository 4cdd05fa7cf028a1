//! The server functions for a graph's schedules.
//!
//! What they send and answer is [`heddle_wire::schedules`] (re-exported here, so
//! the UI names it `crate::schedules::…`); the rows and rules are
//! `heddle_store::schedules`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::schedules as store;
pub use heddle_wire::schedules::*;
use leptos::prelude::*;

/// The graph's schedules (viewers and up).
#[server(endpoint = "list_schedules")]
pub async fn list_schedules(graph_id: String) -> Result<Vec<Schedule>, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Viewer).await?;
    with_error_status(store::list(&db, &allowed).await)
}

/// Makes a schedule (editors).
#[server(endpoint = "create_schedule", input = leptos::server_fn::codec::Json)]
pub async fn create_schedule(
    graph_id: String,
    settings: ScheduleSettings,
) -> Result<Schedule, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::create(&db, &allowed, settings).await)
}

/// Changes a schedule (editors).
#[server(endpoint = "update_schedule", input = leptos::server_fn::codec::Json)]
pub async fn update_schedule(
    graph_id: String,
    id: String,
    settings: ScheduleSettings,
) -> Result<Schedule, AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::update(&db, &allowed, &id, settings).await)
}

/// Deletes a schedule (editors).
#[server(endpoint = "delete_schedule")]
pub async fn delete_schedule(graph_id: String, id: String) -> Result<(), AppError> {
    let (db, allowed) =
        crate::request::require_here(&graph_id, crate::access::Role::Editor).await?;
    with_error_status(store::delete(&db, &allowed, &id).await)
}
