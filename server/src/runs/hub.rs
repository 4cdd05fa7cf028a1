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
//!
//! A run's last event (finished, failed, cancelled, interrupted) is
//! stored at once but shown only when the hub is closed, which is after the
//! run's record holds its end: whoever sees "finished" and then asks for
//! the run finds it finished, with its output.
//!
//! Only a window of the newest events stays in memory ([`WINDOW_EVENTS`],
//! [`WINDOW_BYTES`]): a watcher that asks for older ones reads them from
//! the store, where every event in the hub already is.
//!
//! Stored as they come, a model's tokens make a batch each; when a step
//! ends (and every [`COMPACT_AFTER`] batches of a long one) the step's
//! batches are rewritten as one, where a node's tokens are one text
//! ([`CheckpointStore::compact_events`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::ws::Utf8Bytes;
use heddle_engine::run::CheckpointStore;
use heddle_engine::run::{Event, EventPayload, EventSink, StoreError, StoreFuture};
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

/// At most how many events a hub keeps in memory, and how many bytes of
/// their messages: a long run's memory stays bounded.
const WINDOW_EVENTS: usize = 4096;
const WINDOW_BYTES: usize = 8 << 20;

/// How many batches a step may store before they are compacted, even
/// before it ends.
const COMPACT_AFTER: usize = 64;
/// The most events one compacted batch takes in again: past it, a long
/// step's next batches are compacted on their own, so a model that streams
/// without end costs linear work, not the square of its tokens.
const COMPACT_SPAN: u64 = 4096;

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
    /// The newest events stored and published (older ones are only in the
    /// store).
    events: VecDeque<Frame>,
    /// The bytes of their messages.
    window_bytes: usize,
    /// Emitted, not yet stored.
    pending: Vec<Frame>,
    /// The `seq` after the last event emitted.
    emitted: u64,
    /// Whether a task is storing `pending`.
    writing: bool,
    /// `None` once the execution is over: live streams then end.
    live: Option<broadcast::Sender<Frame>>,
    /// The batches stored since the step began, not yet compacted.
    step: Option<StepBatches>,
    /// Stored, shown when the hub closes: the run's last event and any
    /// after it.
    held: Vec<Frame>,
}

/// The stored batches of the step going on.
struct StepBatches {
    /// Its first event and last stored one.
    first: u64,
    last: u64,
    /// How many batches they are stored in.
    batches: usize,
    /// Whether a model streamed tokens among them.
    tokens: bool,
}

impl StepBatches {
    /// Takes a newly stored batch in; says which events to compact when
    /// it is time.
    fn stored(step: &mut Option<StepBatches>, events: &[Arc<Event>]) -> Option<(u64, u64)> {
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return None;
        };
        let batch = step.get_or_insert(StepBatches {
            first: first.seq,
            last: last.seq,
            batches: 0,
            tokens: false,
        });
        batch.last = last.seq;
        batch.batches += 1;
        batch.tokens |= events.iter().any(|event| is_token(event));
        let ends = events.iter().any(|event| ends_a_step(event));
        let due = batch.tokens && batch.batches > 1;
        let range = (batch.first, batch.last);
        if ends {
            *step = None;
        } else if batch.batches >= COMPACT_AFTER && batch.last - batch.first + 1 >= COMPACT_SPAN {
            // Compacted into one batch that is large enough: the step's
            // next batches begin a range of their own.
            *step = None;
        } else if batch.batches >= COMPACT_AFTER {
            // Compacted into one batch, which the next compaction of the
            // step takes in again.
            batch.batches = 1;
        } else {
            return None;
        }
        due.then_some(range)
    }
}

fn is_token(event: &Event) -> bool {
    matches!(&event.payload, EventPayload::Custom { name, .. } if name == "token")
}

fn ends_a_step(event: &Event) -> bool {
    matches!(
        event.payload,
        EventPayload::StepFinished { .. }
            | EventPayload::RunFinished { .. }
            | EventPayload::RunFailed { .. }
            | EventPayload::RunCancelled { .. }
            | EventPayload::RunInterrupted { .. }
    )
}

/// What a watcher gets: the backlog from its sequence number, then live.
pub struct Replay {
    pub backlog: Vec<Frame>,
    pub live: broadcast::Receiver<Frame>,
    /// The first `seq` the hub holds (earlier ones are read from the
    /// store).
    pub first_seq: Option<u64>,
}

