//! SQLite and PostgreSQL side by side (docs/performance.md, "The two
//! databases"): the same measurements, in one run, on each.
//!
//! ```sh
//! pg_virtualenv bash -c 'HEDDLE_BENCH_POSTGRES="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE" \
//!   cargo bench -p heddle-server --bench databases'
//! ```
//!
//! Without `HEDDLE_BENCH_POSTGRES` only SQLite is measured (and it says so).
//!
//! - Checkpointed step: the engine's W1 loop (1,000 node executions) with
//!   `Durability::Sync` on each store, every step's time from one step's
//!   start to the next (so it includes the step's checkpoint commit).
//! - Graph save and list: the real `heddle serve` on each database; 300
//!   saves of a 40-node graph, one after another, and 300 lists of an
//!   account with 100 graphs, each request's round trip.
//! - Runs started per second: 200 short runs started through the API, 16
//!   requests in flight; the rate the server accepts them at, and the rate
//!   they finish at.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use heddle_engine::run::postgres::PostgresStore;
use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::run::{CheckpointStore, Durability, Durable, EventPayload, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId, ThreadId};
use serde_json::{Value, json};
use support::{Server, fresh_postgres, json, percentile};

fn w1() -> Arc<CompiledGraph> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/benches/graphs/w1_loop.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Arc::new(
        CompiledGraph::from_json(&text, &Registry::new()).unwrap_or_else(|e| panic!("{path}: {e}")),
    )
}

/// Per-step times (µs) of the W1 loop checkpointed every step to `store`.
async fn steps(store: Arc<dyn CheckpointStore>) -> Vec<u64> {
    let durable = Durable::new(Arc::clone(&store))
        .with_durability(Durability::Sync)
        .with_options(RunOptions {
            keep_log: false,
            ..RunOptions::default()
        });
    let run = durable
        .start(
            w1(),
            ThreadId::from("bench"),
            RunId::from("bench"),
            json!({"target": 1000}),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    run.execute().await.unwrap_or_else(|e| panic!("{e}"));
    let events = store
        .events(&RunId::from("bench"), 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let starts: Vec<u64> = events
        .iter()
        .filter(|event| matches!(event.payload, EventPayload::StepStarted { .. }))
        .map(|event| event.at_us)
        .collect();
    let mut times: Vec<u64> = starts.windows(2).map(|pair| pair[1] - pair[0]).collect();
    times.sort_unstable();
    times
}

/// A graph of `n` nodes: a start and a chain of `set` nodes.
fn chain(n: usize) -> Value {
    let mut nodes = vec![json!({"id": "start", "kind": "start"})];
    let mut edges = Vec::new();
    for i in 0..n.saturating_sub(1) {
        nodes.push(json!({"id": format!("s{i}"), "kind": "set",
            "config": {"values": {"count": {"value": i}}}}));
    }
    for pair in nodes.windows(2) {
        edges.push(
            json!({"id": format!("e{}", edges.len()), "from": pair[0]["id"], "to": pair[1]["id"]}),
        );
    }
    json!({"format_version": 2, "name": "chain",
        "state": {"channels": {"count": {"type": "integer"}}},
        "nodes": nodes, "edges": edges})
}

/// The tests' counting loop: counts to the input's `target`.
fn counting() -> Value {
    json!({
        "format_version": 2, "name": "loop",
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}, "target": {"type": "integer"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["target"]}},
            {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "tick"},
            {"id": "again", "from": "tick", "to": "tick", "condition": "count < target"}
        ]
    })
}

/// Round-trip times (µs, sorted) of `count` calls of `call`, one after
/// another.
async fn timed<F, Fut>(count: usize, mut call: F) -> Vec<u64>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut times = Vec::with_capacity(count);
    for i in 0..count {
        let started = Instant::now();
        call(i).await;
        times.push(started.elapsed().as_micros() as u64);
    }
    times.sort_unstable();
    times
}

struct Figures {
    step: Vec<u64>,
    save: Vec<u64>,
    list: Vec<u64>,
    accepted_per_s: f64,
    finished_per_s: f64,
}

