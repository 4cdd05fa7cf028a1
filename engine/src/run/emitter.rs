//! Delivering a run's events: numbered under one lock so every consumer
//! sees the same order, then handed to an optional sink (the server's
//! store), an optional in-memory log, and the live subscribers.
//!
//! Subscribers never slow the run: they read from a bounded broadcast
//! channel, and one that falls behind is told how many events it missed
//! and from which `seq`, to read them back from the log (or the store).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::broadcast;

use super::event::{Event, EventPayload};
use crate::ids::{NodeId, RunId};
use crate::node::Emit;

/// Receives every event of a run, in order, as it happens. Called on the
/// run's task, so it must be quick (queue the event, don't write it).
pub trait EventSink: Send + Sync {
    /// One event.
    fn event(&self, event: &Arc<Event>);

    /// Whether this sink stores every event in the run's checkpoint store
    /// before anyone sees it (write-ahead): a server that shows events
    /// live must never show a number a crash could give to another event.
    /// A durable run with such a sink leaves events out of its checkpoints
    /// and, before saving each, waits for [`EventSink::flush`], so a saved
    /// checkpoint still has every event before it stored.
    fn writes_ahead(&self) -> bool {
        false
    }

    /// Resolves once every event handed to this sink is stored.
    fn flush(&self) -> super::store::StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// Every event of a run, kept in memory.
#[derive(Debug, Default)]
pub struct EventLog {
    events: Mutex<Vec<Arc<Event>>>,
}

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        EventLog::default()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Event>>> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The events from `seq` on.
    pub fn since(&self, seq: u64) -> Vec<Arc<Event>> {
        let events = self.lock();
        // A resumed run's log starts where its numbering went on, not at 0.
        let start = events.partition_point(|event| event.seq < seq);
        events[start..].to_vec()
    }

    /// How many events the log holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn push(&self, event: Arc<Event>) {
        self.lock().push(event);
    }
}

/// A subscriber fell behind: `missed` events, from `from_seq` on, were
/// dropped for it. Read them from the run's log, then go on receiving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("fell behind: missed {missed} events from seq {from_seq}")]
pub struct Lagged {
    pub missed: u64,
    pub from_seq: u64,
}

/// A live view of a run's events.
pub struct Subscription {
    rx: broadcast::Receiver<Arc<Event>>,
    next_seq: u64,
}

impl Subscription {
    /// The next event; `Ok(None)` once the run is over and every event
    /// was delivered; `Err(Lagged)` when events were missed.
    pub async fn recv(&mut self) -> Result<Option<Arc<Event>>, Lagged> {
        match self.rx.recv().await {
            Ok(event) => {
                self.next_seq = event.seq + 1;
                Ok(Some(event))
            }
            Err(broadcast::error::RecvError::Closed) => Ok(None),
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                let from_seq = self.next_seq;
                self.next_seq += missed;
                Err(Lagged { missed, from_seq })
            }
        }
    }
}

pub(crate) struct Emitter {
    run_id: RunId,
    next_seq: Mutex<u64>,
    tx: broadcast::Sender<Arc<Event>>,
    log: Option<Arc<EventLog>>,
    sink: Option<Arc<dyn EventSink>>,
    /// Events not yet handed to the checkpoint store (durable runs only).
    journal: Option<Mutex<Vec<Arc<Event>>>>,
}

impl Emitter {
    pub(crate) fn new(
        run_id: RunId,
        capacity: usize,
        log: Option<Arc<EventLog>>,
        sink: Option<Arc<dyn EventSink>>,
    ) -> Self {
        Emitter {
            run_id,
            next_seq: Mutex::new(0),
            tx: broadcast::Sender::new(capacity.max(1)),
            log,
            sink,
            journal: None,
        }
    }

    /// Numbers events from `seq` on and journals them for the store.
    pub(crate) fn durable(mut self, seq: u64) -> Self {
        self.next_seq = Mutex::new(seq);
        self.journal = Some(Mutex::new(Vec::new()));
        self
    }

    /// The `seq` the next event gets.
    pub(crate) fn next_seq(&self) -> u64 {
        *self
            .next_seq
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The journaled events, emptying the journal.
    pub(crate) fn take_journal(&self) -> Vec<Arc<Event>> {
        self.journal
            .as_ref()
            .map(|journal| {
                std::mem::take(
                    &mut *journal
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                )
            })
            .unwrap_or_default()
    }

    pub(crate) fn subscribe(&self) -> Subscription {
        let next_seq = *self
            .next_seq
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Subscription {
            rx: self.tx.subscribe(),
            next_seq,
        }
    }

    pub(crate) fn emit(&self, payload: EventPayload) {
        self.emit_at(Vec::new(), payload);
    }

    /// Emits an event that happened at `path` (inside child graphs).
    pub(crate) fn emit_at(&self, path: Vec<super::event::Hop>, payload: EventPayload) {
        let mut next_seq = self
            .next_seq
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let event = Arc::new(Event {
            run_id: self.run_id.clone(),
            seq: *next_seq,
            at_us: now_us(),
            path,
            payload,
        });
        *next_seq += 1;
        if let Some(journal) = &self.journal {
            journal
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(Arc::clone(&event));
        }
        if let Some(sink) = &self.sink {
            sink.event(&event);
        }
        if let Some(log) = &self.log {
            log.push(Arc::clone(&event));
        }
        if self.tx.receiver_count() > 0 {
            // No receiver left is not an error: nobody is watching.
            let _ = self.tx.send(event);
        }
    }
}

impl Emit for Emitter {
    fn emit(&self, node: &NodeId, instance: Option<u32>, name: &str, data: Value) {
        Emitter::emit(
            self,
            EventPayload::Custom {
                node: node.clone(),
                instance,
                name: name.to_string(),
                data,
            },
        );
    }

    fn nested(&self, path: Vec<super::event::Hop>, payload: EventPayload) {
        self.emit_at(path, payload);
    }
}

pub(crate) fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX)
        })
}
