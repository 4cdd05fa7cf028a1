//! `wait`: pauses this branch for a while (a polling loop's interval, a
//! rate limit, a demo's pacing). Other branches go on; the step ends when
//! the wait is over. It does not hold a thread while waiting.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::node::{Built, ConfigIssue, Node, NodeFuture, NodeInput, NodeOutput, parse_config};

/// The longest wait one node may ask for: an hour.
const MAX_WAIT_MS: u64 = 3_600_000;

/// Settings of a `wait` node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitConfig {
    /// How long to wait, in milliseconds (at most an hour).
    pub ms: u64,
}

pub(super) fn build(config: &Value) -> Result<Built, Vec<ConfigIssue>> {
    let config: WaitConfig = parse_config(config)?;
    if config.ms > MAX_WAIT_MS {
        return Err(vec![ConfigIssue::new(
            "ms",
            format!("at most {MAX_WAIT_MS} ms (an hour)"),
        )]);
    }
    Ok(Built::plain(Wait(Duration::from_millis(config.ms))))
}

struct Wait(Duration);

impl Node for Wait {
    fn run<'a>(&'a self, _: NodeInput<'a>) -> NodeFuture<'a> {
        #[cfg(feature = "runtime")]
        {
            let duration = self.0;
            Box::pin(async move {
                tokio::time::sleep(duration).await;
                Ok(NodeOutput::default())
            })
        }
        // Without the executor no graph runs; the node still builds, so the
        // editor validates graphs that use it.
        #[cfg(not(feature = "runtime"))]
        Box::pin(std::future::ready(Ok(NodeOutput::default())))
    }
}
