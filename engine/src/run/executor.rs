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
//!
//! A durable run (see [`super::Durable`]) also saves a checkpoint after each
//! step, and can pause: a node that interrupts, or a breakpoint, ends the
//! run `Interrupted` with a checkpoint to resume from.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value};

use super::cancel::CancelHandle;
use super::checkpoint::{
    Checkpoint, CompletedTask, Interrupt, InterruptWhen, PendingTask, RunStatus,
};
use super::emitter::{Emitter, EventLog, EventSink, Subscription, now_us};
use super::error::RunError;
use super::event::{EdgeReason, EventPayload, TaskRef};
use super::persist::Persistence;
use super::retry::{delay, should_retry};
use crate::compile::{CompiledGraph, NodeIdx};
use crate::ids::{CheckpointId, EdgeId, NodeId, RunId, ThreadId};
use crate::node::{NodeContext, NodeError, NodeInput, NodeOutput};
use crate::state::changes::{Change, Changes};
use crate::state::{ChannelIdx, State};
use crate::usage::Meter;

/// How a run reports itself, and where it pauses.
#[derive(Clone)]
pub struct RunOptions {
    /// How many events a live subscriber may fall behind before it is told
    /// it lagged.
    pub event_capacity: usize,
    /// Keep every event in memory ([`Run::log`]), so lagging subscribers
    /// can catch up. Off, memory stays flat however long the run.
    pub keep_log: bool,
    /// Also hand every event to this sink.
    pub sink: Option<Arc<dyn EventSink>>,
    /// Pause before these nodes run, besides those the graph marks.
    pub interrupt_before: Vec<NodeId>,
    /// Pause after these nodes' steps, besides those the graph marks.
    pub interrupt_after: Vec<NodeId>,
    /// How long the run may be active, and how much of that it used in
    /// earlier executions (before a pause or a restart): past it, the run
    /// fails naming the ceiling `max_run_active_secs`.
    pub max_active: Option<ActiveTime>,
}

/// A run's allowance of active time (see [`RunOptions::max_active`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveTime {
    /// How long a run may be active in all.
    pub total: std::time::Duration,
    /// How long it already was.
    pub used: std::time::Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            event_capacity: 1024,
            keep_log: true,
            sink: None,
            interrupt_before: Vec::new(),
            interrupt_after: Vec::new(),
            max_active: None,
        }
    }
}

/// What a run produced when it stopped without error.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The state, as a JSON object: final, or as it stood at the pause.
    pub state: Value,
    /// How many super-steps the run has taken.
    pub steps: u32,
    /// Why the run paused; empty when it finished.
    pub interrupts: Vec<Interrupt>,
}

impl RunOutput {
    /// Whether the run paused rather than finished.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty()
    }
}

/// Where a run begins.
pub(crate) enum Start {
    /// A new run: channel defaults, then `carried` (thread-scoped values
    /// from the thread's previous run), then the input.
    Fresh {
        input: Value,
        carried: Map<String, Value>,
        /// The thread's checkpoint the run goes on from, with its state: the
        /// run's first event then says how the run's state differs from it
        /// rather than holding the thread's whole state.
        base: Option<(CheckpointId, Map<String, Value>)>,
    },
    /// From a checkpoint; `resume` is the value for the interrupted tasks.
    From {
        checkpoint: Box<Checkpoint>,
        resume: Option<Value>,
        /// Whether this continues the same run (resume, recovery) or
        /// starts a branch (re-run, fork): a branch re-runs the whole step.
        same_run: bool,
        /// The values a fork set over the stored checkpoint's (already in
        /// `checkpoint`'s state), for the run's first event.
        edits: Map<String, Value>,
    },
}

/// One run of a compiled graph. Subscribe to its events and take its
/// cancel handle before [`Run::execute`].
pub struct Run {
    graph: Arc<CompiledGraph>,
    run_id: RunId,
    start: Start,
    emitter: Emitter,
    cancel: CancelHandle,
    log: Option<Arc<EventLog>>,
    breakpoints: Breakpoints,
    persistence: Option<Persistence>,
    meter: Arc<Meter>,
    max_active: Option<ActiveTime>,
}

struct Breakpoints {
    before: Vec<bool>,
    after: Vec<bool>,
    any: bool,
}

