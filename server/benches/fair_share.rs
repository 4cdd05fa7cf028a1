//! Fair share between accounts (docs/performance.md, "Fair share"), on the
//! real `heddle` binary with the offline model:
//!
//! ```sh
//! HEDDLE_OFFLINE_PACE_MS=0 cargo bench -p heddle-server --bench fair_share
//! # and on two servers sharing PostgreSQL:
//! pg_virtualenv bash -c 'HEDDLE_BENCH_POSTGRES="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE" \
//!   HEDDLE_OFFLINE_PACE_MS=0 cargo bench -p heddle-server --bench fair_share'
//! ```
//!
//! Account A queues 120 runs through 30 API keys (4 each), each run
//! holding a slot for one turn (`TURN_MS`); the server has 8 slots. While
//! A's runs wait, account B starts one short run at a time, 20 in all:
//! B's wait (queued to started, from the run's record) p50 and p99, in
//! milliseconds and in turns. Without fair turns B's run would wait for
//! every A run queued before it: 120 / 8 = 15 turns.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Server, fresh_postgres, json, percentile};

/// How long one of A's runs holds a slot.
const TURN_MS: u64 = 400;
const SLOTS: &str = "8";
const KEYS: usize = 30;
const RUNS_PER_KEY: usize = 4;
const SAMPLES: usize = 20;

fn nap(ms: u64) -> Value {
    json!({
        "format_version": 2, "name": "nap",
        "state": {"channels": {"note": {"type": "string", "reducer": "replace"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "nap", "kind": "wait", "config": {"ms": ms}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "nap"},
            {"id": "e2", "from": "nap", "to": "end"}
        ]
    })
}

/// A logged-in client of `base` as `name`, signing up when `new`.
async fn account(base: &str, name: &str, new: bool) -> reqwest::Client {
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"));
    let path = if new { "signup" } else { "login" };
    json(
        client
            .post(format!("{base}/api/v1/auth/{path}"))
            .json(&json!({"username": name, "password": "bench password"})),
        "log in",
    )
    .await;
    client
}

async fn graph(client: &reqwest::Client, base: &str, document: Value) -> String {
    let made = json(
        client
            .post(format!("{base}/api/v1/graphs"))
            .json(&json!({"document": document})),
        "create a graph",
    )
    .await;
    made["id"].as_str().unwrap_or_default().to_string()
}

/// Milliseconds from one stored timestamp to another.
fn between(from: &str, to: &str) -> u64 {
    let parse = |text: &str| heddle_wire::time::Timestamp::parse(text).map(|t| t.millis());
    match (parse(from), parse(to)) {
        (Some(from), Some(to)) => u64::try_from(to - from).unwrap_or(0),
        _ => 0,
    }
}

/// Runs the measurement with A's runs spread over `bases` and B's runs
/// started on the last; prints the figures under `label`.
async fn measure(label: &str, bases: &[String]) {
    let first = &bases[0];
    let alice = account(first, "alice", true).await;
    let bob = account(first, "bob", true).await;
    let bob_on: Vec<reqwest::Client> = {
        let mut clients = vec![bob];
        for base in &bases[1..] {
            clients.push(account(base, "bob", false).await);
        }
        clients
    };
    let flood = graph(&alice, first, nap(TURN_MS)).await;
    json(
        alice
            .put(format!("{first}/api/v1/graphs/{flood}/published"))
            .json(&json!({"version": 1})),
        "publish",
    )
    .await;
    let short = graph(&bob_on[0], first, nap(1)).await;
    let mut secrets = Vec::new();
    for n in 0..KEYS {
        let made = json(
            alice
                .post(format!("{first}/api/v1/keys"))
                .json(&json!({"name": format!("key {n}"), "scope": "run", "graphs": [flood]})),
            "make a key",
        )
        .await;
        secrets.push(made["secret"].as_str().unwrap_or_default().to_string());
    }
    let plain = reqwest::Client::new();
    let mut started = 0;
    for (n, secret) in secrets.iter().enumerate() {
        for r in 0..RUNS_PER_KEY {
            let base = &bases[(n * RUNS_PER_KEY + r) % bases.len()];
            let response = plain
                .post(format!("{base}/api/v1/graphs/{flood}/invoke"))
                .bearer_auth(secret)
                .json(&json!({"input": {}, "wait_seconds": 0}))
                .send()
                .await
                .unwrap_or_else(|e| panic!("invoke: {e}"));
            if response.status().as_u16() == 202 {
                started += 1;
            }
        }
    }
    let last = bases.len() - 1;
    let (base, bob) = (&bases[last], &bob_on[last]);
    let mut waits = Vec::new();
    let began = Instant::now();
    for _ in 0..SAMPLES {
        let run = json(
            bob.post(format!("{base}/api/v1/graphs/{short}/runs"))
                .json(&json!({"input": {}})),
            "start B's run",
        )
        .await;
        let id = run["id"].as_str().unwrap_or_default().to_string();
        let info = loop {
            let info = json(bob.get(format!("{base}/api/v1/runs/{id}")), "read B's run").await;
            if info["status"] != "queued" && info["status"] != "running" {
                break info;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let wait = between(
            info["created_at"].as_str().unwrap_or_default(),
            info["started_at"].as_str().unwrap_or_default(),
        );
        waits.push(wait * 1000);
    }
    waits.sort_unstable();
    let (p50, p99) = (percentile(&waits, 0.5), percentile(&waits, 0.99));
    println!(
        "{label}: A queued {started} runs through {KEYS} keys ({TURN_MS} ms each, {SLOTS} slots per \
         server); B's wait over {SAMPLES} runs: p50 {p50:.0} ms ({:.2} turns), p99 {p99:.0} ms \
         ({:.2} turns); B's runs took {:.1} s in all",
        p50 / TURN_MS as f64,
        p99 / TURN_MS as f64,
        began.elapsed().as_secs_f64()
    );
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
    runtime.block_on(async {
        let args = [
            "--max-runs",
            SLOTS,
            "--max-runs-per-user",
            "4",
            "--max-runs-per-owner",
            "1000",
        ];
        let one = Server::start(&args);
        measure("one server (SQLite)", std::slice::from_ref(&one.base)).await;
        drop(one);
        let Ok(admin) = std::env::var("HEDDLE_BENCH_POSTGRES") else {
            println!("two servers: skipped (set HEDDLE_BENCH_POSTGRES)");
            return;
        };
        let url = fresh_postgres(&admin).await;
        let key = tempfile::tempdir().unwrap_or_else(|e| panic!("dir: {e}"));
        let key = key.path().join("team.key").display().to_string();
        let mut with_key = args.to_vec();
        with_key.extend(["--key-file", key.as_str()]);
        let a = Server::start_on(Some(&url), &with_key);
        let b = Server::start_on(Some(&url), &with_key);
        measure(
            "two servers (PostgreSQL)",
            &[a.base.clone(), b.base.clone()],
        )
        .await;
    });
}
