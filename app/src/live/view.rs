//! What the canvas shows of a run at one moment: each node's state, loop
//! counts, durations, token counts and streamed text, the edges just
//! taken, the run's status. Built by folding the run's events in order;
//! [`RunView::apply`] is pure, so a replay at any step is the same fold
//! stopped earlier. Work inside a node's child graphs (a subgraph's, an
//! agent's sub-agents: events with a path) shows on that node: what it
//! is doing inside, how many executions inside ended, their text and
//! their model calls (which count in the node's and the run's usage).
//! The instances a fan-out starts of a node run side by side: each keeps
//! its own state and streamed text ([`NodeStats::instances`]), so their
//! words never interleave.

use heddle_engine::ids::RunId;
use std::collections::{BTreeMap, HashMap};

use heddle_engine::run::{Event, EventPayload, Hop, Interrupt, RunStatus, TaskRef};
use heddle_engine::tools::BreakerState;
use heddle_engine::usage::UsageTotals;
use serde_json::Value;

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
    /// Its fanned-out instances in the step that ran them, by item
    /// position (empty when no fan-out started it).
    pub instances: BTreeMap<u32, Instance>,
    /// The route it chose the last time it ran, when it chooses one (a
    /// router's, a handoff's).
    pub route: Option<String>,
    /// Whether that route was a router's `otherwise`, its model's reply
    /// naming none of its routes.
    pub otherwise: bool,
}

/// One instance a fan-out started of a node, for one item.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub state: NodeState,
    /// Its item in a few words (`TaskRef::item`), when the run said.
    pub item: Option<String>,
    /// What it streamed (its own words, or while it has none, its child
    /// graph's).
    pub streamed: String,
    /// How long it took, once it ended.
    pub duration_us: Option<u64>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Where the work inside its child graph is, while it runs.
    pub doing: Option<String>,
}

/// The words a node wrote in its update: the last message's content in
/// a channel of messages, else a text written to a channel; the first
/// channel (by name) that holds either.
fn words_in(update: &Value) -> Option<String> {
    let text = |value: &Value| -> Option<String> {
        match value {
            Value::String(text) => Some(text.clone()),
            Value::Array(messages) => messages
                .iter()
                .rev()
                .find_map(|message| message.get("content")?.as_str().map(str::to_string)),
            Value::Object(message) => message.get("content")?.as_str().map(str::to_string),
            _ => None,
        }
    };
    update
        .as_object()?
        .values()
        .filter_map(text)
        .find(|words| !words.trim().is_empty())
}

impl Instance {
    fn waiting(item: Option<String>) -> Instance {
        Instance {
            state: NodeState::Waiting,
            item: item.filter(|item| !item.is_empty()),
            streamed: String::new(),
            duration_us: None,
            error: None,
            doing: None,
        }
    }
}

