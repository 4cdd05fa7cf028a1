//! The document's types. Field order here is the order keys are written in;
//! optional fields are omitted when empty so exports stay small and diff
//! cleanly.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::FORMAT_VERSION;
use crate::ids::{EdgeId, NodeId};

/// A graph as saved in the database and exported to a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphDocument {
    /// The format version the document is written in.
    pub format_version: u32,
    /// The graph's display name.
    pub name: String,
    /// What the graph does, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The run state: named channels, each with a type and a reducer.
    #[serde(default)]
    pub state: StateSchema,
    /// The nodes, in the order the editor lists them.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    /// The edges between nodes.
    #[serde(default)]
    pub edges: Vec<EdgeSpec>,
    /// The node a run starts at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<NodeId>,
    /// Limits on a run.
    #[serde(default)]
    pub limits: Limits,
    /// Sticky notes on the canvas, for people; runs ignore them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Frames around sets of nodes on the canvas, each maybe collapsed to
    /// one box; for people, runs ignore them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
    /// What is kept of this graph's runs, where it differs from the
    /// server's policy.
    #[serde(default, skip_serializing_if = "Retention::is_default")]
    pub retention: Retention,
}

/// What a store keeps of old checkpoints and run logs (see docs/runs.md,
/// "Retention"). Each field left out follows the server's policy (a
/// graph's), or keeps everything (the server's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retention {
    /// Keep the newest this many checkpoints of each thread. Every pause,
    /// every fork point, each run's last checkpoint and every pinned one
    /// are kept besides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_checkpoints: Option<std::num::NonZeroU32>,
    /// Compact the event log of a run that ended more than this many days
    /// ago to its outcome: its first and last events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_events_days: Option<u32>,
}

impl Retention {
    /// Whether it says nothing (the server's policy holds).
    pub fn is_default(&self) -> bool {
        *self == Retention::default()
    }

    /// This policy, with `fallback`'s where this one says nothing.
    pub fn or(self, fallback: Retention) -> Retention {
        Retention {
            keep_checkpoints: self.keep_checkpoints.or(fallback.keep_checkpoints),
            keep_events_days: self.keep_events_days.or(fallback.keep_events_days),
        }
    }
}

/// A sticky note on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// Unique among the graph's notes.
    pub id: String,
    /// What it says (plain text).
    #[serde(default)]
    pub text: String,
    /// Its top-left corner on the canvas.
    pub position: Position,
}

/// A frame around a set of nodes on the canvas. Its box is worked out
/// from its nodes' places, so it follows them; collapsed, the editor draws
/// its nodes as one box. A node is in one group at most.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Unique among the graph's groups.
    pub id: String,
    /// Its name on the canvas.
    #[serde(default)]
    pub label: String,
    /// The nodes it frames.
    pub nodes: Vec<NodeId>,
    /// Whether the editor draws its nodes as one box.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub collapsed: bool,
    /// Its tint on the canvas. A colour this version does not know reads
    /// as the default: groups are for reading, never a reason to refuse a
    /// graph.
    #[serde(
        default,
        skip_serializing_if = "GroupColor::is_default",
        deserialize_with = "GroupColor::lenient"
    )]
    pub color: GroupColor,
}

/// The tints a group may have: a fixed set, so a document names a colour
/// and never carries styling of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupColor {
    #[default]
    Indigo,
    Blue,
    Green,
    Amber,
    Rose,
    Gray,
}

impl GroupColor {
    /// Every tint, in the order the editor offers them.
    pub const ALL: [GroupColor; 6] = [
        GroupColor::Indigo,
        GroupColor::Blue,
        GroupColor::Green,
        GroupColor::Amber,
        GroupColor::Rose,
        GroupColor::Gray,
    ];

    /// Its name, as the document writes it.
    pub fn name(self) -> &'static str {
        match self {
            GroupColor::Indigo => "indigo",
            GroupColor::Blue => "blue",
            GroupColor::Green => "green",
            GroupColor::Amber => "amber",
            GroupColor::Rose => "rose",
            GroupColor::Gray => "gray",
        }
    }

    fn is_default(&self) -> bool {
        *self == GroupColor::default()
    }

    /// Reads a tint, taking any value it does not know for the default.
    fn lenient<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<GroupColor, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(GroupColor::ALL
            .into_iter()
            .find(|color| value.as_str() == Some(color.name()))
            .unwrap_or_default())
    }
}

