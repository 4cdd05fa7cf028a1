//! Several `heddle serve` processes on one PostgreSQL database
//! (docs/performance.md, "Several servers"):
//!
//! ```sh
//! pg_virtualenv bash -c 'HEDDLE_BENCH_POSTGRES="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE" \
//!   cargo bench -p heddle-server --bench replicas'
//! ```
//!
//! - Takeover: a run executing on server A, A killed with SIGKILL; the time
//!   from the kill, and from the lease's expiry, to the first event the
//!   server that took the run over stored (5 kills, 2 s leases).
//! - Live latency: one run on A watched over websockets on A and on B;
//!   each event's delay from its emission (`at_us`) to its arrival, p50
//!   and p99, on the executing server and across servers.
//! - Throughput: 240 short runs started round-robin through 1, 2 and 3
//!   servers; runs completed per second. The same started through one
//!   `--role web` server with 1, 2 and 3 `--role worker` processes.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::future::join_all;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use support::{Server, fresh_postgres, json, percentile};
use tokio_tungstenite::tungstenite::Message;

const LEASE_SECONDS: f64 = 2.0;

/// A server of the team: the shared database and key, a short lease.
fn replica(url: &str, key: &std::path::Path) -> Server {
    let key = key.display().to_string();
    let lease = LEASE_SECONDS.to_string();
    Server::start_on(
        Some(url),
        &[
            "--key-file",
            &key,
            "--lease-seconds",
            &lease,
            "--max-runs-per-user",
            "100000",
        ],
    )
}

/// A logged-in client of `server` (the account exists after the first).
async fn client(server: &Server, sign_up: bool) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"));
    let path = if sign_up { "signup" } else { "login" };
    json(
        client
            .post(format!("{}/api/v1/auth/{path}", server.base))
            .json(&json!({"username": "bench", "password": "bench password"})),
        "log in",
    )
    .await;
    client
}

fn counting() -> Value {
    json!({
        "format_version": 2, "name": "count",
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}, "target": {"type": "integer"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["target"]}},
            {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "tick"},
            {"id": "again", "from": "tick", "to": "tick", "condition": "count < target"}
        ],
        "limits": {"max_steps": 100000000}
    })
}

