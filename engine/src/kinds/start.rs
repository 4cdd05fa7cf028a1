//! `start`: where a run begins. It does nothing itself; it names the
//! channels a run's input fills, so the editor can ask for them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::ChannelType;
use serde_json::Value;

use crate::node::{
    BuildContext, Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config,
};

/// Settings of a `start` node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartConfig {
    /// The channels a run's input sets (the editor builds its input form
    /// from them). Input may still set any channel.
    #[serde(default)]
    #[schemars(extend("x-heddle" = "channel"))]
    pub inputs: Vec<String>,
}

pub(super) fn build(config: &Value, cx: &BuildContext) -> Result<Built, Vec<ConfigIssue>> {
    let config: StartConfig = parse_config(config)?;
    let issues: Vec<_> = config
        .inputs
        .iter()
        .enumerate()
        .filter_map(|(i, channel)| {
            cx.check_channel(format!("inputs[{i}]"), channel, ChannelType::String)
        })
        .collect();
    if issues.is_empty() {
        Ok(Built::plain(Start))
    } else {
        Err(issues)
    }
}

struct Start;

impl Node for Start {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}
