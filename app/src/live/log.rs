//! A run's events as the page received them, in `seq` order, and what the
//! run panels read from them: the view at any step (replay), the state
//! after each step, and each node execution (the timeline). Streamed
//! tokens are kept apart from the other events: they are many, and the
//! trace counts what happened, not how it was typed.

use heddle_engine::ids::RunId;
use heddle_engine::run::{Event, EventPayload, Hop, RunStatus, TaskRef};
use serde_json::{Map, Value};

use super::view::RunView;

/// Streamed text of a node, as the socket coalesces it.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenChunk {
    pub node: String,
    /// The fanned-out instance of the node that streamed it, if any.
    pub instance: Option<u32>,
    pub text: String,
    /// The `seq` of the chunk's last token event.
    pub last_seq: u64,
    /// Where it was streamed, when inside a child graph (see `Event::path`).
    pub within: Vec<Hop>,
}

impl TokenChunk {
    /// The text of a token event inside a child graph, kept as streamed
    /// text rather than as an event of the log.
    fn nested(event: &Event) -> Option<TokenChunk> {
        match &event.payload {
            EventPayload::Custom {
                node,
                instance,
                name,
                data,
            } if name == "token" && event.is_nested() => Some(TokenChunk {
                node: node.to_string(),
                instance: *instance,
                text: data["text"].as_str().unwrap_or_default().to_string(),
                last_seq: event.seq,
                within: event.path.clone(),
            }),
            _ => None,
        }
    }
}

/// Every event of one run received so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunLog {
    /// `None` before a run is watched.
    pub run_id: Option<RunId>,
    /// Every event but tokens, in `seq` order.
    pub events: Vec<Event>,
    pub tokens: Vec<TokenChunk>,
    /// The `seq` the next event must have; earlier ones are duplicates.
    pub next_seq: u64,
    /// The state of the stored checkpoint the run's first event names, when
    /// that event holds the changes from it rather than the whole state
    /// (`EventPayload::base_checkpoint`; the server sends it first).
    pub base: Option<Map<String, Value>>,
}

/// How a node execution ended (or that it has not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Running,
    Succeeded,
    /// The attempt failed and another followed.
    Retried,
    Failed,
    Interrupted,
    /// The run ended (cancelled, failed elsewhere) while it ran.
    Stopped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Succeeded => "succeeded",
            Outcome::Retried => "retried",
            Outcome::Failed => "failed",
            Outcome::Interrupted => "interrupted",
            Outcome::Stopped => "stopped",
        }
    }
}

/// One attempt of one node in one step: a bar of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Execution {
    pub node: String,
    pub step: u32,
    pub task: u32,
    pub attempt: u32,
    pub start_us: u64,
    pub end_us: Option<u64>,
    pub outcome: Outcome,
    pub error: Option<String>,
    /// Where it ran, when inside a node's child graph (a subgraph, a
    /// sub-agent): the path of its events. Empty for the run's own nodes.
    pub within: Vec<Hop>,
    /// Which fanned-out instance it was, when a fan-out started it.
    pub instance: Option<u32>,
    /// That instance's item in a few words, when the run said.
    pub item: Option<String>,
    /// What it wrote to the state.
    pub update: Option<Value>,
    /// The route it chose.
    pub route: Option<String>,
    /// What it asked its model, when it called one.
    pub asked: Option<heddle_engine::model::ModelInput>,
    /// How a router came to its route: the model's reply, and whether the
    /// route is its `otherwise` (the reply named none).
    pub route_taken: Option<heddle_engine::kinds::RouteTaken>,
}

/// The execution of `node` (its `instance`, at `path`) still running: the
/// one a custom event it sends is about.
fn running<'a>(
    executions: &'a mut [Execution],
    node: &str,
    instance: Option<u32>,
    path: &[Hop],
) -> Option<&'a mut Execution> {
    executions.iter_mut().rev().find(|execution| {
        execution.outcome == Outcome::Running
            && execution.node == node
            && execution.instance == instance
            && execution.within == path
    })
}

