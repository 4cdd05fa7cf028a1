//! `human`: a person approves the model's tool calls before they run. The
//! run pauses with the pending calls; it is resumed with
//! `{"approved": true}`, `{"approved": false, "reason": "..."}`, or
//! `{"approved": true, "tool_calls": [...]}` with edited arguments. The
//! node then takes its `approved` route (edits applied to the conversation)
//! or its `rejected` route (each call answered with the refusal, so the
//! model can read why). Plain questions to a person use `ask`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::messages_channel;
use super::scope;
use super::template::Template;
use crate::model::{ChatMessage, ToolCall};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of a `human` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HumanConfig {
    /// What the person is asked, a template.
    #[serde(default = "default_prompt")]
    #[schemars(extend("x-heddle" = "template"))]
    pub prompt: String,
    /// The conversation whose last message holds the tool calls.
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
}

fn default_prompt() -> String {
    "Approve these tool calls?".into()
}

/// The routes a `human` node takes.
pub const APPROVED: &str = "approved";
/// The route taken when the person says no.
pub const REJECTED: &str = "rejected";

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: HumanConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_messages_channel("messages", &config.messages)
        .into_iter()
        .collect();
    let prompt = Template::parse_field("prompt", &config.prompt, &mut issues);
    match prompt {
        Some(prompt) if issues.is_empty() => Ok(Built {
            routes: vec![APPROVED.into(), REJECTED.into()],
            ..Built::plain(Human { prompt, config })
        }),
        _ => Err(issues),
    }
}

struct Human {
    prompt: Template,
    config: HumanConfig,
}

#[derive(Deserialize)]
struct Answer {
    approved: bool,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
}

impl Human {
    fn decide(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        let messages = ChatMessage::list_in(input.state, &self.config.messages);
        let Some(last) = ChatMessage::pending_tool_calls(&messages) else {
            // Nothing to approve: go on.
            return Ok(NodeOutput::default().route(APPROVED));
        };
        let Some(answer) = input.ctx.resume_value() else {
            let prompt = self
                .prompt
                .render(&scope(input))
                .map_err(|e| NodeError::permanent(e.to_string()))?;
            return Err(NodeError::interrupt(json!({
                "kind": "approval",
                "prompt": prompt,
                "tool_calls": last.tool_calls,
                "answer_with": {"approved": "true or false", "reason": "optional", "tool_calls": "optional, edited"},
            })));
        };
        let answer: Answer = match answer {
            Value::Bool(approved) => Answer {
                approved: *approved,
                reason: None,
                tool_calls: None,
            },
            other => serde_json::from_value(other.clone()).map_err(|error| {
                NodeError::permanent(format!(
                    "the answer must be true, false or {{\"approved\": ...}}: {error}"
                ))
            })?,
        };
        if !answer.approved {
            let reason = answer
                .reason
                .unwrap_or_else(|| "a person declined this tool call".into());
            let replies: Vec<Value> = last
                .tool_calls
                .iter()
                .map(|call| {
                    let message = ChatMessage::tool_reply(call, format!("rejected: {reason}"));
                    message.to_value()
                })
                .collect();
            return Ok(
                NodeOutput::update(self.config.messages.clone(), Value::Array(replies))
                    .route(REJECTED),
            );
        }
        let mut output = NodeOutput::default().route(APPROVED);
        if let Some(edited) = answer.tool_calls {
            let mut message = last.clone();
            message.tool_calls = edited;
            output = output.with(
                self.config.messages.clone(),
                Value::Array(vec![message.to_value()]),
            );
        }
        Ok(output)
    }
}

impl Node for Human {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.decide(&input)))
    }
}
