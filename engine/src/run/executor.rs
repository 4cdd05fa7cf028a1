//! The super-step executor.
//!
//! A run proceeds in steps. Every task of a step (a node to run, or one
//! fanned-out instance of one) runs concurrently against the state as it
//! was when the step began. When all have finished, their updates are
//! merged through the channels' reducers in task order, which is fixed by
//! the graph and never by which task finished first, so the same graph and
//! input always give the same final state. Then the edges out of each task's
//! node decide the next step's tasks; a node activated several times in one
//! step runs once, and a `join` waits until every node with an edge into it
//! has arrived. The run ends when a step activates nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value};

use super::cancel::CancelHandle;
use super::emitter::{Emitter, EventLog, EventSink, Subscription};
use super::error::RunError;
use super::event::{EdgeReason, EventPayload, TaskRef};
use super::retry::{delay, should_retry};
use crate::compile::{CompiledGraph, NodeIdx};
use crate::ids::{EdgeId, RunId};
use crate::node::{NodeContext, NodeError, NodeInput, NodeOutput};
use crate::state::{ChannelIdx, State, reduce};

/// How a run reports itself.
#[derive(Clone)]
pub struct RunOptions {
    /// How many events a live subscriber may fall behind before it is told
    /// it lagged.
    pub event_capacity: usize,
    /// Keep every event in memory ([`Run::log`]), so lagging subscribers
    /// can catch up. Off, memory stays flat however long the run.
    pub keep_log: bool,
    /// Also hand every event to this sink (e.g. a database writer).
    pub sink: Option<Arc<dyn EventSink>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            event_capacity: 1024,
            keep_log: true,
            sink: None,
        }
    }
}

/// What a finished run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The final state, as a JSON object.
    pub state: Value,
    /// How many super-steps the run took.
    pub steps: u32,
}

/// One run of a compiled graph. Subscribe to its events and take its
/// cancel handle before [`Run::execute`].
pub struct Run {
    graph: Arc<CompiledGraph>,
    run_id: RunId,
    input: Value,
    emitter: Emitter,
    cancel: CancelHandle,
    log: Option<Arc<EventLog>>,
}

struct Task {
    node: NodeIdx,
    arg: Option<Value>,
    instance: Option<u32>,
}

impl Run {
    /// Prepares a run of `graph` with `input`: a JSON object whose keys are
    /// channels, applied through their reducers before the first step.
    pub fn new(
        graph: Arc<CompiledGraph>,
        run_id: RunId,
        input: Value,
        options: RunOptions,
    ) -> Self {
        let log = options.keep_log.then(|| Arc::new(EventLog::new()));
        let emitter = Emitter::new(
            run_id.clone(),
            options.event_capacity,
            log.clone(),
            options.sink,
        );
        Run {
            graph,
            run_id,
            input,
            emitter,
            cancel: CancelHandle::new(),
            log,
        }
    }

    /// A live view of the run's events from now on.
    pub fn subscribe(&self) -> Subscription {
        self.emitter.subscribe()
    }

    /// A handle that cancels the run.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// The run's event log, when [`RunOptions::keep_log`] is on.
    pub fn log(&self) -> Option<Arc<EventLog>> {
        self.log.clone()
    }

    /// Runs the graph to its end. A node with a timeout or a retry policy
    /// needs a tokio runtime with its time driver enabled.
    pub async fn execute(self) -> Result<RunOutput, RunError> {
        let Run {
            graph,
            run_id,
            input,
            emitter,
            cancel,
            log: _,
        } = self;
        emitter.emit(EventPayload::RunStarted {
            graph: graph.name.clone(),
            input: input.clone(),
        });
        let executor = Executor {
            graph: &graph,
            run_id: &run_id,
            emitter: &emitter,
            cancel: &cancel,
        };
        let result = executor.run(input).await;
        emitter.emit(match &result {
            Ok(output) => EventPayload::RunFinished {
                output: output.state.clone(),
                steps: output.steps,
            },
            Err(RunError::Cancelled { step }) => EventPayload::RunCancelled { step: *step },
            Err(error) => EventPayload::RunFailed {
                error: error.to_string(),
                node: match error {
                    RunError::NodeFailed { node, .. }
                    | RunError::BadUpdate { node, .. }
                    | RunError::BadRouting { node, .. } => Some(node.clone()),
                    _ => None,
                },
            },
        });
        result
    }
}

