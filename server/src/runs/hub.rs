//! One running execution's events, for its watchers: every event is kept
//! in order and broadcast live. A watcher subscribes and reads the backlog
//! under one lock, so the seam between replay and live has no gap and no
//! duplicate; one that falls behind the broadcast catches up from the
//! backlog by sequence number. The run never waits for a watcher.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::ws::Utf8Bytes;
use heddle_engine::run::{Event, EventSink};
use tokio::sync::broadcast;

/// An event, and the websocket message that carries it, serialized once
/// however many watch.
#[derive(Clone)]
pub struct Frame {
    pub event: Arc<Event>,
    pub text: Utf8Bytes,
}

impl Frame {
    fn new(event: &Arc<Event>) -> Self {
        let text = serde_json::to_string(&serde_json::json!({"type": "event", "event": &**event}))
            .unwrap_or_default();
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
#[derive(Default)]
pub struct RunHub {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    events: Vec<Frame>,
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

impl RunHub {
    /// A hub for an execution about to start.
    pub fn new() -> Self {
        RunHub {
            inner: Mutex::new(Inner {
                events: Vec::new(),
                live: Some(broadcast::Sender::new(LIVE_CAPACITY)),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// Ends the live streams: watchers get what is left, then the end.
    pub fn close(&self) {
        self.lock().live = None;
    }
}

impl EventSink for RunHub {
    fn event(&self, event: &Arc<Event>) {
        // Serialized before taking the lock: the run's task pays once.
        let frame = Frame::new(event);
        let mut inner = self.lock();
        if let Some(live) = &inner.live {
            // No watcher is not an error.
            let _ = live.send(frame.clone());
        }
        inner.events.push(frame);
    }
}
