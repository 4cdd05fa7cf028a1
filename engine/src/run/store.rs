//! Where checkpoints and events are kept: the [`CheckpointStore`] trait,
//! and [`MemoryStore`], which keeps them in memory (for tests and
//! short-lived programs). The SQLite store is in `run::sqlite` (feature
//! `sqlite`), the PostgreSQL one in `run::postgres` (feature `postgres`).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::checkpoint::{Checkpoint, CheckpointSummary, RunStatus, ThreadSummary};
use super::event::Event;
use crate::format::Retention;
use crate::ids::{CheckpointId, RunId, ThreadId};

/// The future a store call is.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the store could not do it: what kind of failure, and in words
/// what was being done (the words are for people; callers match the kind).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The write does not follow what is stored (a gap in a run's events,
    /// events already stored, a run recorded twice): another writer came
    /// first. Nothing was written.
    #[error("checkpoint store: {0}")]
    Conflict(String),
    /// The run or checkpoint named is not stored.
    #[error("checkpoint store: {0}")]
    Missing(String),
    /// This process may no longer write the run: another took it over
    /// (a server whose lease lapsed). Nothing was written.
    #[error("checkpoint store: {0}")]
    Fenced(String),
    /// A stored record does not read back, or a value cannot be stored.
    #[error("checkpoint store: {0}")]
    Corrupt(String),
    /// The database failed: unreachable, a statement refused, a transaction
    /// that did not commit.
    #[error("checkpoint store: {0}")]
    Backend(String),
}

impl StoreError {
    /// What went wrong, in words.
    pub fn message(&self) -> &str {
        match self {
            StoreError::Conflict(message)
            | StoreError::Missing(message)
            | StoreError::Fenced(message)
            | StoreError::Corrupt(message)
            | StoreError::Backend(message) => message,
        }
    }
}

/// A run's record: what it runs, and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    /// The graph document the run executes (JSON), so a run can be
    /// recovered or resumed by a process that has only the store.
    pub graph: String,
    pub status: RunStatus,
}

/// What a prune removed ([`CheckpointStore::prune`]): of one thread or
/// run as it goes, of all in the end.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pruned {
    /// The thread or run pruned (for progress; empty in the total).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub what: String,
    /// Threads that lost checkpoints.
    pub threads: u64,
    /// Checkpoints removed.
    pub checkpoints: u64,
    /// Kept checkpoints stored again as changes from an earlier kept one.
    pub rebased: u64,
    /// Runs whose events were compacted to their outcome.
    pub runs: u64,
    /// Events removed.
    pub events: u64,
}

impl Pruned {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Pruned) {
        self.threads += other.threads;
        self.checkpoints += other.checkpoints;
        self.rebased += other.rebased;
        self.runs += other.runs;
        self.events += other.events;
    }
}

/// A checkpoint another feature names, which no prune removes
/// ([`CheckpointStore::pin`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointPin {
    /// What names it: a kind of record (`experiment`, ...) and its id.
    pub kind: String,
    pub id: String,
    pub thread: ThreadId,
    pub checkpoint: CheckpointId,
}

