//! What a running node knows about where it runs, and how it reports.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::NodeError;
use crate::ids::{NodeId, RunId};
use crate::model::ChatReply;
use crate::usage::{Meter, PriceTable, UsageTotals};

/// Receives a node's custom events (token chunks, tool calls, logs). The
/// executor implements it; tests can too.
pub trait Emit: Send + Sync {
    /// Records one custom event from `node` (from its fanned-out
    /// `instance`, when a fan-out started it).
    fn emit(&self, node: &NodeId, instance: Option<u32>, name: &str, data: Value);

    /// Records an event that happened inside a child graph, at `path`.
    fn nested(&self, path: Vec<crate::run::Hop>, payload: crate::run::EventPayload);
}

/// Set when the run is cancelled. The executor also drops in-flight node
/// futures on cancel; long synchronous work can poll this to stop early.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        CancelFlag::default()
    }

    /// Sets the flag.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// The context of one node execution.
pub struct NodeContext<'a> {
    /// The run.
    pub run_id: &'a RunId,
    /// The node.
    pub node: &'a NodeId,
    /// The super-step, from 0.
    pub step: u32,
    /// Which fanned-out instance of the node this is, when a fan-out
    /// started it.
    pub instance: Option<u32>,
    /// The attempt, from 1 (more when retried).
    pub attempt: u32,
    pub(crate) emit: &'a dyn Emit,
    pub(crate) cancel: &'a CancelFlag,
    pub(crate) resume: Option<&'a Value>,
    /// What this node asked when it paused, on the execution that answers
    /// it (with `resume`).
    pub(crate) asked: Option<&'a Value>,
    /// The run's meter (none outside a run: calls are priced by the
    /// default table and no budget applies).
    pub(crate) meter: Option<&'a Arc<Meter>>,
    /// What this execution's model calls used.
    pub(crate) spent: Mutex<UsageTotals>,
}

impl<'a> NodeContext<'a> {
    /// A context for running a node outside a run (tests, tools).
    pub fn new(
        run_id: &'a RunId,
        node: &'a NodeId,
        step: u32,
        attempt: u32,
        emit: &'a dyn Emit,
        cancel: &'a CancelFlag,
    ) -> Self {
        NodeContext {
            run_id,
            node,
            step,
            instance: None,
            attempt,
            emit,
            cancel,
            resume: None,
            asked: None,
            meter: None,
            spent: Mutex::new(UsageTotals::default()),
        }
    }

    /// The same context, carrying the value an interrupted run was
    /// resumed with.
    pub fn with_resume(mut self, value: Option<&'a Value>) -> Self {
        self.resume = value;
        self
    }

    /// The value the run was resumed with, when this execution re-runs a
    /// node that interrupted; `None` on a first execution.
    pub fn resume_value(&self) -> Option<&Value> {
        self.resume
    }

    /// What this node asked (its interrupt's payload) when it paused, on
    /// the execution that answers it; `None` otherwise.
    pub fn asked(&self) -> Option<&Value> {
        self.asked
    }

    /// Runs `graph` inside this node's execution (a subgraph's child, an
    /// agent's sub-agent named `child`): its model calls count against
    /// this run's budget and show in its usage, and its events go into
    /// this run's log, each with the path it happened at.
    pub async fn run_child(
        &self,
        graph: &Arc<dyn super::ChildGraph>,
        child: Option<&str>,
        input: Value,
        resume: Option<(crate::run::Checkpoint, Value)>,
    ) -> Result<super::ChildOutcome, String> {
        let hop = crate::run::Hop {
            node: self.node.clone(),
            step: self.step,
            instance: self.instance,
            child: child.map(str::to_string),
        };
        // Named apart per fanned-out instance: instances of one node run
        // their children side by side.
        let run_id = RunId::from(format!(
            "{}/{}/{}{}{}",
            self.run_id,
            self.node,
            self.step,
            self.instance.map(|i| format!("[{i}]")).unwrap_or_default(),
            child.map(|name| format!("/{name}")).unwrap_or_default()
        ));
        let forward = |event: &crate::run::Event| {
            if event.payload.passes_up() {
                let mut path = Vec::with_capacity(event.path.len() + 1);
                path.push(hop.clone());
                path.extend(event.path.iter().cloned());
                self.emit.nested(path, event.payload.clone());
            }
        };
        Arc::clone(graph)
            .run(
                run_id,
                input,
                super::ChildRun {
                    on_event: &forward,
                    meter: self.meter.cloned(),
                    resume,
                },
            )
            .await
    }

    /// Emits a custom event (e.g. `token`, `tool_call`, `log`).
    pub fn emit(&self, name: &str, data: Value) {
        self.emit.emit(self.node, self.instance, name, data);
    }

    /// Records a model call: its tokens and cost become a `usage` event,
    /// and a call that takes the run over its budget fails the node with
    /// the budget named.
    ///
    /// `took` is how long the call took (for traces and latency metrics).
    pub fn record_usage(&self, reply: &ChatReply, took: Duration) -> Result<(), NodeError> {
        let (model, usage) = (reply.model.as_str(), &reply.usage);
        let mut own = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut data, within) = match self.meter {
            Some(meter) => meter.record(model, usage, &mut own),
            None => {
                static DEFAULTS: OnceLock<PriceTable> = OnceLock::new();
                let prices = DEFAULTS.get_or_init(PriceTable::default);
                (
                    crate::usage::meter::call_totals(prices, model, usage).0,
                    Ok(()),
                )
            }
        };
        drop(own);
        data["latency_ms"] = Value::from(u64::try_from(took.as_millis()).unwrap_or(u64::MAX));
        if let Some(reason) = &reply.finish_reason {
            data["finish_reason"] = Value::from(reason.as_str());
        }
        self.emit("usage", data);
        within.map_err(|over| NodeError::permanent(over.to_string()))
    }

    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
