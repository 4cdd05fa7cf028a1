//! Published versions: the version of a graph that calls from outside the
//! editor run (API keys, invoke, chat endpoints, webhooks, schedules),
//! never the draft being edited. An owner or editor publishes a saved
//! version; publishing another (newer or older: a rollback) is one call,
//! and so is taking the graph offline.

use serde::{Deserialize, Serialize};

/// Which version of a graph is live, since when, and who made it so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Publication {
    pub version: i64,
    pub published_at: String,
    /// Their username (`None` when that account is gone).
    pub published_by: Option<String>,
}
