//! Calling a published graph from outside (docs/performance.md, "Calls
//! from outside"): `cargo bench -p heddle-server --bench invoke [-- CALLS]`
//!
//! - Invoke overhead: a 3-node graph (start → set → end) run CALLS times
//!   (default 300), one after another, directly on the engine with a
//!   SQLite store, and through `POST /api/v1/graphs/{id}/invoke` on the
//!   real `heddle` binary with an API key (SQLite under it too). Each
//!   call's latency, p50 and p99, and the difference: what the HTTP
//!   layer, the key check, the run's record and the wait for its end
//!   cost.
//! - Time to first chunk: `POST /v1/chat/completions` with `stream: true`
//!   on a chat graph, on the offline model with no pace (so the figure is
//!   Heddle's, not the model's): from sending the request to the first
//!   chunk with content, p50 and p99, and to the end of the reply.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::sync::Arc;
use std::time::Instant;

use heddle_engine::run::Durable;
use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
use heddle_engine::{CompiledGraph, Registry, RunId, ThreadId};
use serde_json::{Value, json};
use support::{Server, json, percentile, published};

fn three_nodes() -> Value {
    json!({
        "format_version": 2, "name": "three",
        "state": {"channels": {"note": {"type": "string"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "set", "kind": "set", "config": {"values": {"note": {"value": "done"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "set"},
            {"id": "e2", "from": "set", "to": "end"}
        ]
    })
}

fn chat() -> Value {
    json!({
        "format_version": 2, "name": "chat",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "reply", "kind": "llm", "config": {"system": "Be brief."}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "reply"},
            {"id": "e2", "from": "reply", "to": "end"}
        ]
    })
}

fn report(label: &str, mut micros: Vec<u64>) -> (f64, f64) {
    micros.sort_unstable();
    let (p50, p99) = (percentile(&micros, 0.5), percentile(&micros, 0.99));
    println!("{label:<44} p50 {p50:>7.2} ms   p99 {p99:>7.2} ms");
    (p50, p99)
}

/// Each direct engine run's latency, µs.
async fn direct(calls: usize) -> Vec<u64> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let store = SqliteStore::open(dir.path().join("direct.db"), SyncMode::Normal)
        .await
        .unwrap_or_else(|e| panic!("store: {e}"))
        .shared();
    let durable = Durable::new(store);
    let graph = Arc::new(
        CompiledGraph::from_json(&three_nodes().to_string(), &Registry::new())
            .unwrap_or_else(|e| panic!("graph: {e}")),
    );
    let mut times = Vec::with_capacity(calls);
    for call in 0..calls {
        let started = Instant::now();
        let run = durable
            .start(
                Arc::clone(&graph),
                ThreadId::from(format!("t{call}").as_str()),
                RunId::from(format!("r{call}").as_str()),
                json!({}),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        run.execute().await.unwrap_or_else(|e| panic!("{e}"));
        times.push(started.elapsed().as_micros() as u64);
    }
    times
}

#[tokio::main]
async fn main() {
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(300);
    println!("{calls} calls, one after another\n");

    let (direct_p50, direct_p99) = report("engine, direct (SQLite store)", direct(calls).await);

    let server = Server::start_with_env(
        &["--max-runs-per-user", "1000"],
        &[("HEDDLE_OFFLINE_PACE_MS", "0")],
    );
    let client = reqwest::Client::new();
    let (graph, key) = published(&server, three_nodes()).await;
    let url = format!("{}/api/v1/graphs/{graph}/invoke", server.base);
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let answer = json(
            client
                .post(&url)
                .bearer_auth(&key)
                .json(&json!({"input": {}})),
            "invoke",
        )
        .await;
        times.push(started.elapsed().as_micros() as u64);
        assert_eq!(answer["status"], "finished", "{answer}");
    }
    let (invoke_p50, invoke_p99) = report("POST /invoke with an API key (SQLite)", times);
    println!(
        "{:<44} p50 {:>7.2} ms   p99 {:>7.2} ms\n",
        "overhead of invoke over the engine",
        invoke_p50 - direct_p50,
        invoke_p99 - direct_p99
    );

    let (chat_graph, chat_key) = published(&server, chat()).await;
    let url = format!("{}/v1/chat/completions", server.base);
    let mut first = Vec::with_capacity(calls);
    let mut whole = Vec::with_capacity(calls);
    for call in 0..calls {
        let started = Instant::now();
        let response = client
            .post(&url)
            .bearer_auth(&chat_key)
            .json(&json!({
                "model": chat_graph,
                "stream": true,
                "messages": [{"role": "user", "content": format!("Tell me about refunds, please ({call})")}],
            }))
            .send()
            .await
            .unwrap_or_else(|e| panic!("chat: {e}"));
        let mut response = response;
        let mut seen = String::new();
        let mut got_first = false;
        while let Some(chunk) = response
            .chunk()
            .await
            .unwrap_or_else(|e| panic!("chat stream: {e}"))
        {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if !got_first && seen.contains("\"content\":\"(offline") {
                first.push(started.elapsed().as_micros() as u64);
                got_first = true;
            }
        }
        whole.push(started.elapsed().as_micros() as u64);
        assert!(got_first && seen.contains("[DONE]"), "{seen}");
    }
    report("chat completions: time to first chunk", first);
    report("chat completions: whole streamed reply", whole);
    let (peak, now) = server.memory();
    println!("\nserver memory: peak {peak} KiB, now {now} KiB");
}
