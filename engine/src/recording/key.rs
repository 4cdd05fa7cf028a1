//! What identifies a call: a SHA-256 of its canonical form. A model call's
//! is the model's name and what the endpoint is sent (messages by role,
//! text, tool calls and tool-call ids, never their ids in the `messages`
//! channel, which differ from run to run; the tools offered; the
//! temperature, token limit and reply format). A tool call's is the tool's
//! name and its arguments, JSON with sorted keys, so `{"a":1,"b":2}` and
//! `{"b":2,"a":1}` are one call.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::model::{ChatRequest, ReplyFormat};

/// The key of a call to the model named `model`.
pub(super) fn model_call(model: &str, request: &ChatRequest) -> String {
    let messages: Vec<Value> = request
        .messages
        .iter()
        .map(|message| {
            json!({
                "role": message.role,
                "content": message.content,
                "tool_calls": message.tool_calls,
                "tool_call_id": message.tool_call_id,
                "name": message.name,
            })
        })
        .collect();
    let format = match &request.format {
        ReplyFormat::Text => json!("text"),
        ReplyFormat::JsonObject => json!("json_object"),
        ReplyFormat::Choice(choices) => json!({ "choice": choices }),
        ReplyFormat::Schema(schema) => {
            json!({ "schema": { "name": schema.name, "schema": schema.schema } })
        }
    };
    digest(&json!({
        "call": "model",
        "model": model,
        "request_model": request.model,
        "messages": messages,
        "tools": request.tools,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "format": format,
        "tools_off": request.tools_off,
    }))
}

/// The key of a call to the tool named `tool` with `arguments`.
pub(super) fn tool_call(tool: &str, arguments: &Value) -> String {
    digest(&json!({ "call": "tool", "tool": tool, "arguments": arguments }))
}

/// The hex SHA-256 of `value` written canonically.
fn digest(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    let hash = Sha256::digest(text.as_bytes());
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `value` as JSON with every object's keys sorted, whatever order its
/// map keeps them in.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChatMessage, Role};

    #[test]
    fn a_tool_calls_key_ignores_the_order_of_its_arguments() {
        let one = tool_call(
            "search",
            &json!({"q": "rust", "limit": 3, "filter": {"a": 1, "b": 2}}),
        );
        let two = tool_call(
            "search",
            &json!({"filter": {"b": 2, "a": 1}, "limit": 3, "q": "rust"}),
        );
        assert_eq!(one, two);
        assert_ne!(one, tool_call("search", &json!({"q": "rust", "limit": 4})));
        assert_ne!(one, tool_call("fetch", &json!({"q": "rust", "limit": 3})));
        assert_eq!(one.len(), 64);
    }

    #[test]
    fn a_model_calls_key_ignores_message_ids_but_not_what_the_endpoint_sees() {
        let mut message = ChatMessage::new(Role::User, "hello");
        message.id = Some("run-1/m0".into());
        let request = ChatRequest {
            messages: vec![message],
            ..ChatRequest::default()
        };
        let mut renamed = request.clone();
        renamed.messages[0].id = Some("run-2/m0".into());
        assert_eq!(
            model_call("offline", &request),
            model_call("offline", &renamed)
        );

        let mut other_text = request.clone();
        other_text.messages[0].content = "hello!".into();
        assert_ne!(
            model_call("offline", &request),
            model_call("offline", &other_text)
        );
        assert_ne!(
            model_call("offline", &request),
            model_call("gpt-4o", &request)
        );
        let mut warmer = request.clone();
        warmer.temperature = Some(0.7);
        assert_ne!(
            model_call("offline", &request),
            model_call("offline", &warmer)
        );
        let mut json = request.clone();
        json.format = ReplyFormat::JsonObject;
        assert_ne!(
            model_call("offline", &request),
            model_call("offline", &json)
        );
    }
}
