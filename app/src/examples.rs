//! The server functions for the examples gallery.
//!
//! What they send and answer is [`heddle_wire::examples`] (re-exported here, so
//! the UI names it `crate::examples::…`); the rows and rules are
//! `heddle_store::examples`, which a server function calls after reading its
//! request (`crate::request`).

use crate::error::AppError;
use crate::graphs::GraphId;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;
#[cfg(feature = "ssr")]
use heddle_store::examples as store;
pub use heddle_wire::examples::*;
use leptos::prelude::*;

/// Every example, in gallery order.
#[server(endpoint = "list_examples")]
pub async fn list_examples() -> Result<Vec<ExampleSummary>, AppError> {
    Ok(store::summaries())
}

/// Creates a graph from an example and opens it.
#[server(endpoint = "use_example")]
pub async fn use_example(slug: String) -> Result<GraphId, AppError> {
    let user = with_error_status(crate::request::require_user())?;
    let document = with_error_status(store::document(&slug))?;
    let id = with_error_status(
        heddle_store::graphs::create(&crate::request::db()?, &user, Some(document)).await,
    )?
    .id;
    leptos_axum::redirect(&id.just_made_href());
    Ok(id)
}