/// Keeps checkpoints and events. Saving a checkpoint with the events
/// emitted since the previous one is one atomic write, so after a crash
/// the stored events end exactly where the stored checkpoint says the run
/// goes on: no gap, no duplicate.
///
/// Every store holds the same contract (the engine's conformance tests
/// check it for each):
///
/// - A run's events are numbered from 0 without gaps. Events are written
///   in batches (by [`save`](Self::save) or
///   [`append_events`](Self::append_events)); a batch must be one run's
///   events numbered one after the other, and must begin right after the
///   run's stored log. Anything else (a gap, an event stored twice) is
///   refused, and a refused write stores nothing: not its events, not its
///   checkpoint, not the run's status.
/// - Concurrent writers of one run: two writes of the same events (two
///   processes that both think they run the run) are serialised, and the
///   second is refused, as it no longer follows the log. Saves of
///   checkpoints without events are serialised and all kept, in the order
///   the store took them.
/// - A thread's checkpoints are kept in the order they were saved; their
///   `parent` links make the history a tree, and nothing once saved is
///   changed by a later save.
pub trait CheckpointStore: Send + Sync + 'static {
    /// Records a new run (before its first checkpoint). A run id already
    /// recorded is refused.
    fn create_run<'a>(&'a self, run: &'a RunRecord) -> StoreFuture<'a, ()>;

    /// Saves a checkpoint and the events since the last one, atomically,
    /// and sets the run's status to the checkpoint's. The events are the
    /// checkpoint's run's, following its stored log; when they were stored
    /// ahead ([`append_events`](Self::append_events)), `events` is empty.
    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()>;

    /// Stores events ahead of the checkpoint that will follow them (for a
    /// write-ahead [`EventSink`](super::EventSink)): one batch of one run,
    /// following its stored log, written at once. The checkpoint is later
    /// saved with the events after these, or none.
    fn append_events<'a>(&'a self, events: &'a [Arc<Event>]) -> StoreFuture<'a, ()>;

    /// Rewrites the stored batches of `run`'s events from `first` to `last`
    /// as one batch, where streamed tokens take a fraction of the room
    /// (see `stored_events`). The events read back exactly as before,
    /// numbers and times included, so readers never notice. Only batches
    /// that cover the range exactly and end the run's stored log are
    /// rewritten; otherwise, and in stores with nothing to gain (the
    /// default), nothing happens.
    fn compact_events<'a>(&'a self, run: &'a RunId, first: u64, last: u64) -> StoreFuture<'a, ()> {
        let _ = (run, first, last);
        Box::pin(async { Ok(()) })
    }

    /// Removes what `policy` does not keep (see docs/runs.md,
    /// "Retention"): of each thread with a checkpoint made after
    /// `changed_since_us`, all but its newest checkpoints, pauses, fork
    /// points, each run's last checkpoint and those pinned ([`pin`]); and
    /// of each run that ended `keep_events_days` before `now_us`, every
    /// event but its first and last. A graph's own retention, where it
    /// says, overrides `policy` for its threads and runs. Every kept
    /// checkpoint and event reads back exactly as before.
    ///
    /// Safe while runs go on, from several processes: each thread and
    /// each run is pruned in a transaction of its own, which a save does
    /// not interleave with. `progress` hears of each thread and run pruned.
    /// Stores that keep everything (the memory store) do nothing.
    ///
    /// [`pin`]: Self::pin
    fn prune<'a>(
        &'a self,
        policy: Retention,
        now_us: u64,
        changed_since_us: u64,
        progress: &'a (dyn Fn(Pruned) + Send + Sync),
    ) -> StoreFuture<'a, Pruned> {
        let _ = (policy, now_us, changed_since_us, progress);
        Box::pin(async { Ok(Pruned::default()) })
    }

    /// Keeps a checkpoint from every prune, for what `pin` names (another
    /// feature's record) until it is unpinned. Pinning twice is as once.
    fn pin<'a>(&'a self, pin: &'a CheckpointPin) -> StoreFuture<'a, ()> {
        let _ = pin;
        Box::pin(async { Ok(()) })
    }

    /// Lets go of every checkpoint pinned for `kind` `id`; says how many.
    fn unpin<'a>(&'a self, kind: &'a str, id: &'a str) -> StoreFuture<'a, u64> {
        let _ = (kind, id);
        Box::pin(async { Ok(0) })
    }

    /// Saves several checkpoints (each with its events) in order, as one
    /// write where the store can.
    fn save_batch<'a>(&'a self, batch: &'a [(Checkpoint, Vec<Arc<Event>>)]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            for (checkpoint, events) in batch {
                self.save(checkpoint, events).await?;
            }
            Ok(())
        })
    }

    /// A checkpoint by id.
    fn checkpoint<'a>(
        &'a self,
        thread: &'a ThreadId,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Checkpoint>>;

    /// The thread's newest checkpoint.
    fn latest<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Option<Checkpoint>>;

    /// The newest checkpoint of `run`: once the run ended, the one that
    /// holds its final state (which its record and its end event do not
    /// repeat).
    fn last_of_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Checkpoint>>;

    /// The thread's checkpoints, oldest first.
    fn history<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Vec<CheckpointSummary>>;

    /// Every thread, most recently active first.
    fn threads<'a>(&'a self) -> StoreFuture<'a, Vec<ThreadSummary>>;

    /// A run's record.
    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<RunRecord>>;

    /// Runs whose status is still `running`: after a crash, the ones to
    /// recover.
    fn unfinished<'a>(&'a self) -> StoreFuture<'a, Vec<RunRecord>>;

    /// A run's stored events from `from_seq` on.
    fn events<'a>(&'a self, run: &'a RunId, from_seq: u64) -> StoreFuture<'a, Vec<Event>>;
}

/// The first and last `seq` of a batch of `run`'s events (`None` for an
/// empty batch), checking that they are that run's, numbered one after
/// the other.
pub(crate) fn batch_span(
    run: &RunId,
    events: &[Arc<Event>],
) -> Result<Option<(u64, u64)>, StoreError> {
    let Some(first) = events.first() else {
        return Ok(None);
    };
    let mut last = first.seq;
    for (i, event) in events.iter().enumerate() {
        if event.run_id != *run {
            return Err(StoreError::Conflict(format!(
                "event {} of run `{}` is in a batch of run `{run}`",
                event.seq, event.run_id
            )));
        }
        if i > 0 && Some(event.seq) != last.checked_add(1) {
            return Err(StoreError::Conflict(format!(
                "event {} of run `{run}` does not follow {last} in its batch",
                event.seq
            )));
        }
        last = event.seq;
    }
    Ok(Some((first.seq, last)))
}

/// A store in memory. One lock guards it all, so concurrent writers are
/// serialised; a write whose events no longer follow the log is refused.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    runs: HashMap<RunId, RunRecord>,
    run_order: Vec<RunId>,
    checkpoints: Vec<Checkpoint>,
    events: HashMap<RunId, Vec<Event>>,
}

