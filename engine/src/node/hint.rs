//! What a config field refers to, for the editor. Kinds mark fields of
//! their config schema with `"x-heddle": "<hint>"` (via schemars' `extend`)
//! so the editor's generated forms offer the right picker: a channel list
//! for a channel, the server's models for a model, the conversation's
//! channels for a `messages` field. The marks are data in the schema, so a
//! kind added later gets the same pickers without editor code.

use serde::{Deserialize, Serialize};

/// The schema keyword a field's hint is written under.
pub const HINT_KEYWORD: &str = "x-heddle";
/// The schema keyword an object-as-map's key hint is written under.
pub const KEY_HINT_KEYWORD: &str = "x-heddle-key";

/// What a string field (or each string of a list) names or holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldHint {
    /// A channel of the graph's state.
    Channel,
    /// A channel of type `messages`.
    MessagesChannel,
    /// A model name, as the server's catalog lists them.
    Model,
    /// The name of a secret, bound by whoever runs the graph.
    Credential,
    /// A tool of the server's catalog.
    Tool,
    /// A node of this graph.
    Node,
    /// Text with `{{ expression }}` holes.
    Template,
    /// An expression over the state (the condition language).
    Expression,
    /// A Rhai script.
    Script,
    /// A whole graph document, embedded.
    Graph,
    /// One of the node's own routes (its `routes[*].route`).
    Route,
}

impl FieldHint {
    /// The hint a schema node carries under `keyword`, if it carries one.
    pub fn of(schema: &serde_json::Value, keyword: &str) -> Option<FieldHint> {
        serde_json::from_value(schema.get(keyword)?.clone()).ok()
    }
}
