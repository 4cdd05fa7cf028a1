//! `condition`: a branch. Its routes are tried in order; the first whose
//! condition holds is taken, else `otherwise`. Each route needs an
//! out-edge labelled with its name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scope;
use crate::expr::Expr;
use crate::node::{
    Built, ConfigIssue, Node, NodeError, NodeFuture, NodeInput, NodeOutput, parse_config,
};

/// Settings of a `condition` node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConditionConfig {
    /// The routes, tried in order.
    #[serde(default)]
    pub routes: Vec<Branch>,
    /// The route taken when no condition holds. Without it, a run where
    /// none holds fails at this node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-heddle" = "route"))]
    pub otherwise: Option<String>,
}

/// One route of a `condition` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    /// The route's name, matched by out-edges' `route`.
    pub route: String,
    /// When to take it: an expression over the state.
    #[schemars(extend("x-heddle" = "expression"))]
    pub when: String,
}

pub(super) fn build(config: &Value) -> Result<Built, Vec<ConfigIssue>> {
    let config: ConditionConfig = parse_config(config)?;
    let mut issues = Vec::new();
    let mut branches = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (i, branch) in config.routes.iter().enumerate() {
        if branch.route.is_empty() {
            issues.push(ConfigIssue::new(
                format!("routes[{i}].route"),
                "a route needs a name",
            ));
        } else if names.contains(&branch.route) {
            issues.push(ConfigIssue::new(
                format!("routes[{i}].route"),
                format!("route `{}` is listed twice", branch.route),
            ));
        }
        match Expr::parse(&branch.when) {
            Ok(expr) => branches.push((branch.route.clone(), expr)),
            Err(error) => issues.push(ConfigIssue::new(
                format!("routes[{i}].when"),
                error.to_string(),
            )),
        }
        names.push(branch.route.clone());
    }
    if let Some(otherwise) = &config.otherwise
        && !names.contains(otherwise)
    {
        names.push(otherwise.clone());
    }
    if names.is_empty() {
        issues.push(ConfigIssue::new(
            "routes",
            "a condition needs at least one route",
        ));
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(Built {
        routes: names,
        picks_its_way: true,
        ..Built::plain(Condition {
            branches,
            otherwise: config.otherwise,
        })
    })
}

struct Condition {
    branches: Vec<(String, Expr)>,
    otherwise: Option<String>,
}

impl Condition {
    fn choose(&self, input: &NodeInput) -> Result<NodeOutput, NodeError> {
        let scope = scope(input);
        for (route, expr) in &self.branches {
            let holds = expr
                .is_true(&scope)
                .map_err(|error| NodeError::permanent(format!("route `{route}`: {error}")))?;
            if holds {
                return Ok(NodeOutput::default().route(route.clone()));
            }
        }
        match &self.otherwise {
            Some(route) => Ok(NodeOutput::default().route(route.clone())),
            None => Err(NodeError::permanent(
                "no route's condition holds and there is no `otherwise` route",
            )),
        }
    }
}

impl Node for Condition {
    fn run<'a>(&'a self, input: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(self.choose(&input)))
    }
}
