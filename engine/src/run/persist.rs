//! How a durable run saves its checkpoints, by durability mode.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::checkpoint::Checkpoint;
use super::emitter::EventSink;
use super::error::RunError;
use super::event::Event;
use super::store::{CheckpointStore, StoreError};
use crate::ids::{CheckpointId, ThreadId};

/// When a durable run writes its checkpoints, like LangGraph's modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// Save each step before starting the next: a crash loses nothing
    /// committed. The default.
    #[default]
    Sync,
    /// Save each step in the background while the run goes on; the run
    /// waits for the writes at its end. A crash can lose the last few steps.
    Async,
    /// Save only when the run starts, pauses and ends. Fastest; a crash
    /// restarts the run from its beginning.
    Exit,
}

/// A durable run's link to its store.
pub(crate) struct Persistence {
    store: Arc<dyn CheckpointStore>,
    durability: Durability,
    thread: ThreadId,
    last: Option<CheckpointId>,
    saved_any: bool,
    writer: Option<Writer>,
    /// Exit mode: events not yet written.
    held_events: Vec<Arc<Event>>,
    /// A sink that stores the events itself, ahead of the checkpoints.
    ahead: Option<Arc<dyn EventSink>>,
    /// Keeps the thread marked busy for as long as the run lives.
    _guard: Option<Box<dyn Send + Sync>>,
}

struct Writer {
    tx: mpsc::Sender<(Checkpoint, Vec<Arc<Event>>)>,
    task: JoinHandle<Result<(), StoreError>>,
}

impl Persistence {
    pub(crate) fn new(
        store: Arc<dyn CheckpointStore>,
        durability: Durability,
        thread: ThreadId,
        parent: Option<CheckpointId>,
        guard: Option<Box<dyn Send + Sync>>,
    ) -> Self {
        Persistence {
            store,
            durability,
            thread,
            last: parent,
            saved_any: false,
            writer: None,
            held_events: Vec::new(),
            ahead: None,
            _guard: guard,
        }
    }

    /// Leaves the events to `sink`, which stores them before they are
    /// seen ([`EventSink::writes_ahead`]); checkpoints wait for it.
    pub(crate) fn with_events_ahead(mut self, sink: Option<Arc<dyn EventSink>>) -> Self {
        self.ahead = sink.filter(|sink| sink.writes_ahead());
        self
    }

    /// The events a checkpoint is saved with: none when the sink stores
    /// them itself (after waiting for it to have stored them all).
    async fn events_for_checkpoint(
        &self,
        events: Vec<Arc<Event>>,
    ) -> Result<Vec<Arc<Event>>, RunError> {
        match &self.ahead {
            Some(sink) => {
                sink.flush().await?;
                Ok(Vec::new())
            }
            None => Ok(events),
        }
    }

    pub(crate) fn thread(&self) -> &ThreadId {
        &self.thread
    }

    /// Makes `id` the newest checkpoint; returns its parent.
    pub(crate) fn advance(&mut self, id: CheckpointId) -> Option<CheckpointId> {
        self.last.replace(id)
    }

    /// Saves a checkpoint between steps, as the durability mode says.
    pub(crate) async fn save_step(
        &mut self,
        checkpoint: Checkpoint,
        events: Vec<Arc<Event>>,
    ) -> Result<(), RunError> {
        let events = self.events_for_checkpoint(events).await?;
        let first = !self.saved_any;
        self.saved_any = true;
        match self.durability {
            Durability::Sync => Ok(self.store.save(&checkpoint, &events).await?),
            Durability::Exit if first => Ok(self.store.save(&checkpoint, &events).await?),
            Durability::Exit => {
                self.held_events.extend(events);
                Ok(())
            }
            Durability::Async => {
                let writer = self
                    .writer
                    .get_or_insert_with(|| spawn_writer(Arc::clone(&self.store)));
                if writer.tx.send((checkpoint, events)).await.is_err() {
                    // The writer stopped on an error; it is reported at the end.
                    return self.flush().await;
                }
                Ok(())
            }
        }
    }

    /// Saves the run's last checkpoint (finished, failed, cancelled or
    /// paused) after every earlier write has landed.
    pub(crate) async fn save_final(
        &mut self,
        checkpoint: Checkpoint,
        events: Vec<Arc<Event>>,
    ) -> Result<(), RunError> {
        self.flush().await?;
        let events = self.events_for_checkpoint(events).await?;
        let mut all = std::mem::take(&mut self.held_events);
        all.extend(events);
        Ok(self.store.save(&checkpoint, &all).await?)
    }

    async fn flush(&mut self) -> Result<(), RunError> {
        if let Some(Writer { tx, task }) = self.writer.take() {
            drop(tx);
            match task.await {
                Ok(result) => result?,
                Err(error) => {
                    return Err(RunError::Store(StoreError::Backend(format!(
                        "the checkpoint writer stopped: {error}"
                    ))));
                }
            }
        }
        Ok(())
    }
}

fn spawn_writer(store: Arc<dyn CheckpointStore>) -> Writer {
    let (tx, mut rx) = mpsc::channel::<(Checkpoint, Vec<Arc<Event>>)>(64);
    let task = tokio::spawn(async move {
        // Whatever queued while the last write ran goes in the next one.
        let mut batch = Vec::new();
        while rx.recv_many(&mut batch, 256).await > 0 {
            store.save_batch(&batch).await?;
            batch.clear();
        }
        Ok(())
    });
    Writer { tx, task }
}
