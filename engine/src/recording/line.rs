//! One recorded call, as a line of a recording: a model's reply with the
//! stream it came in, or a tool's result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ChatReply, Delta, ToolCall, Usage};
use crate::tools::ToolError;

/// A recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case", deny_unknown_fields)]
pub enum Line {
    /// A model's reply.
    Model {
        key: String,
        /// The model's name (for people reading the file).
        model: String,
        /// The reply as it streamed.
        #[serde(default)]
        deltas: Vec<RecordedDelta>,
        reply: RecordedReply,
    },
    /// A tool's result.
    Tool {
        key: String,
        tool: String,
        result: ToolResult,
    },
}

impl Line {
    /// The call's key.
    pub fn key(&self) -> &str {
        match self {
            Line::Model { key, .. } | Line::Tool { key, .. } => key,
        }
    }
}

/// A piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedDelta {
    Text(String),
    ToolCall {
        index: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments: String,
    },
}

impl From<&Delta> for RecordedDelta {
    fn from(delta: &Delta) -> Self {
        match delta {
            Delta::Text(text) => RecordedDelta::Text(text.clone()),
            Delta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => RecordedDelta::ToolCall {
                index: *index,
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            },
        }
    }
}

impl From<RecordedDelta> for Delta {
    fn from(delta: RecordedDelta) -> Self {
        match delta {
            RecordedDelta::Text(text) => Delta::Text(text),
            RecordedDelta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => Delta::ToolCall {
                index,
                id,
                name,
                arguments,
            },
        }
    }
}

/// A model's whole reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedReply {
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub usage: Usage,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl From<&ChatReply> for RecordedReply {
    fn from(reply: &ChatReply) -> Self {
        RecordedReply {
            content: reply.content.clone(),
            tool_calls: reply.tool_calls.clone(),
            usage: reply.usage,
            model: reply.model.clone(),
            finish_reason: reply.finish_reason.clone(),
        }
    }
}

impl From<RecordedReply> for ChatReply {
    fn from(reply: RecordedReply) -> Self {
        ChatReply {
            content: reply.content,
            tool_calls: reply.tool_calls,
            usage: reply.usage,
            model: reply.model,
            finish_reason: reply.finish_reason,
        }
    }
}

/// What a tool answered: a value, or a failure that calling again would
/// not change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolResult {
    Ok(Value),
    Error(String),
}

impl ToolResult {
    /// The result as the tool gave it.
    pub fn into_result(self) -> Result<Value, ToolError> {
        match self {
            ToolResult::Ok(value) => Ok(value),
            ToolResult::Error(message) => Err(ToolError::new(message)),
        }
    }
}
