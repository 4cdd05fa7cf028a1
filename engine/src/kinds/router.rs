//! `router`: the model picks one of the declared routes for the message
//! (constrained to the route names; the offline model matches words), and
//! the run follows the edge with that route label. A reply that names no
//! route takes `otherwise`, when there is one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::llm::{model_error, tell_model_input};
use super::messages_channel;
use super::scope;
use super::template::Template;
use crate::model::{ChatMessage, ChatRequest, Choice, ReplyFormat, Role, SharedModel};
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// The custom event a router tells its choice in ([`RouteTaken`]).
pub const ROUTE_EVENT: &str = "route";

/// What a router chose, as its [`ROUTE_EVENT`] says: the model's reply,
/// the route taken (none: the run fails here), and whether that route is
/// the router's `otherwise`, the reply having named none of its routes:
/// a trace then says the route was no choice of the model's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteTaken {
    #[serde(default)]
    pub reply: String,
    #[serde(default)]
    pub route: Option<String>,
    /// Absent in runs made before it was told: nothing is claimed.
    #[serde(default)]
    pub otherwise: bool,
}

/// Settings of a `router` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    /// The routes, each an edge label, with what it is for.
    pub routes: Vec<RouteChoice>,
    /// The route taken when the model names none of them. Without it,
    /// such a reply fails the run at this node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "route"))]
    pub otherwise: Option<String>,
    /// Which model (see `llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "model"))]
    pub model: Option<String>,
    /// The secret the model authenticates with, by name; bound by whoever
    /// runs the graph (never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "credential"))]
    pub credential: Option<String>,
    /// What to classify, a template; the conversation's last user message
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "template"))]
    pub input: Option<String>,
    /// The conversation: a `messages` channel.
    #[serde(default = "messages_channel")]
    #[schemars(extend("x-heddle" = "messages_channel"))]
    pub messages: String,
}

/// A route of a `router` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteChoice {
    pub route: String,
    #[serde(default)]
    pub description: String,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: RouterConfig = parse_config(config)?;
    let mut issues: Vec<ConfigIssue> = Vec::new();
    if config.input.is_none() {
        issues.extend(cx.check_messages_channel("messages", &config.messages));
    }
    if config.routes.is_empty() {
        issues.push(ConfigIssue::new(
            "routes",
            "a router needs at least one route",
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for (i, route) in config.routes.iter().enumerate() {
        if route.route.is_empty() || names.contains(&route.route) {
            issues.push(ConfigIssue::new(
                format!("routes[{i}].route"),
                "route names must be present and distinct",
            ));
        }
        names.push(route.route.clone());
    }
    if let Some(otherwise) = &config.otherwise
        && !names.contains(otherwise)
    {
        names.push(otherwise.clone());
    }
    let model = cx
        .model(
            "model",
            config.model.as_deref(),
            config.credential.as_deref(),
        )
        .map_err(|issue| issues.push(issue))
        .ok();
    let input = match &config.input {
        Some(text) => Template::parse_field("input", text, &mut issues).map(Some),
        None => Some(None),
    };
    match (model, input) {
        (Some(model), Some(input)) if issues.is_empty() => Ok(Built {
            routes: names,
            may_choose_none: config.otherwise.is_none(),
            picks_its_way: true,
            ..Built::plain(Router {
                model,
                input,
                config,
            })
        }),
        _ => Err(issues),
    }
}

struct Router {
    model: SharedModel,
    input: Option<Template>,
    config: RouterConfig,
}

impl Router {
    async fn route(&self, input: NodeInput<'_>) -> Result<NodeOutput, NodeError> {
        let text = match &self.input {
            Some(template) => template
                .render(&scope(&input))
                .map_err(|e| NodeError::permanent(e.to_string()))?,
            None => ChatMessage::list_in(input.state, &self.config.messages)
                .into_iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content)
                .unwrap_or_default(),
        };
        let choices: Vec<Choice> = self
            .config
            .routes
            .iter()
            .map(|r| Choice {
                name: r.route.clone(),
                description: r.description.clone(),
            })
            .collect();
        let list = choices
            .iter()
            .map(|c| format!("- {}: {}", c.name, c.description))
            .collect::<Vec<_>>()
            .join("\n");
        let request = ChatRequest {
            messages: vec![
                ChatMessage::new(
                    Role::System,
                    format!(
                        "Choose the route for the user's message. Answer with the route's name only.\n{list}"
                    ),
                ),
                ChatMessage::new(Role::User, text),
            ],
            format: ReplyFormat::Choice(choices),
            ..ChatRequest::default()
        };
        tell_model_input(input.ctx, &request.messages);
        let asked = std::time::Instant::now();
        let reply = self
            .model
            .chat(request, &|_| {})
            .await
            .map_err(model_error)?;
        input.ctx.record_usage(&reply, asked.elapsed())?;
        let answer = reply.content.trim().trim_matches(['"', '\'', '.']);
        let named = self
            .config
            .routes
            .iter()
            .find(|r| r.route.eq_ignore_ascii_case(answer))
            .map(|r| r.route.clone());
        let otherwise = named.is_none() && self.config.otherwise.is_some();
        let chosen = named.or_else(|| self.config.otherwise.clone());
        let taken = RouteTaken {
            reply: reply.content.clone(),
            route: chosen.clone(),
            otherwise,
        };
        input.ctx.emit(
            ROUTE_EVENT,
            serde_json::to_value(&taken).unwrap_or(Value::Null),
        );
        match chosen {
            Some(route) => Ok(NodeOutput::default().route(route)),
            None => Err(NodeError::permanent(format!(
                "the model answered `{}`, which is none of the routes, and there is no `otherwise`",
                reply.content
            ))),
        }
    }
}

impl Node for Router {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(self.route(input))
    }
}
