//! `agent`: the ReAct loop in one node. The model is called with the
//! conversation and its tools; while it asks for tools they are run (all at
//! once, failures becoming messages it can read) and it is called again,
//! up to `max_tool_rounds`. The model sees the system prompt and the last
//! `context_window` messages. With a `validator`, a final reply that does
//! not satisfy it is sent back once per round with what was wrong.
//!
//! Tools are called under their policies (see `tools`). A tool listed in
//! `return_direct` ends the agent when a call of it succeeds: its result
//! is the agent's answer, with no further model call (a lookup whose
//! result is the reply, a tool that sends the message itself).
//!
//! With `handoffs`, the agent may pass the conversation to another agent
//! of the graph (see [`handoff`]): it then ends on the handoff's route,
//! and on the route `done` when it answers itself.
//!
//! Sub-agents are other graphs (each with a `messages` channel) offered to
//! the model as tools: a call runs the graph with the task as the user's
//! message and returns its last reply (a supervisor delegating to
//! specialists); one that asks a person pauses the agent (see
//! [`delegation`]).

mod delegation;
mod handoff;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use handoff::{DONE_ROUTE, Handoff};

use delegation::{Ended, SubAgentTool, Waiting};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::llm::{model_error, tell_model_input};
use super::messages_channel;
use super::scope;
use super::structured::Structured;
use super::subgraph::load_child;
use super::template::Template;
use super::tools::{Executed, bind, check_policies, execute};
use crate::expr::Expr;
use crate::model::ToolSpec;
use crate::model::{ChatMessage, ChatRequest, Delta, ReplyFormat, Role, SharedModel};
use crate::node::{
    BuildContext, Built, ChildGraph, ConfigIssue, Node, NodeError, NodeFuture, NodeInput,
    NodeOutput, parse_config,
};
use crate::tools::{BoundTool, Tool, ToolPolicy};

/// Settings of an `agent` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Which model (see `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "model"))]
    pub model: Option<String>,
    /// The secret the model authenticates with, by name; bound by whoever
    /// runs the graph (never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "credential"))]
    pub credential: Option<String>,
    /// The system prompt, a template.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("x-heddle" = "template"))]
    #[schemars(example = &"You are a helpful assistant. Answer in a short paragraph.")]
    pub system: String,
    /// The conversation: a `messages` channel.
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
    /// The tools the agent may call.
    #[serde(default)]
    #[schemars(extend("x-heddle" = "tool"))]
    pub tools: Vec<String>,
    /// The most rounds of tool calls before the agent must answer.
    #[serde(default = "default_rounds")]
    pub max_tool_rounds: u32,
    /// The model sees the system prompt and at most this many of the last
    /// messages (all when absent). The window moves in steps of half its
    /// size, so the model sees between half of it and all of it, and
    /// consecutive requests start alike for the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<usize>,
    /// An expression the final reply must satisfy, reading it as `reply`
    /// (e.g. `len(reply) < 500`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "expression"))]
    pub validator: Option<String>,
    /// The longest one tool call may take.
    #[serde(default = "default_tool_timeout")]
    pub tool_timeout_ms: u64,
    /// Tool results longer than this are cut short in the conversation.
    #[serde(default = "default_max_chars")]
    pub max_result_chars: usize,
    /// Graphs the agent can delegate to, as tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sub_agents: Vec<SubAgent>,
    /// How each tool is called, by tool name (see the `tools` node).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("x-heddle-key" = "tool"))]
    pub policies: BTreeMap<String, ToolPolicy>,
    /// Tools whose result, when a call of them succeeds, is the agent's
    /// answer: the agent ends without asking the model again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-heddle" = "tool"))]
    pub return_direct: Vec<String>,
    /// Code around each model call: rewrite the messages before it,
    /// accept or reject the reply after it (see `ModelHooks`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<super::hooks::ModelHooks>,
    /// Other agents this one may hand the conversation to, each by the
    /// route of an out-edge; the agent then ends on that route, or on
    /// `done` when it answers itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<Handoff>,
    /// Also write the final answer to this channel: its text to a text
    /// channel; to a typed one or one with a schema, a value of that shape,
    /// asked of the model and checked (structured output, see `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "channel"))]
    pub output: Option<String>,
    /// How many times a final answer that does not fit `output` is asked
    /// for again, with the reason (default 2, at most 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_retries: Option<u32>,
}

