//! `agent`: the ReAct loop in one node. The model is called with the
//! conversation and its tools; while it asks for tools they are run (all at
//! once, failures becoming messages it can read) and it is called again,
//! up to `max_tool_rounds`. The model sees the system prompt and the last
//! `context_window` messages. With a `validator`, a final reply that does
//! not satisfy it is sent back once per round with what was wrong.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::llm::{messages_channel, model_error};
use super::scope;
use super::template::Template;
use super::tools::{BoundTools, bind, execute};
use crate::expr::Expr;
use crate::model::{ChatMessage, ChatRequest, Delta, Role, SharedModel};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of an `agent` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Which model (see `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system prompt, a template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub system: String,
    /// The conversation: a `messages` channel.
    #[serde(default = "messages_channel")]
    pub messages: String,
    /// The tools the agent may call.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The most rounds of tool calls before the agent must answer.
    #[serde(default = "default_rounds")]
    pub max_tool_rounds: u32,
    /// The model sees the system prompt and at most this many of the last
    /// messages (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<usize>,
    /// An expression the final reply must satisfy, reading it as `reply`
    /// (e.g. `len(reply) < 500`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validator: Option<String>,
    /// The longest one tool call may take.
    #[serde(default = "default_tool_timeout")]
    pub tool_timeout_ms: u64,
    /// Tool results longer than this are cut short in the conversation.
    #[serde(default = "default_max_chars")]
    pub max_result_chars: usize,
}

fn default_rounds() -> u32 {
    8
}

fn default_tool_timeout() -> u64 {
    30_000
}

fn default_max_chars() -> usize {
    2_000
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: AgentConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_messages_channel("messages", &config.messages)
        .into_iter()
        .collect();
    let model = cx
        .model("model", config.model.as_deref())
        .map_err(|issue| issues.push(issue))
        .ok();
    let tools = bind(&config.tools, cx, "tools")
        .map_err(|more| issues.extend(more))
        .ok();
    let system = Template::parse(&config.system)
        .map_err(|error| issues.push(ConfigIssue::new("system", error.to_string())))
        .ok();
    let validator = match &config.validator {
        Some(source) => Expr::parse(source)
            .map_err(|error| issues.push(ConfigIssue::new("validator", error.to_string())))
            .ok()
            .map(Some),
        None => Some(None),
    };
    if config.context_window == Some(0) {
        issues.push(ConfigIssue::new(
            "context_window",
            "the model must see at least one message",
        ));
    }
    match (model, tools, system, validator) {
        (Some(model), Some(tools), Some(system), Some(validator)) if issues.is_empty() => {
            Ok(Built::plain(Agent {
                model,
                tools,
                system,
                validator,
                config,
            }))
        }
        _ => Err(issues),
    }
}

struct Agent {
    model: SharedModel,
    tools: BoundTools,
    system: Template,
    validator: Option<Expr>,
    config: AgentConfig,
}

impl Agent {
    fn request(&self, system: &str, conversation: &[ChatMessage]) -> ChatRequest {
        let mut messages = Vec::new();
        if !system.is_empty() {
            messages.push(ChatMessage::new(Role::System, system));
        }
        let window = self
            .config
            .context_window
            .unwrap_or(usize::MAX)
            .min(conversation.len());
        let mut start = conversation.len() - window;
        // Never start the window on tool results whose call was cut off.
        while start > 0 && conversation[start].role == Role::Tool {
            start -= 1;
        }
        messages.extend(conversation[start..].iter().cloned());
        ChatRequest {
            messages,
            tools: self.tools.iter().map(|(_, tool)| tool.spec()).collect(),
            ..ChatRequest::default()
        }
    }

    async fn run_loop(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let system = self
            .system
            .render(&scope(&input))
            .map_err(|e| NodeError::permanent(e.to_string()))?;
        let mut conversation = ChatMessage::list_from(
            input
                .state
                .get(&self.config.messages)
                .unwrap_or(&Value::Null),
        );
        let mut added: Vec<ChatMessage> = Vec::new();
        let ctx = input.ctx;
        let deltas = |delta: Delta| {
            if let Delta::Text(text) = delta {
                ctx.emit("token", json!({"text": text}));
            }
        };
        let timeout = Duration::from_millis(self.config.tool_timeout_ms);
        let mut round = 0;
        loop {
            if ctx.is_cancelled() {
                return Err(NodeError::permanent("cancelled"));
            }
            let mut request = self.request(&system, &conversation);
            if round >= self.config.max_tool_rounds {
                // Out of rounds: it must answer with what it has.
                request.tools.clear();
            }
            let reply = self
                .model
                .chat(request, &deltas)
                .await
                .map_err(model_error)?;
            ctx.emit("usage", json!({"model": reply.model, "prompt_tokens": reply.usage.prompt_tokens, "completion_tokens": reply.usage.completion_tokens}));
            let mut assistant = ChatMessage::new(Role::Assistant, reply.content.clone());
            assistant.tool_calls = reply.tool_calls;
            conversation.push(assistant.clone());
            added.push(assistant.clone());
            if !assistant.tool_calls.is_empty() && round < self.config.max_tool_rounds {
                round += 1;
                ctx.emit("agent_round", json!({"round": round, "tools": assistant.tool_calls.iter().map(|c| &c.name).collect::<Vec<_>>()}));
                let (results, _) = execute(
                    &self.tools,
                    &assistant.tool_calls,
                    timeout,
                    self.config.max_result_chars,
                    ctx,
                )
                .await;
                conversation.extend(results.iter().cloned());
                added.extend(results);
                continue;
            }
            if let Some(validator) = &self.validator {
                let reply_value = Value::String(reply.content.clone());
                let valid = validator
                    .is_true(&|name| {
                        (name == "reply")
                            .then(|| reply_value.clone())
                            .or_else(|| input.state.get(name).cloned())
                    })
                    .map_err(|error| NodeError::permanent(error.to_string()))?;
                if !valid && round < self.config.max_tool_rounds {
                    round += 1;
                    let feedback = ChatMessage::new(
                        Role::User,
                        format!(
                            "Your answer does not satisfy `{}`. Please answer again.",
                            validator.source()
                        ),
                    );
                    conversation.push(feedback.clone());
                    added.push(feedback);
                    continue;
                }
            }
            break;
        }
        let added = added.iter().map(ChatMessage::to_value).collect();
        Ok(NodeOutput::update(
            self.config.messages.clone(),
            Value::Array(added),
        ))
    }
}

impl Node for Agent {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.run_loop(input))
    }
}
