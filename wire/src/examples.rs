//! The examples gallery: graphs that ship with Heddle (the files in
//! engine/examples/graphs, embedded in the server binary) and run on the
//! offline model out of the box. Using one copies it into a new graph.

use serde::{Deserialize, Serialize};

/// One example, as the gallery lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExampleSummary {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub node_count: usize,
    /// The graph itself, for the gallery's preview.
    pub document: String,
}
