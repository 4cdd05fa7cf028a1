//! `memory`: keeps a conversation within bounds. The thread's history is
//! already in its `thread`-scoped messages channel (with the new user input
//! appended by the run's input); this node trims it to the last
//! `max_messages` messages and, optionally, to a token budget, always
//! keeping system messages. Dropped messages are removed from the channel
//! (`add_messages` removal markers); with `summarize`, the model first
//! writes a summary of them, kept as a system message.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::llm::model_error;
use super::messages_channel;
use crate::model::{ChatMessage, ChatRequest, Role, SharedModel};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of a `memory` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// The conversation: a `messages` channel (usually thread-scoped).
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
    /// Keep at most this many non-system messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_messages: Option<usize>,
    /// Keep at most about this many tokens of non-system messages
    /// (counted as words × 4 / 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    /// Summarize what is dropped, with the model, into a system message.
    #[serde(default)]
    pub summarize: bool,
    /// Which model summarizes (see `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "model"))]
    pub model: Option<String>,
    /// The secret the model authenticates with, by name; bound by whoever
    /// runs the graph (never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "credential"))]
    pub credential: Option<String>,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: MemoryConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_messages_channel("messages", &config.messages)
        .into_iter()
        .collect();
    if config.max_messages.is_none() && config.max_tokens.is_none() {
        // At the first of the two fields: the form shows it there, in sight.
        issues.push(ConfigIssue::new(
            "max_messages",
            "set `max_messages`, `max_tokens`, or both",
        ));
    }
    if config.max_messages == Some(0) {
        issues.push(ConfigIssue::new(
            "max_messages",
            "keep at least one message",
        ));
    }
    let model = cx
        .model(
            "model",
            config.model.as_deref(),
            config.credential.as_deref(),
        )
        .map_err(|issue| issues.push(issue))
        .ok();
    match model {
        Some(model) if issues.is_empty() => Ok(Built::plain(Memory { model, config })),
        _ => Err(issues),
    }
}

struct Memory {
    model: SharedModel,
    config: MemoryConfig,
}

fn tokens(message: &ChatMessage) -> usize {
    message.content.split_whitespace().count() * 4 / 3 + 1
}

impl Memory {
    /// The ids of the messages to drop: the oldest non-system ones beyond
    /// the limits.
    fn to_drop<'m>(&self, messages: &'m [ChatMessage]) -> Vec<&'m ChatMessage> {
        let mut kept_count = 0;
        let mut kept_tokens = 0;
        let mut drop = Vec::new();
        for message in messages.iter().rev().filter(|m| m.role != Role::System) {
            let fits_count = self.config.max_messages.is_none_or(|max| kept_count < max);
            let fits_tokens = self
                .config
                .max_tokens
                .is_none_or(|max| kept_tokens + tokens(message) <= max);
            if fits_count && fits_tokens && drop.is_empty() {
                kept_count += 1;
                kept_tokens += tokens(message);
            } else {
                drop.push(message);
            }
        }
        drop.reverse();
        drop
    }

    async fn trim(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let messages = ChatMessage::list_in(input.state, &self.config.messages);
        let dropped = self.to_drop(&messages);
        if dropped.is_empty() {
            return Ok(NodeOutput::default());
        }
        let mut update: Vec<Value> = dropped
            .iter()
            .filter_map(|m| m.id.as_ref())
            .map(|id| json!({"id": id, "remove": true}))
            .collect();
        if self.config.summarize {
            let transcript: String = dropped
                .iter()
                .map(|m| format!("{:?}: {}\n", m.role, m.content))
                .collect();
            let request = ChatRequest {
                messages: vec![
                    ChatMessage::new(
                        Role::System,
                        "Summarize this earlier part of a conversation in a few sentences.",
                    ),
                    ChatMessage::new(Role::User, transcript),
                ],
                ..ChatRequest::default()
            };
            let asked = std::time::Instant::now();
            let reply = self
                .model
                .chat(request, &|_| {})
                .await
                .map_err(model_error)?;
            input.ctx.record_usage(&reply, asked.elapsed())?;
            let summary = ChatMessage::new(
                Role::System,
                format!("Summary of earlier messages: {}", reply.content),
            );
            update.push(summary.to_value());
        }
        input.ctx.emit(
            "memory_trimmed",
            json!({"dropped": dropped.len(), "summarized": self.config.summarize}),
        );
        Ok(NodeOutput::update(
            self.config.messages.clone(),
            Value::Array(update),
        ))
    }
}

impl Node for Memory {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.trim(input))
    }
}
