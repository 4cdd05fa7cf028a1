//! What the canvas shows of a run at one moment: each node's state, loop
//! counts, durations, token counts and streamed text, the edges just
//! taken, the run's status. Built by folding the run's events in order;
//! [`RunView::apply`] is pure, so a replay at any step is the same fold
//! stopped earlier. Work inside a node's child graphs (a subgraph's, an
//! agent's sub-agents: events with a path) shows on that node: what it
//! is doing inside, how many executions inside ended, their text and
//! their model calls (which count in the node's and the run's usage).

use heddle_engine::ids::RunId;
use std::collections::{BTreeMap, HashMap};

use heddle_engine::run::{Event, EventPayload, Hop, Interrupt, RunStatus};
use heddle_engine::tools::BreakerState;
use heddle_engine::usage::UsageTotals;

/// Where a node stands in the run being watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Scheduled in the current step, not started yet.
    Waiting,
    Running,
    /// Failed an attempt, and will try again.
    Retrying,
    Succeeded,
    Failed,
    Interrupted,
}

impl NodeState {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeState::Waiting => "waiting",
            NodeState::Running => "running",
            NodeState::Retrying => "retrying",
            NodeState::Succeeded => "succeeded",
            NodeState::Failed => "failed",
            NodeState::Interrupted => "interrupted",
        }
    }
}

/// What one node did so far in the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeStats {
    /// How many times it started (loops and retries).
    pub runs: u32,
    /// How long its last execution took, in microseconds.
    pub last_duration_us: Option<u64>,
    /// What its model calls used, over all executions.
    pub usage: UsageTotals,
    /// Its tools' circuit breakers that are not closed, by tool.
    pub breakers: BTreeMap<String, BreakerState>,
    /// Why it failed, the last time it did.
    pub error: Option<String>,
    /// What its current (or last) execution streamed.
    pub streamed: String,
    /// What its child graphs did (a subgraph's, its sub-agents').
    pub inside: Inside,
}

/// What a node's child graphs did so far in the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inside {
    /// Where the work inside is while it runs: `mathematician › work`.
    pub doing: Option<String>,
    /// Executions inside that succeeded.
    pub done: u32,
    /// Executions inside that failed.
    pub failed: u32,
    /// What the newest execution inside streamed.
    pub streamed: String,
}

/// Where inside a node an event of a child graph happened, as people read
/// it: the sub-agent's name, the nested nodes, then `node`
/// (`mathematician › work`).
pub fn inside_label(path: &[Hop], node: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for (depth, hop) in path.iter().enumerate() {
        if depth > 0 {
            parts.push(hop.node.as_str());
        }
        if let Some(child) = &hop.child {
            parts.push(child);
        }
    }
    parts.push(node);
    parts.join(" › ")
}

/// A view of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    pub run_id: Option<RunId>,
    /// `None` until the run's first event.
    pub status: Option<RunStatus>,
    pub nodes: HashMap<String, NodeState>,
    pub stats: HashMap<String, NodeStats>,
    /// The edges taken by the latest step, `(from, to)`: parallel branches
    /// light up together.
    pub edges_taken: Vec<(String, String)>,
    /// The step the run is at.
    pub step: u32,
    /// Why the run is paused, when it is.
    pub interrupts: Vec<Interrupt>,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    /// Events applied, tokens not counted.
    pub events: u64,
    /// What the run's model calls used, in all and per step.
    pub usage: UsageTotals,
    pub step_usage: BTreeMap<u32, UsageTotals>,
}

impl RunView {
    /// A fresh view of `run_id`, before its events arrive.
    pub fn of(run_id: &RunId) -> RunView {
        RunView {
            run_id: Some(run_id.clone()),
            status: Some(RunStatus::Running),
            ..RunView::default()
        }
    }

