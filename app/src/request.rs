//! What a server function takes from its request: the database, the
//! caller, the auth settings, the secret key and the catalog the server
//! put in the request's context. The store's functions take these as
//! arguments; this module is the one place that reads them from leptos's
//! context, so the store needs no web framework.

use std::net::IpAddr;

use heddle_engine::{Catalog, Registry};
use heddle_store::access::{Allowed, require};
use heddle_store::accounts::{Auth, ClientAddress};
use heddle_store::caller::Caller;
use heddle_store::db::Db;
use heddle_store::secrets::SecretKey;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::accounts::User;
use leptos::prelude::use_context;
use tower_sessions::Session;

use crate::http_status::with_error_status;

/// The request's [`Auth`], provided by the server.
pub fn auth() -> Result<Auth, AppError> {
    leptos::prelude::use_context::<Auth>().ok_or_else(|| {
        tracing::error!("no auth settings in the request context");
        AppError::Internal
    })
}

fn request_parts() -> Option<http::request::Parts> {
    leptos::prelude::use_context::<http::request::Parts>()
}

/// The address the server function's request came from.
pub fn client_address() -> Option<IpAddr> {
    request_parts()?.extensions.get::<ClientAddress>()?.0
}

/// Who is calling the server function or rendering the page.
pub fn caller() -> Option<User> {
    request_parts()?
        .extensions
        .get::<Caller>()?
        .session_user()
        .cloned()
}

/// The caller, or 401.
pub fn require_user() -> Result<User, AppError> {
    caller().ok_or_else(AppError::login_required)
}

pub fn session() -> Result<Session, AppError> {
    request_parts()
        .and_then(|parts| parts.extensions.get::<Session>().cloned())
        .ok_or_else(|| {
            tracing::error!("no session in the request; is the session layer installed?");
            AppError::Internal
        })
}

/// [`require`] for a server function: the database and the caller from
/// the request's context, and the response's status set from a refusal.
pub async fn require_here(graph_id: &str, needed: Role) -> Result<(Db, Allowed), AppError> {
    let db = db()?;
    let caller = caller();
    let allowed = with_error_status(require(&db, caller.as_ref(), graph_id, needed).await)?;
    Ok((db, allowed))
}

/// The server's secret key, from the request context.
pub fn secret_key() -> Result<SecretKey, AppError> {
    leptos::prelude::use_context::<SecretKey>().ok_or_else(|| {
        tracing::error!("no secret key in the request context");
        AppError::Internal
    })
}

/// The registry server functions validate with: the server's catalog of
/// tools and models (what the editor and the API validate against too).
pub fn validation_registry() -> Registry {
    let catalog = leptos::prelude::use_context::<Catalog>().unwrap_or_default();
    Registry::for_validation(&catalog)
}

/// The database the server put in the request's context (for server
/// functions).
pub fn db() -> Result<Db, AppError> {
    use_context::<Db>().ok_or_else(|| {
        tracing::error!("no database in the request context");
        AppError::Internal
    })
}
