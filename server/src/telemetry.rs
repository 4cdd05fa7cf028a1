//! What the server's runs look like from outside it: every run's events
//! become OpenTelemetry traces exported over OTLP ([`traces`], when an
//! endpoint is configured) and Prometheus metrics ([`metrics`], served at
//! `/metrics`). Both are fed by the same events the live view reads, from
//! the run's sink ([`Observed`]): no second account of a run is kept, and
//! the engine knows nothing of either.
//!
//! Almost none of it runs on a run's path. A run's sink keeps a small
//! record of each event ([`seen`]) and hands them over in batches; one
//! telemetry thread per server counts them and builds the spans. Should
//! that thread fall far behind, a run's batches are dropped (counted in
//! `heddle_telemetry_events_dropped`) rather than slowing anything; a
//! run's end always gets through, so no run's spans stay open.

pub mod metrics;
pub mod seen;
pub mod traces;

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, mpsc};
use std::time::Duration;

use heddle_engine::RunId;
use heddle_engine::run::{Event, EventSink, StoreFuture};

pub use metrics::Metrics;
use seen::Seen;
pub use traces::{Traces, TracesError};

/// A run's events are handed to the telemetry thread in batches of this
/// many at most...
const BATCH: usize = 512;
/// ...or once the oldest waiting is this old (by the events' own clocks),
/// or at once when the run starts or stops.
const BATCH_AGE_US: u64 = 1_000_000;
/// Events waiting for the telemetry thread beyond which a batch without a
/// run's end is dropped rather than queued.
const MAX_PENDING: usize = 1_000_000;
/// How long a scrape of `/metrics` waits for the events handed over.
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// The server's telemetry: metrics always, traces when enabled, and the
/// thread that feeds both.
pub struct Telemetry {
    shared: Arc<Shared>,
    queue: mpsc::Sender<Message>,
    /// Events handed over and not yet read by the thread.
    pending: Arc<AtomicUsize>,
}

struct Shared {
    metrics: Metrics,
    traces: OnceLock<Traces>,
}

enum Message {
    Events {
        graph_id: Arc<str>,
        run_id: RunId,
        events: Vec<Seen>,
    },
    /// Answered once everything handed over before it was read.
    Settle(tokio::sync::oneshot::Sender<()>),
}

impl Default for Telemetry {
    fn default() -> Self {
        let shared = Arc::new(Shared {
            metrics: Metrics::default(),
            traces: OnceLock::new(),
        });
        let pending = Arc::new(AtomicUsize::new(0));
        let (queue, inbox) = mpsc::channel();
        let worker = (Arc::clone(&shared), Arc::clone(&pending));
        let spawned = std::thread::Builder::new()
            .name("heddle-telemetry".into())
            .spawn(move || work(&worker.0, &worker.1, &inbox));
        if let Err(error) = spawned {
            tracing::error!(%error, "cannot start the telemetry thread: no metrics or traces");
        }
        Telemetry {
            shared,
            queue,
            pending,
        }
    }
}

impl Telemetry {
    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// Exports runs as traces from now on (the first call wins).
    pub fn export_traces(&self, traces: Traces) {
        let _ = self.shared.traces.set(traces);
    }

    /// The trace export, when enabled.
    pub fn traces(&self) -> Option<&Traces> {
        self.shared.traces.get()
    }

    /// Waits (two seconds at most) until the thread has read every event
    /// handed over so far: a scrape then counts every run that ended
    /// before it.
    pub async fn settled(&self) {
        let (done, heard) = tokio::sync::oneshot::channel();
        if self.queue.send(Message::Settle(done)).is_ok() {
            let _ = tokio::time::timeout(SETTLE_WAIT, heard).await;
        }
    }

    /// Waits until the thread has read every event handed over so far, then
    /// sends the spans waiting for export (tests, benches).
    pub async fn flush_traces(self: &Arc<Self>) {
        self.settled().await;
        let telemetry = Arc::clone(self);
        let _ = tokio::task::spawn_blocking(move || {
            if let Some(traces) = telemetry.traces() {
                traces.flush();
            }
        })
        .await;
    }

    fn hand_over(&self, graph_id: &Arc<str>, run_id: RunId, events: Vec<Seen>) {
        let count = events.len();
        if self.pending.load(Ordering::Relaxed) > MAX_PENDING && !events.iter().any(Seen::ends) {
            self.metrics().events_dropped.inc_by(count as u64);
            return;
        }
        self.pending.fetch_add(count, Ordering::Relaxed);
        let message = Message::Events {
            graph_id: Arc::clone(graph_id),
            run_id,
            events,
        };
        if self.queue.send(message).is_err() {
            self.pending.fetch_sub(count, Ordering::Relaxed);
        }
    }
}

/// The telemetry thread: reads what runs hand over until the server's
/// telemetry is dropped.
fn work(shared: &Shared, pending: &AtomicUsize, inbox: &mpsc::Receiver<Message>) {
    let mut spans = traces::Spans::default();
    while let Ok(message) = inbox.recv() {
        match message {
            Message::Events {
                graph_id,
                run_id,
                events,
            } => {
                let read = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    shared.metrics.observe_all(&graph_id, &run_id, &events);
                    if let Some(traces) = shared.traces.get() {
                        for seen in &events {
                            spans.observe(traces, &graph_id, &run_id, seen);
                        }
                    }
                }));
                if read.is_err() {
                    tracing::error!(run = %run_id, "the telemetry could not read a run's events");
                }
                pending.fetch_sub(events.len(), Ordering::Relaxed);
            }
            Message::Settle(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// A run's sink that hands every event on, and keeps it for the telemetry.
pub struct Observed {
    inner: Arc<dyn EventSink>,
    telemetry: Arc<Telemetry>,
    graph_id: Arc<str>,
    /// Node updates are exported (whole events kept).
    whole_updates: bool,
    /// The run, from its first event.
    run_id: OnceLock<RunId>,
    waiting: Mutex<Vec<Seen>>,
}

impl Observed {
    pub fn new(inner: Arc<dyn EventSink>, telemetry: Arc<Telemetry>, graph_id: &str) -> Observed {
        let whole_updates = telemetry.traces().is_some_and(Traces::captures_content);
        Observed {
            inner,
            telemetry,
            graph_id: Arc::from(graph_id),
            whole_updates,
            run_id: OnceLock::new(),
            waiting: Mutex::new(Vec::new()),
        }
    }
}

impl EventSink for Observed {
    fn event(&self, event: &Arc<Event>) {
        self.inner.event(event);
        let Some(seen) = Seen::of(event, self.whole_updates) else {
            return;
        };
        let run_id = self.run_id.get_or_init(|| event.run_id.clone());
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        let due = waiting.len() + 1 >= BATCH
            || seen.starts_or_ends()
            || waiting
                .first()
                .is_some_and(|first| seen.at_us().saturating_sub(first.at_us()) >= BATCH_AGE_US);
        waiting.push(seen);
        // Handed over under the lock, so a run's batches stay in order.
        if due {
            let events = std::mem::replace(&mut *waiting, Vec::with_capacity(BATCH));
            self.telemetry
                .hand_over(&self.graph_id, run_id.clone(), events);
        }
    }

    fn writes_ahead(&self) -> bool {
        self.inner.writes_ahead()
    }

    fn flush(&self) -> StoreFuture<'_, ()> {
        self.inner.flush()
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        let events = std::mem::take(
            self.waiting
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if let Some(run_id) = self.run_id.get().filter(|_| !events.is_empty()) {
            self.telemetry
                .hand_over(&self.graph_id, run_id.clone(), events);
        }
    }
}
