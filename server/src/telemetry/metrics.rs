//! The server's metrics in the Prometheus text format (`/metrics`), kept
//! with the prometheus-client crate: runs started and ended by graph and
//! status, run and node durations, model latency, tokens and cost by
//! model, tool calls, and, read when scraped, runs queued and active and
//! the live viewers. Graphs are labelled by id (never by name, which is
//! their owners' text). Labels that graph content or a model chooses (node
//! ids, model and tool names) are owners' text too, without bound: each
//! takes a bounded number of series, and the rest are counted together
//! under `_other`, so no graph can grow the scrape without end.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, PoisonError};

use heddle_engine::run::EventPayload;
use heddle_engine::{NodeId, RunId};

use super::seen::{Seen, View};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GraphLabel {
    graph: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndLabels {
    graph: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NodeLabels {
    graph: String,
    node: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabel {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    tool: String,
    outcome: String,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Node series (graph and node) kept apart; the rest are `_other`.
pub const MAX_NODE_SERIES: usize = 2000;
/// Model names kept apart.
pub const MAX_MODEL_SERIES: usize = 64;
/// Tool names kept apart.
pub const MAX_TOOL_SERIES: usize = 256;
/// The label of the series everything past a bound is counted in.
pub const OTHER: &str = "_other";

/// The values of one label seen so far, up to a bound.
struct Bounded {
    seen: Mutex<HashSet<String>>,
    most: usize,
}

impl Bounded {
    fn new(most: usize) -> Bounded {
        Bounded {
            seen: Mutex::new(HashSet::new()),
            most,
        }
    }

    /// Whether `value` has (or now gets) a series of its own.
    fn admits(&self, value: &str) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(value) {
            return true;
        }
        if seen.len() < self.most {
            seen.insert(value.to_string());
            return true;
        }
        false
    }

    /// `value`, or [`OTHER`] past the bound.
    fn label(&self, value: &str) -> String {
        match self.admits(value) {
            true => value.to_string(),
            false => OTHER.to_string(),
        }
    }
}

fn seconds() -> Histogram {
    // 5 ms to about 80 s.
    Histogram::new(exponential_buckets(0.005, 2.0, 15))
}

/// The metrics, and the registry that prints them.
pub struct Metrics {
    registry: Registry,
    runs_started: Family<GraphLabel, Counter>,
    runs_ended: Family<EndLabels, Counter>,
    run_seconds: Histograms<GraphLabel>,
    node_seconds: Histograms<NodeLabels>,
    model_seconds: Histograms<ModelLabel>,
    model_tokens: Family<TokenLabels, Counter>,
    model_cost: Family<ModelLabel, Counter<f64, AtomicU64>>,
    tool_calls: Family<ToolLabels, Counter>,
    /// Read when scraped.
    pub runs_queued: Gauge,
    pub runs_active: Gauge,
    pub viewers: Gauge,
    /// Events the telemetry thread was too far behind to take.
    pub events_dropped: Counter,
    /// When each execution in progress began, by run, for its duration.
    started: Mutex<HashMap<String, u64>>,
    nodes: Bounded,
    models: Bounded,
    tools: Bounded,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("heddle");
        let runs_started = Family::<GraphLabel, Counter>::default();
        registry.register(
            "runs_started",
            "Runs started (and resumed), by graph",
            runs_started.clone(),
        );
        let runs_ended = Family::<EndLabels, Counter>::default();
        registry.register(
            "runs_ended",
            "Runs that finished, failed, were cancelled or paused, by graph and status",
            runs_ended.clone(),
        );
        let run_seconds: Histograms<GraphLabel> = Family::new_with_constructor(seconds);
        registry.register(
            "run_duration_seconds",
            "How long runs ran, per execution",
            run_seconds.clone(),
        );
        let node_seconds: Histograms<NodeLabels> = Family::new_with_constructor(seconds);
        registry.register(
            "node_duration_seconds",
            "How long node executions took",
            node_seconds.clone(),
        );
        let model_seconds: Histograms<ModelLabel> = Family::new_with_constructor(seconds);
        registry.register(
            "model_latency_seconds",
            "How long model calls took",
            model_seconds.clone(),
        );
        let model_tokens = Family::<TokenLabels, Counter>::default();
        registry.register(
            "model_tokens",
            "Tokens model calls used, by model and kind (prompt, completion, cached)",
            model_tokens.clone(),
        );
        let model_cost = Family::<ModelLabel, Counter<f64, AtomicU64>>::default();
        registry.register(
            "model_cost_usd",
            "What model calls cost, in US dollars",
            model_cost.clone(),
        );
        let tool_calls = Family::<ToolLabels, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls, by tool and outcome",
            tool_calls.clone(),
        );
        let runs_queued = Gauge::default();
        registry.register(
            "runs_queued",
            "Runs waiting for a slot",
            runs_queued.clone(),
        );
        let runs_active = Gauge::default();
        registry.register(
            "runs_active",
            "Runs this server is executing",
            runs_active.clone(),
        );
        let viewers = Gauge::default();
        registry.register(
            "viewers",
            "Live views of runs open on this server",
            viewers.clone(),
        );
        let events_dropped = Counter::default();
        registry.register(
            "telemetry_events_dropped",
            "Run events left out of the metrics and traces because their thread fell behind",
            events_dropped.clone(),
        );
        Metrics {
            registry,
            runs_started,
            runs_ended,
            run_seconds,
            node_seconds,
            model_seconds,
            model_tokens,
            model_cost,
            tool_calls,
            runs_queued,
            runs_active,
            viewers,
            events_dropped,
            started: Mutex::new(HashMap::new()),
            nodes: Bounded::new(MAX_NODE_SERIES),
            models: Bounded::new(MAX_MODEL_SERIES),
            tools: Bounded::new(MAX_TOOL_SERIES),
        }
    }
}

impl Metrics {
    /// A batch of the events of the run `run_id` of `graph_id`. Node
    /// durations go to histograms looked up once per node and batch (a
    /// lookup builds its labels' strings).
    pub fn observe_all(&self, graph_id: &str, run_id: &RunId, events: &[Seen]) {
        let mut nodes: Vec<(&NodeId, Histogram)> = Vec::new();
        for seen in events {
            match seen.view() {
                View::NodeSucceeded {
                    node, duration_us, ..
                } => {
                    let known = nodes.iter().find(|(id, _)| *id == node);
                    let histogram = match known {
                        Some((_, histogram)) => histogram.clone(),
                        None => {
                            let histogram = self
                                .node_seconds
                                .get_or_create(&self.node_labels(graph_id, node))
                                .clone();
                            nodes.push((node, histogram.clone()));
                            histogram
                        }
                    };
                    histogram.observe(duration_us as f64 / 1e6);
                }
                _ => self.observe(graph_id, run_id, seen),
            }
        }
    }

    /// One event of a run of `graph_id`.
    pub fn observe(&self, graph_id: &str, run_id: &RunId, seen: &Seen) {
        let at_us = seen.at_us();
        let graph = || GraphLabel {
            graph: graph_id.to_string(),
        };
        let end = |status: &str| {
            self.runs_ended
                .get_or_create(&EndLabels {
                    graph: graph_id.to_string(),
                    status: status.to_string(),
                })
                .inc();
            let began = self
                .started
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(run_id.as_str());
            if let Some(began) = began {
                let took = at_us.saturating_sub(began) as f64 / 1e6;
                self.run_seconds.get_or_create(&graph()).observe(took);
            }
        };
        let payload = match seen.view() {
            View::NodeSucceeded {
                node, duration_us, ..
            } => {
                self.node_seconds
                    .get_or_create(&self.node_labels(graph_id, node))
                    .observe(duration_us as f64 / 1e6);
                return;
            }
            View::Other(payload) => payload,
            _ => return,
        };
        match payload {
            EventPayload::RunStarted { .. } | EventPayload::RunResumed { .. } => {
                self.runs_started.get_or_create(&graph()).inc();
                self.started
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(run_id.to_string(), at_us);
            }
            EventPayload::RunFinished { .. } => end("finished"),
            EventPayload::RunFailed { .. } => end("failed"),
            EventPayload::RunCancelled { .. } => end("cancelled"),
            EventPayload::RunInterrupted { .. } => end("interrupted"),
            EventPayload::Custom { name, data, .. } if name == "usage" => {
                let model = self
                    .models
                    .label(data["model"].as_str().unwrap_or("unknown"));
                let label = ModelLabel {
                    model: model.clone(),
                };
                if let Some(ms) = data["latency_ms"].as_u64() {
                    self.model_seconds
                        .get_or_create(&label)
                        .observe(ms as f64 / 1e3);
                }
                for (kind, field) in [
                    ("prompt", "prompt_tokens"),
                    ("completion", "completion_tokens"),
                    ("cached", "cached_tokens"),
                ] {
                    self.model_tokens
                        .get_or_create(&TokenLabels {
                            model: model.clone(),
                            kind: kind.to_string(),
                        })
                        .inc_by(data[field].as_u64().unwrap_or(0));
                }
                if let Some(cost) = data["cost_usd"].as_f64() {
                    self.model_cost.get_or_create(&label).inc_by(cost);
                }
            }
            EventPayload::Custom { name, data, .. } if name == "tool_result" => {
                let outcome = if data["ok"].as_bool().unwrap_or(false) {
                    "ok"
                } else {
                    "error"
                };
                self.tool_calls
                    .get_or_create(&ToolLabels {
                        tool: self.tools.label(data["name"].as_str().unwrap_or("unknown")),
                        outcome: outcome.to_string(),
                    })
                    .inc();
            }
            _ => {}
        }
    }

    /// The labels of `node` of `graph_id`: its own series while there is
    /// room, else the graph's `_other` one.
    fn node_labels(&self, graph_id: &str, node: &NodeId) -> NodeLabels {
        let node = match self.nodes.admits(&format!("{graph_id}\u{0}{node}")) {
            true => node.to_string(),
            false => OTHER.to_string(),
        };
        NodeLabels {
            graph: graph_id.to_string(),
            node,
        }
    }

    /// Everything, in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot print the metrics");
        }
        text
    }
}

/// Counts a live viewer while it is held.
pub struct Viewer<'a>(&'a Gauge);

impl<'a> Viewer<'a> {
    pub fn new(viewers: &'a Gauge) -> Viewer<'a> {
        viewers.inc();
        Viewer(viewers)
    }
}

impl Drop for Viewer<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::{Bounded, OTHER};

    #[test]
    fn values_past_the_bound_share_one_series() {
        let bounded = Bounded::new(2);
        assert_eq!(bounded.label("a"), "a");
        assert_eq!(bounded.label("b"), "b");
        assert_eq!(bounded.label("c"), OTHER);
        assert_eq!(bounded.label("a"), "a");
        assert_eq!(bounded.seen.lock().unwrap().len(), 2);
    }
}