async fn api(url: Option<&str>) -> (Vec<u64>, Vec<u64>, f64, f64) {
    let server = Server::start_on(
        url,
        &[
            "--max-runs",
            "8",
            "--max-runs-per-user",
            "100000",
            "--max-runs-per-owner",
            "100000",
        ],
    );
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"));
    let base = server.base.clone();
    json(
        client
            .post(format!("{base}/api/v1/auth/signup"))
            .json(&json!({"username": "bench", "password": "bench password"})),
        "sign up",
    )
    .await;
    let create = |document: Value| {
        let request = client
            .post(format!("{base}/api/v1/graphs"))
            .json(&json!({"document": document}));
        async move {
            json(request, "create graph").await["id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        }
    };
    let graph = create(chain(40)).await;
    let document = chain(40);
    let save = timed(300, |i| {
        let request = client
            .put(format!("{base}/api/v1/graphs/{graph}"))
            .json(&json!({"base_version": i as i64 + 1, "document": document}));
        async move {
            json(request, "save").await;
        }
    })
    .await;
    for _ in 0..99 {
        create(chain(10)).await;
    }
    let list = timed(300, |_| {
        let request = client.get(format!("{base}/api/v1/graphs"));
        async move {
            json(request, "list").await;
        }
    })
    .await;

    // Runs started through the API, 16 requests in flight.
    let counter = create(counting()).await;
    let started = Instant::now();
    let mut ids: Vec<String> = Vec::new();
    for _ in 0..(200 / 16) + 1 {
        let wave = (0..16).map(|_| {
            let request = client
                .post(format!("{base}/api/v1/graphs/{counter}/runs"))
                .json(&json!({"input": {"target": 5}}));
            async move {
                json(request, "start").await["id"]
                    .as_str()
                    .map(str::to_string)
            }
        });
        ids.extend(join_all(wave).await.into_iter().flatten());
        if ids.len() >= 200 {
            break;
        }
    }
    let accepted = started.elapsed().as_secs_f64();
    for id in &ids {
        loop {
            let run = json(client.get(format!("{base}/api/v1/runs/{id}")), "run").await;
            if !matches!(run["status"].as_str(), Some("queued" | "running")) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    let finished = started.elapsed().as_secs_f64();
    let count = ids.len() as f64;
    (save, list, count / accepted, count / finished)
}

async fn measure(postgres: Option<&str>) -> Figures {
    let (store, url): (Arc<dyn CheckpointStore>, Option<String>) = match postgres {
        Some(admin) => {
            let store = PostgresStore::connect(&fresh_postgres(admin).await)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            (store.shared(), Some(fresh_postgres(admin).await))
        }
        None => {
            let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/bench-databases");
            let _ = std::fs::remove_dir_all(&dir);
            let store = SqliteStore::open(dir.join("steps.db"), SyncMode::Normal)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            (store.shared(), None)
        }
    };
    let step = steps(store).await;
    let (save, list, accepted_per_s, finished_per_s) = api(url.as_deref()).await;
    Figures {
        step,
        save,
        list,
        accepted_per_s,
        finished_per_s,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let postgres = std::env::var("HEDDLE_BENCH_POSTGRES")
        .ok()
        .filter(|url| !url.is_empty());
    runtime.block_on(async {
        let mut columns = vec![("SQLite", measure(None).await)];
        match &postgres {
            Some(admin) => columns.push(("PostgreSQL", measure(Some(admin)).await)),
            None => eprintln!("HEDDLE_BENCH_POSTGRES is not set: PostgreSQL is not measured"),
        }
        let header: Vec<&str> = columns.iter().map(|(name, _)| *name).collect();
        println!("| measure | {} |", header.join(" | "));
        println!("| --- |{}", " --- |".repeat(columns.len()));
        let row = |label: &str, cell: &dyn Fn(&Figures) -> String| {
            let cells: Vec<String> = columns.iter().map(|(_, figures)| cell(figures)).collect();
            println!("| {label} | {} |", cells.join(" | "));
        };
        let quantiles = |times: &[u64]| {
            format!(
                "{:.2} / {:.2} ms",
                percentile(times, 0.5),
                percentile(times, 0.99)
            )
        };
        row("checkpointed step, sync (p50 / p99)", &|f| {
            quantiles(&f.step)
        });
        row("graph save, 40 nodes (p50 / p99)", &|f| quantiles(&f.save));
        row("graph list, 100 graphs (p50 / p99)", &|f| {
            quantiles(&f.list)
        });
        row("runs started through the API", &|f| {
            format!("{:.0} /s", f.accepted_per_s)
        });
        row("those runs finished", &|f| {
            format!("{:.0} /s", f.finished_per_s)
        });
    });
}
