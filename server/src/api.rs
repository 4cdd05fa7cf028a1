//! The HTTP JSON API for scripts, under `/api/v1` (documented in
//! docs/api.md): graphs (create, list, get, save, delete, versions,
//! import, export), runs (start, cancel, resume, list, events) and threads,
//! plus the websocket that streams run events (`/api/v1/ws`), accounts,
//! sharing, secrets, publishing, API keys and the invoke endpoint that
//! runs a published version. Every endpoint checks who is calling: 401 for
//! nobody, 404 for a graph they cannot see, 403 for a role too low.

mod accounts;
pub mod contract;
mod datasets;
pub mod error;
mod experiments;
mod graphs;
mod invoke;
mod keys;
pub mod openapi;
mod params;
mod publishing;
mod responses;
mod runs;
mod schedules;
mod secrets;
mod sharing;
mod webhooks;
mod widgets;

pub use error::{ApiError, ApiJson};

use aide::axum::ApiRouter;
use aide::axum::routing::{delete_with, get_with, post_with, put_with};
use aide::transform::TransformOperation;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get};

use crate::state::AppState;

/// The largest request body accepted (a graph import is the largest).
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// An operation's tag and summary in the OpenAPI document.
fn doc(
    tag: &'static str,
    summary: &'static str,
) -> impl FnOnce(TransformOperation) -> TransformOperation {
    move |op| op.tag(tag).summary(summary)
}

/// The same for an operation an API key may call as well as a session.
fn keyed(
    tag: &'static str,
    summary: &'static str,
) -> impl FnOnce(TransformOperation) -> TransformOperation {
    move |op| {
        let mut op = op.tag(tag).summary(summary);
        openapi::takes_api_keys(op.inner_mut());
        op
    }
}