impl GraphDocument {
    /// A node id not yet taken: `kind`, then `kind_2`, `kind_3`, ...
    pub fn fresh_node_id(&self, kind: &str) -> NodeId {
        let ids: std::collections::BTreeSet<&str> =
            self.nodes.iter().map(|node| node.id.as_str()).collect();
        let taken = |id: &str| ids.contains(id);
        if !taken(kind) {
            return NodeId::from(kind);
        }
        (2..)
            .map(|n| format!("{kind}_{n}"))
            .find(|id| !taken(id))
            .map_or_else(|| NodeId::from(kind), NodeId::from)
    }

    /// An edge id not yet taken: `e1`, `e2`, ...
    pub fn fresh_edge_id(&self) -> EdgeId {
        let ids: std::collections::BTreeSet<&str> =
            self.edges.iter().map(|edge| edge.id.as_str()).collect();
        let taken = |id: &str| ids.contains(id);
        (1..)
            .map(|n| format!("e{n}"))
            .find(|id| !taken(id))
            .map_or_else(|| EdgeId::from("e"), EdgeId::from)
    }

    /// Keeps the canvas groups true to the nodes: a node no longer in the
    /// graph leaves its group, a node in two groups stays in the first, a
    /// group left empty goes, and a group whose id is taken gets a fresh
    /// one.
    pub fn mend_groups(&mut self) {
        if self.groups.is_empty() {
            return;
        }
        let present: std::collections::BTreeSet<&NodeId> =
            self.nodes.iter().map(|node| &node.id).collect();
        let mut framed = std::collections::BTreeSet::new();
        for group in &mut self.groups {
            group
                .nodes
                .retain(|id| present.contains(id) && framed.insert(id.clone()));
        }
        self.groups.retain(|group| !group.nodes.is_empty());
        let mut ids = std::collections::BTreeSet::new();
        for i in 0..self.groups.len() {
            if self.groups[i].id.is_empty() || !ids.insert(self.groups[i].id.clone()) {
                let fresh = self.fresh_group_id();
                ids.insert(fresh.clone());
                self.groups[i].id = fresh;
            }
        }
    }

    /// A group id not yet taken: `group-1`, `group-2`, ...
    pub fn fresh_group_id(&self) -> String {
        (1..)
            .map(|n| format!("group-{n}"))
            .find(|id| self.groups.iter().all(|group| &group.id != id))
            .unwrap_or_else(|| "group".into())
    }

    /// An empty graph with the given name.
    pub fn new(name: &str) -> Self {
        GraphDocument {
            format_version: FORMAT_VERSION,
            name: name.to_string(),
            description: String::new(),
            state: StateSchema::default(),
            nodes: Vec::new(),
            edges: Vec::new(),
            entry: None,
            limits: Limits::default(),
            notes: Vec::new(),
            groups: Vec::new(),
            retention: Retention::default(),
        }
    }
}

/// The channels of a run's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateSchema {
    /// Channels by name.
    #[serde(default)]
    pub channels: BTreeMap<String, Channel>,
}

/// One named value of the state, and how concurrent updates to it combine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Channel {
    /// What the channel holds.
    #[serde(rename = "type")]
    pub ty: ChannelType,
    /// How an update combines with the current value.
    #[serde(default)]
    pub reducer: Reducer,
    /// The value before any update; when absent, the type's empty value
    /// (`[]`, `{}`, `0`, `""`, `false`, or `null` for `any`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What the channel is for, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Whether the value lives for one run or carries over to the next run
    /// on the same thread (a conversation's messages, a memory).
    #[serde(default, skip_serializing_if = "is_run_scope")]
    pub scope: ChannelScope,
    /// The values the channel takes: a JSON Schema of the subset
    /// docs/graph-format.md lists (format version 3). Every update is
    /// checked against it, and a model writing the channel is asked for
    /// such a value (structured output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