    /// Applies one event of the run.
    pub fn apply(&mut self, event: &Event) {
        self.events += 1;
        if let Some(outer) = event.path.first() {
            self.apply_inside(outer, event);
            return;
        }
        match &event.payload {
            EventPayload::RunStarted { .. } | EventPayload::RunResumed { .. } => {
                self.status = Some(RunStatus::Running);
                self.interrupts.clear();
                for state in self.nodes.values_mut() {
                    if *state == NodeState::Interrupted {
                        *state = NodeState::Waiting;
                    }
                }
            }
            EventPayload::StepStarted { step, tasks } => {
                self.step = *step;
                self.edges_taken.clear();
                for task in tasks {
                    self.nodes.insert(task.node.to_string(), NodeState::Waiting);
                }
            }
            EventPayload::NodeStarted { node, attempt, .. } => {
                let stats = self.stats.entry(node.to_string()).or_default();
                if *attempt <= 1 {
                    stats.streamed.clear();
                }
                stats.runs += 1;
                self.nodes.insert(node.to_string(), NodeState::Running);
            }
            EventPayload::NodeSucceeded {
                node, duration_us, ..
            } => {
                let stats = self.stats.entry(node.to_string()).or_default();
                stats.last_duration_us = Some(*duration_us);
                stats.error = None;
                self.nodes.insert(node.to_string(), NodeState::Succeeded);
            }
            EventPayload::NodeRetrying { node, error, .. } => {
                self.stats.entry(node.to_string()).or_default().error = Some(error.clone());
                self.nodes.insert(node.to_string(), NodeState::Retrying);
            }
            EventPayload::NodeFailed { node, error, .. } => {
                self.stats.entry(node.to_string()).or_default().error = Some(error.clone());
                self.nodes.insert(node.to_string(), NodeState::Failed);
            }
            EventPayload::EdgeTaken { from, to, .. } => {
                self.edges_taken.push((from.to_string(), to.to_string()));
            }
            EventPayload::Custom { node, name, data } => match name.as_str() {
                "usage" => {
                    let mut call = UsageTotals::default();
                    call.add_event(data);
                    self.stats
                        .entry(node.to_string())
                        .or_default()
                        .usage
                        .add(&call);
                    self.usage.add(&call);
                    self.step_usage.entry(self.step).or_default().add(&call);
                }
                "tool_breaker" => {
                    let tool = data["name"].as_str().unwrap_or_default().to_string();
                    let state: Option<BreakerState> =
                        serde_json::from_value(data["state"].clone()).ok();
                    let breakers = &mut self.stats.entry(node.to_string()).or_default().breakers;
                    match state {
                        Some(BreakerState::Closed) | None => {
                            breakers.remove(&tool);
                        }
                        Some(state) => {
                            breakers.insert(tool, state);
                        }
                    }
                }
                "token" => {
                    // Tokens come coalesced (see `tokens`); one sent as an
                    // event counts like the rest of its stream.
                    self.events -= 1;
                    if let Some(text) = data["text"].as_str() {
                        self.tokens(node.as_str(), text);
                    }
                }
                _ => {}
            },
            EventPayload::RunInterrupted { interrupts, .. } => {
                self.status = Some(RunStatus::Interrupted);
                self.interrupts = interrupts.clone();
                for interrupt in interrupts {
                    self.nodes
                        .insert(interrupt.node.to_string(), NodeState::Interrupted);
                }
                for state in self.nodes.values_mut() {
                    if matches!(*state, NodeState::Running | NodeState::Waiting) {
                        *state = NodeState::Interrupted;
                    }
                }
            }
            EventPayload::RunFinished { .. } => {
                self.status = Some(RunStatus::Finished);
                self.settle();
            }
            EventPayload::RunFailed { error, .. } => {
                self.status = Some(RunStatus::Failed);
                self.error = Some(error.clone());
                self.settle();
            }
            EventPayload::RunCancelled { .. } => {
                self.status = Some(RunStatus::Cancelled);
                self.settle();
            }
            _ => {}
        }
    }