/// The API's routes, and its OpenAPI document at [`openapi::PATH`].
pub fn routes() -> Router<AppState> {
    let documented = ApiRouter::new()
        .api_route(
            "/api/v1/graphs",
            get_with(
                graphs::list,
                doc("graphs", "The caller's graphs and those shared with them"),
            )
            .post_with(graphs::create, doc("graphs", "Create a graph")),
        )
        .api_route(
            "/api/v1/graphs/import",
            post_with(graphs::import, doc("graphs", "Import a graph document")),
        )
        .api_route(
            "/api/v1/graphs/{id}",
            get_with(graphs::get, keyed("graphs", "A graph and its document"))
                .put_with(graphs::save, doc("graphs", "Save a new version"))
                .delete_with(
                    graphs::delete,
                    doc("graphs", "Delete a graph with its runs"),
                ),
        )
        .api_route(
            "/api/v1/graphs/{id}/export",
            get_with(graphs::export, keyed("graphs", "Download the document")),
        )
        .api_route(
            "/api/v1/graphs/{id}/versions",
            get_with(
                graphs::versions,
                keyed("graphs", "Saved versions, newest first"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/versions/{version}",
            get_with(graphs::version, keyed("graphs", "One version's document")),
        )
        .api_route(
            "/api/v1/graphs/{id}/versions/{version}/restore",
            post_with(
                graphs::restore,
                doc("graphs", "Save an old version as the newest"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/copy",
            post_with(
                graphs::copy,
                doc("graphs", "Copy a graph into the caller's own"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/runs",
            get_with(runs::list, keyed("runs", "The graph's runs, newest first"))
                .post_with(runs::start, doc("runs", "Start a run")),
        )
        .api_route(
            "/api/v1/graphs/{id}/threads",
            get_with(runs::threads, keyed("runs", "The graph's threads")),
        )
        .api_route(
            "/api/v1/graphs/{id}/usage",
            get_with(
                runs::usage,
                keyed("runs", "Tokens and cost of the graph's runs, per day"),
            ),
        )
        .api_route(
            "/api/v1/runs/{id}",
            get_with(runs::get, keyed("runs", "A run")),
        )
        .api_route(
            "/api/v1/runs/{id}/events",
            get_with(
                runs::events,
                keyed("runs", "A run's event log from a sequence number"),
            ),
        )
        .api_route(
            "/api/v1/runs/{id}/cancel",
            post_with(runs::cancel, keyed("runs", "Cancel a run")),
        )
        .api_route(
            "/api/v1/runs/{id}/fork",
            post_with(
                runs::fork,
                keyed("runs", "Fork a run from a step, with edits"),
            ),
        )
        .api_route(
            "/api/v1/threads/{id}",
            get_with(
                runs::thread,
                keyed("runs", "A thread: newest state and messages"),
            ),
        )
        .api_route(
            "/api/v1/threads/{id}/resume",
            post_with(runs::resume, keyed("runs", "Answer a paused thread")),
        )
        .api_route(
            "/api/v1/graphs/{id}/sharing",
            get_with(sharing::get, doc("sharing", "Links and members (owner)")),
        )
        .api_route(
            "/api/v1/graphs/{id}/links",
            post_with(
                sharing::create_link,
                doc("sharing", "Make a share link (owner)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/links/{link}",
            delete_with(
                sharing::revoke_link,
                doc("sharing", "Revoke a share link (owner)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/members/{username}",
            put_with(
                sharing::set_member,
                doc("sharing", "Set a teammate's role (owner)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/published",
            get_with(
                publishing::get,
                keyed("publishing", "The version calls from outside run"),
            )
            .put_with(
                publishing::put,
                doc("publishing", "Publish a version (editor)"),
            )
            .delete_with(
                publishing::delete,
                doc("publishing", "Take the graph offline (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/invoke",
            post_with(
                invoke::invoke,
                keyed(
                    "invoke",
                    "Run the published version and wait for its result (or stream its events)",
                ),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/webhooks",
            get_with(
                webhooks::list,
                doc("webhooks", "The graph's webhooks, without URLs"),
            )
            .post_with(
                webhooks::create,
                doc("webhooks", "Make a webhook: its URL, shown once (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/webhooks/{hook}",
            put_with(
                webhooks::update,
                doc("webhooks", "Change a webhook (editor)"),
            )
            .delete_with(
                webhooks::delete,
                doc("webhooks", "Delete a webhook (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/webhooks/{hook}/regenerate",
            post_with(
                webhooks::regenerate,
                doc("webhooks", "Give a webhook a new URL (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/datasets",
            get_with(
                datasets::list,
                keyed("datasets", "The graph's datasets, with their latest versions"),
            )
            .post_with(
                datasets::create,
                keyed("datasets", "Make an empty dataset (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/datasets/{dataset}",
            get_with(
                datasets::get,
                keyed("datasets", "A version of a dataset, with a page of its examples"),
            )
            .put_with(datasets::rename, keyed("datasets", "Rename a dataset (editor)"))
            .delete_with(
                datasets::delete,
                keyed("datasets", "Delete a dataset and all its versions (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/datasets/{dataset}/examples",
            post_with(
                datasets::add,
                keyed("datasets", "Add examples: a new version (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/datasets/{dataset}/examples/from-run",
            post_with(
                datasets::from_run,
                keyed(
                    "datasets",
                    "Add an example made of a finished run: its input, its output as the reference (editor)",
                ),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/datasets/{dataset}/examples/{example}",
            put_with(
                datasets::replace,
                keyed("datasets", "Replace an example: a new version (editor)"),
            )
            .delete_with(
                datasets::remove,
                keyed("datasets", "Remove an example: a new version (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/experiments",
            get_with(
                experiments::list,
                keyed("experiments", "The graph's newest experiments, with their scores"),
            )
            .post_with(
                experiments::create,
                keyed(
                    "experiments",
                    "Run a graph version over a dataset version and score it (editor, or a key that may run the graph)",
                ),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/experiments/{experiment}",
            get_with(
                experiments::get,
                keyed("experiments", "An experiment: its progress and scores"),
            )
            .delete_with(
                experiments::delete,
                keyed("experiments", "Delete an experiment that is not running (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/experiments/{experiment}/items",
            get_with(
                experiments::items,
                keyed("experiments", "A page of an experiment's runs with their scores"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/experiments/{experiment}/cancel",
            post_with(
                experiments::cancel,
                keyed("experiments", "Cancel a running experiment and its runs"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/publish-gate",
            get_with(
                experiments::gate,
                keyed("experiments", "The graph's gate on publishing, or null"),
            )
            .put_with(
                experiments::set_gate,
                doc(
                    "experiments",
                    "Gate publishing on a dataset version: a version goes live only when its experiment scores no worse than the live one's (editor)",
                ),
            )
            .delete_with(
                experiments::remove_gate,
                doc("experiments", "Remove the publishing gate (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/schedules",
            get_with(
                schedules::list,
                doc("schedules", "The graph's schedules, with their next times"),
            )
            .post_with(
                schedules::create,
                doc("schedules", "Make a schedule (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/schedules/{schedule}",
            put_with(
                schedules::update,
                doc("schedules", "Change a schedule (editor)"),
            )
            .delete_with(
                schedules::delete,
                doc("schedules", "Delete a schedule (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/widgets",
            get_with(widgets::list, doc("widgets", "The graph's chat widgets")).post_with(
                widgets::create,
                doc("widgets", "Make a chat widget (editor)"),
            ),
        )
        .api_route(
            "/api/v1/graphs/{id}/widgets/{widget}",
            put_with(
                widgets::update,
                doc("widgets", "Change a chat widget (editor)"),
            )
            .delete_with(
                widgets::delete,
                doc("widgets", "Delete a chat widget (editor)"),
            ),
        )
        .api_route(
            "/api/v1/hooks/{token}",
            post_with(
                webhooks::call,
                doc(
                    "webhooks",
                    "Call a webhook: runs its graph's published version",
                ),
            ),
        )
        .api_route(
            "/api/v1/keys",
            get_with(
                keys::list,
                doc("keys", "The caller's API keys, without secrets"),
            )
            .post_with(
                keys::create,
                doc("keys", "Make an API key: its secret, shown once"),
            ),
        )
        .api_route(
            "/api/v1/keys/{id}",
            delete_with(keys::revoke, doc("keys", "Revoke an API key")),
        )
        .api_route(
            "/api/v1/share/{token}",
            post_with(sharing::accept, doc("sharing", "Open a share link")),
        )
        .api_route(
            "/api/v1/auth/signup",
            post_with(
                accounts::sign_up,
                doc("accounts", "Create an account and log in"),
            ),
        )
        .api_route(
            "/api/v1/auth/login",
            post_with(
                accounts::log_in,
                doc("accounts", "Log in: sets the session cookie"),
            ),
        )
        .api_route(
            "/api/v1/auth/logout",
            post_with(accounts::log_out, doc("accounts", "End the session")),
        )
        .api_route(
            "/api/v1/auth/me",
            get_with(accounts::me, doc("accounts", "Who is logged in")),
        )
        .api_route(
            "/api/v1/auth/password",
            post_with(
                accounts::change_password,
                doc("accounts", "Change the password"),
            ),
        )
        .api_route(
            "/api/v1/secrets",
            get_with(
                secrets::list,
                doc("secrets", "The caller's secrets, without values"),
            ),
        )
        .api_route(
            "/api/v1/secrets/{name}",
            put_with(secrets::put, doc("secrets", "Store a secret"))
                .delete_with(secrets::delete, doc("secrets", "Delete a secret")),
        );
    openapi::finish(documented)
        // The websocket is described in docs/api.md, not in the document:
        // OpenAPI has no words for its messages.
        .route("/api/v1/ws", get(crate::ws::upgrade))
        .route("/api/v1", any(contract::unknown_endpoint))
        .route("/api/v1/{*rest}", any(contract::unknown_endpoint))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}
