//! What this server offers graphs: the tools nodes may bind and the model
//! names they may ask for. The inspector's pickers list them (a name typed
//! by hand still works: the validator says if it is unknown at run time).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

/// Tools and models, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    pub tools: Vec<String>,
    pub models: Vec<String>,
}

/// The server's catalog (the server provides it to every request).
#[server(endpoint = "catalog")]
pub async fn get_catalog() -> Result<Catalog, AppError> {
    crate::http_status::with_error_status(crate::accounts::ssr::require_user())?;
    Ok(use_context::<Catalog>().unwrap_or_default())
}
