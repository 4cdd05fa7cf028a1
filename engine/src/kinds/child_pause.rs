//! A pause inside a child graph, as the node that ran the child asks it:
//! what the child asks, with where the child stands under
//! [`PAUSED_CHILD`] (a `subgraph` node's child, an agent's sub-agent), so
//! the pause is kept in the run's own checkpoint and answering it goes on
//! inside the child. Shared by `subgraph` and the agent's sub-agents.

use serde_json::{Value, json};

use crate::node::NodeError;

/// The key of a node's pause that holds where its child paused: the
/// child's checkpoint, its paused node and, for a sub-agent, its name.
pub const PAUSED_CHILD: &str = "subgraph";

/// The key of an agent's pause that holds where the agent's turn stands
/// (see `agent::delegation`).
pub(super) const WAITING: &str = "agent";

/// What a node asks when its child paused (a subgraph's, or a sub-agent's
/// named `child`): what the child asks (its first pause's payload, so the
/// person sees the child's question), with the child's checkpoint, paused
/// node and name under [`PAUSED_CHILD`].
pub(super) fn asking(
    checkpoint: crate::run::Checkpoint,
    child: Option<&str>,
) -> Result<Value, NodeError> {
    let first = checkpoint.interrupts.first();
    let node = first.map(|interrupt| interrupt.node.to_string());
    let mut asks = match first.map(|interrupt| interrupt.payload.clone()) {
        Some(Value::Object(fields)) => fields,
        Some(Value::Null) | None => serde_json::Map::new(),
        Some(other) => serde_json::Map::from_iter([("value".to_string(), other)]),
    };
    // Where a child's own node stands (an agent's turn) is in the child's
    // checkpoint already; the question is what the person needs.
    asks.remove(WAITING);
    let checkpoint = serde_json::to_value(&checkpoint).map_err(|error| {
        NodeError::permanent(format!(
            "where the child graph paused cannot be kept: {error}"
        ))
    })?;
    asks.insert(
        PAUSED_CHILD.to_string(),
        json!({"node": node, "child": child, "checkpoint": checkpoint}),
    );
    Ok(Value::Object(asks))
}
