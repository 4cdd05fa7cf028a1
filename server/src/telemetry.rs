//! What the server's runs look like from outside it: every run's events
//! become OpenTelemetry traces exported over OTLP ([`traces`], when an
//! endpoint is configured) and Prometheus metrics ([`metrics`], served at
//! `/metrics`). Both are fed by the same events the live view reads, from
//! the run's sink ([`Observed`]): no second account of a run is kept, and
//! the engine knows nothing of either.

pub mod metrics;
pub mod traces;

use std::sync::{Arc, OnceLock};

use heddle_engine::run::{Event, EventSink, StoreFuture};

pub use metrics::Metrics;
pub use traces::{Traces, TracesError};

/// The server's telemetry: metrics always, traces when enabled.
#[derive(Default)]
pub struct Telemetry {
    pub metrics: Metrics,
    traces: OnceLock<Traces>,
}

impl Telemetry {
    /// Exports runs as traces from now on (the first call wins).
    pub fn export_traces(&self, traces: Traces) {
        let _ = self.traces.set(traces);
    }

    /// The trace export, when enabled.
    pub fn traces(&self) -> Option<&Traces> {
        self.traces.get()
    }

    /// One event of a run of the graph `graph_id`.
    pub fn observe(&self, graph_id: &str, event: &Event) {
        self.metrics.observe(graph_id, event);
        if let Some(traces) = self.traces.get() {
            traces.observe(graph_id, event);
        }
    }
}

/// A run's sink that shows every event to the telemetry before handing it
/// on.
pub struct Observed {
    pub inner: Arc<dyn EventSink>,
    pub telemetry: Arc<Telemetry>,
    pub graph_id: String,
}

impl EventSink for Observed {
    fn event(&self, event: &Arc<Event>) {
        self.telemetry.observe(&self.graph_id, event);
        self.inner.event(event);
    }

    fn writes_ahead(&self) -> bool {
        self.inner.writes_ahead()
    }

    fn flush(&self) -> StoreFuture<'_, ()> {
        self.inner.flush()
    }
}