/// What a lagging watcher catches up with: the events the hub holds from
/// its `seq`, and where they begin.
pub struct Since {
    /// The first `seq` the hub holds: what comes before it is read from
    /// the store.
    pub first_seq: Option<u64>,
    pub frames: Vec<Frame>,
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
                    if guard.held.is_empty() && !ends_the_run(&frame.event) {
                        guard.publish(frame);
                    } else {
                        guard.held.push(frame);
                    }
                }
            }
            // Before the checkpoint that follows is saved: a run that
            // ended has its log compacted.
            let due = StepBatches::stored(&mut lock(&inner).step, &events);
            if let (Some((first, last)), Some(event)) = (due, events.first()) {
                // The events read back the same either way: a failure
                // costs room, not events.
                if let Err(error) = store.compact_events(&event.run_id, first, last).await {
                    tracing::warn!(%error, "cannot compact a step's stored events");
                }
            }
            stored.send_replace(Stored::Upto(upto));
        }
    }

    /// Waits until every event emitted so far is stored, and published
    /// unless it is the run's end or after it (see [`RunHub::close`]).
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
        Replay {
            backlog: inner.from(from_seq),
            live,
            first_seq: inner.events.front().map(Frame::seq),
        }
    }

    /// The events it holds from `from_seq` on (a lagging watcher's
    /// catch-up).
    pub fn since(&self, from_seq: u64) -> Since {
        let inner = self.lock();
        Since {
            first_seq: inner.events.front().map(Frame::seq),
            frames: inner.from(from_seq),
        }
    }

    /// Ends the live streams once what was emitted is stored and shown:
    /// watchers get what is left, then the end.
    pub async fn close(&self) {
        let _ = self.stored_all().await;
        self.close_now();
    }

    /// Ends the live streams at once (the server is stopping), after the
    /// events stored so far.
    pub fn close_now(&self) {
        let mut inner = self.lock();
        for frame in std::mem::take(&mut inner.held) {
            inner.publish(frame);
        }
        inner.live = None;
    }
}

/// Whether the event is the run's own end, not a nested run's.
fn ends_the_run(event: &Event) -> bool {
    event.path.is_empty()
        && matches!(
            event.payload,
            EventPayload::RunFinished { .. }
                | EventPayload::RunFailed { .. }
                | EventPayload::RunCancelled { .. }
                | EventPayload::RunInterrupted { .. }
        )
}

impl Inner {
    /// Sends a stored event to the watchers and keeps it in the window.
    fn publish(&mut self, frame: Frame) {
        if let Some(live) = &self.live {
            // No watcher is not an error.
            let _ = live.send(frame.clone());
        }
        self.keep(frame);
    }

    /// Keeps a stored event in the window, letting the oldest go.
    fn keep(&mut self, frame: Frame) {
        self.window_bytes += frame.text.len();
        self.events.push_back(frame);
        while self.events.len() > 1
            && (self.events.len() > WINDOW_EVENTS || self.window_bytes > WINDOW_BYTES)
        {
            if let Some(gone) = self.events.pop_front() {
                self.window_bytes -= gone.text.len();
            }
        }
    }

