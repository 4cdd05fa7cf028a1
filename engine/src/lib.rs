//! Heddle's graph engine: the graph document format, its validation, and
//! the executor that runs graphs in super-steps.
//!
//! The crate has no web dependency. Without its default `runtime` feature
//! it is the model, validation and compilation only, and compiles to
//! `wasm32-unknown-unknown`, so the browser editor validates with the very
//! code the server runs.
//!
//! # Layout
//! - [`format`]: the versioned JSON document, its migrations and schema.
//! - [`catalog`]: what a registry offers (tools, models) as data, and a
//!   registry that validates against it (the editor's).
//! - [`ceilings`]: the most a runner lets any graph ask for.
//! - [`compile`]: document to runnable graph, checking everything at once.
//! - [`credentials`]: secrets graphs name, bound by whoever runs them.
//! - [`validate`]: the problems validation reports, each located.
//! - [`expr`]: the small, safe condition language.
//! - [`fair_share`] (feature `runtime`): places (model calls, script
//!   threads) taken in fair turns between the parties runs are made for.
//! - [`schema`]: the JSON Schema subset channels may carry, checked here.
//! - [`scoring`] (feature `runtime`): scorers that rate a run against an
//!   example of a dataset, from 0 to 1 with a reason.
//! - [`state`]: channels, their types and reducers.
//! - [`node`]: the `Node` trait and how kinds are built and registered.
//! - [`kinds`]: the built-in node kinds, one file each.
//! - [`model`]: chat models: the trait, the offline model, an OpenAI-compatible client.
//! - [`named_enum!`]: enums stored and sent by name, each name written once.
//! - [`tools`]: tools models call, and the built-in ones.
//! - [`run`] (feature `runtime`): the executor, its events, cancellation
//!   and retries.
//! - [`ids`]: typed ids.

// Without the executor, the compiled graph's runtime parts are never read;
// the default build (with it) still checks for dead code.
#![cfg_attr(not(feature = "runtime"), allow(dead_code))]

pub mod catalog;
pub mod ceilings;
pub mod compile;
pub mod credentials;
pub mod expr;
#[cfg(feature = "runtime")]
pub mod fair_share;
pub mod format;
pub mod ids;
pub mod kinds;
pub mod model;
mod named;
pub mod node;
#[cfg(feature = "runtime")]
pub mod recording;
pub mod run;
pub mod schema;
#[cfg(feature = "runtime")]
pub mod scoring;
pub mod state;
pub mod tools;
pub mod usage;
pub mod validate;

pub use catalog::Catalog;
pub use ceilings::Ceilings;
pub use compile::{CompiledGraph, LoadError, compile, node_routes, validate};
pub use format::{FORMAT_VERSION, FormatError, GraphDocument};
pub use ids::{CheckpointId, EdgeId, NodeId, RunId, ThreadId};
pub use node::{FileAccess, Registry};