impl Memory {
    /// Checks that `events` are `run`'s and follow its stored log.
    fn check_follows(&self, run: &RunId, events: &[Arc<Event>]) -> Result<(), StoreError> {
        if !self.runs.contains_key(run) {
            return Err(StoreError::Missing(format!("no run `{run}`")));
        }
        if let Some((first, _)) = batch_span(run, events)? {
            let stored = self.events.get(run).map_or(0, Vec::len) as u64;
            if first != stored {
                return Err(StoreError::Conflict(format!(
                    "event {first} of run `{run}` does not follow {stored}"
                )));
            }
        }
        Ok(())
    }

    /// Appends events [`Memory::check_follows`] accepted.
    fn append(&mut self, run: &RunId, events: &[Arc<Event>]) {
        if events.is_empty() {
            return;
        }
        let log = self.events.entry(run.clone()).or_default();
        log.extend(events.iter().map(|event| (**event).clone()));
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn ready<'a, T: Send + 'a>(value: Result<T, StoreError>) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl CheckpointStore for MemoryStore {
    fn create_run<'a>(&'a self, run: &'a RunRecord) -> StoreFuture<'a, ()> {
        let mut memory = self.lock();
        if memory.runs.contains_key(&run.run_id) {
            return ready(Err(StoreError::Conflict(format!(
                "run `{}` is already recorded",
                run.run_id
            ))));
        }
        memory.runs.insert(run.run_id.clone(), run.clone());
        memory.run_order.push(run.run_id.clone());
        ready(Ok(()))
    }

    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()> {
        let mut memory = self.lock();
        // Everything is checked before anything changes: a refused save
        // stores nothing.
        if let Err(error) = memory.check_follows(&checkpoint.run_id, events) {
            return ready(Err(error));
        }
        memory.append(&checkpoint.run_id, events);
        if let Some(run) = memory.runs.get_mut(&checkpoint.run_id) {
            run.status = checkpoint.status;
        }
        memory.checkpoints.push(checkpoint.clone());
        ready(Ok(()))
    }

    fn append_events<'a>(&'a self, events: &'a [Arc<Event>]) -> StoreFuture<'a, ()> {
        let Some(first) = events.first() else {
            return ready(Ok(()));
        };
        let mut memory = self.lock();
        let result = memory.check_follows(&first.run_id, events);
        if result.is_ok() {
            memory.append(&first.run_id, events);
        }
        ready(result)
    }

    fn checkpoint<'a>(
        &'a self,
        thread: &'a ThreadId,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Checkpoint>> {
        let memory = self.lock();
        let found = memory
            .checkpoints
            .iter()
            .find(|c| &c.thread_id == thread && c.id.as_str() == id)
            .cloned();
        ready(Ok(found))
    }

    fn latest<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Option<Checkpoint>> {
        let memory = self.lock();
        let found = memory
            .checkpoints
            .iter()
            .rev()
            .find(|c| &c.thread_id == thread)
            .cloned();
        ready(Ok(found))
    }

    fn last_of_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Checkpoint>> {
        let memory = self.lock();
        let found = memory
            .checkpoints
            .iter()
            .rev()
            .find(|c| &c.run_id == run)
            .cloned();
        ready(Ok(found))
    }

    fn history<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Vec<CheckpointSummary>> {
        let memory = self.lock();
        let list = memory
            .checkpoints
            .iter()
            .filter(|c| &c.thread_id == thread)
            .map(CheckpointSummary::from)
            .collect();
        ready(Ok(list))
    }

    fn threads<'a>(&'a self) -> StoreFuture<'a, Vec<ThreadSummary>> {
        let memory = self.lock();
        let mut threads: Vec<ThreadSummary> = Vec::new();
        for checkpoint in memory.checkpoints.iter().rev() {
            if threads.iter().any(|t| t.thread_id == checkpoint.thread_id) {
                continue;
            }
            let runs = memory
                .runs
                .values()
                .filter(|r| r.thread_id == checkpoint.thread_id)
                .count();
            threads.push(ThreadSummary {
                thread_id: checkpoint.thread_id.clone(),
                latest: CheckpointSummary::from(checkpoint),
                runs: runs as u64,
            });
        }
        ready(Ok(threads))
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<RunRecord>> {
        ready(Ok(self.lock().runs.get(run).cloned()))
    }

    fn unfinished<'a>(&'a self) -> StoreFuture<'a, Vec<RunRecord>> {
        let memory = self.lock();
        let list = memory
            .run_order
            .iter()
            .filter_map(|id| memory.runs.get(id))
            .filter(|run| run.status == RunStatus::Running)
            .cloned()
            .collect();
        ready(Ok(list))
    }

    fn events<'a>(&'a self, run: &'a RunId, from_seq: u64) -> StoreFuture<'a, Vec<Event>> {
        let memory = self.lock();
        let list = memory
            .events
            .get(run)
            .map(|log| log.iter().skip(from_seq as usize).cloned().collect())
            .unwrap_or_default();
        ready(Ok(list))
    }
}
