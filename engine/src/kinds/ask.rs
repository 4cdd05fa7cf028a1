//! `ask`: human input. The first time it runs it pauses the run with its
//! question; the run is resumed with the answer, which the node writes to
//! its channel. With a checkpoint store the pause can last as long as the
//! person needs (see `run::Durable`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::{Value, json};

use super::scope;
use super::template::Template;
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of an `ask` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskConfig {
    /// The question shown to the person, a template (`{{ ... }}` holes).
    #[schemars(extend("x-heddle" = "template"))]
    pub prompt: String,
    /// The channel the answer is written to.
    #[schemars(extend("x-heddle" = "channel"))]
    pub answer: String,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: AskConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_channel("answer", &config.answer, ChannelType::String)
        .into_iter()
        .collect();
    let prompt = Template::parse_field("prompt", &config.prompt, &mut issues);
    match prompt {
        Some(prompt) if issues.is_empty() => Ok(Built::plain(Ask {
            prompt,
            ty: cx
                .channel_type(&config.answer)
                .unwrap_or(crate::format::ChannelType::Any),
            answer: config.answer,
        })),
        _ => Err(issues),
    }
}

struct Ask {
    prompt: Template,
    answer: String,
    /// The answer channel's type: a typed answer is read as one.
    ty: crate::format::ChannelType,
}

impl Ask {
    fn ask(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        if let Some(answer) = input.ctx.resume_value() {
            let answer = crate::state::coerce_answer(self.ty, answer.clone()).map_err(|why| {
                NodeError::permanent(format!("the answer for `{}`: {why}", self.answer))
            })?;
            return Ok(NodeOutput::update(self.answer.clone(), answer));
        }
        let prompt = self
            .prompt
            .render(&scope(input))
            .map_err(|error| NodeError::permanent(error.to_string()))?;
        Err(NodeError::interrupt(
            json!({"prompt": prompt, "answer": self.answer}),
        ))
    }
}

impl Node for Ask {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.ask(&input)))
    }
}
