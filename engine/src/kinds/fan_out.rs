//! `fan_out`: dynamic parallelism. It evaluates a list and starts one
//! instance of the `to` node per item, all in the next step; each instance
//! sees its item as `item`. Their updates merge in item order, so the
//! result does not depend on which finished first. Put a `join` after the
//! fanned-out node to continue once all are done.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scope;
use crate::expr::Expr;
use crate::ids::NodeId;
use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput, SendTo,
    parse_config,
};

/// Settings of a `fan_out` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FanOutConfig {
    /// An expression giving the list to fan out over, e.g. `documents`.
    #[schemars(extend("x-heddle" = "expression"), example = &"topics")]
    pub over: String,
    /// The node each item is sent to.
    #[schemars(extend("x-heddle" = "node"))]
    pub to: NodeId,
    /// The most items accepted; a longer list fails the node.
    #[serde(default = "default_max_items")]
    pub max_items: usize,
}

fn default_max_items() -> usize {
    10_000
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: FanOutConfig = parse_config(config)?;
    let mut issues = Vec::new();
    let over = Expr::parse(&config.over)
        .map_err(|error| issues.push(ConfigIssue::new("over", error.to_string())))
        .ok();
    if !cx.has_node(&config.to) {
        issues.push(ConfigIssue::new(
            "to",
            format!("`{}` is not a node of this graph", config.to),
        ));
    }
    let (max_items, ceiling) =
        crate::ceilings::lower(config.max_items, cx.registry.ceilings().max_fan_out_items);
    match over {
        Some(over) if issues.is_empty() => Ok(Built {
            sends_to: vec![config.to.clone()],
            ..Built::plain(FanOut {
                over,
                to: config.to,
                max_items,
                ceiling,
            })
        }),
        _ => Err(issues),
    }
}

struct FanOut {
    over: Expr,
    to: NodeId,
    max_items: usize,
    /// Whether `max_items` is the runner's ceiling, lower than the node's.
    ceiling: bool,
}

impl FanOut {
    fn send(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        let items = match self.over.eval(&scope(input)) {
            Ok(Value::Array(items)) => items,
            Ok(Value::Null) => Vec::new(),
            Ok(other) => {
                return Err(NodeError::permanent(format!(
                    "`{}` gave {}, not a list",
                    self.over,
                    crate::state::kind_of(&other)
                )));
            }
            Err(error) => return Err(NodeError::permanent(error.to_string())),
        };
        if items.len() > self.max_items {
            return Err(NodeError::permanent(match self.ceiling {
                true => format!(
                    "{} items is more than the server's ceiling `{}` ({})",
                    items.len(),
                    crate::ceilings::names::FAN_OUT_ITEMS,
                    self.max_items
                ),
                false => format!(
                    "{} items is more than this node's max_items ({})",
                    items.len(),
                    self.max_items
                ),
            }));
        }
        Ok(NodeOutput {
            sends: items
                .into_iter()
                .map(|arg| SendTo {
                    node: self.to.clone(),
                    arg,
                })
                .collect(),
            ..NodeOutput::default()
        })
    }
}

impl Node for FanOut {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.send(&input)))
    }
}
