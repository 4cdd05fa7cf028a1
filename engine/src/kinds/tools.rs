//! `tools`: runs the tool calls of the conversation's last assistant
//! message, all at once, each with a timeout. A failing or unknown tool
//! becomes a tool message the model can read ("error: ..."), not a failed
//! run. Long results are cut short in the conversation (the model's
//! context stays small); the full results can be kept in another channel.

use std::time::Duration;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::llm::messages_channel;
use crate::model::{ChatMessage, Role, ToolCall};
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
    pub messages: String,
    /// The tools this node may run; all known tools when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
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
        issues.extend(cx.check_channel("full_results", channel));
    }
    let names = if config.tools.is_empty() {
        cx.registry.tools().names()
    } else {
        config.tools.clone()
    };
    let mut tools = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match cx.registry.tools().get(name) {
            Some(tool) => tools.push((name.clone(), std::sync::Arc::clone(tool))),
            None => issues.push(ConfigIssue::new(
                format!("tools[{i}]"),
                format!("no tool `{name}`"),
            )),
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(Built::plain(ToolsNode { tools, config }))
}

struct ToolsNode {
    tools: Vec<(String, std::sync::Arc<dyn Tool>)>,
    config: ToolsConfig,
}

impl ToolsNode {
    async fn call_one(&self, call: &ToolCall) -> Result<Value, ToolError> {
        let tool = self
            .tools
            .iter()
            .find(|(name, _)| name == &call.name)
            .map(|(_, tool)| tool)
            .ok_or_else(|| ToolError(format!("there is no tool `{}` here", call.name)))?;
        let arguments: Value = serde_json::from_str(&call.arguments)
            .map_err(|error| ToolError(format!("the arguments are not JSON: {error}")))?;
        let limit = Duration::from_millis(self.config.timeout_ms);
        #[cfg(feature = "runtime")]
        {
            match tokio::time::timeout(limit, tool.call(arguments)).await {
                Ok(result) => result,
                Err(_) => Err(ToolError(format!(
                    "timed out after {} ms",
                    limit.as_millis()
                ))),
            }
        }
        #[cfg(not(feature = "runtime"))]
        {
            let _ = limit;
            tool.call(arguments).await
        }
    }

    async fn run_calls(&self, input: NodeInput<'_>) -> Result<NodeOutput, crate::node::NodeError> {
        let messages = ChatMessage::list_from(
            input
                .state
                .get(&self.config.messages)
                .unwrap_or(&Value::Null),
        );
        let Some(last) = messages
            .last()
            .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
        else {
            return Ok(NodeOutput::default());
        };
        let results = join_all(last.tool_calls.iter().map(|call| self.call_one(call))).await;
        let mut replies = Vec::new();
        let mut full = Map::new();
        for (call, result) in last.tool_calls.iter().zip(results) {
            let text = match &result {
                Ok(Value::String(text)) => text.clone(),
                Ok(value) => value.to_string(),
                Err(error) => format!("error: {error}"),
            };
            input.ctx.emit(
                "tool_result",
                json!({"id": call.id, "name": call.name, "ok": result.is_ok(), "chars": text.chars().count()}),
            );
            let mut message =
                ChatMessage::new(Role::Tool, truncate(&text, self.config.max_result_chars));
            message.tool_call_id = Some(call.id.clone());
            message.name = Some(call.name.clone());
            replies.push(message.to_value());
            full.insert(call.id.clone(), Value::String(text));
        }
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
