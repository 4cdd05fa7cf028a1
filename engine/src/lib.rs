//! Heddle's graph engine: the graph document format, its validation and
//! (as it grows) the executor that runs graphs.
//!
//! The crate has no web dependency and compiles to `wasm32-unknown-unknown`,
//! so the browser editor and the server share one model of a graph.
//!
//! # Layout
//! - [`document`]: the versioned JSON document a graph is saved and exported as.

pub mod document;

pub use document::{DocumentError, FORMAT_VERSION, GraphDocument};
