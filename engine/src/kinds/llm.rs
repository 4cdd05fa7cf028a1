//! `llm`: one call to a chat model. The request is the system prompt, the
//! conversation in the messages channel, and optionally a user prompt
//! rendered from the state; the reply (text and any tool calls) is
//! appended to the conversation. The reply streams as `token` events;
//! token usage is reported as a `usage` event.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::{Value, json};

use super::structured::Structured;
use super::template::Template;
use super::{messages_channel, scope};
use crate::model::{
    ChatMessage, ChatRequest, Delta, MODEL_INPUT_EVENT, ModelError, ModelInput, ReplyFormat, Role,
    SharedModel, ToolSpec,
};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of an `llm` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// Which model: a configured endpoint's name, `offline`, or none for
    /// the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "model"))]
    pub model: Option<String>,
    /// The secret the model authenticates with, by name; bound by whoever
    /// runs the graph (never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "credential"))]
    pub credential: Option<String>,
    /// The system prompt, a template (`{{ ... }}` holes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("x-heddle" = "template"))]
    #[schemars(example = &"You are a helpful assistant. Answer in a short paragraph.")]
    pub system: String,
    /// A user message to add, a template; without it the conversation so
    /// far is the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "template"))]
    pub prompt: Option<String>,
    /// The conversation: a `messages` channel.
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
    /// Tools the model may call, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-heddle" = "tool"))]
    pub tools: Vec<String>,
    /// Also write the reply to this channel: its text to a text channel;
    /// to a typed one (number, boolean, list, object) or one with a
    /// schema, a value of that shape, asked of the model and checked
    /// (structured output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "channel"))]
    pub output: Option<String>,
    /// How many times a reply that does not fit `output` is asked for
    /// again, with the reason (default 2, at most 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Ask for a JSON object as the reply.
    #[serde(default)]
    pub json: bool,
    /// Code around the model call: rewrite the messages before it, accept
    /// or reject the reply after it (see `ModelHooks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<super::hooks::ModelHooks>,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: LlmConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = cx
        .check_messages_channel("messages", &config.messages)
        .into_iter()
        .collect();
    if let Some(output) = &config.output {
        issues.extend(cx.check_channel("output", output, ChannelType::String));
    }
    let structured = config
        .output
        .as_deref()
        .and_then(|output| Structured::for_channel(cx, output));
    let retries = Structured::retries("output_retries", config.output_retries)
        .map_err(|issue| issues.push(issue))
        .unwrap_or(0);
    let model = cx
        .model(
            "model",
            config.model.as_deref(),
            config.credential.as_deref(),
        )
        .map_err(|issue| issues.push(issue))
        .ok();
    let tools: Vec<ToolSpec> =
        super::tools::bind(&config.tools, cx, "tools", &Default::default(), 0)
            .map_err(|more| issues.extend(more))
            .map(|bound| bound.iter().map(|bound| bound.tool.spec()).collect())
            .unwrap_or_default();
    let system = Template::parse_field("system", &config.system, &mut issues);
    let prompt = match &config.prompt {
        Some(prompt) => Template::parse_field("prompt", prompt, &mut issues).map(Some),
        None => Some(None),
    };
    let hooks = super::hooks::Hooks::build(config.hooks.as_ref(), cx, "hooks")
        .map_err(|more| issues.extend(more))
        .ok();
    match (model, system, prompt, hooks) {
        (Some(model), Some(system), Some(prompt), Some(hooks)) if issues.is_empty() => {
            Ok(Built::plain(Llm {
                model,
                system,
                prompt,
                tools,
                hooks,
                structured,
                retries,
                config,
            }))
        }
        _ => Err(issues),
    }
}

struct Llm {
    model: SharedModel,
    system: Template,
    prompt: Option<Template>,
    tools: Vec<ToolSpec>,
    hooks: super::hooks::Hooks,
    /// What `output` asks of the reply, when it is not text.
    structured: Option<Structured>,
    retries: u32,
    config: LlmConfig,
}

/// The node's failure when `hooks.after` kept rejecting the replies.
pub(super) fn rejected(times: u32, reason: &str) -> NodeError {
    NodeError::permanent(format!(
        "hooks.after rejected the model's reply {times} times; the last time: {reason}"
    ))
}

/// What the model reads after a rejected reply.
pub(super) fn retry_note(reason: &str) -> String {
    format!("Your reply was not accepted: {reason}. Please answer again.")
}

