//! Handoffs between agents: an agent offers its model one tool per
//! handoff (`transfer_to_billing`); a call of one ends the agent on that
//! handoff's route, so the edge carrying the route takes the conversation
//! to the next agent, which goes on with the same thread. Each agent signs
//! its replies (`name`: its node id), and an agent reads the others'
//! replies as context ("[triage] said: ...") rather than as its own, with
//! their tool traffic left out, so a model never mistakes another agent's
//! words or tool calls for its own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::model::{ChatMessage, Role, ToolCall, ToolSpec};

/// A handoff an agent may make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// The route taken: an out-edge of the agent carries it to the next
    /// agent. The model sees the tool `transfer_to_<route>`.
    pub route: String,
    /// When to hand off, for the model.
    #[serde(default)]
    pub description: String,
}

/// The route an agent ends on when it answers itself, while it has
/// handoffs (its edge to wherever the conversation ends).
pub const DONE_ROUTE: &str = "done";

const PREFIX: &str = "transfer_to_";

impl Handoff {
    /// The tool's name.
    pub fn tool_name(&self) -> String {
        format!("{PREFIX}{}", self.route)
    }

    /// The tool the model sees.
    pub fn spec(&self) -> ToolSpec {
        let description = if self.description.is_empty() {
            format!("Hand the conversation over to {}.", self.route)
        } else {
            format!(
                "Hand the conversation over to {}: {}",
                self.route, self.description
            )
        };
        ToolSpec {
            name: self.tool_name(),
            description,
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
}

/// The handoff the model asked for, if any (the first, when several).
pub fn chosen<'a>(handoffs: &'a [Handoff], calls: &[ToolCall]) -> Option<&'a Handoff> {
    calls.iter().find_map(|call| {
        let route = call.name.strip_prefix(PREFIX)?;
        handoffs.iter().find(|handoff| handoff.route == route)
    })
}

/// The conversation as agent `me` reads it: other agents' replies become
/// context messages, their tool calls and results are left out.
pub fn as_seen_by(me: &str, conversation: &[ChatMessage]) -> Vec<ChatMessage> {
    let theirs = |message: &ChatMessage| {
        message.role == Role::Assistant && message.name.as_deref().is_some_and(|name| name != me)
    };
    let foreign_calls: Vec<&str> = conversation
        .iter()
        .filter(|message| theirs(message))
        .flat_map(|message| message.tool_calls.iter().map(|call| call.id.as_str()))
        .collect();
    conversation
        .iter()
        .filter_map(|message| {
            if theirs(message) {
                let author = message.name.as_deref().unwrap_or_default();
                return (!message.content.trim().is_empty()).then(|| {
                    ChatMessage::new(
                        Role::User,
                        format!("For context: [{author}] said: {}", message.content),
                    )
                });
            }
            let answers_theirs = message.role == Role::Tool
                && message
                    .tool_call_id
                    .as_deref()
                    .is_some_and(|id| foreign_calls.contains(&id));
            (!answers_theirs).then(|| message.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(role: Role, by: &str, text: &str) -> ChatMessage {
        ChatMessage {
            name: Some(by.into()),
            ..ChatMessage::new(role, text)
        }
    }

    #[test]
    fn another_agents_words_are_context_and_its_tool_traffic_is_left_out() {
        let mut handover = signed(Role::Assistant, "triage", "");
        handover.tool_calls = vec![ToolCall {
            id: "c1".into(),
            name: "transfer_to_billing".into(),
            arguments: "{}".into(),
        }];
        let reply = ChatMessage::tool_reply(&handover.tool_calls[0], "Handed over to billing.");
        let conversation = vec![
            ChatMessage::new(Role::User, "I was charged twice"),
            signed(Role::Assistant, "triage", "Let me find who can help."),
            handover,
            reply,
            signed(Role::Assistant, "billing", "I see two charges."),
        ];
        let seen: Vec<(Role, String)> = as_seen_by("billing", &conversation)
            .into_iter()
            .map(|m| (m.role, m.content))
            .collect();
        assert_eq!(
            seen,
            [
                (Role::User, "I was charged twice".to_string()),
                (
                    Role::User,
                    "For context: [triage] said: Let me find who can help.".to_string()
                ),
                (Role::Assistant, "I see two charges.".to_string()),
            ]
        );
        // Triage reads its own messages as they are, billing's as context.
        let triage = as_seen_by("triage", &conversation);
        assert_eq!(triage.len(), 5);
        assert_eq!(triage[2].tool_calls[0].name, "transfer_to_billing");
        assert_eq!(
            triage[4].content,
            "For context: [billing] said: I see two charges."
        );
    }
}
