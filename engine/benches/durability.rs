//! W4 and resume latency (docs/performance.md): the cost of durable runs on
//! a SQLite file on this machine's disk.
//!
//! `cargo bench -p heddle-engine --features sqlite --bench durability`
//!
//! - W4: the W1 loop (benches/graphs/w1_loop.json) with 1,000 node
//!   executions, checkpointed to a SQLite file in each durability mode, with
//!   commits that survive a killed process (`SyncMode::Normal`) or a power
//!   cut (`SyncMode::Full`).
//! - The limit for power-safe steps: one bare fsync'd SQLite commit (a
//!   one-row insert with `synchronous=FULL`) on the same disk.
//! - Resume latency: from `Durable::resume` to the interrupted node running
//!   again.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::run::{Durability, Durable, EventPayload, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId, ThreadId};
use serde_json::json;

fn bench_dir() -> PathBuf {
    // On the project's disk (not a tmpfs), so fsync costs what it costs.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-durability");
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(error) = std::fs::create_dir_all(&dir) {
        panic!("{}: {error}", dir.display());
    }
    dir
}

fn w1() -> Arc<CompiledGraph> {
    let path = format!("{}/benches/graphs/w1_loop.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Arc::new(
        CompiledGraph::from_json(&text, &Registry::new()).unwrap_or_else(|e| panic!("{path}: {e}")),
    )
}

async fn w4(
    dir: &std::path::Path,
    durability: Durability,
    sync: SyncMode,
    label: &str,
) -> (Duration, u32) {
    let store = SqliteStore::open(dir.join(format!("{label}.db")), sync)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let durable = Durable::new(Arc::new(store))
        .with_durability(durability)
        .with_options(RunOptions {
            keep_log: false,
            ..RunOptions::default()
        });
    let run = durable
        .start(
            w1(),
            ThreadId::from(label),
            RunId::from(label),
            json!({"target": 1000}),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let output = run.execute().await.unwrap_or_else(|e| panic!("{e}"));
    (started.elapsed(), output.steps)
}

async fn bare_commits(dir: &std::path::Path, count: u32) -> Duration {
    let store = SqliteStore::open(dir.join("bare.db"), SyncMode::Full)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // One held connection, as the store's writer holds one.
    let mut connection = store
        .pool()
        .acquire()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        .execute(&mut *connection)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    for i in 0..count {
        sqlx::query("INSERT INTO bare (id, body) VALUES (?, 'x')")
            .bind(i64::from(i))
            .execute(&mut *connection)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    started.elapsed() / count
}

async fn resume_latencies(dir: &std::path::Path, count: usize) -> Vec<Duration> {
    let graph = Arc::new(
        CompiledGraph::from_json(
            r#"{"format_version": 2, "name": "ask",
                "state": {"channels": {"answer": {"type": "any"}}},
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": "ask", "kind": "ask", "config": {"prompt": "yes?", "answer": "answer"}}],
                "edges": [{"id": "e", "from": "start", "to": "ask"}]}"#,
            &Registry::new(),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    );
    let store = SqliteStore::open(dir.join("resume.db"), SyncMode::Normal)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let durable = Durable::new(Arc::new(store));
    let mut latencies = Vec::with_capacity(count);
    for i in 0..count {
        let thread = ThreadId::from(format!("t{i}"));
        let run = durable
            .start(
                Arc::clone(&graph),
                thread.clone(),
                RunId::from(format!("r{i}")),
                json!({}),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        run.execute().await.unwrap_or_else(|e| panic!("{e}"));

        let asked = Instant::now();
        let run = durable
            .resume(&thread, json!("yes"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut events = run.subscribe();
        let task = tokio::spawn(run.execute());
        let mut latency = None;
        while let Ok(Some(event)) = events.recv().await {
            if let EventPayload::NodeStarted { node, .. } = &event.payload
                && node.as_str() == "ask"
            {
                latency = Some(asked.elapsed());
            }
        }
        task.await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|e| panic!("{e}"));
        latencies.push(latency.unwrap_or_else(|| panic!("the node never ran again")));
    }
    latencies.sort();
    latencies
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let dir = bench_dir();
    runtime.block_on(async {
        let bare = bare_commits(&dir, 200).await;
        println!("| W4: 1,000 node executions, checkpoint every step | wall | per step |");
        println!("| --- | --- | --- |");
        for (label, durability, sync) in [
            ("sync, survives kill -9 (synchronous=NORMAL)", Durability::Sync, SyncMode::Normal),
            ("sync, survives power loss (synchronous=FULL)", Durability::Sync, SyncMode::Full),
            ("async (background writes, NORMAL)", Durability::Async, SyncMode::Normal),
            ("exit (start, pauses and end only, NORMAL)", Durability::Exit, SyncMode::Normal),
        ] {
            let name = label.split_whitespace().next().unwrap_or("w4").trim_matches(',').to_string()
                + if sync == SyncMode::Full { "-full" } else { "" };
            let (wall, steps) = w4(&dir, durability, sync, &name).await;
            println!(
                "| {label} | {:.1} ms | {:.1} µs |",
                wall.as_secs_f64() * 1e3,
                micros(wall) / f64::from(steps.max(1))
            );
        }
        println!("| limit: one bare fsync'd SQLite commit on this disk | | {:.1} µs |", micros(bare));

        let latencies = resume_latencies(&dir, 200).await;
        let pick = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize];
        println!();
        println!(
            "resume latency (resume call to the node running again), {} resumes: p50 {:.0} µs, p99 {:.0} µs",
            latencies.len(),
            micros(pick(0.5)),
            micros(pick(0.99))
        );
    });
}
