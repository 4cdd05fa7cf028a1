//! How the executor runs a compiled graph that a node runs inside its step
//! (a subgraph's child, an agent's sub-agent): as a run of its own that
//! keeps no log, whose events the node hears as they happen.

use std::sync::Arc;

use serde_json::Value;

use crate::compile::CompiledGraph;
use crate::ids::RunId;
use crate::node::{ChildFuture, ChildGraph};
use crate::run::Event;

impl ChildGraph for CompiledGraph {
    #[cfg(feature = "runtime")]
    fn run<'a>(
        self: Arc<Self>,
        run_id: RunId,
        input: Value,
        on_event: &'a (dyn Fn(&Event) + Send + Sync),
    ) -> ChildFuture<'a> {
        use crate::node::ChildOutcome;
        use crate::run::{Run, RunOptions};
        Box::pin(async move {
            let run = Run::new(
                self,
                run_id,
                input,
                RunOptions {
                    keep_log: false,
                    ..RunOptions::default()
                },
            );
            let mut events = run.subscribe();
            let forward = async {
                while let Ok(Some(event)) = events.recv().await {
                    on_event(&event);
                }
            };
            let (result, ()) = tokio::join!(run.execute(), forward);
            result
                .map(|output| ChildOutcome {
                    interrupted: output.is_interrupted(),
                    state: output.state,
                })
                .map_err(|error| error.to_string())
        })
    }

    #[cfg(not(feature = "runtime"))]
    fn run<'a>(
        self: Arc<Self>,
        _: RunId,
        _: Value,
        _: &'a (dyn Fn(&Event) + Send + Sync),
    ) -> ChildFuture<'a> {
        Box::pin(async { Err("running a graph needs the engine's `runtime` feature".into()) })
    }
}
