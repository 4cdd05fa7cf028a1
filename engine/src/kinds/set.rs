//! `set`: writes into channels, each value a JSON literal, an expression or
//! a text template. The writes go through the channels' reducers like any
//! node's update, so `set` with `{"count": {"expr": "1"}}` on a `sum`
//! channel counts.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::Value;

use super::scope;
use super::template::Template;
use crate::expr::Expr;
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput,
    parse_config,
};

/// Settings of a `set` node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetConfig {
    /// What to write, by channel.
    #[serde(default)]
    #[schemars(extend("x-heddle-key" = "channel"))]
    pub values: BTreeMap<String, Assignment>,
}

/// One value to write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Assignment {
    /// This JSON value, as it is.
    Value(Value),
    /// The value of an expression over the state (`item` is the fanned-out
    /// item, when there is one).
    #[schemars(extend("x-heddle" = "expression"))]
    Expr(String),
    /// Text with `{{ expression }}` holes.
    #[schemars(extend("x-heddle" = "template"))]
    Template(String),
}

enum Compiled {
    Value(Value),
    Expr(Expr),
    Template(Template),
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: SetConfig = parse_config(config)?;
    let mut issues = Vec::new();
    let mut writes = Vec::new();
    for (channel, assignment) in &config.values {
        if let Some(issue) =
            cx.check_channel(format!("values.{channel}"), channel, ChannelType::Any)
        {
            issues.push(issue);
            continue;
        }
        let compiled = match assignment {
            Assignment::Value(value) => Ok(Compiled::Value(value.clone())),
            Assignment::Expr(source) => Expr::parse(source).map(Compiled::Expr).map_err(|error| {
                ConfigIssue::new(format!("values.{channel}.expr"), error.to_string())
            }),
            Assignment::Template(source) => Template::parse(source)
                .map(Compiled::Template)
                .map_err(|error| {
                    ConfigIssue::new(format!("values.{channel}.template"), error.to_string())
                }),
        };
        match compiled {
            Ok(compiled) => writes.push((channel.clone(), compiled)),
            Err(issue) => issues.push(issue),
        }
    }
    if issues.is_empty() {
        Ok(Built::plain(Set { writes }))
    } else {
        Err(issues)
    }
}

struct Set {
    writes: Vec<(String, Compiled)>,
}

impl Set {
    fn evaluate(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        let scope = scope(input);
        let mut output = NodeOutput::default();
        for (channel, write) in &self.writes {
            let value = match write {
                Compiled::Value(value) => value.clone(),
                Compiled::Expr(expr) => expr
                    .eval(&scope)
                    .map_err(|error| NodeError::permanent(format!("`{channel}`: {error}")))?,
                Compiled::Template(template) => Value::String(
                    template
                        .render(&scope)
                        .map_err(|error| NodeError::permanent(format!("`{channel}`: {error}")))?,
                ),
            };
            output.update.push((channel.clone(), value));
        }
        Ok(output)
    }
}

impl Node for Set {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.evaluate(&input)))
    }
}
