//! Sub-agents: other graphs (each with a `messages` channel) an agent
//! offers its model as tools. A call runs the graph inside the agent's run
//! with the task as the user's message and returns its last reply.
//!
//! A sub-agent that pauses for a person (an `ask`, a `human` gate) pauses
//! the agent, and so the run: the agent asks what the sub-agent asks, with
//! where the sub-agent stands under [`PAUSED_CHILD`] (as a subgraph node
//! does) and where the agent stands under [`WAITING`]: the messages of its
//! turn so far, its round, the replies of the calls that ended and the
//! other calls that paused. Answering goes on inside the sub-agent; when
//! every paused call has ended, the agent goes on with their replies, with
//! no model call made twice.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::child_pause::{PAUSED_CHILD, WAITING, asking};
use super::super::tools::truncate;
use crate::model::{ChatMessage, Role, ToolCall, ToolSpec};
use crate::node::{ChildGraph, NodeContext, NodeError};
use crate::tools::{BoundTool, Tool, ToolError, ToolFuture};

/// A sub-agent as a tool: `{"task": "..."}` in, its last reply out.
pub(super) struct SubAgentTool {
    pub spec: ToolSpec,
    pub graph: Arc<dyn ChildGraph>,
}

impl Tool for SubAgentTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call(&self, _: Value) -> ToolFuture<'_> {
        // Only ever called from a node (`call_within`): a sub-agent runs
        // inside its agent's run.
        Box::pin(async {
            Err(ToolError::new(
                "a sub-agent runs only inside its agent's run",
            ))
        })
    }

    fn call_within<'a>(&'a self, arguments: Value, ctx: &'a NodeContext<'_>) -> ToolFuture<'a> {
        Box::pin(async move {
            let input = task_input(&arguments)?;
            let name = &self.spec.name;
            let outcome = ctx
                .run_child(&self.graph, Some(name), input, None)
                .await
                .map_err(|error| ToolError::new(format!("{name} failed: {error}")))?;
            match outcome.paused {
                Some(checkpoint) => Err(ToolError::paused(
                    asking(*checkpoint, Some(name)).map_err(|e| ToolError::new(e.to_string()))?,
                )),
                None => Ok(Value::String(last_reply(&outcome.state))),
            }
        })
    }
}

/// A sub-agent naming a saved graph the server did not embed: the editor
/// validates such an agent (the server embeds the graph when a run
/// starts); a call of it fails, saying so.
pub(super) struct NotEmbeddedTool {
    pub spec: ToolSpec,
    pub graph_id: String,
}

impl Tool for NotEmbeddedTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn call(&self, _: Value) -> ToolFuture<'_> {
        let message = super::super::subgraph::not_embedded(&self.graph_id);
        Box::pin(async move { Err(ToolError::new(message)) })
    }
}

/// The sub-agent's input for a call's arguments.
fn task_input(arguments: &Value) -> Result<Value, ToolError> {
    let task = arguments["task"]
        .as_str()
        .or_else(|| arguments["input"].as_str())
        .ok_or_else(|| ToolError::new("expected {\"task\": \"...\"}"))?;
    Ok(json!({"messages": [{"role": "user", "content": task}]}))
}

/// A sub-agent's answer: its last reply with text.
fn last_reply(state: &Value) -> String {
    ChatMessage::list_from(&state["messages"])
        .into_iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.content.is_empty())
        .map(|m| m.content)
        .unwrap_or_default()
}

/// Where an agent stands while a sub-agent's question waits for a person.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Waiting {
    /// The messages the agent added in this execution so far; the last
    /// holds the tool calls being answered.
    pub added: Vec<ChatMessage>,
    /// Rounds of tool calls so far.
    pub round: u32,
    /// Replies its hooks rejected so far.
    pub rejections: u32,
    /// The call whose question is asked now, with its position among the
    /// round's calls.
    pub asking: (usize, ToolCall),
    /// The replies of the calls that ended (cut for the conversation), by
    /// their calls' positions.
    pub replies: Vec<(usize, ChatMessage)>,
    /// The calls that succeeded: position, tool, full result.
    pub succeeded: Vec<(usize, String, String)>,
    /// Other calls that paused, asked after this one, each with its
    /// position and what it asks.
    pub queued: Vec<(usize, ToolCall, Value)>,
}

/// A round of tool calls that ended: its replies in the calls' order, and
/// the calls that succeeded (position, tool, full result), in that order.
pub(super) struct Ended {
    pub replies: Vec<ChatMessage>,
    pub succeeded: Vec<(usize, String, String)>,
}

impl Waiting {
    /// Where the agent stood, on the execution that answers its pause.
    pub fn of(ctx: &NodeContext<'_>) -> Result<Option<Waiting>, NodeError> {
        let Some(waiting) = ctx.asked().and_then(|asked| asked.get(WAITING)) else {
            return Ok(None);
        };
        serde_json::from_value(waiting.clone())
            .map(Some)
            .map_err(|error| {
                NodeError::permanent(format!(
                    "where the agent paused cannot be read back: {error}"
                ))
            })
    }