#[derive(Clone)]
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
        Run::prepare(
            graph,
            run_id,
            Start::Fresh {
                input,
                carried: Map::new(),
                base: None,
            },
            options,
            None,
        )
    }

    pub(crate) fn prepare(
        graph: Arc<CompiledGraph>,
        run_id: RunId,
        start: Start,
        options: RunOptions,
        persistence: Option<Persistence>,
    ) -> Self {
        let log = options.keep_log.then(|| Arc::new(EventLog::new()));
        let mut emitter = Emitter::new(
            run_id.clone(),
            options.event_capacity,
            log.clone(),
            options.sink,
        );
        if persistence.is_some() {
            let seq = match &start {
                Start::From {
                    checkpoint,
                    same_run: true,
                    ..
                } => checkpoint.next_seq,
                _ => 0,
            };
            emitter = emitter.durable(seq);
        }
        let mark = |ids: &[NodeId], from_graph: fn(&crate::compile::CompiledNode) -> bool| {
            graph
                .nodes
                .iter()
                .map(|node| from_graph(node) || ids.contains(&node.id))
                .collect()
        };
        let before: Vec<bool> = mark(&options.interrupt_before, |node| node.interrupt_before);
        let after: Vec<bool> = mark(&options.interrupt_after, |node| node.interrupt_after);
        let any = before.iter().chain(&after).any(|marked| *marked);
        let breakpoints = Breakpoints { before, after, any };
        let meter = Arc::new(Meter::new(
            Arc::clone(&graph.prices),
            &graph.document().limits,
        ));
        Run {
            graph,
            run_id,
            start,
            emitter,
            cancel: CancelHandle::new(),
            log,
            breakpoints,
            persistence,
            meter,
            max_active: options.max_active,
        }
    }

    /// The same run, its events numbered from `seq` (a run begun again
    /// after the events its first beginning stored).
    pub(crate) fn numbering_from(mut self, seq: u64) -> Self {
        self.emitter = self.emitter.durable(seq);
        self
    }

    /// The same run, as a child graph's inside the run `parent` meters: its
    /// model calls count in that run's totals and against its budget.
    pub(crate) fn sharing_meter(mut self, parent: Arc<Meter>) -> Self {
        self.meter = Arc::new(
            Meter::new(
                Arc::clone(&self.graph.prices),
                &self.graph.document().limits,
            )
            .under(parent),
        );
        self
    }

    /// The run's tokens and cost so far; read it after [`Run::execute`]
    /// for the totals (a resumed run's include what it used before).
    pub fn meter(&self) -> Arc<Meter> {
        Arc::clone(&self.meter)
    }

    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.run_id
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

    /// Runs the graph until it finishes, fails, is cancelled, or pauses.
    /// A node with a timeout or a retry policy needs a tokio runtime with
    /// its time driver enabled.
    pub async fn execute(self) -> Result<RunOutput, RunError> {
        self.execute_keeping_pause().await.0
    }

    /// Runs the graph like [`Run::execute`]; a run that paused without a
    /// store (a child graph's, inside a node) also gives where it paused,
    /// to go on from with [`Run::from_pause`].
    pub(crate) async fn execute_keeping_pause(
        self,
    ) -> (Result<RunOutput, RunError>, Option<Checkpoint>) {
        let Run {
            graph,
            run_id,
            start,
            emitter,
            cancel,
            log: _,
            breakpoints,
            mut persistence,
            meter,
            max_active,
        } = self;
        let executor = Executor {
            graph: &graph,
            run_id: &run_id,
            emitter: &emitter,
            cancel: &cancel,
            breakpoints: &breakpoints,
            meter: &meter,
            active_until: max_active.map(|allowed| {
                let left = allowed.total.saturating_sub(allowed.used);
                (tokio::time::Instant::now() + left, allowed.total)
            }),
        };
        let mut progress = match executor.begin(start) {
            Ok(progress) => progress,
            Err(error) => {
                executor.emit_end(&Err(error.clone()));
                return (Err(error), None);
            }
        };
        let result = executor.run(&mut progress, persistence.as_mut()).await;
        if matches!(result, Err(RunError::HandedOver { .. })) {
            // Not ended: its newest checkpoint stands, to go on from.
            return (result, None);
        }
        executor.emit_end(&result);
        if persistence.is_none()
            && let Ok(output) = &result
            && output.is_interrupted()
        {
            let (interrupts, completed) = progress.paused.take().unwrap_or_default();
            let thread = ThreadId::from(run_id.as_str());
            let checkpoint = executor.checkpoint_at(
                &progress,
                (thread, None),
                RunStatus::Interrupted,
                interrupts,
                completed,
                None,
            );
            return (result, Some(checkpoint));
        }
        if let Some(persistence) = persistence.as_mut()
            && !matches!(result, Err(RunError::Store(_)))
        {
            let status = match &result {
                Ok(output) if output.is_interrupted() => RunStatus::Interrupted,
                Ok(_) => RunStatus::Finished,
                Err(RunError::Cancelled { .. }) => RunStatus::Cancelled,
                Err(_) => RunStatus::Failed,
            };
            let (interrupts, completed) = progress.paused.take().unwrap_or_default();
            let error = result.as_ref().err().map(ToString::to_string);
            let checkpoint =
                executor.checkpoint(&progress, persistence, status, interrupts, completed, error);
            if let Err(error) = persistence
                .save_final(checkpoint, emitter.take_journal())
                .await
            {
                return (Err(error), None);
            }
        }
        (result, None)
    }

    /// A run of `graph` going on from `checkpoint`, where a child graph's
    /// run without a store paused, with `value` as the answer.
    pub(crate) fn from_pause(
        graph: Arc<CompiledGraph>,
        run_id: RunId,
        checkpoint: Checkpoint,
        value: Value,
        options: RunOptions,
    ) -> Self {
        Run::prepare(
            graph,
            run_id,
            Start::From {
                checkpoint: Box::new(checkpoint),
                resume: Some(value),
                same_run: true,
                edits: Map::new(),
            },
            options,
            None,
        )
    }
}