/// A graph an agent delegates to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubAgent {
    /// The tool's name, as the model sees it.
    pub name: String,
    /// What it is good at, for the model.
    #[serde(default)]
    pub description: String,
    /// The graph, embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "graph"))]
    pub graph: Option<Value>,
    /// Or a graph file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Or a graph saved in the app, by id; the server embeds it (into
    /// `graph`) before the run compiles, as for a `subgraph` node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<String>,
}

impl SubAgent {
    /// The tool the model calls it by: a task in words.
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: json!({
                "type": "object",
                "properties": {"task": {"type": "string"}},
                "required": ["task"]
            }),
        }
    }
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
        .model(
            "model",
            config.model.as_deref(),
            config.credential.as_deref(),
        )
        .map_err(|issue| issues.push(issue))
        .ok();
    let mut sub_agents: BTreeMap<String, Arc<dyn ChildGraph>> = BTreeMap::new();
    let mut tools = bind(
        &config.tools,
        cx,
        "tools",
        &config.policies,
        config.tool_timeout_ms,
    )
    .map_err(|more| issues.extend(more))
    .ok();
    for (i, sub) in config.sub_agents.iter().enumerate() {
        let at = format!("sub_agents[{i}]");
        if let (Some(id), None) = (&sub.graph_id, &sub.graph) {
            // Checked when the server embeds it, for whoever starts the run.
            match super::subgraph::saved_graph_accepted(cx, id, &format!("{at}.graph_id")) {
                Ok(()) => {
                    if let Some(tools) = &mut tools {
                        let tool = delegation::NotEmbeddedTool {
                            spec: sub.spec(),
                            graph_id: id.clone(),
                        };
                        tools.push(cx.registry.tools().bind(
                            &sub.name,
                            Arc::new(tool) as Arc<dyn Tool>,
                            config.tool_timeout_ms,
                            config.policies.get(&sub.name),
                        ));
                    }
                }
                Err(issue) => issues.push(issue),
            }
            continue;
        }
        match load_child(sub.graph.as_ref(), sub.path.as_deref(), cx, &at) {
            Ok((document, graph)) => {
                let has_messages = document
                    .state
                    .channels
                    .get("messages")
                    .is_some_and(|channel| channel.ty == crate::format::ChannelType::Messages);
                if !has_messages {
                    issues.push(ConfigIssue::new(
                        at,
                        "a sub-agent's graph needs a `messages` channel of type `messages`",
                    ));
                    continue;
                }
                let spec = sub.spec();
                sub_agents.insert(sub.name.clone(), Arc::clone(&graph));
                if let Some(tools) = &mut tools {
                    tools.push(cx.registry.tools().bind(
                        &sub.name,
                        Arc::new(SubAgentTool { spec, graph }) as Arc<dyn Tool>,
                        config.tool_timeout_ms,
                        config.policies.get(&sub.name),
                    ));
                }
            }
            Err(more) => issues.extend(more),
        }
    }
    if let Some(tools) = &tools {
        issues.extend(check_policies(&config.policies, tools));
        for (i, name) in config.return_direct.iter().enumerate() {
            if !tools.iter().any(|tool| &tool.name == name) {
                issues.push(ConfigIssue::new(
                    format!("return_direct[{i}]"),
                    format!("`{name}` is not one of this agent's tools or sub-agents"),
                ));
            }
        }
    }
    let system = Template::parse_field("system", &config.system, &mut issues);
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
    let mut routes: Vec<String> = Vec::new();
    for (i, handoff) in config.handoffs.iter().enumerate() {
        let at = format!("handoffs[{i}].route");
        let valid = !handoff.route.is_empty()
            && handoff
                .route
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            issues.push(ConfigIssue::new(
                at,
                "a route is letters, digits, `_` and `-` (it names the tool `transfer_to_<route>`)",
            ));
        } else if handoff.route == DONE_ROUTE || routes.contains(&handoff.route) {
            issues.push(ConfigIssue::new(
                at,
                format!("the route `{}` is taken (each handoff needs its own, and `done` is the agent's own answer)", handoff.route),
            ));
        } else if tools
            .as_ref()
            .is_some_and(|tools| tools.iter().any(|tool| tool.name == handoff.tool_name()))
        {
            issues.push(ConfigIssue::new(
                at,
                format!("a tool is already named `{}`", handoff.tool_name()),
            ));
        }
        routes.push(handoff.route.clone());
    }
    if !routes.is_empty() {
        routes.push(DONE_ROUTE.to_string());
    }
    let hooks = super::hooks::Hooks::build(config.hooks.as_ref(), cx, "hooks")
        .map_err(|more| issues.extend(more))
        .ok();
    if let Some(output) = &config.output {
        issues.extend(cx.check_channel("output", output, crate::format::ChannelType::String));
    }
    let structured = config
        .output
        .as_deref()
        .and_then(|output| Structured::for_channel(cx, output));
    let output_retries = Structured::retries("output_retries", config.output_retries)
        .map_err(|issue| issues.push(issue))
        .unwrap_or(0);
    match (model, tools, system, validator, hooks) {
        (Some(model), Some(tools), Some(system), Some(validator), Some(hooks))
            if issues.is_empty() =>
        {
            let mut built = Built::plain(Agent {
                id: cx.node.to_string(),
                model,
                tools,
                sub_agents,
                system,
                validator,
                hooks,
                structured,
                output_retries,
                config,
            });
            built.routes = routes;
            Ok(built)
        }
        _ => Err(issues),
    }
}

