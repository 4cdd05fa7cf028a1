//! What this server offers graphs: the tools nodes may bind and the model
//! names they may ask for (the engine's [`Catalog`]). The inspector's
//! pickers list them, and the editor validates against them, so it knows
//! the tools and models the server runs with.

use leptos::prelude::*;

use crate::error::AppError;

pub use heddle_engine::Catalog;

/// The server's catalog (the server provides it to every request).
#[server(endpoint = "catalog")]
pub async fn get_catalog() -> Result<Catalog, AppError> {
    crate::http_status::with_error_status(crate::request::require_user())?;
    Ok(use_context::<Catalog>().unwrap_or_default())
}