/// Where a run stands between steps.
pub(crate) struct Progress {
    state: State,
    tasks: Vec<Task>,
    arrivals: HashMap<NodeIdx, Vec<NodeIdx>>,
    step: u32,
    recent: VecDeque<Vec<NodeIdx>>,
    resume: Option<Resumption>,
    /// Why and where the run paused, for its checkpoint.
    paused: Option<(Vec<Interrupt>, Vec<CompletedTask>)>,
    /// Whether a branch has reached an end (see `CompiledNode::ends_branch`).
    reached_end: bool,
}

/// What a resumed step already knows.
struct Resumption {
    value: Option<Value>,
    /// Outputs of the step's tasks that finished before the pause.
    completed: Vec<Option<NodeOutput>>,
    /// Skip the before-breakpoints of this step (they already paused it).
    skip_before: bool,
    /// What each task asked when it paused (by task), for the execution
    /// that answers it.
    asked: Vec<Option<Value>>,
}

pub(crate) struct Executor<'a> {
    graph: &'a CompiledGraph,
    run_id: &'a RunId,
    emitter: &'a Emitter,
    cancel: &'a CancelHandle,
    breakpoints: &'a Breakpoints,
    meter: &'a Arc<Meter>,
    /// When the run must stop being active, and how long it was allowed.
    active_until: Option<(tokio::time::Instant, std::time::Duration)>,
}

