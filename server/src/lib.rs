//! The Heddle server: serves the app (server-rendered Leptos pages, server
//! functions, static assets), owns the SQLite database and, as it grows,
//! runs graphs on the engine.
//!
//! # Layout
//! - [`api`]: the HTTP JSON API for scripts.
//! - [`openai`]: the OpenAI-compatible chat endpoints for published graphs.
//! - [`auth`]: sessions, who is calling, the CSRF and log-in guards.
//! - [`host_guard`]: answers only to the host names the server is reached by.
//! - [`sessions`]: the SQLite session store.
//! - [`runs`]: runs as background tasks, their live events, recovery.
//! - [`schedules`]: firing cron schedules, once per time across servers.
//! - [`experiments`]: driving experiments, a window of runs at a time.
//! - [`ws`]: the websocket that streams run events.
//! - [`telemetry`]: runs as OpenTelemetry traces, and Prometheus metrics.
//! - [`widget`]: the chat widget's script and public endpoints.
//! - [`cli`]: the headless commands (run, resume, validate, ...).
//! - [`config`]: the command line and environment of the `heddle` binary.
//! - [`models`]: which chat models graphs get (offline, or an endpoint).
//! - [`db`]: opening the database and applying the embedded migrations.
//! - [`state`]: what every request handler can reach.
//! - [`error_status`]: gives server-function errors their proper HTTP status.
//! - [`routes`]: the HTTP router: pages, server functions, assets, health.
//! - [`security_headers`]: nosniff, no framing, referrer policy, and the
//!   Content-Security-Policy of pages (with their nonce) and the rest.
//! - [`serve`]: binding, serving and shutting down gracefully.

// The app's views are deeply nested types; the server renders them.
#![recursion_limit = "256"]

pub mod api;
pub mod auth;
pub mod cli;
pub mod config;
pub mod db_copy;
pub mod embedded_site;
pub mod error_status;
pub mod experiments;
pub mod host_guard;
pub mod models;
pub mod openai;
pub mod retention;
pub mod routes;
pub mod runs;
pub mod schedules;
pub mod security_headers;
pub mod serve;
pub mod sessions;
pub mod state;
pub mod telemetry;
pub mod widget;
pub mod ws;

pub use routes::router;
pub use state::AppState;
