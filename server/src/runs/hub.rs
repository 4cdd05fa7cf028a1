//! One running execution's events, for its watchers: every event is kept
//! in order and broadcast live. A watcher subscribes and reads the backlog
//! under one lock, so the seam between replay and live has no gap and no
//! duplicate; one that falls behind the broadcast catches up from the
//! backlog by sequence number. The run never waits for a watcher.
//!
//! Events are stored before anyone sees them (the hub is a write-ahead
//! sink): a batch of what the run emitted is appended to the run's event
//! log, then published. A number a viewer has seen is therefore in the
//! database, and a run recovered after a crash numbers its events after
//! it: no number ever names two events. The run's checkpoints wait for
//! the hub to have stored everything before them.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::ws::Utf8Bytes;
use heddle_engine::run::CheckpointStore;
use heddle_engine::run::{Event, EventSink, StoreError, StoreFuture};
use heddle_wire::protocol::ServerMessage;
use tokio::sync::{broadcast, watch};

/// An event, and the websocket message that carries it, serialized once
/// however many watch.
#[derive(Clone)]
pub struct Frame {
    pub event: Arc<Event>,
    pub text: Utf8Bytes,
}

impl Frame {
    fn new(event: &Arc<Event>) -> Self {
        let text = ServerMessage::Event {
            event: Arc::clone(event),
        }
        .to_text();
        Frame {
            event: Arc::clone(event),
            text: Utf8Bytes::from(text),
        }
    }

    pub fn seq(&self) -> u64 {
        self.event.seq
    }
}

/// How many events a watcher may fall behind before it catches up from the
/// backlog instead.
const LIVE_CAPACITY: usize = 1024;

/// The events of one execution.
pub struct RunHub {
    inner: Arc<Mutex<Inner>>,
    store: Arc<dyn CheckpointStore>,
    /// How far the log is stored (the `seq` after the last stored event),
    /// or that storing failed.
    stored: Arc<watch::Sender<Stored>>,
}

#[derive(Clone, Debug, PartialEq)]
enum Stored {
    Upto(u64),
    /// Why: the run fails with it.
    Failed(Arc<str>),
}

#[derive(Default)]
struct Inner {
    /// Stored and published.
    events: Vec<Frame>,
    /// Emitted, not yet stored.
    pending: Vec<Frame>,
    /// The `seq` after the last event emitted.
    emitted: u64,
    /// Whether a task is storing `pending`.
    writing: bool,
    /// `None` once the execution is over: live streams then end.
    live: Option<broadcast::Sender<Frame>>,
}

/// What a watcher gets: the backlog from its sequence number, then live.
pub struct Replay {
    pub backlog: Vec<Frame>,
    pub live: broadcast::Receiver<Frame>,
    /// The first `seq` this execution emitted (earlier ones are stored).
    pub first_seq: Option<u64>,
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RunHub {
    /// A hub for an execution about to start, storing into `store`.
    pub fn new(store: Arc<dyn CheckpointStore>) -> Self {
        RunHub {
            inner: Arc::new(Mutex::new(Inner {
                live: Some(broadcast::Sender::new(LIVE_CAPACITY)),
                ..Inner::default()
            })),
            store,
            stored: Arc::new(watch::Sender::new(Stored::Upto(0))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Stores what is pending, then publishes it, until nothing is left.
    async fn write(
        inner: Arc<Mutex<Inner>>,
        store: Arc<dyn CheckpointStore>,
        stored: Arc<watch::Sender<Stored>>,
    ) {
        loop {
            let batch = {
                let mut guard = lock(&inner);
                if guard.pending.is_empty() {
                    guard.writing = false;
                    return;
                }
                std::mem::take(&mut guard.pending)
            };
            let events: Vec<Arc<Event>> =
                batch.iter().map(|frame| Arc::clone(&frame.event)).collect();
            if let Err(error) = store.append_events(&events).await {
                tracing::error!(%error, "cannot store a run's events; they are not shown");
                lock(&inner).writing = false;
                stored.send_replace(Stored::Failed(error.message().into()));
                return;
            }
            let upto = events.last().map_or(0, |event| event.seq + 1);
            {
                let mut guard = lock(&inner);
                for frame in batch {
                    if let Some(live) = &guard.live {
                        // No watcher is not an error.
                        let _ = live.send(frame.clone());
                    }
                    guard.events.push(frame);
                }
            }
            stored.send_replace(Stored::Upto(upto));
        }
    }

    /// Waits until every event emitted so far is stored and published.
    async fn stored_all(&self) -> Result<(), StoreError> {
        let target = self.lock().emitted;
        let mut progress = self.stored.subscribe();
        let reached = progress
            .wait_for(|stored| match stored {
                Stored::Upto(upto) => *upto >= target,
                Stored::Failed(_) => true,
            })
            .await
            .map(|stored| stored.clone());
        match reached {
            Ok(Stored::Upto(_)) => Ok(()),
            Ok(Stored::Failed(why)) => Err(StoreError::Backend(format!(
                "the run's events could not be stored: {why}"
            ))),
            Err(_) => Err(StoreError::Backend(
                "the run's events could not be stored".into(),
            )),
        }
    }

    /// Subscribes, with every event from `from_seq` on that was emitted
    /// before the subscription.
    pub fn watch(&self, from_seq: u64) -> Replay {
        let inner = self.lock();
        let live = match &inner.live {
            Some(sender) => sender.subscribe(),
            // Over: a stream that ends after the backlog.
            None => broadcast::channel(1).1,
        };
        let start = inner.events.partition_point(|frame| frame.seq() < from_seq);
        Replay {
            backlog: inner.events[start..].to_vec(),
            live,
            first_seq: inner.events.first().map(Frame::seq),
        }
    }

    /// The events from `from_seq` on (a lagging watcher's catch-up).
    pub fn since(&self, from_seq: u64) -> Vec<Frame> {
        let inner = self.lock();
        let start = inner.events.partition_point(|frame| frame.seq() < from_seq);
        inner.events[start..].to_vec()
    }

    /// Ends the live streams once what was emitted is stored and shown:
    /// watchers get what is left, then the end.
    pub async fn close(&self) {
        let _ = self.stored_all().await;
        self.close_now();
    }

    /// Ends the live streams at once (the server is stopping).
    pub fn close_now(&self) {
        self.lock().live = None;
    }
}

impl EventSink for RunHub {
    fn event(&self, event: &Arc<Event>) {
        // Serialized before taking the lock: the run's task pays once.
        let frame = Frame::new(event);
        let start = {
            let mut inner = self.lock();
            inner.emitted = inner.emitted.max(event.seq + 1);
            inner.pending.push(frame);
            !std::mem::replace(&mut inner.writing, true)
        };
        if start {
            tokio::spawn(Self::write(
                Arc::clone(&self.inner),
                Arc::clone(&self.store),
                Arc::clone(&self.stored),
            ));
        }
    }

    fn writes_ahead(&self) -> bool {
        true
    }

    fn flush(&self) -> StoreFuture<'_, ()> {
        Box::pin(self.stored_all())
    }
}
