//! Where checkpoints and events are kept: the [`CheckpointStore`] trait,
//! and [`MemoryStore`], which keeps them in memory (for tests and
//! short-lived programs). The SQLite store is in `run::sqlite` (feature
//! `sqlite`).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::checkpoint::{Checkpoint, CheckpointSummary, RunStatus, ThreadSummary};
use super::event::Event;
use crate::ids::{RunId, ThreadId};

/// The future a store call is.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the store could not do it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("checkpoint store: {0}")]
pub struct StoreError(pub String);

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

/// Keeps checkpoints and events. Saving a checkpoint with the events
/// emitted since the previous one is one atomic write, so after a crash
/// the stored events end exactly where the stored checkpoint says the run
/// goes on: no gap, no duplicate.
pub trait CheckpointStore: Send + Sync + 'static {
    /// Records a new run (before its first checkpoint).
    fn create_run<'a>(&'a self, run: &'a RunRecord) -> StoreFuture<'a, ()>;

    /// Saves a checkpoint and the events since the last one, atomically,
    /// and sets the run's status to the checkpoint's.
    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()>;

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

/// A store in memory.
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
        if memory
            .runs
            .insert(run.run_id.clone(), run.clone())
            .is_none()
        {
            memory.run_order.push(run.run_id.clone());
        }
        ready(Ok(()))
    }

    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()> {
        let mut memory = self.lock();
        let Some(run) = memory.runs.get_mut(&checkpoint.run_id) else {
            return ready(Err(StoreError(format!("no run `{}`", checkpoint.run_id))));
        };
        run.status = checkpoint.status;
        memory.checkpoints.push(checkpoint.clone());
        let log = memory.events.entry(checkpoint.run_id.clone()).or_default();
        for event in events {
            if event.seq == log.len() as u64 {
                log.push((**event).clone());
            } else {
                return ready(Err(StoreError(format!(
                    "event {} of run `{}` does not follow {}",
                    event.seq,
                    checkpoint.run_id,
                    log.len()
                ))));
            }
        }
        ready(Ok(()))
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