struct Executor<'a> {
    graph: &'a CompiledGraph,
    run_id: &'a RunId,
    emitter: &'a Emitter,
    cancel: &'a CancelHandle,
}

impl Executor<'_> {
    async fn run(&self, input: Value) -> Result<RunOutput, RunError> {
        let mut state = State::new(Arc::clone(&self.graph.layout));
        self.apply_input(&mut state, input)?;

        let mut tasks = vec![Task {
            node: self.graph.entry,
            arg: None,
            instance: None,
        }];
        let mut arrivals: HashMap<NodeIdx, Vec<NodeIdx>> = HashMap::new();
        let window = self.graph.nodes.len().clamp(1, 64);
        let mut recent: VecDeque<Vec<NodeIdx>> = VecDeque::with_capacity(window);
        let mut step = 0;

        while !tasks.is_empty() {
            if step >= self.graph.max_steps {
                return Err(self.step_limit(&recent, &tasks));
            }
            if self.cancel.is_cancelled() {
                return Err(RunError::Cancelled { step });
            }
            self.emitter.emit(EventPayload::StepStarted {
                step,
                tasks: tasks
                    .iter()
                    .map(|task| TaskRef {
                        node: self.graph.nodes[task.node.get()].id.clone(),
                        instance: task.instance,
                    })
                    .collect(),
            });

            let mut outputs = self.run_step(step, &tasks, &state).await?;
            let delta = self.merge(step, &tasks, &mut outputs, &mut state)?;
            self.emitter
                .emit(EventPayload::StepFinished { step, delta });

            if recent.len() == window {
                recent.pop_front();
            }
            recent.push_back(tasks.iter().map(|task| task.node).collect());
            tasks = self.next_tasks(step, &tasks, outputs, &state, &mut arrivals)?;
            step += 1;
        }
        Ok(RunOutput {
            state: state.to_json(),
            steps: step,
        })
    }

    fn apply_input(&self, state: &mut State, input: Value) -> Result<(), RunError> {
        let fields = match input {
            Value::Object(fields) => fields,
            Value::Null => return Ok(()),
            other => {
                return Err(RunError::BadInput {
                    message: format!(
                        "input must be a JSON object of channels, not {}",
                        crate::state::kind_of(&other)
                    ),
                });
            }
        };
        let layout = Arc::clone(&self.graph.layout);
        for (n, (channel, value)) in fields.into_iter().enumerate() {
            let idx = layout.index(&channel).ok_or_else(|| RunError::BadInput {
                message: format!("`{channel}` is not a channel of this graph's state"),
            })?;
            reduce(
                &channel,
                layout.types[idx.0 as usize],
                layout.reducers[idx.0 as usize],
                state.at_mut(idx),
                value,
                &|k| format!("input-{n}-{k}"),
            )
            .map_err(|error| RunError::BadInput {
                message: error.to_string(),
            })?;
        }
        Ok(())
    }

    async fn run_step(
        &self,
        step: u32,
        tasks: &[Task],
        state: &State,
    ) -> Result<Vec<NodeOutput>, RunError> {
        let work = async {
            if let [task] = tasks {
                return self
                    .run_task(step, 0, task, state)
                    .await
                    .map(|output| vec![output]);
            }
            let mut pending: FuturesUnordered<_> =
                tasks
                    .iter()
                    .enumerate()
                    .map(|(i, task)| async move {
                        (i, self.run_task(step, i as u32, task, state).await)
                    })
                    .collect();
            let mut outputs: Vec<Option<NodeOutput>> = Vec::with_capacity(tasks.len());
            outputs.resize_with(tasks.len(), || None);
            while let Some((i, result)) = pending.next().await {
                // A failure ends the step: dropping `pending` cancels the rest.
                outputs[i] = Some(result?);
            }
            Ok(outputs.into_iter().flatten().collect())
        };
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(RunError::Cancelled { step }),
            result = work => result,
        }
    }

    async fn run_task(
        &self,
        step: u32,
        index: u32,
        task: &Task,
        state: &State,
    ) -> Result<NodeOutput, RunError> {
        let node = &self.graph.nodes[task.node.get()];
        let mut attempt = 1;
        loop {
            self.emitter.emit(EventPayload::NodeStarted {
                step,
                node: node.id.clone(),
                task: index,
                attempt,
            });
            let started = Instant::now();
            let ctx = NodeContext {
                run_id: self.run_id,
                node: &node.id,
                step,
                attempt,
                emit: self.emitter,
                cancel: self.cancel.flag(),
            };
            let future = node.runtime.run(NodeInput {
                state,
                arg: task.arg.as_ref(),
                ctx: &ctx,
            });
            let result = match node.timeout {
                Some(limit) => tokio::time::timeout(limit, future)
                    .await
                    .unwrap_or_else(|_| {
                        Err(NodeError::transient(format!(
                            "timed out after {} ms",
                            limit.as_millis()
                        )))
                    }),
                None => future.await,
            };
            match result {
                Ok(output) => {
                    self.emitter.emit(EventPayload::NodeSucceeded {
                        step,
                        node: node.id.clone(),
                        task: index,
                        duration_us: u64::try_from(started.elapsed().as_micros())
                            .unwrap_or(u64::MAX),
                        update: update_json(&output.update),
                        route: output.route.clone(),
                    });
                    return Ok(output);
                }
                Err(error) => {
                    if let Some(policy) = &node.retry
                        && should_retry(policy, attempt, &error)
                    {
                        let wait = delay(policy, attempt, (self.run_id, &node.id, step, index));
                        self.emitter.emit(EventPayload::NodeRetrying {
                            step,
                            node: node.id.clone(),
                            task: index,
                            attempt,
                            delay_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                            error: error.to_string(),
                        });
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                        continue;
                    }
                    self.emitter.emit(EventPayload::NodeFailed {
                        step,
                        node: node.id.clone(),
                        task: index,
                        attempt,
                        error: error.to_string(),
                    });
                    return Err(RunError::NodeFailed {
                        node: node.id.clone(),
                        step,
                        error,
                    });
                }
            }
        }
    }

    /// Applies the step's updates in task order; returns the new values of
    /// the channels that changed.
    fn merge(
        &self,
        step: u32,
        tasks: &[Task],
        outputs: &mut [NodeOutput],
        state: &mut State,
    ) -> Result<Value, RunError> {
        let layout = Arc::clone(&self.graph.layout);
        let mut changed: Vec<ChannelIdx> = Vec::new();
        for (i, output) in outputs.iter_mut().enumerate() {
            let node = &self.graph.nodes[tasks[i].node.get()].id;
            for (n, (channel, value)) in output.update.drain(..).enumerate() {
                let Some(idx) = layout.index(&channel) else {
                    return Err(RunError::BadUpdate {
                        node: node.clone(),
                        step,
                        message: format!("`{channel}` is not a channel of this graph's state"),
                    });
                };
                let slot = idx.0 as usize;
                reduce(
                    &channel,
                    layout.types[slot],
                    layout.reducers[slot],
                    state.at_mut(idx),
                    value,
                    &|k| format!("msg-{step}-{i}-{n}-{k}"),
                )
                .map_err(|error| RunError::bad_update(node, step, error))?;
                if !changed.contains(&idx) {
                    changed.push(idx);
                }
            }
        }
        changed.sort_unstable();
        let mut delta = Map::new();
        for idx in changed {
            delta.insert(layout.name(idx).to_string(), state.at(idx).clone());
        }
        Ok(Value::Object(delta))
    }

    fn next_tasks(
        &self,
        step: u32,
        tasks: &[Task],
        outputs: Vec<NodeOutput>,
        state: &State,
        arrivals: &mut HashMap<NodeIdx, Vec<NodeIdx>>,
    ) -> Result<Vec<Task>, RunError> {
        let mut next = Vec::new();
        let mut planned = vec![false; self.graph.nodes.len()];
        let lookup = |name: &str| state.get(name).cloned();
        for (i, output) in outputs.into_iter().enumerate() {
            let from = tasks[i].node;
            let source = &self.graph.nodes[from.get()];
            let mut activate = |to: NodeIdx, edge: Option<&EdgeId>, why: EdgeReason| {
                self.emitter.emit(EventPayload::EdgeTaken {
                    step,
                    from: source.id.clone(),
                    to: self.graph.nodes[to.get()].id.clone(),
                    edge: edge.cloned(),
                    why,
                });
                if let Some(sources) = &self.graph.nodes[to.get()].join_sources {
                    let arrived = arrivals.entry(to).or_default();
                    if !arrived.contains(&from) {
                        arrived.push(from);
                    }
                    if !sources.iter().all(|s| arrived.contains(s)) {
                        return;
                    }
                    arrivals.remove(&to);
                }
                if !planned[to.get()] {
                    planned[to.get()] = true;
                    next.push(Task {
                        node: to,
                        arg: None,
                        instance: None,
                    });
                }
            };

            if output.goto.is_empty() {
                let mut route_taken = false;
                for edge in &source.out {
                    if let Some(route) = &edge.route {
                        if output.route.as_deref() != Some(route.as_str()) {
                            continue;
                        }
                        route_taken = true;
                    }
                    if let Some(condition) = &edge.condition {
                        let holds = condition.is_true(&lookup).map_err(|error| {
                            RunError::ConditionFailed {
                                edge: edge.id.clone(),
                                step,
                                message: error.message,
                            }
                        })?;
                        if !holds {
                            continue;
                        }
                    }
                    let why = match (&edge.route, &edge.condition) {
                        (Some(route), _) => EdgeReason::Route {
                            route: route.clone(),
                        },
                        (None, Some(_)) => EdgeReason::Condition,
                        (None, None) => EdgeReason::Static,
                    };
                    activate(edge.to, Some(&edge.id), why);
                }
                if let Some(route) = &output.route
                    && !route_taken
                {
                    return Err(RunError::BadRouting {
                        node: source.id.clone(),
                        step,
                        message: format!(
                            "it chose route `{route}`, which none of its edges carries"
                        ),
                    });
                }
            } else {
                for target in &output.goto {
                    let to = self
                        .graph
                        .node(target)
                        .ok_or_else(|| RunError::BadRouting {
                            node: source.id.clone(),
                            step,
                            message: format!(
                                "it went to `{target}`, which is not a node of this graph"
                            ),
                        })?;
                    activate(to, None, EdgeReason::Goto);
                }
            }

            for (k, send) in output.sends.into_iter().enumerate() {
                let to = self
                    .graph
                    .node(&send.node)
                    .ok_or_else(|| RunError::BadRouting {
                        node: source.id.clone(),
                        step,
                        message: format!(
                            "it sent an item to `{}`, which is not a node of this graph",
                            send.node
                        ),
                    })?;
                self.emitter.emit(EventPayload::EdgeTaken {
                    step,
                    from: source.id.clone(),
                    to: send.node,
                    edge: None,
                    why: EdgeReason::Send,
                });
                next.push(Task {
                    node: to,
                    arg: Some(send.arg),
                    instance: Some(u32::try_from(k).unwrap_or(u32::MAX)),
                });
            }
        }
        Ok(next)
    }

    fn step_limit(&self, recent: &VecDeque<Vec<NodeIdx>>, pending: &[Task]) -> RunError {
        let mut nodes: Vec<NodeIdx> = recent
            .iter()
            .flatten()
            .copied()
            .chain(pending.iter().map(|task| task.node))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        RunError::StepLimit {
            limit: self.graph.max_steps,
            loop_nodes: nodes
                .into_iter()
                .map(|idx| self.graph.nodes[idx.get()].id.clone())
                .collect(),
        }
    }
}

fn update_json(update: &[(String, Value)]) -> Value {
    let mut map = Map::new();
    for (channel, value) in update {
        map.insert(channel.clone(), value.clone());
    }
    Value::Object(map)
}
