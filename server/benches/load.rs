//! The server under load (docs/performance.md), on loopback: the real
//! `heddle` binary, its HTTP API and websocket.
//!
//! `cargo bench -p heddle-server --bench load [-- VIEWERS RUNS]`
//!
//! 1. VIEWERS websocket clients (default 1,000) watch one run of a 10-node
//!    loop live; each event's delivery latency is its receipt time minus its
//!    emission time (`at_us`), for events delivered live.
//! 2. RUNS runs (default 200) of a 10-node graph started at once; all
//!    must finish.
//!
//! It prints latency p50/p99, events delivered per second, and the
//! server's peak memory (VmHWM) and current memory (VmRSS).

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use support::{Server, json, memory, percentile};

/// A 10-node graph: start, then a ring of nine nodes; it loops while
/// `count < target`. With `pace_ms`, eight of the nine are `wait` nodes of
/// that length and one counts (a run paced like an agent's); without,
/// all nine count.
fn ring(pace_ms: Option<u64>) -> Value {
    let mut nodes = vec![json!({"id": "start", "kind": "start", "config": {"inputs": ["target"]}})];
    let mut edges = vec![json!({"id": "enter", "from": "start", "to": "n1"})];
    for i in 1..=9 {
        nodes.push(match pace_ms {
            Some(ms) if i > 1 => json!({"id": format!("n{i}"), "kind": "wait", "config": {"ms": ms}}),
            _ => json!({"id": format!("n{i}"), "kind": "set", "config": {"values": {"count": {"value": 1}}}}),
        });
        if i < 9 {
            edges.push(json!({"id": format!("e{i}"), "from": format!("n{i}"), "to": format!("n{}", i + 1)}));
        }
    }
    edges.push(json!({"id": "again", "from": "n9", "to": "n1", "condition": "count < target"}));
    json!({
        "format_version": 2, "name": "ring",
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}, "target": {"type": "integer"}}},
        "nodes": nodes, "edges": edges, "limits": {"max_steps": 1000000}
    })
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// The emission time of an event message, read without parsing the whole
/// message (the clients share the machine with the server).
fn emitted_at(text: &str) -> Option<u64> {
    let start = text.find("\"at_us\":")? + "\"at_us\":".len();
    let digits: String = text[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

async fn viewers(
    server: &Server,
    client: &reqwest::Client,
    cookie: &str,
    graph: &str,
    count: usize,
) {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let ws_url = format!("{}/api/v1/ws", server.base.replace("http://", "ws://"));
    let mut sockets = Vec::with_capacity(count);
    for _ in 0..count {
        let mut request = ws_url
            .as_str()
            .into_client_request()
            .unwrap_or_else(|e| panic!("websocket request: {e}"));
        if let Ok(value) = cookie.parse() {
            request.headers_mut().insert("cookie", value);
        }
        let (socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .unwrap_or_else(|e| panic!("websocket: {e}"));
        sockets.push(socket);
    }
    let run: Value = client
        .post(format!("{}/api/v1/graphs/{graph}/runs", server.base))
        .json(&json!({"input": {"target": 12}}))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| panic!("start run: {e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("run: {e}"));
    let run_id = run["id"].as_str().unwrap_or_default().to_string();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for mut socket in sockets {
        let run_id = run_id.clone();
        tasks.push(tokio::spawn(async move {
            let subscribe =
                json!({"type": "subscribe", "run_id": run_id, "from_seq": 0}).to_string();
            socket
                .send(Message::text(subscribe))
                .await
                .unwrap_or_else(|e| panic!("send: {e}"));
            let mut live = false;
            let mut latencies = Vec::new();
            let mut received = 0u64;
            while let Some(Ok(message)) = socket.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                if text.starts_with("{\"type\":\"event\"") || text.starts_with("{\"event\"") {
                    received += 1;
                    if live && let Some(emitted) = emitted_at(&text) {
                        latencies.push(now_us().saturating_sub(emitted));
                    }
                } else if text.contains("\"caught_up\"") {
                    live = true;
                } else if text.contains("\"run_idle\"") {
                    break;
                }
            }
            (latencies, received)
        }));
    }
    let peak_during = tokio::spawn({
        let pid = server.child.id();
        async move {
            let mut peak = 0;
            for _ in 0..200 {
                peak = peak.max(memory(pid).1);
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            peak
        }
    });
    let mut latencies = Vec::new();
    let mut received = 0;
    for task in tasks {
        let (mut l, r) = task.await.unwrap_or_default();
        latencies.append(&mut l);
        received += r;
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let (hwm, rss) = server.memory();
    let _ = peak_during.await;
    println!(
        "| {count} viewers of one run (10-node loop, 50 ms per node, ~100 events/s) | live latency p50 {:.1} ms, p99 {:.1} ms | {:.0} events/s delivered ({received} in {:.2} s) | server peak {} MiB, now {} MiB |",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        received as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        hwm / 1024,
        rss / 1024,
    );
}

async fn concurrent_runs(server: &Server, client: &reqwest::Client, graph: &str, count: usize) {
    let started = Instant::now();
    let mut ids = Vec::new();
    let starts: Vec<_> = (0..count)
        .map(|_| {
            let client = client.clone();
            let url = format!("{}/api/v1/graphs/{graph}/runs", server.base);
            tokio::spawn(async move {
                let response = client
                    .post(url)
                    .json(&json!({"input": {"target": 9}}))
                    .send()
                    .await;
                let run: Value = match response {
                    Ok(response) => response.json().await.unwrap_or(Value::Null),
                    Err(error) => panic!("start: {error}"),
                };
                run["id"].as_str().unwrap_or_default().to_string()
            })
        })
        .collect();
    for start in starts {
        ids.push(start.await.unwrap_or_default());
    }
    let mut finished = 0;
    let mut failed = 0;
    for id in &ids {
        loop {
            let run = json(
                client.get(format!("{}/api/v1/runs/{id}", server.base)),
                "get run",
            )
            .await;
            match run["status"].as_str() {
                Some("finished") => {
                    finished += 1;
                    break;
                }
                Some("queued" | "running") => tokio::time::sleep(Duration::from_millis(5)).await,
                _ => {
                    failed += 1;
                    break;
                }
            }
        }
    }
    let elapsed = started.elapsed();
    let (hwm, rss) = server.memory();
    println!(
        "| {count} concurrent runs of a 10-node graph | {finished} finished, {failed} failed | {:.0} runs/s ({:.2} s) | server peak {} MiB, now {} MiB |",
        count as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        hwm / 1024,
        rss / 1024
    );
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok());
    let viewer_count = args.next().unwrap_or(1000);
    let run_count = args.next().unwrap_or(200);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let server = Server::start(&[
        "--max-runs",
        "256",
        "--max-runs-per-user",
        "100000",
        "--max-runs-per-owner",
        "100000",
    ]);
    runtime.block_on(async {
        // One account does everything: sign up, keep its session cookie.
        let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
        let client = reqwest::Client::builder()
            .cookie_provider(std::sync::Arc::clone(&jar))
            .build()
            .unwrap_or_else(|e| panic!("client: {e}"));
        client
            .post(format!("{}/api/v1/auth/signup", server.base))
            .json(&json!({"username": "bench", "password": "bench password"}))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .unwrap_or_else(|e| panic!("sign up: {e}"));
        let cookie = {
            use reqwest::cookie::CookieStore;
            let url = server.base.parse().unwrap_or_else(|e| panic!("url: {e}"));
            jar.cookies(&url)
                .and_then(|value| value.to_str().ok().map(str::to_string))
                .unwrap_or_default()
        };
        let create = |document: Value| {
            let client = client.clone();
            let url = format!("{}/api/v1/graphs", server.base);
            async move {
                let graph = json(
                    client.post(url).json(&json!({"document": document})),
                    "create graph",
                )
                .await;
                graph["id"].as_str().unwrap_or_default().to_string()
            }
        };
        let paced = create(ring(Some(50))).await;
        let fast = create(ring(None)).await;
        println!("| load | latency | throughput | memory |");
        println!("| --- | --- | --- | --- |");
        viewers(&server, &client, &cookie, &paced, viewer_count).await;
        concurrent_runs(&server, &client, &fast, run_count).await;
    });
}