impl NodeStats {
    /// The node's state as its instances make it: running while any runs
    /// or waits, else failed or paused if any is, else succeeded.
    fn state_of_instances(&self) -> Option<NodeState> {
        let states = || self.instances.values().map(|instance| instance.state);
        let any = |wanted: NodeState| states().any(|state| state == wanted);
        if self.instances.is_empty() {
            None
        } else if any(NodeState::Retrying) {
            Some(NodeState::Retrying)
        } else if any(NodeState::Running) || any(NodeState::Waiting) {
            Some(NodeState::Running)
        } else if any(NodeState::Failed) {
            Some(NodeState::Failed)
        } else if any(NodeState::Interrupted) {
            Some(NodeState::Interrupted)
        } else {
            Some(NodeState::Succeeded)
        }
    }
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
    /// Every edge the run has taken up to its latest step, once each: the
    /// way it went, drawn once its step has passed (and after the run).
    pub edges_walked: Vec<(String, String)>,
    /// The step the run is at.
    pub step: u32,
    /// That step's tasks (which instance each fanned-out task is).
    pub tasks: Vec<TaskRef>,
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
                for instance in self.instances_mut() {
                    if instance.state == NodeState::Interrupted {
                        instance.state = NodeState::Waiting;
                    }
                }
            }
            EventPayload::StepStarted { step, tasks } => {
                self.step = *step;
                self.edges_taken.clear();
                self.tasks.clone_from(tasks);
                for task in tasks {
                    self.nodes.insert(task.node.to_string(), NodeState::Waiting);
                }
                // A fan-out's instances start afresh in the step that runs
                // them.
                for task in tasks.iter().filter(|task| task.instance.is_some()) {
                    self.stats
                        .entry(task.node.to_string())
                        .or_default()
                        .instances
                        .clear();
                }
                for task in tasks {
                    if let Some(instance) = task.instance {
                        self.stats
                            .entry(task.node.to_string())
                            .or_default()
                            .instances
                            .insert(instance, Instance::waiting(task.item.clone()));
                    }
                }
            }
            EventPayload::NodeStarted {
                node,
                task,
                attempt,
                ..
            } => {
                let instance = self.instance_of(*task);
                let stats = self.stats.entry(node.to_string()).or_default();
                stats.runs += 1;
                match instance.and_then(|i| stats.instances.get_mut(&i)) {
                    Some(instance) => {
                        if *attempt <= 1 {
                            instance.streamed.clear();
                        }
                        instance.state = NodeState::Running;
                    }
                    None if *attempt <= 1 => stats.streamed.clear(),
                    None => {}
                }
                self.settle_node(node.as_str(), NodeState::Running);
            }
            EventPayload::NodeSucceeded {
                node,
                task,
                duration_us,
                update,
                route,
                ..
            } => {
                let instance = self.instance_of(*task);
                let stats = self.stats.entry(node.to_string()).or_default();
                stats.last_duration_us = Some(*duration_us);
                stats.error = None;
                if route.is_some() {
                    stats.route = route.clone();
                }
                if let Some(instance) = instance.and_then(|i| stats.instances.get_mut(&i)) {
                    instance.state = NodeState::Succeeded;
                    instance.duration_us = Some(*duration_us);
                    instance.error = None;
                    instance.doing = None;
                    // Its words as written, when none streamed (a run read
                    // from its stored events, a model that does not stream).
                    if instance.streamed.is_empty()
                        && let Some(words) = words_in(update)
                    {
                        instance.streamed = words;
                    }
                }
                self.settle_node(node.as_str(), NodeState::Succeeded);
            }
            EventPayload::NodeRetrying {
                node, task, error, ..
            }
            | EventPayload::NodeFailed {
                node, task, error, ..
            } => {
                let state = match event.payload {
                    EventPayload::NodeRetrying { .. } => NodeState::Retrying,
                    _ => NodeState::Failed,
                };
                let instance = self.instance_of(*task);
                let stats = self.stats.entry(node.to_string()).or_default();
                stats.error = Some(error.clone());
                if let Some(instance) = instance.and_then(|i| stats.instances.get_mut(&i)) {
                    instance.state = state;
                    instance.error = Some(error.clone());
                    instance.doing = None;
                }
                self.settle_node(node.as_str(), state);
            }
            EventPayload::EdgeTaken { from, to, .. } => {
                let edge = (from.to_string(), to.to_string());
                if !self.edges_walked.contains(&edge) {
                    self.edges_walked.push(edge.clone());
                }
                self.edges_taken.push(edge);
            }
            EventPayload::Custom {
                node,
                instance,
                name,
                data,
            } => match name.as_str() {
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
                name if name == heddle_engine::kinds::ROUTE_EVENT => {
                    let taken: Option<heddle_engine::kinds::RouteTaken> =
                        serde_json::from_value(data.clone()).ok();
                    self.stats.entry(node.to_string()).or_default().otherwise =
                        taken.is_some_and(|taken| taken.otherwise);
                }
                "token" => {
                    // Tokens come coalesced (see `tokens`); one sent as an
                    // event counts like the rest of its stream.
                    self.events -= 1;
                    if let Some(text) = data["text"].as_str() {
                        self.tokens(node.as_str(), *instance, text);
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
                for instance in self.instances_mut() {
                    if matches!(instance.state, NodeState::Running | NodeState::Waiting) {
                        instance.state = NodeState::Interrupted;
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
        // A fanned-out instance's child graph: its instance says so too.
        if let Some(instance) = outer.instance.and_then(|i| stats.instances.get_mut(&i)) {
            match &event.payload {
                EventPayload::NodeStarted { node, attempt, .. } => {
                    instance.doing = Some(inside_label(&event.path, node.as_str()));
                    if *attempt <= 1 {
                        instance.streamed.clear();
                    }
                }
                EventPayload::Custom { name, data, .. } if name == "token" => {
                    if let Some(text) = data["text"].as_str() {
                        instance.streamed.push_str(text);
                    }
                }
                _ => {}
            }
        }
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

    /// Streamed text of `node` (of its fanned-out `instance`) at `within`
    /// (see `Event::path`): a node's own, or inside the child graph of the
    /// node the path starts at.
    pub fn streamed(&mut self, within: &[Hop], node: &str, instance: Option<u32>, text: &str) {
        match within.first() {
            Some(outer) => {
                let stats = self.stats.entry(outer.node.to_string()).or_default();
                if let Some(instance) = outer.instance.and_then(|i| stats.instances.get_mut(&i)) {
                    instance.streamed.push_str(text);
                }
                stats.inside.streamed.push_str(text);
            }
            None => self.tokens(node, instance, text),
        }
    }

    /// Streamed text of a node (of one of its fanned-out instances), as
    /// it comes.
    pub fn tokens(&mut self, node: &str, instance: Option<u32>, text: &str) {
        let stats = self.stats.entry(node.to_string()).or_default();
        match instance {
            Some(i) => stats
                .instances
                .entry(i)
                .or_insert_with(|| Instance::waiting(None))
                .streamed
                .push_str(text),
            None => stats.streamed.push_str(text),
        }
    }

    /// Which fanned-out instance the current step's `task` is, if any.
    fn instance_of(&self, task: u32) -> Option<u32> {
        self.tasks.get(task as usize).and_then(|task| task.instance)
    }

    /// Sets a node's state after one of its executions changed: as its
    /// instances make it when a fan-out started it, else `state`.
    fn settle_node(&mut self, node: &str, state: NodeState) {
        let state = self
            .stats
            .get(node)
            .and_then(NodeStats::state_of_instances)
            .unwrap_or(state);
        self.nodes.insert(node.to_string(), state);
    }

    fn instances_mut(&mut self) -> impl Iterator<Item = &mut Instance> {
        self.stats
            .values_mut()
            .flat_map(|stats| stats.instances.values_mut())
    }

    /// Nodes still waiting or running when the run ended did not finish.
    fn settle(&mut self) {
        self.nodes
            .retain(|_, state| !matches!(state, NodeState::Waiting | NodeState::Running));
        for stats in self.stats.values_mut() {
            stats.inside.doing = None;
            stats.instances.retain(|_, instance| {
                !matches!(instance.state, NodeState::Waiting | NodeState::Running)
            });
            for instance in stats.instances.values_mut() {
                instance.doing = None;
            }
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
        assert_eq!(
            view.edges_walked, view.edges_taken,
            "the way it went so far"
        );
        assert_eq!(view.events, 7);
    }

    #[test]
    fn a_run_read_from_its_stored_events_has_its_instances_words_and_routes() {
        // No token was stored: the instances' words are what they wrote.
        let view = fold(&[
            json!({"type": "run_started", "graph": "g", "input": {}}),
            json!({"type": "step_started", "step": 0, "tasks": [{"node": "triage"}]}),
            json!({"type": "node_started", "step": 0, "node": "triage", "task": 0, "attempt": 1}),
            json!({"type": "node_succeeded", "step": 0, "node": "triage", "task": 0, "duration_us": 5,
                "update": {}, "route": "billing"}),
            json!({"type": "step_started", "step": 1, "tasks": [
                {"node": "research", "instance": 0, "item": "heat"},
                {"node": "research", "instance": 1, "item": "wind"}]}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 0, "attempt": 1}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 1, "attempt": 1}),
            json!({"type": "node_succeeded", "step": 1, "node": "research", "task": 0, "duration_us": 5,
                "update": {"notes": [{"role": "assistant", "content": "Heat pumps move heat."}]}}),
            json!({"type": "node_succeeded", "step": 1, "node": "research", "task": 1, "duration_us": 5,
                "update": {"count": 2, "summary": "Wind turns blades."}}),
        ]);
        assert_eq!(view.stats["triage"].route.as_deref(), Some("billing"));
        let instances = &view.stats["research"].instances;
        assert_eq!(instances[&0].streamed, "Heat pumps move heat.");
        assert_eq!(instances[&1].streamed, "Wind turns blades.");
        assert_eq!(view.stats["research"].route, None);
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
    fn a_fan_outs_instances_keep_their_own_state_and_words() {
        let token = |instance: u32, text: &str| {
            json!({"type": "custom", "node": "research", "instance": instance,
                   "name": "token", "data": {"text": text}})
        };
        let events = [
            json!({"type": "step_started", "step": 2, "tasks": [
                {"node": "research", "instance": 0, "item": "heat pumps"},
                {"node": "research", "instance": 1, "item": "cost"},
                {"node": "research", "instance": 2, "item": ""}]}),
            json!({"type": "node_started", "step": 2, "node": "research", "task": 0, "attempt": 1}),
            json!({"type": "node_started", "step": 2, "node": "research", "task": 1, "attempt": 1}),
            json!({"type": "node_started", "step": 2, "node": "research", "task": 2, "attempt": 1}),
            token(0, "Heat "),
            token(1, "Cost "),
            token(0, "pumps"),
            token(2, "Noise"),
            token(1, "falls"),
            json!({"type": "node_succeeded", "step": 2, "node": "research", "task": 1, "duration_us": 900, "update": {}}),
        ];
        let view = fold(&events);
        let research = &view.stats["research"];
        let words: Vec<&str> = research
            .instances
            .values()
            .map(|instance| instance.streamed.as_str())
            .collect();
        assert_eq!(words, ["Heat pumps", "Cost falls", "Noise"]);
        // Each is named by its item; an empty one is no name.
        let items: Vec<Option<&str>> = research
            .instances
            .values()
            .map(|instance| instance.item.as_deref())
            .collect();
        assert_eq!(items, [Some("heat pumps"), Some("cost"), None]);
        assert!(research.streamed.is_empty(), "no interleaved text");
        assert_eq!(research.instances[&1].state, NodeState::Succeeded);
        assert_eq!(research.instances[&1].duration_us, Some(900));
        assert_eq!(research.instances[&0].state, NodeState::Running);
        // One instance done, two running: the node is running.
        assert_eq!(view.state_of("research"), "running");

        let mut ended = events.to_vec();
        ended.push(json!({"type": "node_failed", "step": 2, "node": "research", "task": 2, "attempt": 1, "error": "down"}));
        ended.push(json!({"type": "node_succeeded", "step": 2, "node": "research", "task": 0, "duration_us": 700, "update": {}}));
        let view = fold(&ended);
        assert_eq!(view.state_of("research"), "failed", "one of them failed");
        assert_eq!(
            view.stats["research"].instances[&2].error.as_deref(),
            Some("down")
        );

        // The next fan-out starts its instances afresh.
        ended.push(json!({"type": "step_started", "step": 3, "tasks": [{"node": "research", "instance": 0}]}));
        let view = fold(&ended);
        assert_eq!(view.stats["research"].instances.len(), 1);
        assert_eq!(
            view.stats["research"].instances[&0].state,
            NodeState::Waiting
        );
    }

    #[test]
    fn an_instances_child_graph_streams_into_that_instance() {
        let inside = |instance: u32, body: Value| {
            let mut body = body;
            body["path"] = json!([{"node": "research", "step": 1, "instance": instance}]);
            body
        };
        let view = fold(&[
            json!({"type": "step_started", "step": 1, "tasks": [
                {"node": "research", "instance": 0}, {"node": "research", "instance": 1}]}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 0, "attempt": 1}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 1, "attempt": 1}),
            inside(
                1,
                json!({"type": "node_started", "step": 0, "node": "write", "task": 0, "attempt": 1}),
            ),
            inside(
                1,
                json!({"type": "custom", "node": "write", "name": "token", "data": {"text": "Second"}}),
            ),
            inside(
                0,
                json!({"type": "custom", "node": "write", "name": "token", "data": {"text": "First"}}),
            ),
        ]);
        let instances = &view.stats["research"].instances;
        assert_eq!(instances[&0].streamed, "First");
        assert_eq!(instances[&1].streamed, "Second");
        assert_eq!(instances[&1].doing.as_deref(), Some("write"));
        assert_eq!(instances[&0].doing, None);
    }

    #[test]
    fn streamed_tokens_restart_with_each_execution() {
        let mut view = fold(&[
            json!({"type": "node_started", "step": 0, "node": "llm", "task": 0, "attempt": 1}),
        ]);
        view.tokens("llm", None, "Hel");
        view.tokens("llm", None, "lo");
        assert_eq!(view.stats["llm"].streamed, "Hello");
        view.apply(&event(
            5,
            json!({"type": "node_started", "step": 2, "node": "llm", "task": 0, "attempt": 1}),
        ));
        assert_eq!(view.stats["llm"].streamed, "");
    }
}
