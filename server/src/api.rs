//! The HTTP JSON API for scripts, under `/api/v1` (documented in
//! docs/api.md): graphs (create, list, get, save, delete, versions,
//! import, export), runs (start, cancel, resume, list, events) and threads,
//! plus the websocket that streams run events (`/api/v1/ws`), accounts,
//! sharing and secrets. Every endpoint checks who is calling: 401 for
//! nobody, 404 for a graph they cannot see, 403 for a role too low.

mod accounts;
pub mod contract;
mod error;
mod graphs;
mod runs;
mod secrets;
mod sharing;

pub use error::{ApiError, ApiJson};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, delete, get, post, put};

use crate::state::AppState;

/// The largest request body accepted (a graph import is the largest).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The API's routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/graphs", get(graphs::list).post(graphs::create))
        .route("/api/v1/graphs/import", post(graphs::import))
        .route(
            "/api/v1/graphs/{id}",
            get(graphs::get).put(graphs::save).delete(graphs::delete),
        )
        .route("/api/v1/graphs/{id}/export", get(graphs::export))
        .route("/api/v1/graphs/{id}/versions", get(graphs::versions))
        .route(
            "/api/v1/graphs/{id}/versions/{version}",
            get(graphs::version),
        )
        .route(
            "/api/v1/graphs/{id}/versions/{version}/restore",
            post(graphs::restore),
        )
        .route(
            "/api/v1/graphs/{id}/runs",
            get(runs::list).post(runs::start),
        )
        .route("/api/v1/graphs/{id}/threads", get(runs::threads))
        .route("/api/v1/runs/{id}", get(runs::get))
        .route("/api/v1/runs/{id}/events", get(runs::events))
        .route("/api/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/api/v1/runs/{id}/fork", post(runs::fork))
        .route("/api/v1/threads/{id}", get(runs::thread))
        .route("/api/v1/threads/{id}/resume", post(runs::resume))
        .route("/api/v1/graphs/{id}/copy", post(graphs::copy))
        .route("/api/v1/graphs/{id}/sharing", get(sharing::get))
        .route("/api/v1/graphs/{id}/links", post(sharing::create_link))
        .route(
            "/api/v1/graphs/{id}/links/{link}",
            delete(sharing::revoke_link),
        )
        .route(
            "/api/v1/graphs/{id}/members/{username}",
            put(sharing::set_member),
        )
        .route("/api/v1/share/{token}", post(sharing::accept))
        .route("/api/v1/auth/signup", post(accounts::sign_up))
        .route("/api/v1/auth/login", post(accounts::log_in))
        .route("/api/v1/auth/logout", post(accounts::log_out))
        .route("/api/v1/auth/me", get(accounts::me))
        .route("/api/v1/auth/password", post(accounts::change_password))
        .route("/api/v1/secrets", get(secrets::list))
        .route(
            "/api/v1/secrets/{name}",
            put(secrets::put).delete(secrets::delete),
        )
        .route("/api/v1/ws", get(crate::ws::upgrade))
        .route("/api/v1", any(contract::unknown_endpoint))
        .route("/api/v1/{*rest}", any(contract::unknown_endpoint))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}
