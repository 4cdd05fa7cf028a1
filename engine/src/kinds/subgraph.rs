//! `subgraph`: runs another graph as one node. The child graph is embedded
//! in the config (`graph`), or read from a file when the graph is compiled
//! (`path`, only where the registry allows files: the command line and
//! library users who opt in, never the server); the app embeds saved
//! graphs. `inputs` fill the child's channels from expressions over this
//! graph's state; `outputs` copy the child's final channels back. The
//! child runs inside this run: its model calls count against this run's
//! budget, and its steps, nodes, tokens and tool calls go into this run's
//! log with their path (`Event::path`).
//!
//! A child that pauses for a person (an `ask`, a `human` gate, a
//! breakpoint) pauses the run: the node asks what the child asks, with
//! where the child stands under [`PAUSED_CHILD`], so the pause is kept in
//! the run's own checkpoint; answering it goes on inside the child, from
//! where it paused.
//!
//! Not yet: offering a subgraph to a model as a tool.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::Value;

use super::child_pause::{PAUSED_CHILD, asking};
use super::scope;
use crate::expr::Expr;
use crate::format::GraphDocument;
use crate::node::{
    BuildContext, Built, ChildGraph, ConfigIssue, Node, NodeError, NodeFuture, NodeInput,
    NodeOutput, SavedGraphs, parse_config,
};

/// How deep subgraphs may nest (a graph that includes itself stops here).
pub const MAX_DEPTH: usize = 8;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Settings of a `subgraph` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubgraphConfig {
    /// The child graph, embedded (a graph document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "graph"))]
    pub graph: Option<Value>,
    /// Or the path of a graph file, read when this graph is compiled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Or a graph saved in the app, by id; the server embeds its newest
    /// version (into `graph`) before the run compiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<String>,
    /// The child's channels, each set from an expression over this
    /// graph's state.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
    /// This graph's channels, each set from a channel of the child's final
    /// state.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("x-heddle-key" = "channel"))]
    pub outputs: BTreeMap<String, String>,
}

/// Reads and compiles a child graph, embedded (`graph`) or from a file
/// (`path`); issues are located at `graph` or `path` under `at`.
pub(super) fn load_child(
    graph: Option<&Value>,
    path: Option<&str>,
    cx: &BuildContext,
    at: &str,
) -> Result<(GraphDocument, Arc<dyn ChildGraph>), Vec<ConfigIssue>> {
    let join = |field: &str| {
        if at.is_empty() {
            field.to_string()
        } else {
            format!("{at}.{field}")
        }
    };
    let document = match (graph, path) {
        (Some(graph), None) => GraphDocument::from_value(graph.clone())
            .map_err(|error| vec![ConfigIssue::new(join("graph"), error.to_string())])?,
        (None, Some(_)) if cx.registry.file_access() == crate::node::FileAccess::Denied => {
            // Said without reading anything, so the answer tells nothing
            // about the machine's files.
            return Err(vec![ConfigIssue::new(
                join("path"),
                "graph files are not read here; embed the graph (`graph`) or name a saved graph (`graph_id`)",
            )]);
        }
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|error| {
                vec![ConfigIssue::new(
                    join("path"),
                    format!("cannot read {path}: {error}"),
                )]
            })?;
            GraphDocument::from_json(&text)
                .map_err(|error| vec![ConfigIssue::new(join("path"), format!("{path}: {error}"))])?
        }
        _ => {
            return Err(vec![ConfigIssue::new(
                at,
                "set one of `graph` (embedded), `graph_id` (a saved graph) and `path`",
            )]);
        }
    };
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return Err(vec![ConfigIssue::new(
            at,
            format!("subgraphs nest more than {MAX_DEPTH} deep (does a graph include itself?)"),
        )]);
    }
    DEPTH.with(|d| d.set(depth + 1));
    let child = (cx.compile_child)(&document);
    DEPTH.with(|d| d.set(depth));
    let child = child.map_err(|problems| {
        let first: Vec<String> = problems.into_iter().take(3).collect();
        vec![ConfigIssue::new(
            join(if graph.is_some() { "graph" } else { "path" }),
            format!("the subgraph has problems: {}", first.join("; ")),
        )]
    })?;
    Ok((document, child))
}

/// A saved graph (`graph_id`) left for the server to embed: accepted where
/// the registry says the server embeds saved graphs when a run starts
/// (the editor, the server), refused where nothing can read it (the
/// command line), the issue at `at`.
pub(super) fn saved_graph_accepted(
    cx: &BuildContext,
    id: &str,
    at: &str,
) -> Result<(), ConfigIssue> {
    match cx.registry.saved_graphs() {
        SavedGraphs::EmbeddedAtRun => Ok(()),
        SavedGraphs::Unread => Err(ConfigIssue::new(
            at,
            format!(
                "saved graph `{id}` is resolved by the Heddle server; here, embed the graph or give a `path`"
            ),
        )),
    }
}

