//! `tools`: runs the tool calls of the conversation's last assistant
//! message, all at once, each under its policy (timeout, retries, a cap
//! on calls in flight, a circuit breaker; see [`crate::tools::ToolPolicy`]).
//! A failing, unknown or refused tool becomes a tool message the model can
//! read ("error: ..."), not a failed run, unless its policy says
//! `fail_node`. Long results are cut short in the conversation (the
//! model's context stays small); the full results can be kept in another
//! channel.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::{Map, Value, json};

use super::messages_channel;
use crate::model::{ChatMessage, ToolCall};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};
use crate::tools::{BoundTool, Called, EffectivePolicy, ToolError, ToolPolicy};

/// Settings of a `tools` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// The conversation: a `messages` channel.
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
    /// The tools this node may run; all known tools when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-heddle" = "tool"))]
    pub tools: Vec<String>,
    /// The longest one call may take (a tool's policy may say otherwise).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Results longer than this many characters are cut short in the
    /// conversation.
    #[serde(default = "default_max_chars")]
    pub max_result_chars: usize,
    /// An `object` channel (reducer `merge`) to keep every full result in,
    /// by tool call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "channel"))]
    pub full_results: Option<String>,
    /// How each tool is called, by tool name: timeout, retries, a cap on
    /// calls in flight, a circuit breaker, whether a failure fails the node.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("x-heddle-key" = "tool"))]
    pub policies: BTreeMap<String, ToolPolicy>,
}

fn default_timeout_ms() -> u64 {
    30_000
}

fn default_max_chars() -> usize {
    2_000
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: ToolsConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_messages_channel("messages", &config.messages)
        .into_iter()
        .collect();
    if let Some(channel) = &config.full_results {
        issues.extend(cx.check_channel("full_results", channel, ChannelType::Object));
    }
    let names = if config.tools.is_empty() {
        cx.registry.tools().names()
    } else {
        config.tools.clone()
    };
    let tools = bind(&names, cx, "tools", &config.policies, config.timeout_ms)
        .map_err(|more| issues.extend(more))
        .ok();
    if let Some(tools) = &tools {
        issues.extend(check_policies(&config.policies, tools));
    }
    match tools {
        Some(tools) if issues.is_empty() => Ok(Built::plain(ToolsNode { tools, config })),
        _ => Err(issues),
    }
}

struct ToolsNode {
    tools: Vec<BoundTool>,
    config: ToolsConfig,
}

/// The tools a node names, each under its policy, or an issue for each
/// unknown one.
pub(super) fn bind(
    names: &[String],
    cx: &BuildContext,
    path: &str,
    policies: &BTreeMap<String, ToolPolicy>,
    default_timeout_ms: u64,
) -> Result<Vec<BoundTool>, Vec<ConfigIssue>> {
    let toolbox = cx.registry.tools();
    let mut tools = Vec::new();
    let mut issues = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match toolbox.get(name) {
            Some(tool) => tools.push(toolbox.bind(
                name,
                std::sync::Arc::clone(tool),
                default_timeout_ms,
                policies.get(name),
            )),
            None => issues.push(ConfigIssue::new(
                format!("{path}[{i}]"),
                format!("no tool `{name}` (known: {})", toolbox.names().join(", ")),
            )),
        }
    }
    if issues.is_empty() {
        Ok(tools)
    } else {
        Err(issues)
    }
}

/// Each policy must name one of the node's tools and make sense.
pub(super) fn check_policies(
    policies: &BTreeMap<String, ToolPolicy>,
    tools: &[BoundTool],
) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    for (name, policy) in policies {
        if !tools.iter().any(|tool| &tool.name == name) {
            let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
            issues.push(ConfigIssue::new(
                format!("policies.{name}"),
                format!(
                    "`{name}` is not one of this node's tools ({})",
                    names.join(", ")
                ),
            ));
        }
        for (field, problem) in EffectivePolicy::problems(policy) {
            issues.push(ConfigIssue::new(
                format!("policies.{name}.{field}"),
                problem,
            ));
        }
    }
    issues
}

