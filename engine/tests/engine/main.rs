//! The engine's integration tests, in one binary, through the public API a
//! library user has: documents in, compiled graphs, runs, events out.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

mod stores;
mod support;

mod bounds;
mod cancel;
mod ceilings;
mod conformance;
mod durable;
mod events;
mod examples;
#[cfg(feature = "http")]
mod fake_http;
mod format;
mod fuzz;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod graph_documents;
mod hooks;
#[cfg(feature = "http")]
mod http_tool;
mod loop_limit;
#[cfg(feature = "mcp")]
mod mcp;
mod nested;
#[cfg(feature = "openai")]
mod openai;
mod parallel;
mod retention;
mod retry;
mod routing;
#[cfg(feature = "runtime")]
mod scoring;
mod script;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored_changes;
mod stored_events;
#[cfg(feature = "runtime")]
mod structured;
mod subgraph;
mod tool_policies;
mod validation;
