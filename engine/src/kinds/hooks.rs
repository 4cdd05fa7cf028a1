//! Model hooks: code that runs around each model call of an `agent` or
//! `llm` node. `before` sees the messages about to be sent and returns the
//! ones to send (drop old tool traffic, add a reminder); `after` sees the
//! reply and accepts it, or rejects it with a reason, and the model is
//! asked again with the reason as a user message, up to `max_rejections`
//! times before the node fails. A hook is an expression (the condition
//! language) or a sandboxed script (the `script` kind's: no files, no
//! network, bounded, run on the script pool, never the async runtime).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::script::{Sandbox, ScriptConfig};
use crate::expr::Expr;
use crate::model::{ChatMessage, ChatReply};
use crate::node::{BuildContext, ConfigIssue, NodeContext, NodeError};
use crate::state::State;

/// The hooks of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelHooks {
    /// Before each call: reads `messages` (what is about to be sent, as a
    /// list of `{role, content, ...}`) and the state's channels; returns
    /// the list of messages to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<HookCode>,
    /// After each reply: reads `reply` (its text), `tool_calls`,
    /// `messages` and the state's channels; `true` (or nothing, from a
    /// script) accepts it, `false` or a text (the reason) rejects it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<HookCode>,
    /// Replies `after` may reject in one execution before the node fails.
    #[serde(default = "default_rejections")]
    pub max_rejections: u32,
}

fn default_rejections() -> u32 {
    2
}

/// A hook's code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum HookCode {
    /// An expression in the condition language.
    Expr(String),
    /// A sandboxed Rhai script, with its limits.
    Script(ScriptConfig),
}

/// Hooks ready to run.
#[derive(Default)]
pub(super) struct Hooks {
    before: Option<Code>,
    after: Option<Code>,
    max_rejections: u32,
}

enum Code {
    Expr(Expr),
    Script(Sandbox),
}

impl Code {
    fn build(code: &HookCode, cx: &BuildContext, path: &str) -> Result<Code, Vec<ConfigIssue>> {
        match code {
            HookCode::Expr(source) => Expr::parse(source)
                .map(Code::Expr)
                .map_err(|error| vec![ConfigIssue::new(format!("{path}.expr"), error.to_string())]),
            HookCode::Script(config) => {
                Sandbox::build(config.clone(), cx, &format!("{path}.script")).map(Code::Script)
            }
        }
    }

    /// Runs the code with `inputs` (and the state's channels, for an
    /// expression) in scope.
    async fn run(
        &self,
        ctx: &NodeContext<'_>,
        state: &State,
        inputs: Vec<(&'static str, Value)>,
    ) -> Result<Value, NodeError> {
        match self {
            Code::Expr(expr) => expr
                .eval(&|name| {
                    inputs
                        .iter()
                        .find(|(input, _)| *input == name)
                        .map(|(_, value)| value.clone())
                        .or_else(|| state.get(name).cloned())
                })
                .map_err(|error| NodeError::permanent(error.to_string())),
            Code::Script(sandbox) => {
                let mut inputs = inputs;
                inputs.push(("state", state.to_json()));
                sandbox.eval(ctx, inputs).await
            }
        }
    }
}

impl Hooks {
    /// The hooks of `config`, or an issue per problem, under `path`.
    pub(super) fn build(
        config: Option<&ModelHooks>,
        cx: &BuildContext,
        path: &str,
    ) -> Result<Hooks, Vec<ConfigIssue>> {
        let Some(config) = config else {
            return Ok(Hooks::default());
        };
        let mut issues = Vec::new();
        let mut code = |which: &str, hook: &Option<HookCode>| match hook {
            Some(hook) => Code::build(hook, cx, &format!("{path}.{which}"))
                .map(Some)
                .unwrap_or_else(|more| {
                    issues.extend(more);
                    None
                }),
            None => None,
        };
        let before = code("before", &config.before);
        let after = code("after", &config.after);
        if config.max_rejections > 10 {
            issues.push(ConfigIssue::new(
                format!("{path}.max_rejections"),
                "at most 10: each rejection is another model call",
            ));
        }
        if issues.is_empty() {
            Ok(Hooks {
                before,
                after,
                max_rejections: config.max_rejections,
            })
        } else {
            Err(issues)
        }
    }

    /// How many replies `after` may reject.
    pub(super) fn max_rejections(&self) -> u32 {
        self.max_rejections
    }

    /// The messages to send: as `before` rewrites them.
    pub(super) async fn before(
        &self,
        ctx: &NodeContext<'_>,
        state: &State,
        messages: Vec<ChatMessage>,
    ) -> Result<Vec<ChatMessage>, NodeError> {
        let Some(code) = &self.before else {
            return Ok(messages);
        };
        let listed = Value::Array(messages.iter().map(ChatMessage::to_value).collect());
        let result = code.run(ctx, state, vec![("messages", listed)]).await?;
        let Value::Array(items) = result else {
            return Err(NodeError::permanent(
                "hooks.before must return the list of messages to send",
            ));
        };
        let mut rewritten = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let message: ChatMessage = serde_json::from_value(item).map_err(|error| {
                NodeError::permanent(format!(
                    "hooks.before returned a message [{i}] that is not one: {error}"
                ))
            })?;
            rewritten.push(message);
        }
        ctx.emit(
            "hook",
            json!({"hook": "before", "messages": rewritten.len()}),
        );
        Ok(rewritten)
    }

    /// Whether `after` accepts the reply: `None`, or the reason it does
    /// not.
    pub(super) async fn after(
        &self,
        ctx: &NodeContext<'_>,
        state: &State,
        messages: &[ChatMessage],
        reply: &ChatReply,
    ) -> Result<Option<String>, NodeError> {
        let Some(code) = &self.after else {
            return Ok(None);
        };
        let inputs = vec![
            ("reply", Value::String(reply.content.clone())),
            (
                "tool_calls",
                serde_json::to_value(&reply.tool_calls).unwrap_or(Value::Null),
            ),
            (
                "messages",
                Value::Array(messages.iter().map(ChatMessage::to_value).collect()),
            ),
        ];
        let verdict = match code.run(ctx, state, inputs).await? {
            Value::Null | Value::Bool(true) => None,
            Value::Bool(false) => Some(match code {
                Code::Expr(expr) => format!("the reply does not satisfy `{}`", expr.source()),
                Code::Script(_) => "the reply was rejected".to_string(),
            }),
            Value::String(reason) if reason.trim().is_empty() => None,
            Value::String(reason) => Some(reason),
            other => {
                return Err(NodeError::permanent(format!(
                    "hooks.after must return true, false or a reason, not {other}"
                )));
            }
        };
        ctx.emit(
            "hook",
            json!({"hook": "after", "accepted": verdict.is_none(), "reason": verdict}),
        );
        Ok(verdict)
    }
}
