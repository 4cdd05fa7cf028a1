//! Heddle's engine workloads, W1 to W5 (docs/performance.md). Each graph
//! is a JSON file in benches/graphs, run through the public API a library
//! user calls: parse, validate, compile, run. Every run has its event
//! stream on and, for W1 to W3, one subscriber reading it on another thread
//! (events are not kept, so memory stays flat).
//!
//! `cargo bench -p heddle-engine --bench workloads` prints a table.
//! Optional argument: a number of repetitions per workload (default 5);
//! the best repetition is reported, peak memory is the largest seen.

// A counting global allocator needs `unsafe`; it only forwards to the
// system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use heddle_engine::run::{Run, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded to the system allocator with the same layout.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn reset_peak() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    live
}

struct Measured {
    wall: Duration,
    peak_bytes: usize,
    events: u64,
    steps: u32,
}

fn load(name: &str) -> Arc<CompiledGraph> {
    let path = format!("{}/benches/graphs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Arc::new(
        CompiledGraph::from_json(&text, &Registry::new()).unwrap_or_else(|e| panic!("{path}: {e}")),
    )
}

/// One run with a subscriber draining the events on another worker.
fn run_watched(
    runtime: &tokio::runtime::Runtime,
    graph: &Arc<CompiledGraph>,
    input: Value,
) -> Measured {
    let base = reset_peak();
    let options = RunOptions {
        keep_log: false,
        event_capacity: 4096,
        ..RunOptions::default()
    };
    let run = Run::new(Arc::clone(graph), RunId::from("bench"), input, options);
    let mut subscription = run.subscribe();
    let started = Instant::now();
    let (result, events) = runtime.block_on(async move {
        let reader = tokio::spawn(async move {
            let mut seen = 0u64;
            loop {
                match subscription.recv().await {
                    Ok(Some(_)) => seen += 1,
                    Ok(None) => break,
                    Err(lagged) => seen += lagged.missed,
                }
            }
            seen
        });
        let result = tokio::spawn(run.execute()).await;
        (result, reader.await.unwrap_or(0))
    });
    let wall = started.elapsed();
    let steps = match result {
        Ok(Ok(output)) => output.steps,
        Ok(Err(error)) => panic!("run failed: {error}"),
        Err(error) => panic!("run panicked: {error}"),
    };
    Measured {
        wall,
        peak_bytes: PEAK.load(Ordering::Relaxed).saturating_sub(base),
        events,
        steps,
    }
}

fn best(repetitions: usize, mut f: impl FnMut() -> Measured) -> Measured {
    let mut best: Option<Measured> = None;
    let mut peak = 0;
    for _ in 0..repetitions {
        let m = f();
        peak = peak.max(m.peak_bytes);
        if best.as_ref().is_none_or(|b| m.wall < b.wall) {
            best = Some(m);
        }
    }
    let mut best = best.unwrap_or(Measured {
        wall: Duration::ZERO,
        peak_bytes: 0,
        events: 0,
        steps: 0,
    });
    best.peak_bytes = peak;
    best
}

fn per_step(m: &Measured) -> f64 {
    m.wall.as_secs_f64() * 1e6 / f64::from(m.steps.max(1))
}

fn kib(bytes: usize) -> String {
    format!("{:.0} KiB", bytes as f64 / 1024.0)
}

fn main() {
    let repetitions: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));

    println!(
        "| workload | work | wall (best of {repetitions}) | per unit | steps | per step | events | peak memory |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");

    let w1 = load("w1_loop.json");
    for executions in [1_000u64, 10_000, 100_000] {
        let m = best(repetitions, || {
            run_watched(&runtime, &w1, json!({"target": executions}))
        });
        // start and end, plus the loop's executions.
        let nodes = executions + 2;
        println!(
            "| W1 loop | {executions} node executions | {:.2} ms | {:.2} µs / node execution | {} | {:.2} µs | {} | {} |",
            m.wall.as_secs_f64() * 1e3,
            m.wall.as_secs_f64() * 1e6 / nodes as f64,
            m.steps,
            per_step(&m),
            m.events,
            kib(m.peak_bytes)
        );
    }

    let w2 = load("w2_fanout.json");
    let numbers: Vec<u64> = (0..1000).collect();
    let m = best(repetitions, || {
        run_watched(&runtime, &w2, json!({"numbers": numbers}))
    });
    println!(
        "| W2 fan-out | 1000 branches + join | {:.2} ms | {:.2} µs / branch | {} | {:.2} µs | {} | {} |",
        m.wall.as_secs_f64() * 1e3,
        m.wall.as_secs_f64() * 1e6 / 1000.0,
        m.steps,
        per_step(&m),
        m.events,
        kib(m.peak_bytes)
    );

    let w3 = load("w3_chain.json");
    let m = best(repetitions, || run_watched(&runtime, &w3, json!({})));
    println!(
        "| W3 chain | 1000 nodes | {:.2} ms | {:.2} µs / node execution | {} | {:.2} µs | {} | {} |",
        m.wall.as_secs_f64() * 1e3,
        m.wall.as_secs_f64() * 1e6 / 1001.0,
        m.steps,
        per_step(&m),
        m.events,
        kib(m.peak_bytes)
    );

    // W5: many small runs, sequentially on one task, events on (numbered
    // and built) with no subscriber.
    let w5 = load("w5_small.json");
    let runs: u32 = 1000;
    let m = best(repetitions, || {
        let base = reset_peak();
        let started = Instant::now();
        runtime.block_on(async {
            for i in 0..runs {
                let options = RunOptions {
                    keep_log: false,
                    ..RunOptions::default()
                };
                let run = Run::new(
                    Arc::clone(&w5),
                    RunId::from("w5"),
                    json!({"name": format!("user {i}")}),
                    options,
                );
                if let Err(error) = run.execute().await {
                    panic!("run failed: {error}");
                }
            }
        });
        Measured {
            wall: started.elapsed(),
            peak_bytes: PEAK.load(Ordering::Relaxed).saturating_sub(base),
            events: 0,
            steps: 3 * runs,
        }
    });
    println!(
        "| W5 many runs | {runs} runs of a 3-node graph | {:.2} ms | {:.0} runs / s | {} | {:.2} µs | n/a | {} |",
        m.wall.as_secs_f64() * 1e3,
        runs as f64 / m.wall.as_secs_f64(),
        m.steps,
        per_step(&m),
        kib(m.peak_bytes)
    );
}
