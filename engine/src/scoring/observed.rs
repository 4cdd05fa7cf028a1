//! What a run did, as scorers read it: its output, the nodes that ran
//! (inside subgraphs and sub-agents too), the tools its models called with
//! their arguments, its usage and how long it took. Drawn from the run's
//! own event log, so a stored run can be scored as well as a live one.

use serde_json::Value;

use crate::run::{Event, EventPayload, Hop};
use crate::usage::UsageTotals;

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The run's final state: an object of its channels.
    pub output: Value,
    /// The nodes that ran to an end (succeeded or failed), in the log's
    /// order, each named by its path (see [`node_path`]).
    pub nodes: Vec<String>,
    /// The tool calls the models asked for, in order.
    pub tool_calls: Vec<ToolCallMade>,
    /// The run's tokens and cost.
    pub usage: UsageTotals,
    /// From its first event to its last, in milliseconds.
    pub latency_ms: u64,
}

/// A tool call a model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallMade {
    pub name: String,
    /// The arguments, as JSON (text that does not read as JSON stays text).
    pub arguments: Value,
    /// The path of the node whose model asked.
    pub by: String,
}

impl Observed {
    /// A run's output and usage; add its log with [`Observed::with_events`].
    pub fn new(output: Value, usage: UsageTotals) -> Observed {
        Observed {
            output,
            usage,
            ..Observed::default()
        }
    }

    /// Reads the nodes, tool calls and latency from the run's events.
    pub fn with_events<'a>(mut self, events: impl IntoIterator<Item = &'a Event>) -> Observed {
        let mut first = None;
        let mut last = 0;
        for event in events {
            first.get_or_insert(event.at_us);
            last = last.max(event.at_us);
            match &event.payload {
                EventPayload::NodeSucceeded { node, update, .. } => {
                    let by = node_path(&event.path, node.as_str());
                    self.tool_calls.extend(tool_calls_in(update, &by));
                    self.nodes.push(by);
                }
                EventPayload::NodeFailed { node, .. } => {
                    self.nodes.push(node_path(&event.path, node.as_str()));
                }
                _ => {}
            }
        }
        self.latency_ms = first.map_or(0, |first| last.saturating_sub(first) / 1_000);
        self
    }
}

/// A node's name in a trajectory: the nodes whose child graphs it ran in,
/// outermost first, then its own id, joined by `/`; a sub-agent's hop is
/// written `agent:sub_agent`. `research/search` is the node `search` in
/// the child graph of `research`.
pub fn node_path(path: &[Hop], node: &str) -> String {
    let mut name = String::new();
    for hop in path {
        name.push_str(hop.node.as_str());
        if let Some(child) = &hop.child {
            name.push(':');
            name.push_str(child);
        }
        name.push('/');
    }
    name.push_str(node);
    name
}

/// The tool calls in the assistant messages a node's update added.
fn tool_calls_in(update: &Value, by: &str) -> Vec<ToolCallMade> {
    let Value::Object(channels) = update else {
        return Vec::new();
    };
    channels
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .filter(|message| message["role"] == "assistant")
        .filter_map(|message| message["tool_calls"].as_array())
        .flatten()
        .filter_map(|call| {
            let name = call["name"].as_str()?;
            let arguments = match &call["arguments"] {
                Value::String(text) => {
                    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
                }
                other => other.clone(),
            };
            Some(ToolCallMade {
                name: name.to_string(),
                arguments,
                by: by.to_string(),
            })
        })
        .collect()
}