impl Executor<'_> {
    fn begin(&self, start: Start) -> Result<Progress, RunError> {
        let mut state = State::new(Arc::clone(&self.graph.layout));
        match start {
            Start::Fresh {
                input,
                carried,
                base,
            } => {
                for (channel, value) in carried {
                    if let Some(idx) = self.graph.layout.index(&channel) {
                        *state.at_mut(idx) = value;
                    }
                }
                // An input past the limits is not even recorded: the run
                // fails saying why, with no value nobody could read back.
                let bounded = match &input {
                    Value::Object(fields) => fields.iter().try_for_each(|(channel, value)| {
                        self.check_value(|| format!("input.{channel}"), value)
                    }),
                    _ => Ok(()),
                };
                let (input, applied) = match bounded {
                    Ok(()) => {
                        let applied = self.apply_input(&mut state, input.clone());
                        (input, applied)
                    }
                    Err(error) => {
                        crate::state::drop_flat(input);
                        (Value::Null, Err(RunError::BadInput { message: error }))
                    }
                };
                // The state the first step sees: as changes from the
                // thread's checkpoint the run goes on from, or whole for a
                // new thread (defaults and the input: small).
                let (from, changes, whole) = match (&applied, base) {
                    (Err(_), _) => (None, Changes::new(), None),
                    (Ok(()), Some((id, before))) => {
                        let after = state.to_json();
                        let changes = match &after {
                            Value::Object(after) => crate::state::changes::diff(&before, after),
                            _ => Changes::new(),
                        };
                        (Some(id), changes, None)
                    }
                    (Ok(()), None) => (None, Changes::new(), Some(state.to_json())),
                };
                self.emitter.emit(EventPayload::RunStarted {
                    graph: self.graph.name.clone(),
                    input,
                    state: whole,
                    from,
                    changes,
                });
                applied?;
                Ok(Progress {
                    state,
                    tasks: vec![Task {
                        node: self.graph.entry,
                        arg: None,
                        instance: None,
                    }],
                    arrivals: HashMap::new(),
                    step: 0,
                    recent: VecDeque::new(),
                    resume: None,
                    paused: None,
                    reached_end: false,
                })
            }
            Start::From {
                checkpoint,
                resume,
                same_run,
                edits,
            } => {
                if same_run {
                    self.meter.seed(checkpoint.usage);
                }
                let (resume, bounded) = match resume {
                    Some(value) => match self.check_value(|| "the answer".into(), &value) {
                        Ok(()) => (Some(value), Ok(())),
                        Err(message) => {
                            crate::state::drop_flat(value);
                            (None, Err(RunError::BadInput { message }))
                        }
                    },
                    None => (None, Ok(())),
                };
                let restored = bounded.and_then(|()| self.restore(&mut state, &checkpoint.state));
                // A fork's state is the stored checkpoint's with its edits:
                // the event names the one and carries the others. A run
                // that goes on with its own log has its state there; one
                // whose log begins here from a checkpoint no store holds (a
                // child graph's, answered in memory) holds it whole.
                let whole = (restored.is_ok() && same_run && self.emitter.next_seq() == 0)
                    .then(|| state.to_json());
                self.emitter.emit(EventPayload::RunResumed {
                    step: checkpoint.step,
                    checkpoint: checkpoint.id.clone(),
                    value: resume.clone(),
                    state: whole,
                    changes: edits
                        .into_iter()
                        .map(|(channel, value)| (channel, Change::Set { value }))
                        .collect(),
                });
                restored?;
                let tasks = checkpoint
                    .next
                    .iter()
                    .map(|task| self.task(task))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut arrivals = HashMap::new();
                for (join, sources) in &checkpoint.arrivals {
                    let join = self.index(join)?;
                    let sources = sources
                        .iter()
                        .map(|s| self.index(s))
                        .collect::<Result<Vec<_>, _>>()?;
                    arrivals.insert(join, sources);
                }
                let interrupted = checkpoint.status == RunStatus::Interrupted;
                let resume = (same_run && interrupted).then(|| {
                    let mut completed = vec![None; tasks.len()];
                    for done in &checkpoint.completed {
                        if let Some(slot) = completed.get_mut(done.task as usize) {
                            *slot = Some(done.output.clone());
                        }
                    }
                    let mut asked = vec![None; tasks.len()];
                    for interrupt in &checkpoint.interrupts {
                        if interrupt.when == InterruptWhen::During
                            && let Some(slot) = asked.get_mut(interrupt.task as usize)
                        {
                            *slot = Some(interrupt.payload.clone());
                        }
                    }
                    Resumption {
                        value: resume,
                        completed,
                        asked,
                        skip_before: checkpoint
                            .interrupts
                            .iter()
                            .any(|i| i.when == InterruptWhen::Before),
                    }
                });
                Ok(Progress {
                    state,
                    tasks,
                    arrivals,
                    step: checkpoint.step,
                    recent: VecDeque::new(),
                    resume,
                    paused: None,
                    // Checkpoints from before this was recorded: assume
                    // the best rather than fail a run that had an answer.
                    reached_end: checkpoint.reached_end.unwrap_or(true),
                })
            }
        }
    }

    fn index(&self, node: &NodeId) -> Result<NodeIdx, RunError> {
        self.graph.node(node).ok_or_else(|| RunError::BadInput {
            message: format!("the checkpoint names node `{node}`, which this graph does not have"),
        })
    }

    fn task(&self, task: &PendingTask) -> Result<Task, RunError> {
        Ok(Task {
            node: self.index(&task.node)?,
            arg: task.arg.clone(),
            instance: task.instance,
        })
    }

    fn restore(&self, state: &mut State, saved: &Value) -> Result<(), RunError> {
        let Value::Object(fields) = saved else {
            return Err(RunError::BadInput {
                message: "the checkpoint's state is not an object".into(),
            });
        };
        for (channel, value) in fields {
            if let Some(idx) = self.graph.layout.index(channel) {
                *state.at_mut(idx) = value.clone();
            }
        }
        Ok(())
    }

    fn emit_end(&self, result: &Result<RunOutput, RunError>) {
        self.emitter.emit(match result {
            Ok(output) if output.is_interrupted() => EventPayload::RunInterrupted {
                step: output.steps,
                interrupts: output.interrupts.clone(),
            },
            // The final state is the first event's and every step's
            // changes: not sent again.
            Ok(output) => EventPayload::RunFinished {
                output: None,
                steps: output.steps,
                changes: Default::default(),
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
    }

    async fn run(
        &self,
        progress: &mut Progress,
        mut persistence: Option<&mut Persistence>,
    ) -> Result<RunOutput, RunError> {
        if let Some(persistence) = persistence.as_deref_mut()
            && progress.resume.is_none()
        {
            // The first checkpoint: the run is known, and recoverable from
            // its very beginning.
            self.save_running(progress, persistence).await?;
        }
        let window = self.graph.nodes.len().clamp(1, 64);
        while !progress.tasks.is_empty() {
            let step = progress.step;
            if step >= self.graph.max_steps {
                return Err(self.step_limit(&progress.recent, &progress.tasks));
            }
            if self.cancel.is_cancelled() {
                return Err(RunError::Cancelled { step });
            }
            if let Some((until, _)) = self.active_until
                && tokio::time::Instant::now() >= until
            {
                return Err(self.out_of_time(step));
            }
            if self.cancel.is_handing_over() && persistence.is_some() {
                return Err(RunError::HandedOver { step });
            }
            let skip_before = progress.resume.as_ref().is_some_and(|r| r.skip_before);
            if !skip_before {
                let before: Vec<Interrupt> = self.breakpoint_hits(
                    &progress.tasks,
                    &self.breakpoints.before,
                    InterruptWhen::Before,
                );
                if !before.is_empty() {
                    return Ok(self.pause(progress, before, Vec::new()));
                }
            }

            self.emitter.emit(EventPayload::StepStarted {
                step,
                tasks: progress
                    .tasks
                    .iter()
                    .map(|task| TaskRef {
                        node: self.graph.nodes[task.node.get()].id.clone(),
                        instance: task.instance,
                        item: task
                            .instance
                            .and(task.arg.as_ref())
                            .map(TaskRef::item_label),
                    })
                    .collect(),
            });
            let resume = progress.resume.take();
            self.meter.begin_step();
            let outcomes = self
                .run_step(step, &progress.tasks, &progress.state, resume)
                .await?;

            if outcomes
                .iter()
                .any(|outcome| matches!(outcome, TaskOutcome::Interrupted(_)))
            {
                let mut interrupts = Vec::new();
                let mut completed = Vec::new();
                for (i, outcome) in outcomes.into_iter().enumerate() {
                    match outcome {
                        TaskOutcome::Done(output) => completed.push(CompletedTask {
                            task: i as u32,
                            output,
                        }),
                        TaskOutcome::Interrupted(payload) => interrupts.push(Interrupt {
                            node: self.graph.nodes[progress.tasks[i].node.get()].id.clone(),
                            task: i as u32,
                            when: InterruptWhen::During,
                            payload,
                        }),
                    }
                }
                return Ok(self.pause(progress, interrupts, completed));
            }
            let mut outputs: Vec<NodeOutput> = outcomes
                .into_iter()
                .filter_map(|outcome| match outcome {
                    TaskOutcome::Done(output) => Some(output),
                    TaskOutcome::Interrupted(_) => None,
                })
                .collect();

            let changes = self.merge(step, &progress.tasks, &mut outputs, &mut progress.state)?;
            self.emitter.emit(EventPayload::StepFinished {
                step,
                changes,
                delta: None,
            });
            self.meter.check().map_err(RunError::OverBudget)?;
            if progress.recent.len() == window {
                progress.recent.pop_front();
            }
            progress
                .recent
                .push_back(progress.tasks.iter().map(|task| task.node).collect());
            let after = self.breakpoint_hits(
                &progress.tasks,
                &self.breakpoints.after,
                InterruptWhen::After,
            );
            progress.reached_end |= progress.tasks.iter().zip(&outputs).any(|(task, output)| {
                self.graph.nodes[task.node.get()].ends_branch
                    && output.goto.is_empty()
                    && output.sends.is_empty()
            });
            let last_step: Vec<NodeId> = progress
                .tasks
                .iter()
                .map(|task| self.graph.nodes[task.node.get()].id.clone())
                .collect();
            progress.tasks = self.next_tasks(
                step,
                &progress.tasks,
                outputs,
                &progress.state,
                &mut progress.arrivals,
            )?;
            progress.step += 1;

            if !after.is_empty() && !progress.tasks.is_empty() {
                return Ok(self.pause(progress, after, Vec::new()));
            }
            if let Some(persistence) = persistence.as_deref_mut()
                && !progress.tasks.is_empty()
            {
                self.save_running(progress, persistence).await?;
            }
            if progress.tasks.is_empty() && self.graph.has_end && !progress.reached_end {
                return Err(RunError::NoAnswer {
                    step,
                    last: last_step,
                    waiting: self.joins_waiting(&progress.arrivals),
                });
            }
        }
        Ok(RunOutput {
            state: progress.state.to_json(),
            steps: progress.step,
            interrupts: Vec::new(),
        })
    }

    /// The joins some of whose inputs arrived, each with the inputs that
    /// did not, in the graph's order.
    fn joins_waiting(
        &self,
        arrivals: &HashMap<NodeIdx, Vec<NodeIdx>>,
    ) -> Vec<(NodeId, Vec<NodeId>)> {
        let mut waiting: Vec<(NodeIdx, Vec<NodeId>)> = arrivals
            .iter()
            .filter_map(|(join, arrived)| {
                let sources = self.graph.nodes[join.get()].join_sources.as_ref()?;
                let missing: Vec<NodeId> = sources
                    .iter()
                    .filter(|source| !arrived.contains(source))
                    .map(|source| self.graph.nodes[source.get()].id.clone())
                    .collect();
                (!missing.is_empty()).then_some((*join, missing))
            })
            .collect();
        waiting.sort_by_key(|(join, _)| join.get());
        waiting
            .into_iter()
            .map(|(join, missing)| (self.graph.nodes[join.get()].id.clone(), missing))
            .collect()
    }

    /// Ends the run paused; `execute` saves where to resume from.
    fn pause(
        &self,
        progress: &mut Progress,
        interrupts: Vec<Interrupt>,
        completed: Vec<CompletedTask>,
    ) -> RunOutput {
        let output = RunOutput {
            state: progress.state.to_json(),
            steps: progress.step,
            interrupts: interrupts.clone(),
        };
        progress.paused = Some((interrupts, completed));
        output
    }

    fn breakpoint_hits(
        &self,
        tasks: &[Task],
        marks: &[bool],
        when: InterruptWhen,
    ) -> Vec<Interrupt> {
        let mut hits: Vec<Interrupt> = Vec::new();
        if !self.breakpoints.any {
            return hits;
        }
        for (i, task) in tasks.iter().enumerate() {
            let node = &self.graph.nodes[task.node.get()].id;
            if marks[task.node.get()] && !hits.iter().any(|hit| &hit.node == node) {
                hits.push(Interrupt {
                    node: node.clone(),
                    task: i as u32,
                    when,
                    payload: Value::Null,
                });
            }
        }
        hits
    }

    /// Saves the checkpoint of a run that goes on, with the events
    /// journalled since the last save.
    async fn save_running(
        &self,
        progress: &Progress,
        persistence: &mut Persistence,
    ) -> Result<(), RunError> {
        let checkpoint = self.checkpoint(
            progress,
            persistence,
            RunStatus::Running,
            Vec::new(),
            Vec::new(),
            None,
        );
        persistence
            .save_step(checkpoint, self.emitter.take_journal())
            .await?;
        Ok(())
    }

    pub(crate) fn checkpoint(
        &self,
        progress: &Progress,
        persistence: &mut Persistence,
        status: RunStatus,
        interrupts: Vec<Interrupt>,
        completed: Vec<CompletedTask>,
        error: Option<String>,
    ) -> Checkpoint {
        let parent = persistence.advance(self.checkpoint_id());
        let thread = persistence.thread().clone();
        self.checkpoint_at(
            progress,
            (thread, parent),
            status,
            interrupts,
            completed,
            error,
        )
    }

    /// The id of a checkpoint saved now: the run and the next event's `seq`.
    fn checkpoint_id(&self) -> CheckpointId {
        CheckpointId::from(format!("{}/{}", self.run_id, self.emitter.next_seq()))
    }

    /// The checkpoint of where the run stands, on `thread` after `parent`.
    pub(crate) fn checkpoint_at(
        &self,
        progress: &Progress,
        (thread, parent): (ThreadId, Option<CheckpointId>),
        status: RunStatus,
        interrupts: Vec<Interrupt>,
        completed: Vec<CompletedTask>,
        error: Option<String>,
    ) -> Checkpoint {
        let next_seq = self.emitter.next_seq();
        let name = |idx: &NodeIdx| self.graph.nodes[idx.get()].id.clone();
        Checkpoint {
            id: self.checkpoint_id(),
            thread_id: thread,
            run_id: self.run_id.clone(),
            parent,
            step: progress.step,
            state: progress.state.to_json(),
            next: progress
                .tasks
                .iter()
                .map(|task| PendingTask {
                    node: name(&task.node),
                    arg: task.arg.clone(),
                    instance: task.instance,
                })
                .collect(),
            arrivals: progress
                .arrivals
                .iter()
                .map(|(join, sources)| (name(join), sources.iter().map(name).collect()))
                .collect::<BTreeMap<_, _>>(),
            status,
            interrupts,
            completed,
            next_seq,
            error,
            created_at_us: now_us(),
            usage: self.meter.total(),
            reached_end: Some(progress.reached_end),
        }
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
            let ty = layout.types[idx.0 as usize];
            layout
                .apply(
                    idx,
                    state.at_mut(idx),
                    crate::state::coerce_input(ty, value),
                    &|k| super::input_ids::input_message_id(self.run_id, n, k),
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
        resume: Option<Resumption>,
    ) -> Result<Vec<TaskOutcome>, RunError> {
        let (value, mut completed, asked) = match resume {
            Some(resume) => (resume.value, resume.completed, resume.asked),
            None => (None, Vec::new(), Vec::new()),
        };
        let value = value.as_ref();
        let asked = &asked;
        let work = async {
            if let ([task], None) = (tasks, completed.first()) {
                return self
                    .run_task(step, 0, task, state, value, None)
                    .await
                    .map(|outcome| vec![outcome]);
            }
            let mut outcomes: Vec<Option<TaskOutcome>> = Vec::with_capacity(tasks.len());
            outcomes.resize_with(tasks.len(), || None);
            let mut pending = FuturesUnordered::new();
            for (i, task) in tasks.iter().enumerate() {
                // A task that finished before the pause is not run again.
                if let Some(output) = completed.get_mut(i).and_then(Option::take) {
                    outcomes[i] = Some(TaskOutcome::Done(output));
                    continue;
                }
                let asked = asked.get(i).and_then(Option::as_ref);
                pending.push(async move {
                    (
                        i,
                        self.run_task(step, i as u32, task, state, value, asked)
                            .await,
                    )
                });
            }
            while let Some((i, result)) = pending.next().await {
                // A failure ends the step: dropping `pending` cancels the rest.
                outcomes[i] = Some(result?);
            }
            Ok(outcomes.into_iter().flatten().collect())
        };
        let out_of_time = async {
            match self.active_until {
                Some((until, _)) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(RunError::Cancelled { step }),
            () = out_of_time => Err(self.out_of_time(step)),
            result = work => result,
        }
    }

    /// The failure of a run that was active for as long as it may be.
    fn out_of_time(&self, step: u32) -> RunError {
        let allowed = self
            .active_until
            .map(|(_, allowed)| allowed)
            .unwrap_or_default();
        RunError::Ceiling {
            ceiling: crate::ceilings::names::ACTIVE_TIME,
            step,
            detail: format!(
                "a run may be active for {} s here (time paused or queued does not count)",
                allowed.as_secs()
            ),
        }
    }

    async fn run_task(
        &self,
        step: u32,
        index: u32,
        task: &Task,
        state: &State,
        resume: Option<&Value>,
        asked: Option<&Value>,
    ) -> Result<TaskOutcome, RunError> {
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
                instance: task.instance,
                attempt,
                emit: self.emitter,
                cancel: self.cancel.flag(),
                resume,
                asked,
                meter: Some(self.meter),
                spent: Default::default(),
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
            // What a node returns is checked before anything records it.
            let result = result.and_then(|output| self.check_output(output));
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
                    return Ok(TaskOutcome::Done(output));
                }
                Err(NodeError::Interrupt { payload }) => {
                    return Ok(TaskOutcome::Interrupted(payload));
                }
                Err(error) => {
                    // A run over budget is not given another attempt.
                    if let Some(policy) = &node.retry
                        && should_retry(policy, attempt, &error)
                        && self.meter.check().is_ok()
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
    ) -> Result<Changes, RunError> {
        let layout = Arc::clone(&self.graph.layout);
        // Each channel's value before the step's first write to it: the
        // step's changes are found by comparing, so they apply without
        // the reducers (see `state::changes`).
        let mut before: Vec<(ChannelIdx, Value)> = Vec::new();
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
                if !before.iter().any(|(seen, _)| *seen == idx) {
                    before.push((idx, state.at(idx).clone()));
                }
                layout
                    .apply(idx, state.at_mut(idx), value, &|k| {
                        format!("msg-{}-{step}-{i}-{n}-{k}", self.run_id)
                    })
                    .map_err(|error| RunError::bad_update(node, step, error))?;
                // A reducer can grow a value past the limits (an append).
                self.check_value(|| format!("channel `{channel}`"), state.at(idx))
                    .map_err(|message| RunError::BadUpdate {
                        node: node.clone(),
                        step,
                        message,
                    })?;
            }
        }
        let mut changes = Changes::new();
        for (idx, old) in before {
            if let Some(change) = crate::state::changes::change(&old, state.at(idx)) {
                changes.insert(layout.name(idx).to_string(), change);
            }
            crate::state::drop_flat(old);
        }
        Ok(changes)
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

    /// Checks `value` against the graph's value limits; the message names
    /// `what` it is (worked out only for a refusal).
    fn check_value(&self, what: impl FnOnce() -> String, value: &Value) -> Result<(), String> {
        self.graph
            .value_limits
            .check(value)
            .map_err(|error| format!("{}: {error}", what()))
    }

    /// A node's output, if every value in it is within the limits: its
    /// updates and the items it sends.
    fn check_output(&self, output: NodeOutput) -> Result<NodeOutput, NodeError> {
        let mut problem = None;
        for (channel, value) in &output.update {
            if let Err(message) = self.check_value(|| format!("the update of `{channel}`"), value) {
                problem = Some(message);
                break;
            }
        }
        if problem.is_none() {
            for send in &output.sends {
                if let Err(message) =
                    self.check_value(|| format!("the item sent to `{}`", send.node), &send.arg)
                {
                    problem = Some(message);
                    break;
                }
            }
        }
        match problem {
            None => Ok(output),
            Some(message) => {
                let NodeOutput { update, sends, .. } = output;
                for (_, value) in update {
                    crate::state::drop_flat(value);
                }
                for send in sends {
                    crate::state::drop_flat(send.arg);
                }
                Err(NodeError::permanent(message))
            }
        }
    }

    /// Why a run stopped at its step limit: the nodes that ran again and
    /// again in its last steps (it loops), or, when none did (a graph
    /// longer than its limit), the nodes it had still to run.
    fn step_limit(&self, recent: &VecDeque<Vec<NodeIdx>>, pending: &[Task]) -> RunError {
        let mut seen: HashMap<NodeIdx, usize> = HashMap::new();
        let pending: Vec<NodeIdx> = pending.iter().map(|task| task.node).collect();
        for step in recent.iter().chain(std::iter::once(&pending)) {
            let mut once = step.clone();
            once.sort_unstable();
            once.dedup();
            for node in once {
                *seen.entry(node).or_default() += 1;
            }
        }
        let mut looping: Vec<NodeIdx> = seen
            .into_iter()
            .filter(|(_, times)| *times > 1)
            .map(|(node, _)| node)
            .collect();
        looping.sort_unstable();
        let mut waiting = pending;
        waiting.sort_unstable();
        waiting.dedup();
        let ids = |nodes: Vec<NodeIdx>| -> Vec<NodeId> {
            nodes
                .into_iter()
                .map(|idx| self.graph.nodes[idx.get()].id.clone())
                .collect()
        };
        let (loop_nodes, waiting) = (ids(looping), ids(waiting));
        if self.graph.steps_ceiling {
            return RunError::Ceiling {
                ceiling: crate::ceilings::names::STEPS,
                step: self.graph.max_steps,
                detail: format!(
                    "a run may take at most {} steps here (the graph asks for {}); {}",
                    self.graph.max_steps,
                    self.graph.document().limits.max_steps,
                    super::error::why_steps_ran_out(&loop_nodes, &waiting)
                ),
            };
        }
        RunError::StepLimit {
            limit: self.graph.max_steps,
            loop_nodes,
            waiting,
        }
    }
}

/// How one task of a step ended.
enum TaskOutcome {
    Done(NodeOutput),
    Interrupted(Value),
}

fn update_json(update: &[(String, Value)]) -> Value {
    let mut map = Map::new();
    for (channel, value) in update {
        map.insert(channel.clone(), value.clone());
    }
    Value::Object(map)
}
