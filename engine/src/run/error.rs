//! Why a run did not finish.

use crate::ids::{EdgeId, NodeId};
use crate::node::NodeError;
use crate::state::ReduceError;

use super::store::StoreError;

/// How a run ended when it did not finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The run's input does not fit the graph's state.
    #[error("bad input: {message}")]
    BadInput { message: String },
    /// A node failed (after its retries).
    #[error("node `{node}` failed at step {step}: {error}")]
    NodeFailed {
        node: NodeId,
        step: u32,
        error: NodeError,
    },
    /// A node returned an update its channel refuses.
    #[error("node `{node}` wrote a bad update at step {step}: {message}")]
    BadUpdate {
        node: NodeId,
        step: u32,
        message: String,
    },
    /// A node chose a route or target that does not exist.
    #[error("node `{node}` at step {step}: {message}")]
    BadRouting {
        node: NodeId,
        step: u32,
        message: String,
    },
    /// An edge's condition could not be evaluated.
    #[error("the condition of edge `{edge}` failed at step {step}: {message}")]
    ConditionFailed {
        edge: EdgeId,
        step: u32,
        message: String,
    },
    /// The run took more super-steps than the graph's limit: it loops
    /// through `loop_nodes` (those that ran again and again in its last
    /// steps), or, none looping, it is longer than its limit, with
    /// `waiting` still to run.
    #[error(
        "the run passed its limit of {limit} steps; {}",
        why_steps_ran_out(loop_nodes, waiting)
    )]
    StepLimit {
        limit: u32,
        loop_nodes: Vec<NodeId>,
        waiting: Vec<NodeId>,
    },
    /// The run reached one of its runner's ceilings (see
    /// [`crate::ceilings`]): the server's rule, not the graph's.
    #[error("stopped at step {step} by the server's ceiling `{ceiling}`: {detail}")]
    Ceiling {
        /// The ceiling's name, as the server's configuration spells it.
        ceiling: &'static str,
        step: u32,
        detail: String,
    },
    /// The run's model calls went over a budget of the graph's limits.
    #[error("{0}")]
    OverBudget(crate::usage::OverBudget),
    /// The graph has an `end`, and every branch stopped before reaching
    /// one: a node chose no way on (a fan-out over no items, a condition
    /// nothing met). Nothing answered, so the run did not succeed. (In a
    /// graph without an `end` node, a branch ends wherever it stops.)
    /// `waiting`: the joins some of whose inputs arrived, each with those
    /// that never did (branches a router or condition did not take): the
    /// run stopped there, not at the last step's nodes.
    #[error("{}", no_answer(*step, last, waiting))]
    NoAnswer {
        step: u32,
        last: Vec<NodeId>,
        waiting: Vec<(NodeId, Vec<NodeId>)>,
    },
    /// The run was cancelled.
    #[error("the run was cancelled at step {step}")]
    Cancelled { step: u32 },
    /// The run stopped before step `step`, as asked, to go on elsewhere
    /// from its newest checkpoint: it has not ended.
    #[error("the run was handed over before step {step}")]
    HandedOver { step: u32 },
    /// The checkpoint store failed; the run stopped at its last checkpoint.
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// Why a run ended without an answer, for people: a join left waiting
/// when there is one, else the last step's nodes.
fn no_answer(step: u32, last: &[NodeId], waiting: &[(NodeId, Vec<NodeId>)]) -> String {
    match waiting.first() {
        Some((join, missing)) => format!(
            "the run ended without an answer: `{join}` waited for {}, which never reached it \
             (a join runs once every node that leads into it has; step {step} ran {})",
            names(missing),
            names(last)
        ),
        None => format!(
            "the run ended without an answer: no branch reached end (step {step} ran {}, which passed nothing on)",
            names(last)
        ),
    }
}

/// How many nodes a message names before "and N more".
const NAMED: usize = 6;

/// Why a run ran out of steps, for people: the loop it went round, else
/// what it had still to run (a graph longer than its limit).
pub(crate) fn why_steps_ran_out(loop_nodes: &[NodeId], waiting: &[NodeId]) -> String {
    if loop_nodes.is_empty() {
        format!(
            "it does not loop, but had {} still to run: a graph this long needs a higher limit (its Steps)",
            some_names(waiting)
        )
    } else {
        format!("it loops through {}", some_names(loop_nodes))
    }
}

/// The first [`NAMED`] of `nodes`, and how many more.
fn some_names(nodes: &[NodeId]) -> String {
    match nodes.len().checked_sub(NAMED) {
        Some(more) if more > 0 => format!("{} and {more} more", names(&nodes[..NAMED])),
        _ => names(nodes),
    }
}

fn names(nodes: &[NodeId]) -> String {
    nodes
        .iter()
        .map(|node| format!("`{node}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl RunError {
    pub(crate) fn bad_update(node: &NodeId, step: u32, error: ReduceError) -> Self {
        RunError::BadUpdate {
            node: node.clone(),
            step,
            message: error.to_string(),
        }
    }
}