struct Agent {
    /// Its node id: it signs its replies with it.
    id: String,
    model: SharedModel,
    tools: Vec<BoundTool>,
    /// The sub-agents among `tools`, by name (to go on inside one that
    /// paused).
    sub_agents: BTreeMap<String, Arc<dyn ChildGraph>>,
    system: Template,
    validator: Option<Expr>,
    hooks: super::hooks::Hooks,
    /// What `output` asks of the final answer, when it is not text.
    structured: Option<Structured>,
    output_retries: u32,
    config: AgentConfig,
}

/// Where the messages the model sees start, with a `context_window` of
/// `window`: the window moves on in steps of half its size, not one
/// message at a time, so consecutive requests start alike (providers
/// cache a request's start) and the model sees between half the window
/// and the whole of it.
fn window_start(window: Option<usize>, len: usize) -> usize {
    let Some(window) = window.filter(|&window| window < len) else {
        return 0;
    };
    let stride = (window / 2).max(1);
    (len - window).div_ceil(stride) * stride
}

impl Agent {
    fn request(&self, system: &str, conversation: &[ChatMessage]) -> ChatRequest {
        let mut messages = Vec::new();
        if !system.is_empty() {
            messages.push(ChatMessage::new(Role::System, system));
        }
        let mut start = window_start(self.config.context_window, conversation.len());
        // Never start the window on tool results whose call was cut off.
        while start > 0 && conversation[start].role == Role::Tool {
            start -= 1;
        }
        messages.extend(handoff::as_seen_by(&self.id, &conversation[start..]));
        let mut tools: Vec<ToolSpec> = self.tools.iter().map(|bound| bound.tool.spec()).collect();
        tools.extend(self.config.handoffs.iter().map(Handoff::spec));
        ChatRequest {
            messages,
            tools,
            format: self
                .structured
                .as_ref()
                .map_or(ReplyFormat::Text, Structured::format),
            ..ChatRequest::default()
        }
    }