/// How long a channel's value lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelScope {
    /// Each run starts from the channel's default.
    #[default]
    Run,
    /// A run starts from the value the thread's previous run ended with.
    Thread,
}

fn is_run_scope(scope: &ChannelScope) -> bool {
    *scope == ChannelScope::Run
}

/// The type of a channel's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelType {
    /// Any JSON value.
    Any,
    /// Text.
    String,
    /// A number (integer or not).
    Number,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON list.
    List,
    /// A JSON object.
    Object,
    /// A chat transcript: a list of messages (`{id, role, content, ...}`).
    Messages,
}

/// How updates to a channel combine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reducer {
    /// The update replaces the value (the last update of a step wins, in
    /// task order).
    #[default]
    Replace,
    /// The update is appended (a list update is appended item by item).
    Append,
    /// The update's keys are merged into the object (shallow).
    Merge,
    /// Messages are appended; one with the id of an existing message
    /// replaces it.
    AddMessages,
    /// The update is added to the number.
    Sum,
}

/// A node as the document stores it: its kind names the config's type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique within the graph.
    pub id: NodeId,
    /// The node kind, e.g. `set`, `condition`, `llm`.
    pub kind: String,
    /// The version of the kind's config this node was written with.
    #[serde(default = "one")]
    pub version: u32,
    /// The name shown on the canvas.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The kind's settings.
    #[serde(default = "empty_object", skip_serializing_if = "is_empty_object")]
    pub config: Value,
    /// Where the editor draws the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// The node's size in the editor, when the user resized it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// Retry a failing execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    /// Fail an execution (attempt) that takes longer than this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Pause the run before this node runs (a breakpoint).
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupt_before: bool,
    /// Pause the run after this node's step.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupt_after: bool,
}

impl NodeSpec {
    /// The node as a person reads it: its label, else its id.
    pub fn name(&self) -> &str {
        match self.label.trim() {
            "" => self.id.as_str(),
            label => label,
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn one() -> u32 {
    1
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn is_empty_object(value: &Value) -> bool {
    value.as_object().is_some_and(serde_json::Map::is_empty)
}

/// A point on the canvas.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

/// A size on the canvas.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Size {
    pub width: f64,
    pub height: f64,
}

/// An edge: after `from` runs, `to` runs, if the condition holds or the
/// route was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    /// Unique within the graph.
    pub id: EdgeId,
    pub from: NodeId,
    pub to: NodeId,
    /// Taken only when this expression over the state is true (see the
    /// condition language in docs/graph-format.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Taken only when `from` chooses this route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
}

/// Limits on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The most super-steps a run may take before it fails.
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// The most tokens (prompt and completion, every model call) a run
    /// may use; over it, the run fails naming this budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// The most a run's model calls may cost, in US dollars (by the
    /// server's price table; models without a price count as free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost: Option<f64>,
}

fn default_max_steps() -> u32 {
    100
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: default_max_steps(),
            max_tokens: None,
            max_cost: None,
        }
    }
}

/// When and how often a failing node is tried again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 means no retry).
    pub max_attempts: u32,
    /// The wait before the first retry.
    #[serde(default = "default_initial_ms")]
    pub initial_interval_ms: u64,
    /// Each wait is this many times the previous one.
    #[serde(default = "default_factor")]
    pub backoff_factor: f64,
    /// No wait is longer than this.
    #[serde(default = "default_max_interval_ms")]
    pub max_interval_ms: u64,
    /// Randomize each wait between half and all of it, so retries of many
    /// runs do not arrive together.
    #[serde(default = "default_true")]
    pub jitter: bool,
    /// Which failures are retried.
    #[serde(default)]
    pub retry_on: RetryOn,
}

fn default_initial_ms() -> u64 {
    500
}

fn default_factor() -> f64 {
    2.0
}

fn default_max_interval_ms() -> u64 {
    30_000
}

fn default_true() -> bool {
    true
}

/// Which failures a retry policy retries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetryOn {
    /// Failures the node marks as transient (timeouts, rate limits, 5xx).
    #[default]
    Transient,
    /// Every failure.
    All,
}
