//! Chat messages as they live in a graph's `messages` channel (JSON
//! objects with `id`, `role`, `content`, and for tool traffic `tool_calls`,
//! `tool_call_id`, `name`), and their typed form.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call a model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments, as the JSON text the model wrote.
    pub arguments: String,
}

/// Tokens a call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChatMessage {
    /// A message with a role and text.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            id: None,
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// Reads the messages of a channel value; anything that is not a
    /// message is skipped.
    pub fn list_from(value: &Value) -> Vec<ChatMessage> {
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| serde_json::from_value(item.clone()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The messages of a state's channel.
    pub fn list_in(state: &crate::state::State, channel: &str) -> Vec<ChatMessage> {
        state
            .get(channel)
            .map(ChatMessage::list_from)
            .unwrap_or_default()
    }

    /// The conversation's last message, if it is an assistant's with tool
    /// calls still to answer.
    pub fn pending_tool_calls(messages: &[ChatMessage]) -> Option<&ChatMessage> {
        messages
            .last()
            .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    }

    /// A tool's reply to `call`.
    pub fn tool_reply(call: &ToolCall, content: impl Into<String>) -> Self {
        ChatMessage {
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            ..ChatMessage::new(Role::Tool, content)
        }
    }

    /// The message as a channel value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