    fn from(&self, from_seq: u64) -> Vec<Frame> {
        let start = self.events.partition_point(|frame| frame.seq() < from_seq);
        self.events.range(start..).cloned().collect()
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

#[cfg(test)]
mod tests {
    use heddle_engine::{NodeId, RunId};
    use serde_json::json;

    use super::*;

    fn event(seq: u64, payload: EventPayload) -> Arc<Event> {
        Arc::new(Event {
            run_id: RunId::from("r"),
            seq,
            at_us: seq,
            path: Vec::new(),
            payload,
        })
    }

    fn token(seq: u64) -> Arc<Event> {
        event(
            seq,
            EventPayload::Custom {
                node: NodeId::from("chat"),
                instance: None,
                name: "token".into(),
                data: json!({"text": "word "}),
            },
        )
    }

    fn step_started(seq: u64) -> Arc<Event> {
        event(
            seq,
            EventPayload::StepStarted {
                step: 0,
                tasks: Vec::new(),
            },
        )
    }

    fn step_finished(seq: u64) -> Arc<Event> {
        event(
            seq,
            EventPayload::StepFinished {
                step: 0,
                changes: Default::default(),
                delta: None,
            },
        )
    }

    #[test]
    fn a_steps_batches_are_compacted_when_it_ends_if_a_model_streamed() {
        let mut step = None;
        assert_eq!(StepBatches::stored(&mut step, &[step_started(0)]), None);
        for seq in 1..10 {
            assert_eq!(StepBatches::stored(&mut step, &[token(seq)]), None);
        }
        assert_eq!(
            StepBatches::stored(&mut step, &[token(10), step_finished(11)]),
            Some((0, 11))
        );
        // A step without tokens is left as stored; so is one batch.
        assert_eq!(StepBatches::stored(&mut step, &[step_started(12)]), None);
        assert_eq!(StepBatches::stored(&mut step, &[step_finished(13)]), None);
        assert_eq!(
            StepBatches::stored(&mut step, &[step_started(14), token(15), step_finished(16)]),
            None
        );
        assert!(step.is_none());
    }

    #[test]
    fn a_long_step_is_compacted_as_it_goes_each_time_from_its_beginning() {
        let mut step = None;
        let mut due = Vec::new();
        for seq in 0..200 {
            if let Some(range) = StepBatches::stored(&mut step, &[token(seq)]) {
                due.push(range);
            }
        }
        due.extend(StepBatches::stored(&mut step, &[step_finished(200)]));
        assert_eq!(
            due,
            vec![(0, 63), (0, 126), (0, 189), (0, 200)],
            "after 64 batches, then 63 more and the compacted one"
        );
    }

    #[test]
    fn a_step_that_streams_without_end_is_compacted_in_spans_of_bounded_size() {
        let mut step = None;
        let mut due = Vec::new();
        for seq in 0..20_000 {
            if let Some(range) = StepBatches::stored(&mut step, &[token(seq)]) {
                due.push(range);
            }
        }
        assert!(
            due.iter()
                .all(|(first, last)| last - first < COMPACT_SPAN + 64)
        );
        // Each range begins where the last large one ended: none is read twice
        // once it is large.
        let starts: std::collections::BTreeSet<u64> = due.iter().map(|r| r.0).collect();
        assert!(starts.len() > 3, "{starts:?}");
        for window in due.windows(2) {
            let ((a, b), (c, _)) = (window[0], window[1]);
            assert!(c == a || c == b + 1, "{window:?}");
        }
    }

    #[test]
    fn the_window_keeps_the_newest_events_within_its_bounds() {
        let mut inner = Inner::default();
        for seq in 0..(WINDOW_EVENTS as u64 + 100) {
            inner.keep(Frame::new(&token(seq)));
        }
        assert_eq!(inner.events.len(), WINDOW_EVENTS);
        assert_eq!(inner.events.front().map(Frame::seq), Some(100));
        assert_eq!(inner.from(50).first().map(Frame::seq), Some(100));
        assert_eq!(inner.from(4000).len(), WINDOW_EVENTS + 100 - 4000);
        let held: usize = inner.events.iter().map(|f| f.text.len()).sum();
        assert_eq!(inner.window_bytes, held);

        // A few huge events: the bytes bound holds, and the newest stays.
        let big = Arc::new(Event {
            run_id: RunId::from("r"),
            seq: 0,
            at_us: 0,
            path: Vec::new(),
            payload: EventPayload::Custom {
                node: NodeId::from("chat"),
                instance: None,
                name: "log".into(),
                data: json!({"text": "x".repeat(3 << 20)}),
            },
        });
        let mut inner = Inner::default();
        for seq in 0..4 {
            let mut event = (*big).clone();
            event.seq = seq;
            inner.keep(Frame::new(&Arc::new(event)));
        }
        assert_eq!(inner.events.len(), 2);
        assert!(inner.window_bytes <= WINDOW_BYTES);
        assert_eq!(inner.events.back().map(Frame::seq), Some(3));
    }

    fn finished(seq: u64) -> Arc<Event> {
        event(
            seq,
            EventPayload::RunFinished {
                output: Some(json!({"answer": 42})),
                steps: 1,
                changes: Default::default(),
            },
        )
    }

    /// Waits until the hub has stored
    /// what was emitted.
    async fn settle(hub: &RunHub) {
        hub.stored_all().await.expect("stored");
    }

    #[tokio::test]
    async fn the_runs_end_is_stored_at_once_and_shown_only_when_the_hub_closes() {
        use heddle_engine::ThreadId;
        use heddle_engine::run::{MemoryStore, RunRecord, RunStatus};

        let store = Arc::new(MemoryStore::new());
        store
            .create_run(&RunRecord {
                run_id: RunId::from("r"),
                thread_id: ThreadId::from("t"),
                graph: "{}".into(),
                status: RunStatus::Running,
            })
            .await
            .expect("run");
        let hub = RunHub::new(store.clone());
        let mut live = hub.watch(0).live;
        // A nested run's end is not the run's: shown as it comes.
        let mut nested = (*finished(1)).clone();
        nested.path = vec![heddle_engine::run::Hop {
            node: NodeId::from("child"),
            step: 0,
            instance: None,
            child: None,
        }];
        hub.event(&step_started(0));
        hub.event(&Arc::new(nested));
        hub.event(&step_finished(2));
        settle(&hub).await;
        hub.event(&finished(3));
        settle(&hub).await;

        // Stored: a reader of the log finds it.
        let stored = store.events(&RunId::from("r"), 0).await.expect("events");
        assert_eq!(
            stored.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        // Not shown yet: live and a new watcher's backlog stop before it.
        for seq in 0..3 {
            assert_eq!(live.recv().await.map(|f| f.seq()).ok(), Some(seq));
        }
        assert!(live.try_recv().is_err(), "the end is held");
        let backlog: Vec<u64> = hub.watch(0).backlog.iter().map(Frame::seq).collect();
        assert_eq!(backlog, [0, 1, 2]);

        hub.close().await;
        assert_eq!(live.recv().await.map(|f| f.seq()).ok(), Some(3));
        assert!(live.recv().await.is_err(), "then the stream ends");
        let backlog: Vec<u64> = hub.watch(0).backlog.iter().map(Frame::seq).collect();
        assert_eq!(backlog, [0, 1, 2, 3]);
    }
}