/// Reports what a node asks its model, `messages` as sent (once an
/// execution; see [`ModelInput`]): the trace shows it.
pub(super) fn tell_model_input(ctx: &crate::node::NodeContext<'_>, messages: &[ChatMessage]) {
    if let Ok(data) = serde_json::to_value(ModelInput::of(messages)) {
        ctx.emit(MODEL_INPUT_EVENT, data);
    }
}

/// A model failure as a node failure: transient ones are worth a retry.
pub(super) fn model_error(error: ModelError) -> NodeError {
    if error.is_transient() {
        NodeError::transient(error.to_string())
    } else {
        NodeError::permanent(error.to_string())
    }
}

impl Llm {
    async fn call(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let (mut messages, user) = {
            let scope = scope(&input);
            let render = |template: &Template| {
                template
                    .render(&scope)
                    .map_err(|e| NodeError::permanent(e.to_string()))
            };
            let mut messages = Vec::new();
            let system = render(&self.system)?;
            if !system.is_empty() {
                messages.push(ChatMessage::new(Role::System, system));
            }
            messages.extend(ChatMessage::list_in(input.state, &self.config.messages));
            // The prompt is said on the run's behalf, not by the person in
            // the conversation: it is signed with the node's id (`name`,
            // never sent to the model), so a chat shows it as this node's.
            let user = match &self.prompt {
                Some(prompt) => {
                    let mut message = ChatMessage::new(Role::User, render(prompt)?);
                    message.name = Some(input.ctx.node.to_string());
                    Some(message)
                }
                None => None,
            };
            (messages, user)
        };
        if let Some(user) = &user {
            messages.push(user.clone());
        }
        let ctx = input.ctx;
        let mut messages = self.hooks.before(ctx, input.state, messages).await?;
        tell_model_input(ctx, &messages);
        let deltas = |delta: Delta| match delta {
            Delta::Text(text) => ctx.emit("token", json!({"text": text})),
            Delta::ToolCall {
                index,
                id,
                name,
                arguments,
            } => ctx.emit(
                "tool_call_delta",
                json!({"index": index, "id": id, "name": name, "arguments": arguments}),
            ),
        };
        let format = match &self.structured {
            Some(structured) => structured.format(),
            None if self.config.json => ReplyFormat::JsonObject,
            None => ReplyFormat::Text,
        };
        let mut rejections = 0;
        let mut misfits = 0;
        let (reply, value) = loop {
            let request = ChatRequest {
                model: None,
                messages: messages.clone(),
                tools: self.tools.clone(),
                temperature: self.config.temperature,
                max_tokens: self.config.max_tokens,
                format: format.clone(),
                tools_off: false,
            };
            let asked = std::time::Instant::now();
            let reply = self
                .model
                .chat(request, &deltas)
                .await
                .map_err(model_error)?;
            ctx.record_usage(&reply, asked.elapsed())?;
            // A reply that calls tools carries no value yet.
            let value = match &self.structured {
                Some(structured) if reply.tool_calls.is_empty() => {
                    match structured.read(&reply.content) {
                        Ok(value) => Some(value),
                        Err(misfit) => {
                            let note =
                                structured.refuse(ctx, &mut misfits, self.retries, &misfit)?;
                            messages.push(ChatMessage::new(Role::Assistant, reply.content));
                            messages.push(ChatMessage::new(Role::User, note));
                            continue;
                        }
                    }
                }
                _ => None,
            };
            let Some(reason) = self
                .hooks
                .after(ctx, input.state, &messages, &reply)
                .await?
            else {
                break (reply, value);
            };
            rejections += 1;
            if rejections > self.hooks.max_rejections() {
                return Err(rejected(rejections, &reason));
            }
            messages.push(ChatMessage::new(Role::Assistant, reply.content));
            messages.push(ChatMessage::new(Role::User, retry_note(&reason)));
        };
        // The reply is signed with the node's id too (never sent to a
        // model): a conversation with several specialists says which one
        // answered.
        let mut assistant = ChatMessage::new(Role::Assistant, reply.content.clone());
        assistant.tool_calls = reply.tool_calls;
        assistant.name = Some(input.ctx.node.to_string());
        let mut new_messages: Vec<Value> = user.iter().map(ChatMessage::to_value).collect();
        new_messages.push(assistant.to_value());
        let mut output =
            NodeOutput::update(self.config.messages.clone(), Value::Array(new_messages));
        if let Some(channel) = &self.config.output {
            // A reply that called tools has no value for a structured
            // output; the channel is left as it is.
            match value {
                Some(value) => output = output.with(channel.clone(), value),
                None if self.structured.is_none() => {
                    output = output.with(channel.clone(), Value::String(reply.content));
                }
                None => {}
            }
        }
        Ok(output)
    }
}

impl Node for Llm {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.call(input))
    }
}