/// The error of running a saved graph the server did not embed.
pub(super) fn not_embedded(id: &str) -> String {
    format!("saved graph `{id}` was not embedded before the run")
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: SubgraphConfig = parse_config(config)?;
    if let (Some(id), None) = (&config.graph_id, &config.graph) {
        saved_graph_accepted(cx, id, "graph_id").map_err(|issue| vec![issue])?;
        {
            // Checked when the server embeds it, for whoever starts the run.
            let mut issues = Vec::new();
            for parent in config.outputs.keys() {
                issues.extend(cx.check_channel(
                    format!("outputs.{parent}"),
                    parent,
                    ChannelType::Any,
                ));
            }
            return match issues.is_empty() {
                true => Ok(Built::plain(NotEmbedded(id.clone()))),
                false => Err(issues),
            };
        }
    }
    let (document, child) = load_child(config.graph.as_ref(), config.path.as_deref(), cx, "")?;
    let mut issues = Vec::new();
    let mut inputs = Vec::new();
    for (channel, source) in &config.inputs {
        if !document.state.channels.contains_key(channel) {
            issues.push(ConfigIssue::new(
                format!("inputs.{channel}"),
                format!("the subgraph has no channel `{channel}`"),
            ));
        }
        match Expr::parse(source) {
            Ok(expr) => inputs.push((channel.clone(), expr)),
            Err(error) => issues.push(ConfigIssue::new(
                format!("inputs.{channel}"),
                error.to_string(),
            )),
        }
    }
    for (parent, child_channel) in &config.outputs {
        issues.extend(cx.check_channel(format!("outputs.{parent}"), parent, ChannelType::Any));
        if !document.state.channels.contains_key(child_channel) {
            issues.push(ConfigIssue::new(
                format!("outputs.{parent}"),
                format!("the subgraph has no channel `{child_channel}`"),
            ));
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(Built::plain(Subgraph {
        child,
        inputs,
        outputs: config.outputs,
    }))
}

/// A subgraph whose saved graph was not embedded: validation accepts it
/// (the server embeds it when a run starts); running it is an error.
struct NotEmbedded(String);

impl Node for NotEmbedded {
    fn run<'a>(&'a self, _input: NodeInput<'a>) -> NodeFuture<'a> {
        let message = not_embedded(&self.0);
        Box::pin(std::future::ready(Err(NodeError::permanent(message))))
    }
}

struct Subgraph {
    child: Arc<dyn ChildGraph>,
    inputs: Vec<(String, Expr)>,
    outputs: BTreeMap<String, String>,
}

impl Subgraph {
    async fn run_child(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let mut child_input = serde_json::Map::new();
        {
            let scope = scope(&input);
            for (channel, expr) in &self.inputs {
                let value = expr
                    .eval(&scope)
                    .map_err(|e| NodeError::permanent(e.to_string()))?;
                child_input.insert(channel.clone(), value);
            }
        }
        let state = self.execute(input.ctx, Value::Object(child_input)).await?;
        let mut output = NodeOutput::default();
        for (parent, child_channel) in &self.outputs {
            output.update.push((
                parent.clone(),
                state.get(child_channel).cloned().unwrap_or(Value::Null),
            ));
        }
        Ok(output)
    }

    async fn execute(
        &self,
        ctx: &crate::node::NodeContext<'_>,
        input: Value,
    ) -> Result<Value, NodeError> {
        // Answering a pause inside the child: go on from where it paused.
        let resume = match (
            ctx.resume_value(),
            ctx.asked().and_then(|asked| asked.get(PAUSED_CHILD)),
        ) {
            (Some(answer), Some(paused)) => {
                let checkpoint: crate::run::Checkpoint =
                    serde_json::from_value(paused["checkpoint"].clone()).map_err(|error| {
                        NodeError::permanent(format!(
                            "where the subgraph paused cannot be read back: {error}"
                        ))
                    })?;
                Some((checkpoint, answer.clone()))
            }
            _ => None,
        };
        match ctx.run_child(&self.child, None, input, resume).await {
            Ok(outcome) => match outcome.paused {
                Some(checkpoint) => Err(NodeError::interrupt(asking(*checkpoint, None)?)),
                None => Ok(outcome.state),
            },
            Err(error) => Err(NodeError::permanent(format!(
                "the subgraph failed: {error}"
            ))),
        }
    }
}

impl Node for Subgraph {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.run_child(input))
    }
}