/// The step an event belongs to, when it belongs to one: for one inside a
/// child graph, the step of the node running that graph.
pub fn step_of(event: &Event) -> Option<u32> {
    if let Some(outer) = event.path.first() {
        return Some(outer.step);
    }
    match &event.payload {
        EventPayload::StepStarted { step, .. }
        | EventPayload::StepFinished { step, .. }
        | EventPayload::NodeStarted { step, .. }
        | EventPayload::NodeSucceeded { step, .. }
        | EventPayload::NodeFailed { step, .. }
        | EventPayload::NodeRetrying { step, .. }
        | EventPayload::EdgeTaken { step, .. }
        | EventPayload::RunInterrupted { step, .. }
        | EventPayload::RunCancelled { step }
        | EventPayload::RunResumed { step, .. } => Some(*step),
        _ => None,
    }
}

/// The run's status after `event`, if the event changes it.
pub fn status_after(event: &Event) -> Option<RunStatus> {
    match event.payload {
        EventPayload::RunStarted { .. } | EventPayload::RunResumed { .. } => {
            Some(RunStatus::Running)
        }
        EventPayload::RunInterrupted { .. } => Some(RunStatus::Interrupted),
        EventPayload::RunFinished { .. } => Some(RunStatus::Finished),
        EventPayload::RunFailed { .. } => Some(RunStatus::Failed),
        EventPayload::RunCancelled { .. } => Some(RunStatus::Cancelled),
        _ => None,
    }
}

impl RunLog {
    pub fn new(run_id: &RunId) -> RunLog {
        RunLog {
            run_id: Some(run_id.clone()),
            ..RunLog::default()
        }
    }

    /// Adds an event; `false` for one already here (a reconnect's overlap).
    /// A child graph's streamed token goes with the streamed text.
    pub fn push(&mut self, event: Event) -> bool {
        if event.seq < self.next_seq {
            return false;
        }
        self.next_seq = event.seq + 1;
        match TokenChunk::nested(&event) {
            Some(chunk) => self.tokens.push(chunk),
            None => self.events.push(event),
        }
        true
    }

    /// Adds streamed text; `false` for text already here.
    pub fn push_tokens(&mut self, chunk: TokenChunk) -> bool {
        if chunk.last_seq < self.next_seq {
            return false;
        }
        self.next_seq = chunk.last_seq + 1;
        self.tokens.push(chunk);
        true
    }

    /// The lowest step any event names (a fork starts where it branched).
    pub fn first_step(&self) -> Option<u32> {
        self.events.iter().filter_map(step_of).min()
    }

    /// The highest step any event names.
    pub fn last_step(&self) -> Option<u32> {
        self.events.iter().filter_map(step_of).max()
    }

    /// The run's status as its events tell it.
    pub fn status(&self) -> Option<RunStatus> {
        self.view_at(None).status
    }

    /// The run as it stood at the end of `step` (the whole run for `None`
    /// or a step at or past the last).
    pub fn view_at(&self, step: Option<u32>) -> RunView {
        let mut view = RunView {
            run_id: self.run_id.clone(),
            status: Some(RunStatus::Running),
            ..RunView::default()
        };
        let until = step.filter(|step| Some(*step) < self.last_step());
        let mut tokens = self.tokens.iter().peekable();
        for event in &self.events {
            if let (Some(until), Some(step)) = (until, step_of(event))
                && step > until
            {
                break;
            }
            while let Some(chunk) = tokens.next_if(|chunk| chunk.last_seq < event.seq) {
                view.streamed(&chunk.within, &chunk.node, chunk.instance, &chunk.text);
            }
            view.apply(event);
        }
        if until.is_none() {
            for chunk in tokens {
                view.streamed(&chunk.within, &chunk.node, chunk.instance, &chunk.text);
            }
        }
        view
    }