    async fn run_loop(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let system = self
            .system
            .render(&scope(&input))
            .map_err(|e| NodeError::permanent(e.to_string()))?;
        let mut conversation = ChatMessage::list_in(input.state, &self.config.messages);
        let mut added: Vec<ChatMessage> = Vec::new();
        let ctx = input.ctx;
        let deltas = |delta: Delta| {
            if let Delta::Text(text) = delta {
                ctx.emit("token", json!({"text": text}));
            }
        };
        let mut round = 0;
        let mut rejections = 0;
        let mut misfits = 0;
        // The final answer's value, for a structured `output`.
        let mut answer: Option<Value> = None;
        // A round of tool calls that ended, whose replies the model reads
        // next.
        let mut ended: Option<Ended> = None;
        if let Some(waiting) = Waiting::of(ctx)? {
            // Answering a sub-agent's question: the turn goes on from where
            // it paused.
            conversation.extend(waiting.added.iter().cloned());
            added.clone_from(&waiting.added);
            (round, rejections) = (waiting.round, waiting.rejections);
            ended = Some(
                waiting
                    .go_on(
                        ctx,
                        &self.sub_agents,
                        &self.tools,
                        self.config.max_result_chars,
                    )
                    .await?,
            );
        }
        // Where the rejected replies and notes start in `conversation`: they
        // are dropped once a reply is accepted.
        let mut rejected_since: Option<usize> = None;
        let mut route: Option<String> = None;
        loop {
            if let Some(Ended { replies, succeeded }) = ended.take() {
                conversation.extend(replies.iter().cloned());
                added.extend(replies);
                let direct = succeeded
                    .into_iter()
                    .find(|(_, name, _)| self.config.return_direct.contains(name));
                if let Some((_, name, result)) = direct {
                    ctx.emit("return_direct", json!({"tool": name}));
                    // The tool's result is the answer: no model to ask again.
                    if let Some(structured) = &self.structured {
                        answer = Some(
                            structured
                                .read(&result)
                                .map_err(|misfit| structured.gave_up(1, &misfit))?,
                        );
                    }
                    let mut answer = ChatMessage::new(Role::Assistant, result);
                    answer.name = Some(self.id.clone());
                    added.push(answer);
                    break;
                }
            }
            if ctx.is_cancelled() {
                return Err(NodeError::permanent("cancelled"));
            }
            let mut request = self.request(&system, &conversation);
            if round >= self.config.max_tool_rounds {
                // Out of rounds: it must answer with what it has. The tools
                // stay listed, so the request starts as the others did.
                request.tools_off = true;
            }
            request.messages = self
                .hooks
                .before(ctx, input.state, std::mem::take(&mut request.messages))
                .await?;
            if round == 0 {
                tell_model_input(ctx, &request.messages);
            }
            let asked = std::time::Instant::now();
            let reply = self
                .model
                .chat(request.clone(), &deltas)
                .await
                .map_err(model_error)?;
            ctx.record_usage(&reply, asked.elapsed())?;
            if let Some(reason) = self
                .hooks
                .after(ctx, input.state, &request.messages, &reply)
                .await?
            {
                // The rejected reply and why go to the model, not into the
                // conversation.
                rejections += 1;
                if rejections > self.hooks.max_rejections() {
                    return Err(super::llm::rejected(rejections, &reason));
                }
                let mut said = ChatMessage::new(Role::Assistant, reply.content);
                said.name = Some(self.id.clone());
                conversation.push(said);
                conversation.push(ChatMessage::new(
                    Role::User,
                    super::llm::retry_note(&reason),
                ));
                rejected_since.get_or_insert(conversation.len() - 2);
                continue;
            }
            // Only the last reply's value counts (an earlier one may have
            // failed the validator).
            answer = None;
            if let Some(structured) = &self.structured
                && reply.tool_calls.is_empty()
            {
                match structured.read(&reply.content) {
                    Ok(value) => answer = Some(value),
                    Err(misfit) => {
                        // Like a rejection: the model reads why, the
                        // conversation never holds it.
                        let note =
                            structured.refuse(ctx, &mut misfits, self.output_retries, &misfit)?;
                        let mut said = ChatMessage::new(Role::Assistant, reply.content);
                        said.name = Some(self.id.clone());
                        conversation.push(said);
                        conversation.push(ChatMessage::new(Role::User, note));
                        rejected_since.get_or_insert(conversation.len() - 2);
                        continue;
                    }
                }
            }
            if let Some(at) = rejected_since.take() {
                conversation.truncate(at);
            }
            let mut assistant = ChatMessage::new(Role::Assistant, reply.content.clone());
            assistant.tool_calls = reply.tool_calls;
            assistant.name = Some(self.id.clone());
            conversation.push(assistant.clone());
            added.push(assistant.clone());
            if let Some(handoff) = handoff::chosen(&self.config.handoffs, &assistant.tool_calls) {
                for call in &assistant.tool_calls {
                    let note = if call.name == handoff.tool_name() {
                        format!("Handed the conversation over to {}.", handoff.route)
                    } else {
                        format!(
                            "not run: the conversation was handed over to {}",
                            handoff.route
                        )
                    };
                    added.push(ChatMessage::tool_reply(call, note));
                }
                ctx.emit("handoff", json!({"route": handoff.route}));
                route = Some(handoff.route.clone());
                break;
            }
            if !assistant.tool_calls.is_empty() && round < self.config.max_tool_rounds {
                round += 1;
                ctx.emit("agent_round", json!({"round": round, "tools": assistant.tool_calls.iter().map(|c| &c.name).collect::<Vec<_>>()}));
                let Executed {
                    replies,
                    ended: ended_at,
                    succeeded,
                    paused,
                    ..
                } = execute(
                    &self.tools,
                    &assistant.tool_calls,
                    self.config.max_result_chars,
                    ctx,
                )
                .await?;
                if let Some((at, first, _)) = paused.first() {
                    let waiting = Waiting {
                        added,
                        round,
                        rejections,
                        asking: (*at, first.clone()),
                        replies: ended_at.into_iter().zip(replies).collect(),
                        succeeded,
                        queued: Vec::new(),
                    };
                    return Err(waiting.pause(paused));
                }
                ended = Some(Ended { replies, succeeded });
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
        let text = added
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
            .map(|m| m.content.clone());
        let added = added.iter().map(ChatMessage::to_value).collect();
        let mut output = NodeOutput::update(self.config.messages.clone(), Value::Array(added));
        if let Some(channel) = &self.config.output {
            match (&self.structured, answer, &route) {
                // Handed over: the other agent answers.
                (_, _, Some(_)) => {}
                (Some(_), Some(value), None) => output = output.with(channel.clone(), value),
                (Some(structured), None, None) => return Err(structured.no_answer()),
                (None, _, None) => {
                    output = output.with(channel.clone(), Value::String(text.unwrap_or_default()));
                }
            }
        }
        if !self.config.handoffs.is_empty() {
            output.route = Some(route.unwrap_or_else(|| DONE_ROUTE.to_string()));
        }
        Ok(output)
    }
}

impl Node for Agent {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.run_loop(input))
    }
}

#[cfg(test)]
mod window_tests {
    use super::window_start;

    #[test]
    fn the_window_moves_in_steps_of_half_its_size() {
        assert_eq!(window_start(None, 50), 0);
        assert_eq!(window_start(Some(10), 10), 0);
        assert_eq!(window_start(Some(10), 3), 0);
        // Eleven to fifteen messages: the same start, so the same prefix.
        let starts: Vec<usize> = (11..=20).map(|len| window_start(Some(10), len)).collect();
        assert_eq!(starts, [5, 5, 5, 5, 5, 10, 10, 10, 10, 10]);
        for len in 11..200 {
            let seen = len - window_start(Some(10), len);
            assert!((6..=10).contains(&seen), "{len}: {seen}");
        }
        for len in 2..20 {
            assert_eq!(window_start(Some(1), len), len - 1);
        }
    }
}
