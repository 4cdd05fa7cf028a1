//! Durable runs on threads: start, pause and resume, re-run or fork from
//! any checkpoint, recover after a crash.
//!
//! A thread is a conversation: its runs share the channels the graph marks
//! `"scope": "thread"` (messages, memories), each run starting from the
//! values the previous one ended with. Two runs of one thread never run at
//! once: starting a second while one runs is refused with
//! [`DurableError::ThreadBusy`], and a thread whose last run is paused
//! must be resumed (or its pause cancelled) before a new run starts.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use super::checkpoint::{Checkpoint, PendingTask, RunStatus};
use super::emitter::now_us;
use super::event::{Event, EventPayload};
use super::executor::{Run, RunOptions, Start};
use super::persist::{Durability, Persistence};
use super::store::{CheckpointStore, RunRecord, StoreError};
use crate::compile::{CompiledGraph, LoadError};
use crate::format::ChannelScope;
use crate::ids::{CheckpointId, NodeId, RunId, ThreadId};
use crate::node::Registry;

/// Why a durable run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DurableError {
    /// A run of this thread is running (here, or it died and awaits
    /// recovery).
    #[error("thread `{thread}` has a run in progress; wait for it to end")]
    ThreadBusy { thread: ThreadId },
    /// The thread's last run is paused.
    #[error("thread `{thread}` is waiting to be resumed; resume it or cancel the pause first")]
    Paused { thread: ThreadId },
    /// Resume was asked of a thread that is not paused.
    #[error("thread `{thread}` is not interrupted ({}); there is nothing to resume", describe(*status))]
    NotInterrupted {
        thread: ThreadId,
        status: Option<RunStatus>,
    },
    /// No such checkpoint in the thread.
    #[error("thread `{thread}` has no checkpoint `{checkpoint}`")]
    NoCheckpoint {
        thread: ThreadId,
        checkpoint: String,
    },
    /// A fork names a node the graph does not have.
    #[error("the graph has no node `{node}` to start at")]
    NoNode { node: NodeId },
    /// An edit of a fork does not fit the graph's state.
    #[error("cannot set `{channel}`: {message}")]
    BadEdit { channel: String, message: String },
    /// A run asked to begin again (see [`Durable::beginning_again`]) that
    /// has begun: it has a checkpoint to go on from, or has ended.
    #[error("run `{run}` has begun already; it is recovered from its checkpoint, not begun again")]
    Begun { run: RunId },
    /// The graph stored with a run no longer loads.
    #[error("the stored graph of run `{run}` does not load: {error}")]
    Graph { run: RunId, error: Box<LoadError> },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn describe(status: Option<RunStatus>) -> String {
    match status {
        Some(status) => format!("its last run is {}", status.as_str()),
        None => "it has no runs".to_string(),
    }
}

/// How a fork goes on from a checkpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fork {
    /// Channel values to replace first.
    pub edits: Map<String, Value>,
    /// The node to run next, instead of the checkpoint's own next tasks.
    pub start_at: Option<NodeId>,
}

/// Starts and resumes durable runs over a checkpoint store.
#[derive(Clone)]
pub struct Durable {
    store: Arc<dyn CheckpointStore>,
    registry: Registry,
    durability: Durability,
    options: RunOptions,
    busy: Arc<Mutex<HashSet<ThreadId>>>,
    /// Whether the runs begun may be recorded already (see
    /// [`Durable::beginning_again`]).
    again: bool,
}

/// Marks a thread busy until dropped.
struct ThreadGuard {
    busy: Arc<Mutex<HashSet<ThreadId>>>,
    thread: ThreadId,
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        self.busy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.thread);
    }
}

impl Durable {
    /// Durable runs over `store`, saving every step (`Durability::Sync`).
    pub fn new(store: Arc<dyn CheckpointStore>) -> Self {
        Durable {
            store,
            registry: Registry::new(),
            durability: Durability::Sync,
            options: RunOptions::default(),
            busy: Arc::default(),
            again: false,
        }
    }

    /// The runs this begins (start, fork) may be recorded already by a
    /// process that stopped before their first checkpoint (between
    /// recording the run and saving where it stands, a moment): such a run
    /// has nothing to recover from, so it begins again under its id, its
    /// events numbered after those stored (someone may have seen them). A
    /// run with a checkpoint of its own is refused ([`DurableError::Begun`]):
    /// it is recovered ([`Durable::recover_run`]), never begun twice.
    pub fn beginning_again(mut self) -> Self {
        self.again = true;
        self
    }

