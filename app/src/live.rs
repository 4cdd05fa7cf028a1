//! A run as the canvas shows it, built from the run's events as they
//! arrive over the websocket: each node's state, the edge just taken, the
//! run's status. [`RunView::apply`] is pure (and tested); [`socket`] (in
//! the browser) feeds it.

use std::collections::HashMap;

use serde_json::Value;

/// Where a node stands in the run being watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    Running,
    Succeeded,
    Failed,
    Interrupted,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Running => "running",
            NodeState::Succeeded => "succeeded",
            NodeState::Failed => "failed",
            NodeState::Interrupted => "interrupted",
        }
    }
}

/// What the socket reports besides the run itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    Connecting,
    Live,
    /// Access to the graph ended (a revoked link, a removed role).
    Revoked,
    /// The socket closed (log-out, server shutdown, network).
    Closed,
}

/// What a viewer of a run sees.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    pub run_id: Option<String>,
    /// `running`, `finished`, `failed`, `cancelled`, `interrupted`.
    pub status: Option<String>,
    pub nodes: HashMap<String, NodeState>,
    /// How many times each node ran (loops).
    pub runs: HashMap<String, u32>,
    /// The edge taken last, `(from, to)`.
    pub last_edge: Option<(String, String)>,
    /// Events applied (for the counter and the tests).
    pub events: u64,
    /// A replay stopped at this step: later events are not applied.
    pub until_step: Option<u32>,
}

impl RunView {
    /// A fresh view of `run_id`.
    pub fn of(run_id: &str) -> RunView {
        RunView {
            run_id: Some(run_id.to_string()),
            status: Some("running".into()),
            ..RunView::default()
        }
    }

    /// A view of `run_id` as it stood at the end of `step`.
    pub fn at_step(run_id: &str, step: u32) -> RunView {
        RunView {
            run_id: Some(run_id.to_string()),
            status: Some("replay".into()),
            until_step: Some(step),
            ..RunView::default()
        }
    }

    /// Applies one engine event (as the websocket sends it).
    pub fn apply(&mut self, event: &Value) {
        if let Some(until) = self.until_step {
            let later = event["step"]
                .as_u64()
                .is_some_and(|step| step > u64::from(until));
            let ending = matches!(
                event["type"].as_str(),
                Some("run_finished" | "run_failed" | "run_cancelled" | "run_interrupted")
            );
            if later || ending {
                return;
            }
        }
        self.events += 1;
        let node = || event["node"].as_str().unwrap_or_default().to_string();
        match event["type"].as_str().unwrap_or_default() {
            "run_started" | "run_resumed" if self.until_step.is_none() => {
                self.status = Some("running".into());
            }
            "node_started" => {
                let node = node();
                *self.runs.entry(node.clone()).or_default() += 1;
                self.nodes.insert(node, NodeState::Running);
            }
            "node_succeeded" => {
                self.nodes.insert(node(), NodeState::Succeeded);
            }
            "node_failed" => {
                self.nodes.insert(node(), NodeState::Failed);
            }
            "edge_taken" => {
                let from = event["from"].as_str().unwrap_or_default().to_string();
                let to = event["to"].as_str().unwrap_or_default().to_string();
                self.last_edge = Some((from, to));
            }
            "run_interrupted" => {
                self.status = Some("interrupted".into());
                for state in self.nodes.values_mut() {
                    if *state == NodeState::Running {
                        *state = NodeState::Interrupted;
                    }
                }
            }
            "run_finished" => self.status = Some("finished".into()),
            "run_failed" => self.status = Some("failed".into()),
            "run_cancelled" => self.status = Some("cancelled".into()),
            _ => {}
        }
    }

    /// A node's state, as a `data-state` value (`idle` when untouched).
    pub fn state_of(&self, node: &str) -> &'static str {
        self.nodes.get(node).map_or("idle", |state| state.as_str())
    }
}

#[cfg(feature = "hydrate")]
pub mod socket;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{NodeState, RunView};

    #[test]
    fn events_move_nodes_through_their_states() {
        let mut view = RunView::of("run-1");
        view.apply(&json!({"type": "node_started", "node": "a", "step": 1}));
        assert_eq!(view.state_of("a"), "running");
        assert_eq!(view.state_of("b"), "idle");
        view.apply(&json!({"type": "node_succeeded", "node": "a"}));
        view.apply(&json!({"type": "edge_taken", "from": "a", "to": "b"}));
        view.apply(&json!({"type": "node_started", "node": "b"}));
        view.apply(&json!({"type": "node_succeeded", "node": "b"}));
        view.apply(&json!({"type": "node_started", "node": "b"}));
        view.apply(&json!({"type": "node_failed", "node": "b"}));
        view.apply(&json!({"type": "run_failed"}));
        assert_eq!(view.nodes["a"], NodeState::Succeeded);
        assert_eq!(view.nodes["b"], NodeState::Failed);
        assert_eq!(view.runs["b"], 2, "the loop counter");
        assert_eq!(view.last_edge, Some(("a".into(), "b".into())));
        assert_eq!(view.status.as_deref(), Some("failed"));
        assert_eq!(view.events, 8);
    }

    #[test]
    fn a_replay_stops_at_its_step() {
        let mut view = RunView::at_step("run-1", 1);
        view.apply(&json!({"type": "run_started"}));
        view.apply(&json!({"type": "node_started", "node": "a", "step": 0}));
        view.apply(&json!({"type": "node_succeeded", "node": "a", "step": 0}));
        view.apply(&json!({"type": "node_started", "node": "b", "step": 1}));
        view.apply(&json!({"type": "node_started", "node": "c", "step": 2}));
        view.apply(&json!({"type": "run_finished"}));
        assert_eq!(view.state_of("a"), "succeeded");
        assert_eq!(view.state_of("b"), "running");
        assert_eq!(view.state_of("c"), "idle");
        assert_eq!(view.status.as_deref(), Some("replay"));
    }

    #[test]
    fn an_interrupt_pauses_running_nodes() {
        let mut view = RunView::of("run-1");
        view.apply(&json!({"type": "node_started", "node": "gate"}));
        view.apply(&json!({"type": "run_interrupted"}));
        assert_eq!(view.state_of("gate"), "interrupted");
        assert_eq!(view.status.as_deref(), Some("interrupted"));
    }
}
