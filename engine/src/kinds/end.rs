//! `end`: a branch of the run stops here. When every branch has stopped,
//! the run is finished and its output is the final state.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::node::{Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config};

/// Settings of an `end` node (none yet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndConfig {}

pub(super) fn build(config: &Value) -> Result<Built, Vec<ConfigIssue>> {
    let EndConfig {} = parse_config(config)?;
    Ok(Built {
        terminal: true,
        ..Built::plain(End)
    })
}

struct End;

impl Node for End {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}
