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
    /// Prompt tokens the endpoint served from its prompt cache.
    #[serde(default)]
    pub cached_tokens: u32,
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

    /// A run's answer, as people read it: the text of the last assistant
    /// message in its final state's `messages` channel (or, in a graph
    /// without one, in the first channel that holds messages). `None` when
    /// the state holds no assistant text.
    pub fn final_answer(state: &Value) -> Option<String> {
        let channels = state.as_object()?;
        let is_messages = |value: &Value| {
            crate::state::is_message_list(value) && value.as_array().is_some_and(|v| !v.is_empty())
        };
        let channel = channels
            .get("messages")
            .filter(|value| is_messages(value))
            .or_else(|| channels.values().find(|value| is_messages(value)))?;
        ChatMessage::list_from(channel)
            .into_iter()
            .rev()
            .find(|message| message.role == Role::Assistant && !message.content.is_empty())
            .map(|message| message.content)
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

#[cfg(test)]
mod tests {
    use super::ChatMessage;
    use serde_json::json;

    #[test]
    fn the_final_answer_is_the_last_assistant_text() {
        let state = json!({
            "messages": [
                {"role": "user", "content": "2+2?"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "calc", "arguments": "{}"}]},
                {"role": "tool", "content": "4", "tool_call_id": "c"},
                {"role": "assistant", "content": "It is 4."},
                {"role": "user", "content": "thanks"}
            ],
            "count": 3
        });
        assert_eq!(
            ChatMessage::final_answer(&state).as_deref(),
            Some("It is 4.")
        );
        let elsewhere = json!({"history": [{"role": "assistant", "content": "hi"}], "n": 1});
        assert_eq!(ChatMessage::final_answer(&elsewhere).as_deref(), Some("hi"));
        assert_eq!(ChatMessage::final_answer(&json!({"n": 1})), None);
        assert_eq!(
            ChatMessage::final_answer(&json!({"messages": [{"role": "user", "content": "x"}]})),
            None
        );
    }
}