    /// The kinds stored graphs may use (for resume and recovery).
    pub fn with_registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// When checkpoints are written.
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The options every run gets (events, breakpoints).
    pub fn with_options(mut self, options: RunOptions) -> Self {
        self.options = options;
        self
    }

    /// Also pauses before the nodes in `before` and after the steps of
    /// those in `after`: one run's own breakpoints ("run to this node"),
    /// beside those the graph marks.
    pub fn with_breakpoints(mut self, before: Vec<NodeId>, after: Vec<NodeId>) -> Self {
        self.options.interrupt_before.extend(before);
        self.options.interrupt_after.extend(after);
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn CheckpointStore> {
        &self.store
    }

    fn claim(&self, thread: &ThreadId) -> Result<ThreadGuard, DurableError> {
        let mut busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        if !busy.insert(thread.clone()) {
            return Err(DurableError::ThreadBusy {
                thread: thread.clone(),
            });
        }
        Ok(ThreadGuard {
            busy: Arc::clone(&self.busy),
            thread: thread.clone(),
        })
    }

    fn persistence(
        &self,
        thread: &ThreadId,
        parent: Option<CheckpointId>,
        guard: ThreadGuard,
    ) -> Persistence {
        Persistence::new(
            Arc::clone(&self.store),
            self.durability,
            thread.clone(),
            parent,
            Some(Box::new(guard)),
        )
        .with_events_ahead(self.options.sink.clone())
    }

    async fn graph_of(&self, run: &RunId) -> Result<Arc<CompiledGraph>, DurableError> {
        let record = self
            .store
            .run(run)
            .await?
            .ok_or_else(|| StoreError::Missing(format!("no record of run `{run}`")))?;
        CompiledGraph::from_json(&record.graph, &self.registry)
            .map(Arc::new)
            .map_err(|error| DurableError::Graph {
                run: run.clone(),
                error: Box::new(error),
            })
    }

    /// Starts a new run of `graph` on `thread` with `input`. Thread-scoped
    /// channels start from where the thread's previous run left them.
    pub async fn start(
        &self,
        graph: Arc<CompiledGraph>,
        thread: ThreadId,
        run_id: RunId,
        input: Value,
    ) -> Result<Run, DurableError> {
        let guard = self.claim(&thread)?;
        let latest = self.store.latest(&thread).await?;
        let mut carried = Map::new();
        if let Some(latest) = &latest {
            match latest.status {
                RunStatus::Running => return Err(DurableError::ThreadBusy { thread }),
                RunStatus::Interrupted => return Err(DurableError::Paused { thread }),
                _ => {}
            }
            for (name, channel) in &graph.document().state.channels {
                if channel.scope == ChannelScope::Thread
                    && let Some(value) = latest.state.get(name)
                    && crate::state::fits_channel(value, channel).is_ok()
                {
                    carried.insert(name.clone(), value.clone());
                }
            }
        }
        let (parent, base) = match latest {
            Some(Checkpoint {
                id,
                state: Value::Object(state),
                ..
            }) => (Some(id.clone()), Some((id, state))),
            Some(checkpoint) => (Some(checkpoint.id), None),
            None => (None, None),
        };
        let start = Start::Fresh {
            input,
            carried,
            base,
        };
        self.begin(graph, run_id, &thread, parent, guard, start)
            .await
    }

    /// Records a new run of `graph` on `thread` and prepares it, its first
    /// checkpoint a child of `parent`.
    async fn begin(
        &self,
        graph: Arc<CompiledGraph>,
        run_id: RunId,
        thread: &ThreadId,
        parent: Option<CheckpointId>,
        guard: ThreadGuard,
        start: Start,
    ) -> Result<Run, DurableError> {
        let recorded = match self.again {
            true => self.unbegun(&run_id).await?,
            false => None,
        };
        if recorded.is_none() {
            self.store
                .create_run(&RunRecord {
                    run_id: run_id.clone(),
                    thread_id: thread.clone(),
                    graph: graph.document().to_json(),
                    status: RunStatus::Running,
                })
                .await?;
        }
        let persistence = self.persistence(thread, parent, guard);
        let run = Run::prepare(
            graph,
            run_id,
            start,
            self.options.clone(),
            Some(persistence),
        );
        Ok(match recorded {
            Some(next_seq) => run.numbering_from(next_seq),
            None => run,
        })
    }

    /// For a run begun again: `None` if it is not recorded (it begins as
    /// any run), else the number its next event takes, when it is
    /// recorded running with no checkpoint of its own.
    async fn unbegun(&self, run_id: &RunId) -> Result<Option<u64>, DurableError> {
        let Some(record) = self.store.run(run_id).await? else {
            return Ok(None);
        };
        if record.status != RunStatus::Running || self.store.last_of_run(run_id).await?.is_some() {
            return Err(DurableError::Begun {
                run: run_id.clone(),
            });
        }
        let stored = self.store.events(run_id, 0).await?;
        Ok(Some(stored.last().map_or(0, |last| last.seq + 1)))
    }

    /// Resumes the thread's paused run: the interrupted nodes run again and
    /// find `value` in their context; the step's other tasks are not run
    /// again. The run keeps its id and its event numbering.
    pub async fn resume(&self, thread: &ThreadId, value: Value) -> Result<Run, DurableError> {
        let guard = self.claim(thread)?;
        let latest = self.store.latest(thread).await?;
        let checkpoint = match latest {
            Some(checkpoint) if checkpoint.status == RunStatus::Interrupted => checkpoint,
            other => {
                return Err(DurableError::NotInterrupted {
                    thread: thread.clone(),
                    status: other.map(|c| c.status),
                });
            }
        };
        let graph = self.graph_of(&checkpoint.run_id).await?;
        let run_id = checkpoint.run_id.clone();
        let persistence = self.persistence(thread, Some(checkpoint.id.clone()), guard);
        Ok(Run::prepare(
            graph,
            run_id,
            Start::From {
                checkpoint: Box::new(checkpoint),
                resume: Some(value),
                same_run: true,
                edits: Map::new(),
            },
            self.options.clone(),
            Some(persistence),
        ))
    }

    /// Starts a new run from one of the thread's checkpoints (time travel):
    /// with no `edits` it re-runs from there; with edits, channel values are
    /// replaced first, forking a new branch. Earlier history is not touched.
    pub async fn run_from(
        &self,
        thread: &ThreadId,
        checkpoint: &str,
        edits: Map<String, Value>,
        run_id: RunId,
    ) -> Result<Run, DurableError> {
        let fork = Fork {
            edits,
            start_at: None,
        };
        self.fork(thread, checkpoint, fork, run_id).await
    }

    /// Like [`Durable::run_from`], and the new run may start at a chosen
    /// node (`fork.start_at`) instead of the checkpoint's own next tasks:
    /// "run this node again, with this state".
    pub async fn fork(
        &self,
        thread: &ThreadId,
        checkpoint: &str,
        fork: Fork,
        run_id: RunId,
    ) -> Result<Run, DurableError> {
        let Fork { edits, start_at } = fork;
        let guard = self.claim(thread)?;
        if let Some(latest) = self.store.latest(thread).await?
            && latest.status == RunStatus::Running
        {
            return Err(DurableError::ThreadBusy {
                thread: thread.clone(),
            });
        }
        let mut source = self
            .store
            .checkpoint(thread, checkpoint)
            .await?
            .ok_or_else(|| DurableError::NoCheckpoint {
                thread: thread.clone(),
                checkpoint: checkpoint.to_string(),
            })?;
        let graph = self.graph_of(&source.run_id).await?;
        crate::state::check_edits(&graph.document().state.channels, &edits).map_err(|error| {
            DurableError::BadEdit {
                channel: error.channel,
                message: error.message,
            }
        })?;
        if let Value::Object(state) = &mut source.state {
            state.extend(edits.clone());
        }
        if let Some(node) = start_at {
            if !graph.document().nodes.iter().any(|spec| spec.id == node) {
                return Err(DurableError::NoNode { node });
            }
            source.next = vec![PendingTask {
                node,
                arg: None,
                instance: None,
            }];
            source.arrivals.clear();
            source.completed.clear();
            source.interrupts.clear();
        }
        let parent = Some(source.id.clone());
        let start = Start::From {
            checkpoint: Box::new(source),
            resume: None,
            same_run: false,
            edits,
        };
        self.begin(graph, run_id, thread, parent, guard, start)
            .await
    }

    /// The runs a crash left running, ready to go on from their last
    /// checkpoints. Steps that had committed are not run again, and each
    /// run's events go on from where its stored log ends.
    pub async fn recover(&self) -> Result<Vec<Run>, DurableError> {
        let mut runs = Vec::new();
        for record in self.store.unfinished().await? {
            if let Some(run) = self.recover_run(&record).await? {
                runs.push(run);
            }
        }
        Ok(runs)
    }

    /// One run a crash left running (see [`Durable::recover`]); `None` if
    /// its thread has moved on since.
    pub async fn recover_run(&self, record: &RunRecord) -> Result<Option<Run>, DurableError> {
        let Some(mut checkpoint) = self.store.latest(&record.thread_id).await? else {
            return Ok(None);
        };
        if checkpoint.run_id != record.run_id || checkpoint.status != RunStatus::Running {
            return Ok(None);
        }
        // Events stored ahead of the checkpoint (by a write-ahead sink) were
        // seen by someone: the run goes on numbering after them, so no
        // number is ever given to two events.
        if let Some(last) = self
            .store
            .events(&record.run_id, checkpoint.next_seq)
            .await?
            .last()
        {
            checkpoint.next_seq = checkpoint.next_seq.max(last.seq + 1);
        }
        let guard = self.claim(&record.thread_id)?;
        let graph = self.graph_of(&record.run_id).await?;
        let persistence = self.persistence(&record.thread_id, Some(checkpoint.id.clone()), guard);
        Ok(Some(Run::prepare(
            graph,
            record.run_id.clone(),
            Start::From {
                checkpoint: Box::new(checkpoint),
                resume: None,
                same_run: true,
                edits: Map::new(),
            },
            self.options.clone(),
            Some(persistence),
        )))
    }

    /// Fails a run a crash left running without going on with it, saying
    /// why (`reason`): its log ends with the failure, and its thread can
    /// start new runs. For a run that takes its servers down (quarantine).
    pub async fn fail_unfinished(&self, run: &RunId, reason: &str) -> Result<(), DurableError> {
        let Some(record) = self.store.run(run).await? else {
            return Ok(());
        };
        let _guard = self.claim(&record.thread_id)?;
        let Some(checkpoint) = self
            .store
            .latest(&record.thread_id)
            .await?
            .filter(|checkpoint| &checkpoint.run_id == run && !checkpoint.status.is_final())
        else {
            return Ok(());
        };
        let next_seq = match self.store.events(run, checkpoint.next_seq).await?.last() {
            Some(last) => checkpoint.next_seq.max(last.seq + 1),
            None => checkpoint.next_seq,
        };
        let event = Arc::new(Event {
            run_id: run.clone(),
            seq: next_seq,
            at_us: now_us(),
            path: Vec::new(),
            payload: EventPayload::RunFailed {
                error: reason.to_string(),
                node: None,
            },
        });
        let failed = Checkpoint {
            id: CheckpointId::from(format!("{run}/{}", next_seq + 1)),
            parent: Some(checkpoint.id.clone()),
            status: RunStatus::Failed,
            next_seq: next_seq + 1,
            error: Some(reason.to_string()),
            created_at_us: now_us(),
            ..checkpoint
        };
        self.store.save(&failed, &[event]).await?;
        Ok(())
    }

    /// Ends a thread's pause without resuming it: its run becomes
    /// cancelled, and the thread can start new runs.
    pub async fn cancel_pause(&self, thread: &ThreadId) -> Result<(), DurableError> {
        let _guard = self.claim(thread)?;
        let checkpoint = match self.store.latest(thread).await? {
            Some(checkpoint) if checkpoint.status == RunStatus::Interrupted => checkpoint,
            other => {
                return Err(DurableError::NotInterrupted {
                    thread: thread.clone(),
                    status: other.map(|c| c.status),
                });
            }
        };
        let event = Arc::new(Event {
            run_id: checkpoint.run_id.clone(),
            seq: checkpoint.next_seq,
            at_us: now_us(),
            path: Vec::new(),
            payload: EventPayload::RunCancelled {
                step: checkpoint.step,
            },
        });
        let cancelled = Checkpoint {
            id: CheckpointId::from(format!("{}/{}", checkpoint.run_id, checkpoint.next_seq + 1)),
            parent: Some(checkpoint.id.clone()),
            status: RunStatus::Cancelled,
            next_seq: checkpoint.next_seq + 1,
            created_at_us: now_us(),
            ..checkpoint
        };
        self.store.save(&cancelled, &[event]).await?;
        Ok(())
    }
}
