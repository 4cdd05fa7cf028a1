//! What a node's execution returns.

use serde_json::Value;

use crate::ids::NodeId;

/// A node's result: the state update, and optionally where to go next.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeOutput {
    /// `(channel, value)` pairs, applied through each channel's reducer at
    /// the end of the step, in this order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update: Vec<(String, Value)>,
    /// The route this node chose: only its out-edges labelled with this
    /// route are taken (plus unlabelled ones whose condition holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// Go straight to these nodes, ignoring out-edges (like LangGraph's
    /// `Command(goto=...)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub goto: Vec<NodeId>,
    /// Start one instance of a node per item, all in the next step, each
    /// given its item (like LangGraph's `Send`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sends: Vec<SendTo>,
}

/// One fanned-out activation: run `node` with `arg`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SendTo {
    pub node: NodeId,
    pub arg: Value,
}

impl NodeOutput {
    /// An output that writes one channel.
    pub fn update(channel: impl Into<String>, value: Value) -> Self {
        NodeOutput {
            update: vec![(channel.into(), value)],
            ..NodeOutput::default()
        }
    }

    /// Adds a channel write.
    pub fn with(mut self, channel: impl Into<String>, value: Value) -> Self {
        self.update.push((channel.into(), value));
        self
    }

    /// Chooses a route.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }
}

/// Why a node's execution failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeError {
    /// The node could not do its work. A transient failure (a timeout, a
    /// rate limit, a 5xx) is worth retrying; others are not, unless the
    /// node's retry policy says to retry everything.
    #[error("{message}")]
    Failed {
        /// What went wrong, for people.
        message: String,
        /// Whether trying again may succeed.
        transient: bool,
    },
    /// The node pauses the run to ask for something ("approve this tool
    /// call?"). The run ends interrupted with this payload; resuming it with
    /// a value runs the node again, and the node finds the value in
    /// [`crate::node::NodeContext::resume_value`].
    #[error("interrupted: {payload}")]
    Interrupt {
        /// What the node asks, for the person or program that resumes.
        payload: Value,
    },
}

impl NodeError {
    /// A failure that retrying will not fix.
    pub fn permanent(message: impl Into<String>) -> Self {
        NodeError::Failed {
            message: message.into(),
            transient: false,
        }
    }

    /// A failure that may pass if tried again.
    pub fn transient(message: impl Into<String>) -> Self {
        NodeError::Failed {
            message: message.into(),
            transient: true,
        }
    }

    /// Pauses the run with `payload` (see [`NodeError::Interrupt`]).
    pub fn interrupt(payload: Value) -> Self {
        NodeError::Interrupt { payload }
    }

    /// Whether trying again may succeed.
    pub fn is_transient(&self) -> bool {
        match self {
            NodeError::Failed { transient, .. } => *transient,
            NodeError::Interrupt { .. } => false,
        }
    }
}