    /// The pause that asks the first of `paused` (the rest wait their turn).
    pub fn pause(mut self, mut paused: Vec<(usize, ToolCall, Value)>) -> NodeError {
        if paused.is_empty() {
            return NodeError::permanent("an agent paused with no question");
        }
        let (at, call, asked) = paused.remove(0);
        self.asking = (at, call);
        paused.append(&mut self.queued);
        self.queued = paused;
        self.asking_with(asked)
    }

    fn asking_with(self, asked: Value) -> NodeError {
        let mut asks = match asked {
            Value::Object(fields) => fields,
            other => serde_json::Map::from_iter([("value".to_string(), other)]),
        };
        match serde_json::to_value(&self) {
            Ok(waiting) => {
                asks.insert(WAITING.to_string(), waiting);
                NodeError::interrupt(Value::Object(asks))
            }
            Err(error) => {
                NodeError::permanent(format!("where the agent paused cannot be kept: {error}"))
            }
        }
    }

    /// Answers the asked call's question inside its sub-agent; pauses again
    /// while it or another call still waits for a person, or gives the
    /// round's replies once every call has ended.
    pub async fn go_on(
        mut self,
        ctx: &NodeContext<'_>,
        sub_agents: &BTreeMap<String, Arc<dyn ChildGraph>>,
        tools: &[BoundTool],
        max_chars: usize,
    ) -> Result<Ended, NodeError> {
        let (at, call) = self.asking.clone();
        let name = call.name.as_str();
        let graph = sub_agents.get(name).ok_or_else(|| {
            NodeError::permanent(format!("the sub-agent `{name}` is no longer this agent's"))
        })?;
        let paused = ctx
            .asked()
            .and_then(|asked| asked.get(PAUSED_CHILD))
            .and_then(|paused| paused.get("checkpoint"))
            .cloned()
            .unwrap_or(Value::Null);
        let checkpoint: crate::run::Checkpoint =
            serde_json::from_value(paused).map_err(|error| {
                NodeError::permanent(format!(
                    "where the sub-agent `{name}` paused cannot be read back: {error}"
                ))
            })?;
        let answer = ctx.resume_value().cloned().unwrap_or(Value::Null);
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let input = task_input(&arguments).map_err(|e| NodeError::permanent(e.message))?;
        let bound = tools.iter().find(|tool| tool.name == name);
        // The rest of the call, after the answer, under the tool's timeout
        // as its first part was.
        let limit_ms = bound.map_or(u64::MAX, |tool| tool.policy.timeout_ms);
        let started = std::time::Instant::now();
        let resumed = ctx.run_child(graph, Some(name), input, Some((checkpoint, answer)));
        let result = match within(limit_ms, resumed).await {
            Some(Ok(outcome)) => match outcome.paused {
                Some(checkpoint) => return Err(self.asking_with(asking(*checkpoint, Some(name))?)),
                None => Ok(last_reply(&outcome.state)),
            },
            Some(Err(error)) => Err(format!("{name} failed: {error}")),
            None => Err(format!("{name} timed out after {limit_ms} ms")),
        };
        let text = match &result {
            Ok(text) => text.clone(),
            Err(error) => format!("error: {error}"),
        };
        ctx.emit(
            "tool_result",
            json!({
                "id": call.id,
                "name": name,
                "ok": result.is_ok(),
                "attempts": 1,
                "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                "chars": text.chars().count(),
            }),
        );
        let fail_node = bound.is_some_and(|tool| tool.policy.fail_node);
        if let (Err(error), true) = (&result, fail_node) {
            return Err(NodeError::permanent(format!(
                "the tool `{name}` failed: {error}"
            )));
        }
        if result.is_ok() {
            self.succeeded.push((at, name.to_string(), text.clone()));
        }
        self.replies.push((
            at,
            ChatMessage::tool_reply(&call, truncate(&text, max_chars)),
        ));
        if !self.queued.is_empty() {
            let queued = std::mem::take(&mut self.queued);
            return Err(self.pause(queued));
        }
        // Every call has ended: their replies in the calls' order.
        self.replies.sort_by_key(|(at, _)| *at);
        self.succeeded.sort_by_key(|(at, _, _)| *at);
        Ok(Ended {
            replies: self.replies.into_iter().map(|(_, reply)| reply).collect(),
            succeeded: self.succeeded,
        })
    }
}

/// `work`, or `None` when it takes longer than `limit_ms`.
#[cfg(feature = "runtime")]
async fn within<T>(limit_ms: u64, work: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::time::timeout(std::time::Duration::from_millis(limit_ms), work)
        .await
        .ok()
}

/// `work` (nothing runs without the runtime; this keeps the browser build
/// compiling).
#[cfg(not(feature = "runtime"))]
async fn within<T>(_: u64, work: impl std::future::Future<Output = T>) -> Option<T> {
    Some(work.await)
}