/// What running a message's tool calls gave.
pub(super) struct Executed {
    /// One tool message per call that ended, in the calls' order.
    pub replies: Vec<ChatMessage>,
    /// The position among the calls of each of `replies`.
    pub ended: Vec<usize>,
    /// Every full result, by call id.
    pub full: Map<String, Value>,
    /// The calls that succeeded (their position, tool and full result).
    pub succeeded: Vec<(usize, String, String)>,
    /// The calls that paused for a person (a sub-agent's question), each
    /// with its position and what it asks; they have no reply yet.
    pub paused: Vec<(usize, ToolCall, Value)>,
}

async fn call_one(
    tools: &[BoundTool],
    call: &ToolCall,
    ctx: &crate::node::NodeContext<'_>,
) -> (Called, bool) {
    match tools.iter().find(|tool| tool.name == call.name) {
        Some(tool) => (tool.call(call, ctx).await, tool.policy.fail_node),
        None => (
            Called {
                result: Err(ToolError::new(format!(
                    "there is no tool `{}` here",
                    call.name
                ))),
                attempts: 0,
                took: std::time::Duration::ZERO,
            },
            false,
        ),
    }
}

/// Runs `calls` at once; each becomes a tool message (an error one if it
/// failed), its text cut at `max_chars`, or a pause its caller handles. A
/// call that failed for good under a `fail_node` policy fails the node
/// instead.
pub(super) async fn execute(
    tools: &[BoundTool],
    calls: &[ToolCall],
    max_chars: usize,
    ctx: &crate::node::NodeContext<'_>,
) -> Result<Executed, NodeError> {
    let results = join_all(calls.iter().map(|call| call_one(tools, call, ctx))).await;
    let mut executed = Executed {
        replies: Vec::new(),
        ended: Vec::new(),
        full: Map::new(),
        succeeded: Vec::new(),
        paused: Vec::new(),
    };
    for (index, (call, (called, fail_node))) in calls.iter().zip(results).enumerate() {
        if let Err(ToolError {
            paused: Some(asked),
            ..
        }) = called.result
        {
            executed.paused.push((index, call.clone(), *asked));
            continue;
        }
        let text = match &called.result {
            Ok(Value::String(text)) => text.clone(),
            Ok(value) => value.to_string(),
            Err(error) => format!("error: {error}"),
        };
        ctx.emit(
            "tool_result",
            json!({
                "id": call.id,
                "name": call.name,
                "ok": called.result.is_ok(),
                "attempts": called.attempts,
                "duration_ms": u64::try_from(called.took.as_millis()).unwrap_or(u64::MAX),
                "chars": text.chars().count(),
            }),
        );
        if let (Err(error), true) = (&called.result, fail_node) {
            return Err(NodeError::permanent(format!(
                "the tool `{}` failed: {error}",
                call.name
            )));
        }
        if called.result.is_ok() {
            executed
                .succeeded
                .push((index, call.name.clone(), text.clone()));
        }
        executed
            .replies
            .push(ChatMessage::tool_reply(call, truncate(&text, max_chars)));
        executed.ended.push(index);
        executed.full.insert(call.id.clone(), Value::String(text));
    }
    Ok(executed)
}

impl ToolsNode {
    async fn run_calls(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let messages = ChatMessage::list_in(input.state, &self.config.messages);
        let Some(last) = ChatMessage::pending_tool_calls(&messages) else {
            return Ok(NodeOutput::default());
        };
        let Executed {
            replies,
            full,
            paused,
            ..
        } = execute(
            &self.tools,
            &last.tool_calls,
            self.config.max_result_chars,
            input.ctx,
        )
        .await?;
        if let Some((_, call, _)) = paused.first() {
            // Only a sub-agent pauses, and sub-agents are an agent's.
            return Err(NodeError::permanent(format!(
                "the tool `{}` paused for a person, which only an agent's sub-agents may do",
                call.name
            )));
        }
        let replies = replies.iter().map(ChatMessage::to_value).collect();
        let mut output = NodeOutput::update(self.config.messages.clone(), Value::Array(replies));
        if let Some(channel) = &self.config.full_results {
            output = output.with(channel.clone(), Value::Object(full));
        }
        Ok(output)
    }
}

pub(super) fn truncate(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… [{} more characters cut]", count - max)
}

impl Node for ToolsNode {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.run_calls(input))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_results_are_cut_with_a_note() {
        assert_eq!(
            super::truncate("abcdef", 4),
            "abcd… [2 more characters cut]"
        );
        assert_eq!(super::truncate("abc", 4), "abc");
    }
}