    /// The state the run started from: its first event's, whole or as
    /// changes from [`RunLog::base`] (older logs only have the input).
    fn initial_state(&self) -> Map<String, Value> {
        self.events
            .iter()
            .find_map(|event| event.payload.start_state(self.base.as_ref()))
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    /// The checkpoint whose state the run's first event builds on, when it
    /// does (see [`RunLog::base`]).
    pub fn base_checkpoint(&self) -> Option<String> {
        let first = self.events.first().filter(|event| event.seq == 0)?;
        first.payload.base_checkpoint().map(ToString::to_string)
    }

    /// The state after the run's last step (its final state once it ended).
    pub fn final_state(&self) -> Map<String, Value> {
        let mut state = self.initial_state();
        for event in &self.events {
            if let Some(Err(_)) = event.payload.apply_step(&mut state) {
                break;
            }
        }
        state
    }

    /// The state after each finished step, in order, rebuilt from the
    /// state the run started from and each step's changes by the engine's
    /// own code (`EventPayload::apply_step`), with the channels each step
    /// changed. A step whose changes do not apply (a damaged log) ends the
    /// list there.
    pub fn states(&self) -> Vec<(u32, Map<String, Value>, Vec<String>)> {
        let mut state = self.initial_state();
        let mut states = Vec::new();
        for event in &self.events {
            let EventPayload::StepFinished { step, .. } = &event.payload else {
                continue;
            };
            match event.payload.apply_step(&mut state) {
                Some(Ok(changed)) => states.push((*step, state.clone(), changed)),
                _ => break,
            }
        }
        states
    }

    /// The state after `step` (before any step for `None`), with the
    /// channels that step changed.
    pub fn state_after(&self, step: Option<u32>) -> (Map<String, Value>, Vec<String>) {
        let mut state = self.initial_state();
        let mut changed = Vec::new();
        let Some(step) = step else {
            return (state, changed);
        };
        for event in &self.events {
            let EventPayload::StepFinished { step: at, .. } = &event.payload else {
                continue;
            };
            if *at > step {
                break;
            }
            match event.payload.apply_step(&mut state) {
                Some(Ok(channels)) if *at == step => changed = channels,
                Some(Ok(_)) => {}
                _ => break,
            }
        }
        (state, changed)
    }

    /// What each step's model calls used, by step.
    pub fn usage_by_step(
        &self,
    ) -> std::collections::BTreeMap<u32, heddle_engine::usage::UsageTotals> {
        let mut by_step: std::collections::BTreeMap<u32, heddle_engine::usage::UsageTotals> =
            Default::default();
        let mut step = 0;
        for event in &self.events {
            match &event.payload {
                EventPayload::StepStarted { step: at, .. } if !event.is_nested() => step = *at,
                EventPayload::Custom { name, data, .. } if name == "usage" => {
                    by_step.entry(step).or_default().add_event(data);
                }
                _ => {}
            }
        }
        by_step
    }

    /// Every node execution, in the order they started.
    pub fn executions(&self) -> Vec<Execution> {
        let mut executions: Vec<Execution> = Vec::new();
        let open = |executions: &mut Vec<Execution>, node: &str, task: u32, within: &[Hop]| {
            executions.iter().rposition(|execution| {
                execution.outcome == Outcome::Running
                    && execution.node == node
                    && execution.task == task
                    && execution.within == within
            })
        };
        let close_all = |executions: &mut Vec<Execution>, outcome: Outcome, at: u64| {
            for execution in executions.iter_mut() {
                if execution.outcome == Outcome::Running {
                    execution.outcome = outcome;
                    execution.end_us = Some(at);
                }
            }
        };
        // Each graph's current step's tasks (the run's, and each child
        // graph's by its path): which instance a task is.
        let mut tasks: Vec<(&[Hop], &[TaskRef])> = Vec::new();
        for event in &self.events {
            let at = event.at_us;
            match &event.payload {
                EventPayload::StepStarted { tasks: started, .. } => {
                    match tasks
                        .iter_mut()
                        .find(|(path, _)| *path == event.path.as_slice())
                    {
                        Some(known) => known.1 = started,
                        None => tasks.push((&event.path, started)),
                    }
                }
                EventPayload::NodeStarted {
                    step,
                    node,
                    task,
                    attempt,
                } => {
                    let started = tasks
                        .iter()
                        .find(|(path, _)| *path == event.path.as_slice())
                        .and_then(|(_, tasks)| tasks.get(*task as usize));
                    executions.push(Execution {
                        instance: started.and_then(|task| task.instance),
                        item: started
                            .and_then(|task| task.item.clone())
                            .filter(|item| !item.is_empty()),
                        node: node.to_string(),
                        step: *step,
                        task: *task,
                        attempt: *attempt,
                        start_us: at,
                        end_us: None,
                        outcome: Outcome::Running,
                        error: None,
                        within: event.path.clone(),
                        update: None,
                        route: None,
                        asked: None,
                        route_taken: None,
                    });
                }
                EventPayload::NodeSucceeded {
                    node,
                    task,
                    update,
                    route,
                    ..
                } => {
                    if let Some(i) = open(&mut executions, node.as_str(), *task, &event.path) {
                        let execution = &mut executions[i];
                        execution.outcome = Outcome::Succeeded;
                        execution.end_us = Some(at);
                        execution.update = Some(update.clone());
                        execution.route = route.clone();
                    }
                }
                EventPayload::NodeRetrying {
                    node, task, error, ..
                }
                | EventPayload::NodeFailed {
                    node, task, error, ..
                } => {
                    if let Some(i) = open(&mut executions, node.as_str(), *task, &event.path) {
                        let execution = &mut executions[i];
                        execution.outcome = match event.payload {
                            EventPayload::NodeRetrying { .. } => Outcome::Retried,
                            _ => Outcome::Failed,
                        };
                        execution.end_us = Some(at);
                        execution.error = Some(error.clone());
                    }
                }
                EventPayload::Custom {
                    node,
                    instance,
                    name,
                    data,
                } if name == heddle_engine::model::MODEL_INPUT_EVENT => {
                    let running = running(&mut executions, node.as_str(), *instance, &event.path);
                    if let Some(execution) = running
                        && execution.asked.is_none()
                    {
                        execution.asked = serde_json::from_value(data.clone()).ok();
                    }
                }
                EventPayload::Custom {
                    node,
                    instance,
                    name,
                    data,
                } if name == heddle_engine::kinds::ROUTE_EVENT => {
                    let running = running(&mut executions, node.as_str(), *instance, &event.path);
                    if let Some(execution) = running {
                        execution.route_taken = serde_json::from_value(data.clone()).ok();
                    }
                }
                EventPayload::RunInterrupted { .. } => {
                    close_all(&mut executions, Outcome::Interrupted, at)
                }
                EventPayload::RunFinished { .. }
                | EventPayload::RunFailed { .. }
                | EventPayload::RunCancelled { .. } => {
                    close_all(&mut executions, Outcome::Stopped, at)
                }
                _ => {}
            }
        }
        executions
    }

    /// When the run's first event happened, in microseconds.
    pub fn started_us(&self) -> Option<u64> {
        self.events.first().map(|event| event.at_us)
    }

    /// When its last event happened.
    pub fn last_us(&self) -> Option<u64> {
        self.events.last().map(|event| event.at_us)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use heddle_engine::run::{Event, RunStatus};
    use serde_json::{Value, json};

    use super::{Outcome, RunLog, TokenChunk};

    pub(crate) fn log(bodies: &[Value]) -> RunLog {
        let mut log = RunLog::new(&"run-1".into());
        for (seq, body) in bodies.iter().enumerate() {
            let mut body = body.clone();
            body["run_id"] = json!("run-1");
            body["seq"] = json!(seq);
            body["at_us"] = json!(1_000_000 + seq as u64 * 1000);
            let event: Event = serde_json::from_value(body).unwrap();
            assert!(log.push(event));
        }
        log
    }

    pub(crate) fn two_steps() -> RunLog {
        log(&[
            json!({"type": "run_started", "graph": "g", "input": {"n": 1}, "state": {"n": 1, "out": ""}}),
            json!({"type": "step_started", "step": 0, "tasks": [{"node": "a"}]}),
            json!({"type": "node_started", "step": 0, "node": "a", "task": 0, "attempt": 1}),
            json!({"type": "node_succeeded", "step": 0, "node": "a", "task": 0, "duration_us": 900, "update": {"n": 2}}),
            json!({"type": "step_finished", "step": 0, "delta": {"n": 2}}),
            json!({"type": "edge_taken", "step": 0, "from": "a", "to": "b", "reason": "static"}),
            json!({"type": "step_started", "step": 1, "tasks": [{"node": "b"}]}),
            json!({"type": "node_started", "step": 1, "node": "b", "task": 0, "attempt": 1}),
            json!({"type": "node_retrying", "step": 1, "node": "b", "task": 0, "attempt": 1, "delay_ms": 5, "error": "flaky"}),
            json!({"type": "node_started", "step": 1, "node": "b", "task": 0, "attempt": 2}),
            json!({"type": "node_succeeded", "step": 1, "node": "b", "task": 0, "duration_us": 700, "update": {"out": "done"}}),
            json!({"type": "step_finished", "step": 1, "delta": {"out": "done"}}),
            json!({"type": "run_finished", "output": {"n": 2, "out": "done"}, "steps": 2}),
        ])
    }

    #[test]
    fn a_replay_stops_at_its_step_and_the_end_shows_everything() {
        let log = two_steps();
        let at_zero = log.view_at(Some(0));
        assert_eq!(at_zero.state_of("a"), "succeeded");
        assert_eq!(at_zero.state_of("b"), "idle");
        assert_eq!(at_zero.status, Some(RunStatus::Running));
        let end = log.view_at(Some(1));
        assert_eq!(end, log.view_at(None));
        assert_eq!(end.status, Some(RunStatus::Finished));
        assert_eq!(log.status(), Some(RunStatus::Finished));
    }

    #[test]
    fn the_state_after_each_step_with_what_it_changed() {
        let log = two_steps();
        assert_eq!((log.first_step(), log.last_step()), (Some(0), Some(1)));
        let (before, changed) = log.state_after(None);
        assert_eq!(before["n"], 1);
        assert!(changed.is_empty());
        let (after_zero, changed) = log.state_after(Some(0));
        assert_eq!(
            (after_zero["n"].clone(), after_zero["out"].clone()),
            (json!(2), json!(""))
        );
        assert_eq!(changed, vec!["n".to_string()]);
        let (after_one, changed) = log.state_after(Some(1));
        assert_eq!(after_one["out"], "done");
        assert_eq!(changed, vec!["out".to_string()]);
    }

    #[test]
    fn a_log_of_changes_rebuilds_each_step_as_a_log_of_values_does() {
        let log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {},
                   "state": {"messages": [{"role": "user", "content": "hi"}], "n": 0}}),
            json!({"type": "step_finished", "step": 0, "changes": {
                "messages": {"op": "append", "items": [{"role": "assistant", "content": "yo"}]},
                "n": {"op": "set", "value": 1}}}),
            json!({"type": "step_finished", "step": 1, "changes": {
                "messages": {"op": "append", "items": [{"role": "user", "content": "again"}]}}}),
        ]);
        let (after, changed) = log.state_after(Some(1));
        let contents: Vec<&str> = after["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|message| message["content"].as_str().unwrap())
            .collect();
        assert_eq!(contents, ["hi", "yo", "again"]);
        assert_eq!(changed, vec!["messages".to_string()]);
        let states = log.states();
        assert_eq!(states.len(), 2);
        assert_eq!(states[0].1["n"], 1);
        assert_eq!(states[1].1, after);
        assert_eq!(log.final_state(), after);
    }

    #[test]
    fn a_run_that_goes_on_with_a_thread_builds_on_its_base() {
        let mut log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {}, "from": "r0/9",
                   "changes": {"messages": {"op": "append", "items": [{"role": "user", "content": "again"}]},
                               "turns": {"op": "set", "value": 0}}}),
            json!({"type": "step_finished", "step": 0, "changes": {
                "messages": {"op": "append", "items": [{"role": "assistant", "content": "once more"}]}}}),
            json!({"type": "run_finished", "steps": 1}),
        ]);
        assert_eq!(log.base_checkpoint().as_deref(), Some("r0/9"));
        // Until the base arrives, the changes alone cannot be applied.
        assert!(log.state_after(None).0.is_empty());
        log.base = Some(
            json!({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "turns": 3})
                .as_object()
                .unwrap()
                .clone(),
        );
        let contents: Vec<String> = log.final_state()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(contents, ["hi", "yo", "again", "once more"]);
        assert_eq!(log.state_after(None).0["turns"], 0);
    }

    #[test]
    fn executions_mark_retries_and_their_outputs() {
        let executions = two_steps().executions();
        let outcomes: Vec<_> = executions
            .iter()
            .map(|e| (e.node.as_str(), e.attempt, e.outcome))
            .collect();
        assert_eq!(
            outcomes,
            vec![
                ("a", 1, Outcome::Succeeded),
                ("b", 1, Outcome::Retried),
                ("b", 2, Outcome::Succeeded)
            ]
        );
        assert_eq!(executions[1].error.as_deref(), Some("flaky"));
        assert_eq!(executions[2].update, Some(json!({"out": "done"})));
        assert!(executions.iter().all(|e| e.end_us >= Some(e.start_us)));
    }

    #[test]
    fn work_inside_a_child_graph_belongs_to_the_step_and_lane_of_its_node() {
        let inside = |body: Value| {
            let mut body = body;
            body["path"] = json!([{"node": "sub", "step": 1}]);
            body
        };
        let log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {}, "state": {}}),
            json!({"type": "step_started", "step": 0, "tasks": [{"node": "a"}]}),
            json!({"type": "node_started", "step": 0, "node": "a", "task": 0, "attempt": 1}),
            json!({"type": "node_succeeded", "step": 0, "node": "a", "task": 0, "duration_us": 9, "update": {}}),
            json!({"type": "step_started", "step": 1, "tasks": [{"node": "sub"}]}),
            json!({"type": "node_started", "step": 1, "node": "sub", "task": 0, "attempt": 1}),
            // The child's own steps 0 to 5, and a node named like the run's `a`.
            inside(json!({"type": "step_started", "step": 5, "tasks": [{"node": "a"}]})),
            inside(
                json!({"type": "node_started", "step": 5, "node": "a", "task": 0, "attempt": 1}),
            ),
            inside(
                json!({"type": "custom", "node": "a", "name": "usage", "data": {"prompt_tokens": 3, "completion_tokens": 4}}),
            ),
            inside(
                json!({"type": "custom", "node": "a", "name": "token", "data": {"text": "Forty"}}),
            ),
            inside(
                json!({"type": "node_succeeded", "step": 5, "node": "a", "task": 0, "duration_us": 5, "update": {}}),
            ),
            json!({"type": "node_succeeded", "step": 1, "node": "sub", "task": 0, "duration_us": 50, "update": {}}),
            json!({"type": "run_finished", "output": {}, "steps": 2}),
        ]);
        assert_eq!(
            log.last_step(),
            Some(1),
            "the child's steps are not the run's"
        );
        assert_eq!(log.usage_by_step()[&1].calls, 1, "at the step of `sub`");
        let executions = log.executions();
        let own: Vec<_> = executions.iter().filter(|e| e.within.is_empty()).collect();
        let nested: Vec<_> = executions.iter().filter(|e| !e.within.is_empty()).collect();
        assert_eq!(own.len(), 2);
        assert_eq!(nested.len(), 1);
        assert_eq!(nested[0].outcome, Outcome::Succeeded);
        assert_eq!(own[0].node, "a");
        assert_eq!(own[0].outcome, Outcome::Succeeded);
        // Replaying to step 0 shows none of the child's work.
        assert_eq!(log.view_at(Some(0)).usage.calls, 0);
        // Its streamed text is kept with the streamed text, not as an
        // event of the log, and shows inside `sub`, not on the run's `a`.
        assert!(log.events.iter().all(|event| {
            !matches!(&event.payload, heddle_engine::run::EventPayload::Custom { name, .. } if name == "token")
        }));
        let end = log.view_at(None);
        assert_eq!(end.stats["sub"].inside.streamed, "Forty");
        assert!(end.stats["a"].streamed.is_empty());
    }

    #[test]
    fn each_execution_knows_its_fanned_out_instance() {
        let log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {}, "state": {}}),
            json!({"type": "step_started", "step": 1, "tasks": [
                {"node": "join"}, {"node": "research", "instance": 0, "item": "heat pumps"},
                {"node": "research", "instance": 1, "item": "cost"}]}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 2, "attempt": 1}),
            json!({"type": "node_started", "step": 1, "node": "research", "task": 1, "attempt": 1}),
            json!({"type": "node_started", "step": 1, "node": "join", "task": 0, "attempt": 1}),
            // Inside a child graph, tasks are that graph's: its own fan-out.
            json!({"type": "step_started", "step": 0, "path": [{"node": "join", "step": 1}],
                   "tasks": [{"node": "w", "instance": 4}]}),
            json!({"type": "node_started", "step": 0, "path": [{"node": "join", "step": 1}],
                   "node": "w", "task": 0, "attempt": 1}),
            json!({"type": "node_succeeded", "step": 1, "node": "research", "task": 2, "duration_us": 5, "update": {}}),
        ]);
        let executions = log.executions();
        let seen: Vec<(&str, Option<u32>, Option<&str>, Outcome)> = executions
            .iter()
            .map(|e| (e.node.as_str(), e.instance, e.item.as_deref(), e.outcome))
            .collect();
        assert_eq!(
            seen,
            [
                ("research", Some(1), Some("cost"), Outcome::Succeeded),
                ("research", Some(0), Some("heat pumps"), Outcome::Running),
                ("join", None, None, Outcome::Running),
                ("w", Some(4), None, Outcome::Running),
            ]
        );
    }

    #[test]
    fn a_routers_execution_knows_whether_its_route_was_its_otherwise() {
        let log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {}, "state": {}}),
            json!({"type": "step_started", "step": 0, "tasks": [{"node": "triage"}]}),
            json!({"type": "node_started", "step": 0, "node": "triage", "task": 0, "attempt": 1}),
            json!({"type": "custom", "node": "triage", "name": "route",
                   "data": {"reply": "hello?", "route": "other", "otherwise": true}}),
            json!({"type": "node_succeeded", "step": 0, "node": "triage", "task": 0, "duration_us": 5,
                   "update": {}, "route": "other"}),
            json!({"type": "step_started", "step": 1, "tasks": [{"node": "triage"}]}),
            json!({"type": "node_started", "step": 1, "node": "triage", "task": 0, "attempt": 1}),
            // A run from before `otherwise` was told claims nothing.
            json!({"type": "custom", "node": "triage", "name": "route",
                   "data": {"reply": "billing", "route": "billing"}}),
        ]);
        let taken: Vec<_> = log
            .executions()
            .into_iter()
            .map(|e| e.route_taken.map(|t| (t.reply, t.otherwise)))
            .collect();
        assert_eq!(
            taken,
            [
                Some(("hello?".to_string(), true)),
                Some(("billing".to_string(), false))
            ]
        );
    }

    #[test]
    fn each_execution_knows_what_it_asked_its_model() {
        let asked = |system: &str| json!({"system": system, "earlier": 2, "last": {"role": "user", "text": "charged twice"}});
        let log = log(&[
            json!({"type": "run_started", "graph": "g", "input": {}, "state": {}}),
            json!({"type": "step_started", "step": 0, "tasks": [
                {"node": "answer", "instance": 0}, {"node": "answer", "instance": 1}]}),
            json!({"type": "node_started", "step": 0, "node": "answer", "task": 0, "attempt": 1}),
            json!({"type": "node_started", "step": 0, "node": "answer", "task": 1, "attempt": 1}),
            // Each instance's own; a second report in one execution (a
            // retried reply) does not replace the first.
            json!({"type": "custom", "node": "answer", "instance": 1, "name": "model_input", "data": asked("second")}),
            json!({"type": "custom", "node": "answer", "instance": 0, "name": "model_input", "data": asked("first")}),
            json!({"type": "custom", "node": "answer", "instance": 0, "name": "model_input", "data": asked("again")}),
            // Nonsense is no input, not a failure.
            json!({"type": "custom", "node": "answer", "name": "model_input", "data": 7}),
            json!({"type": "node_succeeded", "step": 0, "node": "answer", "task": 0, "duration_us": 5, "update": {}}),
        ]);
        let executions = log.executions();
        let systems: Vec<Option<&str>> = executions
            .iter()
            .map(|e| e.asked.as_ref().map(|asked| asked.system.as_str()))
            .collect();
        assert_eq!(systems, [Some("first"), Some("second")]);
        let asked = executions[0].asked.as_ref().expect("asked");
        assert_eq!(asked.earlier, 2);
        assert_eq!(
            asked.last.as_ref().map(|last| last.text.as_str()),
            Some("charged twice")
        );
    }

    #[test]
    fn duplicates_from_a_reconnect_are_dropped_and_tokens_replay_in_place() {
        let mut log = two_steps();
        let again = log.events[3].clone();
        assert!(!log.push(again), "an event already here");
        let count = log.events.len();
        assert!(log.push_tokens(TokenChunk {
            node: "b".into(),
            instance: None,
            text: "late".into(),
            last_seq: 20,
            within: Vec::new(),
        }));
        assert!(!log.push_tokens(TokenChunk {
            node: "b".into(),
            instance: None,
            text: "late".into(),
            last_seq: 20,
            within: Vec::new(),
        }));
        assert_eq!(log.events.len(), count);
        assert_eq!(log.view_at(None).stats["b"].streamed, "late");
        assert_eq!(log.view_at(Some(0)).stats.get("b"), None);
    }
}
