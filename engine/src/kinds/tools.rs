//! `tools`: runs the tool calls of the conversation's last assistant
//! message, all at once, each with a timeout. A failing or unknown tool
//! becomes a tool message the model can read ("error: ..."), not a failed
//! run. Long results are cut short in the conversation (the model's
//! context stays small); the full results can be kept in another channel.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::{Map, Value, json};

use super::llm::messages_channel;
use crate::model::{ChatMessage, ToolCall};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config,
};
use crate::tools::{Tool, ToolError};

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
    /// The longest one call may take.
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
    let tools = bind(&names, cx, "tools")
        .map_err(|more| issues.extend(more))
        .ok();
    match tools {
        Some(tools) if issues.is_empty() => Ok(Built::plain(ToolsNode { tools, config })),
        _ => Err(issues),
    }
}

struct ToolsNode {
    tools: BoundTools,
    config: ToolsConfig,
}

/// Tools bound to a node, by name.
pub(super) type BoundTools = Vec<(String, Arc<dyn Tool>)>;

/// The tools a node names, or an issue for each unknown one.
pub(super) fn bind(
    names: &[String],
    cx: &BuildContext,
    path: &str,
) -> Result<BoundTools, Vec<ConfigIssue>> {
    let mut tools = Vec::new();
    let mut issues = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match cx.registry.tools().get(name) {
            Some(tool) => tools.push((name.clone(), Arc::clone(tool))),
            None => issues.push(ConfigIssue::new(
                format!("{path}[{i}]"),
                format!(
                    "no tool `{name}` (known: {})",
                    cx.registry.tools().names().join(", ")
                ),
            )),
        }
    }
    if issues.is_empty() {
        Ok(tools)
    } else {
        Err(issues)
    }
}

async fn call_one(
    tools: &BoundTools,
    call: &ToolCall,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let tool = tools
        .iter()
        .find(|(name, _)| name == &call.name)
        .map(|(_, tool)| tool)
        .ok_or_else(|| ToolError(format!("there is no tool `{}` here", call.name)))?;
    let arguments: Value = serde_json::from_str(&call.arguments)
        .map_err(|error| ToolError(format!("the arguments are not JSON: {error}")))?;
    #[cfg(feature = "runtime")]
    {
        match tokio::time::timeout(timeout, tool.call(arguments)).await {
            Ok(result) => result,
            Err(_) => Err(ToolError(format!(
                "timed out after {} ms",
                timeout.as_millis()
            ))),
        }
    }
    #[cfg(not(feature = "runtime"))]
    {
        let _ = timeout;
        tool.call(arguments).await
    }
}

/// Runs `calls` at once; each becomes a tool message (an error one if it
/// failed), its text cut at `max_chars`. Also returns each full result.
pub(super) async fn execute(
    tools: &BoundTools,
    calls: &[ToolCall],
    timeout: Duration,
    max_chars: usize,
    ctx: &crate::node::NodeContext<'_>,
) -> (Vec<ChatMessage>, Map<String, Value>) {
    let results = join_all(calls.iter().map(|call| call_one(tools, call, timeout))).await;
    let mut replies = Vec::new();
    let mut full = Map::new();
    for (call, result) in calls.iter().zip(results) {
        let text = match &result {
            Ok(Value::String(text)) => text.clone(),
            Ok(value) => value.to_string(),
            Err(error) => format!("error: {error}"),
        };
        ctx.emit(
            "tool_result",
            json!({"id": call.id, "name": call.name, "ok": result.is_ok(), "chars": text.chars().count()}),
        );
        let message = ChatMessage::tool_reply(call, truncate(&text, max_chars));
        replies.push(message);
        full.insert(call.id.clone(), Value::String(text));
    }
    (replies, full)
}

impl ToolsNode {
    async fn run_calls(&self, input: NodeInput<'_>) -> Result<NodeOutput, crate::node::NodeError> {
        let messages = ChatMessage::list_in(input.state, &self.config.messages);
        let Some(last) = ChatMessage::pending_tool_calls(&messages) else {
            return Ok(NodeOutput::default());
        };
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let (replies, full) = execute(
            &self.tools,
            &last.tool_calls,
            timeout,
            self.config.max_result_chars,
            input.ctx,
        )
        .await;
        let replies = replies.iter().map(ChatMessage::to_value).collect();
        let mut output = NodeOutput::update(self.config.messages.clone(), Value::Array(replies));
        if let Some(channel) = &self.config.full_results {
            output = output.with(channel.clone(), Value::Object(full));
        }
        Ok(output)
    }
}

fn truncate(text: &str, max: usize) -> String {
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
