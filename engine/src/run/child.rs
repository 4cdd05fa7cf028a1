//! How the executor runs a compiled graph that a node runs inside its step
//! (a subgraph's child, an agent's sub-agent): as a run of its own that
//! keeps no log, whose events the node hears as they happen.

use std::sync::Arc;

use serde_json::Value;

use crate::compile::CompiledGraph;
use crate::ids::RunId;
use crate::node::{ChildFuture, ChildGraph, ChildRun};

impl ChildGraph for CompiledGraph {
    #[cfg(feature = "runtime")]
    fn run<'a>(
        self: Arc<Self>,
        run_id: RunId,
        input: Value,
        within: ChildRun<'a>,
    ) -> ChildFuture<'a> {
        use crate::node::ChildOutcome;
        use crate::run::{Run, RunOptions};
        Box::pin(async move {
            // Every event, in order, none skipped however slowly they are
            // handed on (a live subscription may lag and drop some).
            let (relay, mut events) = tokio::sync::mpsc::unbounded_channel();
            let options = RunOptions {
                keep_log: false,
                sink: Some(Arc::new(Relay(relay))),
                ..RunOptions::default()
            };
            let mut run = match within.resume {
                Some((checkpoint, answer)) => {
                    Run::from_pause(self, run_id, checkpoint, answer, options)
                }
                None => Run::new(self, run_id, input, options),
            };
            if let Some(meter) = within.meter {
                run = run.sharing_meter(meter);
            }
            let on_event = within.on_event;
            let forward = async {
                while let Some(event) = events.recv().await {
                    on_event(&event);
                }
            };
            let ((result, paused), ()) = tokio::join!(run.execute_keeping_pause(), forward);
            result
                .map(|output| ChildOutcome {
                    state: output.state,
                    paused: paused.map(Box::new),
                })
                .map_err(|error| error.to_string())
        })
    }

    #[cfg(not(feature = "runtime"))]
    fn run<'a>(self: Arc<Self>, _: RunId, _: Value, _: ChildRun<'a>) -> ChildFuture<'a> {
        Box::pin(async { Err("running a graph needs the engine's `runtime` feature".into()) })
    }
}

/// Hands a child's events to the node running it, in order.
#[cfg(feature = "runtime")]
struct Relay(tokio::sync::mpsc::UnboundedSender<Arc<crate::run::Event>>);

#[cfg(feature = "runtime")]
impl crate::run::EventSink for Relay {
    fn event(&self, event: &Arc<crate::run::Event>) {
        // The node stopped listening only when it stopped waiting for the
        // child: nothing is left to hand on to.
        let _ = self.0.send(Arc::clone(event));
    }
}
