//! `join`: a fan-in barrier. It runs once every node with an edge into it
//! has arrived (in this step or earlier ones), so parallel branches of
//! different lengths meet before the graph goes on. Branches fanned out to
//! one node arrive together: their updates are merged before the join runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::node::{Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config};

/// Settings of a `join` node (none yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinConfig {}

pub(super) fn build(config: &Value) -> Result<Built, Vec<ConfigIssue>> {
    let JoinConfig {} = parse_config(config)?;
    Ok(Built {
        join: true,
        ..Built::plain(Join)
    })
}

struct Join;

impl Node for Join {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}
