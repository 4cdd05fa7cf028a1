//! Checkpoints: everything needed to continue a run from a point between
//! (or, for an interrupt, inside) its super-steps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{CheckpointId, NodeId, RunId, ThreadId};
use crate::node::NodeOutput;

/// Where a run stood. Checkpoints of a thread form a tree through
/// `parent`: a re-run or a fork from an old checkpoint starts a branch,
/// and the history before it stays as it was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Unique within the thread.
    pub id: CheckpointId,
    pub thread_id: ThreadId,
    pub run_id: RunId,
    /// The checkpoint this one continues from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<CheckpointId>,
    /// The step the run goes on with.
    pub step: u32,
    /// The state before that step: channel name to value.
    pub state: Value,
    /// The tasks of that step.
    pub next: Vec<PendingTask>,
    /// For each join, the nodes that have arrived at it so far.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub arrivals: BTreeMap<NodeId, Vec<NodeId>>,
    /// Where the run stands.
    pub status: RunStatus,
    /// Why the run paused, when it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<Interrupt>,
    /// Tasks of the paused step that already finished; resuming does not
    /// run them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed: Vec<CompletedTask>,
    /// The `seq` the run's next event gets.
    pub next_seq: u64,
    /// Why the run failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When, in microseconds since the Unix epoch.
    pub created_at_us: u64,
    /// The tokens and cost the run's model calls used so far: a resumed
    /// run goes on counting against its budget from here.
    #[serde(default, skip_serializing_if = "crate::usage::UsageTotals::is_empty")]
    pub usage: crate::usage::UsageTotals,
    /// Whether a branch of the run has reached an end so far (`None` in
    /// checkpoints stored before this was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached_end: Option<bool>,
}

/// A task waiting to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingTask {
    pub node: NodeId,
    /// The fanned-out item, for a fan-out instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
}

/// A task of a paused step that finished, with its output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletedTask {
    /// The task's position in the step.
    pub task: u32,
    pub output: NodeOutput,
}

crate::named_enum! {
    /// Where a run stands.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
    pub enum RunStatus {
        /// Recorded and waiting for a free slot on a server (a server's queue;
        /// the engine itself never checkpoints a run in this state).
        Queued = "queued",
        /// Running, or died while running (then it is recovered on restart).
        Running = "running",
        /// Paused, waiting to be resumed with a value.
        Interrupted = "interrupted",
        /// Finished.
        Finished = "finished",
        /// Failed.
        Failed = "failed",
        /// Cancelled.
        Cancelled = "cancelled",
    }
}

impl RunStatus {
    /// Whether the run can go no further.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            RunStatus::Finished | RunStatus::Failed | RunStatus::Cancelled
        )
    }

    /// Whether the run is waiting or executing (not paused, not over).
    pub fn is_active(self) -> bool {
        matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

/// Why a run paused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interrupt {
    pub node: NodeId,
    /// The task's position in its step.
    pub task: u32,
    pub when: InterruptWhen,
    /// What the node asks (`null` for breakpoints).
    pub payload: Value,
}

/// What paused the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InterruptWhen {
    /// The node asked, while running.
    During,
    /// A breakpoint before the node.
    Before,
    /// A breakpoint after the node's step.
    After,
}

/// One line of a thread's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSummary {
    pub id: CheckpointId,
    pub run_id: RunId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<CheckpointId>,
    pub step: u32,
    pub status: RunStatus,
    /// The nodes of the step the run goes on with.
    pub next: Vec<NodeId>,
    pub created_at_us: u64,
}

impl From<&Checkpoint> for CheckpointSummary {
    fn from(checkpoint: &Checkpoint) -> Self {
        CheckpointSummary {
            id: checkpoint.id.clone(),
            run_id: checkpoint.run_id.clone(),
            parent: checkpoint.parent.clone(),
            step: checkpoint.step,
            status: checkpoint.status,
            next: checkpoint
                .next
                .iter()
                .map(|task| task.node.clone())
                .collect(),
            created_at_us: checkpoint.created_at_us,
        }
    }
}

/// One thread, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSummary {
    pub thread_id: ThreadId,
    /// Its newest checkpoint.
    pub latest: CheckpointSummary,
    /// How many runs it has had.
    pub runs: u64,
}
