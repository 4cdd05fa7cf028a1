//! What crosses between Heddle's browser, its server and its HTTP API:
//! ids, requests and replies, the one error type, and the websocket
//! protocol. The browser build, the store and the server all depend on
//! this crate, and it depends on nothing of theirs (only the engine's
//! graph model), so a type both sides need lives here once.
//!
//! # Layout (one module per feature, each holding only data and the checks
//! both sides run)
//! - [`access`]: roles on a graph.
//! - [`accounts`]: users, their ids, the log-in status.
//! - [`api_keys`]: keys and their scopes.
//! - [`datasets`]: examples to evaluate a graph on, versioned.
//! - [`error`]: [`AppError`], what every call can answer instead.
//! - [`examples`]: the gallery's entries.
//! - [`experiments`]: a graph version run over a dataset, scored.
//! - [`graphs`]: graph ids, summaries, versions, saves and imports.
//! - [`limits`]: how big a graph and a run's input may be.
//! - [`protocol`]: the websocket's messages.
//! - [`publishing`]: which version of a graph is live.
//! - [`runs`]: runs, threads, usage, and the requests that start them.
//! - [`schedules`], [`webhooks`], [`widgets`]: the triggers that run a
//!   published graph.
//! - [`secrets`]: what a user's saved credentials look like when listed.
//! - [`sharing`]: members and share links.
//! - [`time`]: timestamps as stored and sent, read into instants.

pub mod access;

pub mod accounts;
pub mod api_keys;

pub mod datasets;
pub mod error;
pub mod examples;
pub mod experiments;

pub mod graphs;
pub mod limits;

pub mod protocol;
pub mod publishing;

pub mod runs;
pub mod schedules;

pub mod secrets;
pub mod sharing;
pub mod time;

pub mod webhooks;
pub mod widgets;

pub use error::AppError;