    /// An event inside the child graph of the node `outer` names: it shows
    /// on that node, never on a node of the run's own graph that happens to
    /// share a child's node id.
    fn apply_inside(&mut self, outer: &Hop, event: &Event) {
        let stats = self.stats.entry(outer.node.to_string()).or_default();
        let inside = &mut stats.inside;
        match &event.payload {
            EventPayload::NodeStarted { node, attempt, .. } => {
                inside.doing = Some(inside_label(&event.path, node.as_str()));
                if *attempt <= 1 {
                    inside.streamed.clear();
                }
            }
            EventPayload::NodeSucceeded { .. } => {
                inside.done += 1;
                inside.doing = None;
            }
            EventPayload::NodeFailed { .. } => {
                inside.failed += 1;
                inside.doing = None;
            }
            EventPayload::Custom { name, data, .. } => match name.as_str() {
                "usage" => {
                    let mut call = UsageTotals::default();
                    call.add_event(data);
                    stats.usage.add(&call);
                    self.usage.add(&call);
                    self.step_usage.entry(self.step).or_default().add(&call);
                }
                "token" => {
                    self.events -= 1;
                    if let Some(text) = data["text"].as_str() {
                        inside.streamed.push_str(text);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Streamed text of `node` at `within` (see `Event::path`): a node's
    /// own, or inside the child graph of the node the path starts at.
    pub fn streamed(&mut self, within: &[Hop], node: &str, text: &str) {
        match within.first() {
            Some(outer) => self
                .stats
                .entry(outer.node.to_string())
                .or_default()
                .inside
                .streamed
                .push_str(text),
            None => self.tokens(node, text),
        }
    }

    /// Streamed text of a node, as it comes.
    pub fn tokens(&mut self, node: &str, text: &str) {
        self.stats
            .entry(node.to_string())
            .or_default()
            .streamed
            .push_str(text);
    }

    /// Nodes still waiting or running when the run ended did not finish.
    fn settle(&mut self) {
        self.nodes
            .retain(|_, state| !matches!(state, NodeState::Waiting | NodeState::Running));
        for stats in self.stats.values_mut() {
            stats.inside.doing = None;
        }
        self.edges_taken.clear();
    }

    /// A node's state, as a `data-state` value: `idle` when untouched,
    /// `skipped` when the run ended without reaching it.
    pub fn state_of(&self, node: &str) -> &'static str {
        match self.nodes.get(node) {
            Some(state) => state.as_str(),
            None if self.status.is_some_and(RunStatus::is_final) => "skipped",
            None => "idle",
        }
    }

    /// Whether the run can still change.
    pub fn is_live(&self) -> bool {
        self.status == Some(RunStatus::Running)
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::run::Event;
    use serde_json::{Value, json};

    use super::{BreakerState, NodeState, RunView};

    fn event(seq: u64, body: Value) -> Event {
        let mut body = body;
        body["run_id"] = json!("run-1");
        body["seq"] = json!(seq);
        body["at_us"] = json!(seq * 1000);
        serde_json::from_value(body).unwrap()
    }

    fn fold(events: &[Value]) -> RunView {
        let mut view = RunView::of(&"run-1".into());
        for (seq, body) in events.iter().enumerate() {
            view.apply(&event(seq as u64, body.clone()));
        }
        view
    }

    #[test]
    fn events_move_nodes_through_their_states() {
        let view = fold(&[
            json!({"type": "run_started", "graph": "g", "input": {}}),
            json!({"type": "step_started", "step": 0, "tasks": [{"node": "a"}]}),
            json!({"type": "node_started", "step": 0, "node": "a", "task": 0, "attempt": 1}),
            json!({"type": "custom", "node": "a", "name": "usage", "data": {"prompt_tokens": 12, "completion_tokens": 30}}),
            json!({"type": "node_succeeded", "step": 0, "node": "a", "task": 0, "duration_us": 4200, "update": {}}),
            json!({"type": "edge_taken", "step": 0, "from": "a", "to": "b", "reason": "static"}),
            json!({"type": "edge_taken", "step": 0, "from": "a", "to": "c", "reason": "static"}),
        ]);
        assert_eq!(view.state_of("a"), "succeeded");
        assert_eq!(view.stats["a"].usage.tokens(), 42);
        assert_eq!(view.usage.tokens(), 42);
        assert_eq!(view.step_usage[&0].calls, 1);
        assert_eq!(view.stats["a"].last_duration_us, Some(4200));
        assert_eq!(
            view.edges_taken,
            vec![("a".into(), "b".into()), ("a".into(), "c".into())],
            "parallel branches light up together"
        );
        assert_eq!(view.events, 7);
    }

    #[test]
    fn a_child_graphs_work_shows_on_its_node_not_on_a_node_of_the_same_id() {
        let inside = |body: Value| {
            let mut body = body;
            body["path"] = json!([{"node": "boss", "step": 1, "child": "helper"}]);
            body
        };
        let running = fold(&[
            json!({"type": "run_started", "graph": "g", "input": {}}),
            json!({"type": "step_started", "step": 1, "tasks": [{"node": "boss"}]}),
            json!({"type": "node_started", "step": 1, "node": "boss", "task": 0, "attempt": 1}),
            inside(json!({"type": "step_started", "step": 0, "tasks": [{"node": "work"}]})),
            inside(
                json!({"type": "node_started", "step": 0, "node": "start", "task": 0, "attempt": 1}),
            ),
            inside(
                json!({"type": "node_succeeded", "step": 0, "node": "start", "task": 0, "duration_us": 5, "update": {}}),
            ),
            inside(
                json!({"type": "node_started", "step": 1, "node": "work", "task": 0, "attempt": 1}),
            ),
            inside(
                json!({"type": "custom", "node": "work", "name": "token", "data": {"text": "Forty"}}),
            ),
            inside(
                json!({"type": "custom", "node": "work", "name": "usage", "data": {"prompt_tokens": 10, "completion_tokens": 2}}),
            ),
        ]);
        let boss = &running.stats["boss"];
        assert_eq!(boss.inside.doing.as_deref(), Some("helper › work"));
        assert_eq!(boss.inside.done, 1);
        assert_eq!(boss.inside.streamed, "Forty");
        assert_eq!(
            boss.usage.tokens(),
            12,
            "the node's usage counts its child's"
        );
        assert_eq!(running.usage.tokens(), 12);
        assert_eq!(running.step_usage[&1].calls, 1, "at the enclosing step");
        // The child's `start` and `work` are not the run's own nodes.
        assert_eq!(running.state_of("start"), "idle");
        assert_eq!(running.state_of("work"), "idle");
        assert_eq!(running.state_of("boss"), "running");
        assert!(boss.streamed.is_empty());
    }

    #[test]
    fn a_tool_breaker_shows_on_its_node_while_it_is_not_closed() {
        let breaker = |state: &str| {
            json!({"type": "custom", "node": "agent", "name": "tool_breaker",
                   "data": {"name": "search", "state": state, "failures": 3}})
        };
        let open = fold(&[breaker("open")]);
        assert_eq!(
            open.stats["agent"].breakers.get("search"),
            Some(&BreakerState::Open)
        );
        let trial = fold(&[breaker("open"), breaker("half_open")]);
        assert_eq!(
            trial.stats["agent"].breakers.get("search"),
            Some(&BreakerState::HalfOpen)
        );
        let closed = fold(&[breaker("open"), breaker("half_open"), breaker("closed")]);
        assert!(closed.stats["agent"].breakers.is_empty());
    }

    #[test]
    fn loops_retries_and_failures_are_counted() {
        let view = fold(&[
            json!({"type": "step_started", "step": 1, "tasks": [{"node": "b"}]}),
            json!({"type": "node_started", "step": 1, "node": "b", "task": 0, "attempt": 1}),
            json!({"type": "node_retrying", "step": 1, "node": "b", "task": 0, "attempt": 1, "delay_ms": 10, "error": "flaky"}),
            json!({"type": "node_started", "step": 1, "node": "b", "task": 0, "attempt": 2}),
            json!({"type": "node_failed", "step": 1, "node": "b", "task": 0, "attempt": 2, "error": "down"}),
            json!({"type": "run_failed", "error": "node b failed: down", "node": "b"}),
        ]);
        assert_eq!(view.nodes["b"], NodeState::Failed);
        assert_eq!(view.stats["b"].runs, 2);
        assert_eq!(view.stats["b"].error.as_deref(), Some("down"));
        assert_eq!(view.error.as_deref(), Some("node b failed: down"));
        assert!(!view.is_live());
        assert_eq!(view.state_of("never-reached"), "skipped");
    }

    #[test]
    fn an_interrupt_pauses_the_waiting_and_resuming_clears_it() {
        let mut view = fold(&[
            json!({"type": "step_started", "step": 2, "tasks": [{"node": "gate"}, {"node": "other"}]}),
            json!({"type": "node_started", "step": 2, "node": "gate", "task": 0, "attempt": 1}),
            json!({"type": "run_interrupted", "step": 2, "interrupts": [{"node": "gate", "task": 0, "when": "during", "payload": {"prompt": "ok?"}}]}),
        ]);
        assert_eq!(view.state_of("gate"), "interrupted");
        assert_eq!(view.interrupts[0].payload["prompt"], "ok?");
        view.apply(&event(
            9,
            json!({"type": "run_resumed", "step": 2, "checkpoint": "c1", "value": true}),
        ));
        assert!(view.is_live());
        assert!(view.interrupts.is_empty());
        assert_eq!(view.state_of("gate"), "waiting");
    }

    #[test]
    fn streamed_tokens_restart_with_each_execution() {
        let mut view = fold(&[
            json!({"type": "node_started", "step": 0, "node": "llm", "task": 0, "attempt": 1}),
        ]);
        view.tokens("llm", "Hel");
        view.tokens("llm", "lo");
        assert_eq!(view.stats["llm"].streamed, "Hello");
        view.apply(&event(
            5,
            json!({"type": "node_started", "step": 2, "node": "llm", "task": 0, "attempt": 1}),
        ));
        assert_eq!(view.stats["llm"].streamed, "");
    }
}
