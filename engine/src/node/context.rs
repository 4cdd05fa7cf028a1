//! What a running node knows about where it runs, and how it reports.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::ids::{NodeId, RunId};

/// Receives a node's custom events (token chunks, tool calls, logs). The
/// executor implements it; tests can too.
pub trait Emit: Send + Sync {
    /// Records one custom event from `node`.
    fn emit(&self, node: &NodeId, name: &str, data: Value);
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
    /// The attempt, from 1 (more when retried).
    pub attempt: u32,
    pub(crate) emit: &'a dyn Emit,
    pub(crate) cancel: &'a CancelFlag,
    pub(crate) resume: Option<&'a Value>,
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
            attempt,
            emit,
            cancel,
            resume: None,
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

    /// Emits a custom event (e.g. `token`, `tool_call`, `log`).
    pub fn emit(&self, name: &str, data: Value) {
        self.emit.emit(self.node, name, data);
    }

    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
