//! What exporting runs as traces costs the engine: W1 (a loop of 10,000
//! node executions) and W3 (a chain of 1,000 nodes), the engine's own
//! bench graphs, run with no telemetry, with the metrics only, and with
//! the metrics and the OTLP trace export to a collector on this machine
//! that reads and drops what it is sent. The budget: the export costs the
//! engine under 10% (traces on against off, the metrics being always on).
//!
//! `cargo bench -p heddle-server --bench telemetry` prints a table.
//! Optional argument: repetitions per case (default 7); the median is
//! reported. The last column is how long the telemetry thread (which
//! counts and builds spans off the run's path) still worked once the run
//! had ended.

use std::sync::Arc;
use std::time::{Duration, Instant};

use heddle_engine::run::{Event, EventSink, Run, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId};
use heddle_server::telemetry::{Observed, Telemetry, Traces};
use serde_json::{Value, json};

/// Where events go when nothing else reads them.
struct Nowhere;

impl EventSink for Nowhere {
    fn event(&self, _: &Arc<Event>) {}
}

fn load(name: &str) -> Arc<CompiledGraph> {
    let path = format!(
        "{}/../engine/benches/graphs/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Arc::new(
        CompiledGraph::from_json(&text, &Registry::new()).unwrap_or_else(|e| panic!("{path}: {e}")),
    )
}

fn once(
    runtime: &tokio::runtime::Runtime,
    graph: &Arc<CompiledGraph>,
    input: &Value,
    sink: Arc<dyn EventSink>,
) -> Duration {
    let run = Run::new(
        Arc::clone(graph),
        RunId::from(format!("bench-{}", uuid::Uuid::new_v4())),
        input.clone(),
        RunOptions {
            keep_log: false,
            sink: Some(sink),
            ..RunOptions::default()
        },
    );
    let started = Instant::now();
    runtime
        .block_on(run.execute())
        .unwrap_or_else(|e| panic!("run: {e}"));
    started.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// A collector that reads every export and answers 200.
fn collector(runtime: &tokio::runtime::Runtime) -> String {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("addr: {e}"));
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(|body: axum::body::Bytes| async move {
            std::hint::black_box(body.len());
            axum::http::StatusCode::OK
        }),
    );
    runtime.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/v1/traces")
}

fn main() {
    let repetitions: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(7);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let endpoint = collector(&runtime);
    let metrics_only = Arc::new(Telemetry::default());
    let traced = Arc::new(Telemetry::default());
    traced.export_traces(
        Traces::to_endpoint(&endpoint, false).unwrap_or_else(|e| panic!("traces: {e}")),
    );
    let observed = |telemetry: &Arc<Telemetry>| -> Arc<dyn EventSink> {
        Arc::new(Observed::new(
            Arc::new(Nowhere),
            Arc::clone(telemetry),
            "bench",
        ))
    };

    println!(
        "| workload | engine alone | with metrics | with metrics and OTLP traces | the export's cost (traces on vs off) | all telemetry's cost | telemetry thread done after the run |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let w1 = load("w1_loop.json");
    let w3 = load("w3_chain.json");
    for (name, graph, input) in [
        (
            "W1 loop, 10,000 node executions",
            &w1,
            json!({"target": 10_000}),
        ),
        ("W3 chain, 1,000 nodes", &w3, json!({})),
    ] {
        let mut alone = Vec::new();
        let mut metrics = Vec::new();
        let mut traces = Vec::new();
        let mut behind = Vec::new();
        // Interleaved, so drift in the machine's speed hits all three; each
        // run starts with the telemetry thread idle.
        for _ in 0..repetitions {
            alone.push(once(&runtime, graph, &input, Arc::new(Nowhere)));
            metrics.push(once(&runtime, graph, &input, observed(&metrics_only)));
            runtime.block_on(metrics_only.settled());
            traces.push(once(&runtime, graph, &input, observed(&traced)));
            let started = Instant::now();
            runtime.block_on(traced.settled());
            behind.push(started.elapsed());
        }
        let (alone, metrics, traces, behind) = (
            median(alone),
            median(metrics),
            median(traces),
            median(behind),
        );
        let export = (traces.as_secs_f64() / metrics.as_secs_f64() - 1.0) * 100.0;
        let all = (traces.as_secs_f64() / alone.as_secs_f64() - 1.0) * 100.0;
        println!(
            "| {name} | {:.2} ms | {:.2} ms | {:.2} ms | {export:+.1}% | {all:+.1}% | {:.2} ms |",
            alone.as_secs_f64() * 1e3,
            metrics.as_secs_f64() * 1e3,
            traces.as_secs_f64() * 1e3,
            behind.as_secs_f64() * 1e3,
        );
    }
    if let Some(traces) = traced.traces() {
        traces.flush();
    }
}