async fn create_graph(client: &reqwest::Client, server: &Server) -> String {
    json(
        client
            .post(format!("{}/api/v1/graphs", server.base))
            .json(&json!({"document": counting()})),
        "create graph",
    )
    .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn start_run(client: &reqwest::Client, server: &Server, graph: &str, target: u64) -> String {
    json(
        client
            .post(format!("{}/api/v1/graphs/{graph}/runs", server.base))
            .json(&json!({"input": {"target": target}})),
        "start run",
    )
    .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn events(client: &reqwest::Client, server: &Server, run: &str) -> Vec<Value> {
    json(
        client.get(format!(
            "{}/api/v1/runs/{run}/events?from_seq=0",
            server.base
        )),
        "events",
    )
    .await
    .as_array()
    .cloned()
    .unwrap_or_default()
}

/// Kill → first event of the server that took over, in milliseconds.
async fn takeover(admin: &str) -> f64 {
    let url = fresh_postgres(admin).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let key = dir.path().join("team.key");
    let mut a = replica(&url, &key);
    let b = replica(&url, &key);
    let through_a = client(&a, true).await;
    let through_b = client(&b, false).await;
    let graph = create_graph(&through_a, &a).await;
    let run = start_run(&through_a, &a, &graph, 100_000_000).await;
    while events(&through_b, &b, &run).await.len() < 100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = a.child.kill();
    let _ = a.child.wait();
    let killed = Instant::now();
    let deadline = killed + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no server took the run over");
        let stored = events(&through_b, &b, &run).await;
        if stored.iter().any(|event| event["type"] == "run_resumed") {
            let taken = killed.elapsed().as_secs_f64() * 1000.0;
            let _ = json(
                through_b.post(format!("{}/api/v1/runs/{run}/cancel", b.base)),
                "cancel",
            )
            .await;
            return taken;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Each event's delay (µs) from emission to arrival on `server`'s socket.
async fn watch(server: &Server, cookie: String, run: String, events: usize) -> Vec<u64> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("{}/api/v1/ws", server.base.replace("http://", "ws://"))
        .into_client_request()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Ok(value) = cookie.parse() {
        request.headers_mut().insert("cookie", value);
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .unwrap_or_else(|e| panic!("websocket: {e}"));
    socket
        .send(Message::text(
            json!({"type": "subscribe", "run_id": run, "from_seq": 0}).to_string(),
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut delays = Vec::new();
    let mut live = false;
    while delays.len() < events {
        let Some(Ok(Message::Text(text))) = socket.next().await else {
            break;
        };
        let message: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let now_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        match message["type"].as_str() {
            Some("caught_up") => live = true,
            Some("event") if live => {
                let at = message["event"]["at_us"].as_u64().unwrap_or(now_us);
                delays.push(now_us.saturating_sub(at));
            }
            Some("run_idle") => break,
            _ => {}
        }
    }
    delays.sort_unstable();
    delays
}

async fn latency(admin: &str) -> (Vec<u64>, Vec<u64>) {
    let url = fresh_postgres(admin).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let key = dir.path().join("team.key");
    let a = replica(&url, &key);
    let b = replica(&url, &key);
    let through_a = client(&a, true).await;
    let graph = create_graph(&through_a, &a).await;
    // Log in with plain requests, to carry their cookies on the sockets.
    let session = |server: &Server| {
        let base = server.base.clone();
        async move {
            let response = reqwest::Client::new()
                .post(format!("{base}/api/v1/auth/login"))
                .json(&json!({"username": "bench", "password": "bench password"}))
                .send()
                .await
                .unwrap_or_else(|e| panic!("log in: {e}"));
            response
                .headers()
                .get_all("set-cookie")
                .iter()
                .filter_map(|value| value.to_str().ok())
                .filter_map(|value| value.split(';').next())
                .collect::<Vec<_>>()
                .join("; ")
        }
    };
    let (cookie_a, cookie_b) = (session(&a).await, session(&b).await);
    let run = start_run(&through_a, &a, &graph, 4000).await;
    let (same, across) = tokio::join!(
        watch(&a, cookie_a, run.clone(), 3000),
        watch(&b, cookie_b, run.clone(), 3000)
    );
    (same, across)
}

/// Runs completed per second, 240 short runs round-robin over `servers`.
async fn throughput(admin: &str, servers: usize) -> f64 {
    let url = fresh_postgres(admin).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let key = dir.path().join("team.key");
    let replicas: Vec<Server> = (0..servers).map(|_| replica(&url, &key)).collect();
    let mut clients = Vec::new();
    for (i, server) in replicas.iter().enumerate() {
        clients.push(client(server, i == 0).await);
    }
    let graph = create_graph(&clients[0], &replicas[0]).await;
    let started = Instant::now();
    let mut ids = Vec::new();
    for wave in 0..15 {
        let requests = (0..16).map(|i| {
            let k = (wave * 16 + i) % servers;
            let (client, server, graph) = (&clients[k], &replicas[k], &graph);
            async move { (k, start_run(client, server, graph, 20).await) }
        });
        ids.extend(join_all(requests).await);
    }
    for (k, id) in &ids {
        loop {
            let run = json(
                clients[*k].get(format!("{}/api/v1/runs/{id}", replicas[*k].base)),
                "run",
            )
            .await;
            if !matches!(run["status"].as_str(), Some("queued" | "running")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    ids.len() as f64 / started.elapsed().as_secs_f64()
}

/// Runs completed per second with `workers` worker processes: 240 short
/// runs started through one `--role web` server, which executes none.
async fn throughput_of_workers(admin: &str, workers: usize) -> f64 {
    let url = fresh_postgres(admin).await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let key = dir.path().join("team.key");
    let key_arg = key.display().to_string();
    let web = Server::start_on(
        Some(&url),
        &[
            "--role",
            "web",
            "--key-file",
            &key_arg,
            "--max-runs-per-user",
            "100000",
        ],
    );
    let _workers: Vec<Server> = (0..workers)
        .map(|_| {
            Server::start_on(
                Some(&url),
                &[
                    "--role",
                    "worker",
                    "--key-file",
                    &key_arg,
                    "--lease-seconds",
                    "2",
                ],
            )
        })
        .collect();
    let client = client(&web, true).await;
    let graph = create_graph(&client, &web).await;
    let started = Instant::now();
    let mut ids = Vec::new();
    for _ in 0..15 {
        let requests = (0..16).map(|_| start_run(&client, &web, &graph, 20));
        ids.extend(join_all(requests).await);
    }
    for id in &ids {
        loop {
            let run = json(client.get(format!("{}/api/v1/runs/{id}", web.base)), "run").await;
            if !matches!(run["status"].as_str(), Some("queued" | "running")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    ids.len() as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let Ok(admin) = std::env::var("HEDDLE_BENCH_POSTGRES") else {
        eprintln!("replicas need PostgreSQL: set HEDDLE_BENCH_POSTGRES (see the top of this file)");
        std::process::exit(2);
    };
    println!("Several servers on one PostgreSQL (lease {LEASE_SECONDS} s)");
    let mut takeovers = Vec::new();
    for _ in 0..5 {
        takeovers.push(takeover(&admin).await);
    }
    takeovers.sort_by(f64::total_cmp);
    println!(
        "takeover after kill -9: kill to first event {:.0} ms median ({:.0}..{:.0}); after the lease expired {:.0} ms median",
        takeovers[2],
        takeovers[0],
        takeovers[4],
        takeovers[2] - LEASE_SECONDS * 1000.0
    );
    let (same, across) = latency(&admin).await;
    println!(
        "live event latency: same server p50 {:.2} ms p99 {:.2} ms ({} events); across servers p50 {:.2} ms p99 {:.2} ms ({} events)",
        percentile(&same, 0.5),
        percentile(&same, 0.99),
        same.len(),
        percentile(&across, 0.5),
        percentile(&across, 0.99),
        across.len()
    );
    for servers in 1..=3 {
        let rate = throughput(&admin, servers).await;
        println!("runs completed per second with {servers} server(s): {rate:.0}");
    }
    for workers in 1..=3 {
        let rate = throughput_of_workers(&admin, workers).await;
        println!(
            "runs completed per second through a web server with {workers} worker(s): {rate:.0}"
        );
    }
}
