//! The server under attack (docs/performance.md), on loopback: the real
//! `heddle` binary.
//!
//! `cargo bench -p heddle-server --bench trust [-- LOGINS]`
//!
//! 1. `/api/health` latency p50/p99, idle and while 8 runs of an endless
//!    script spin (each allowed the maximum, 30 s and 10^8 operations).
//! 2. LOGINS (default 300) concurrent log-ins with unknown names, each
//!    from its own client address (the server trusts `X-Forwarded-For`
//!    here so every one passes the per-address limit): how many were
//!    checked and how many refused with 503, and the server's peak memory.
//! 3. Log-ins per second: 100 accounts logging in at once, each from its
//!    own address, all with the right password; those told to retry (503)
//!    do so after `Retry-After`, as a client should.

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use support::{Server, json, percentile};

/// The hostile graph the trust tests run too.
const ENDLESS_SCRIPT: &str = include_str!("../tests/fixtures/endless_script.json");

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"))
}

async fn sign_up(client: &reqwest::Client, base: &str, name: &str, from: &str) {
    client
        .post(format!("{base}/api/v1/auth/signup"))
        .header("x-forwarded-for", from)
        .json(&json!({"username": name, "password": "bench password"}))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| panic!("sign up {name}: {e}"));
}

/// `count` sequential health checks; their latencies, sorted (µs).
async fn health(client: &reqwest::Client, base: &str, count: usize) -> Vec<u64> {
    let mut times = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        client
            .get(format!("{base}/api/health"))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .unwrap_or_else(|e| panic!("health: {e}"));
        times.push(started.elapsed().as_micros() as u64);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    times.sort_unstable();
    times
}

async fn scripts(server: &Server) {
    let client = client();
    sign_up(&client, &server.base, "bench", "192.0.2.1").await;
    let idle = health(&client, &server.base, 300).await;
    let graph = json(
        client.post(format!("{}/api/v1/graphs", server.base)).json(
            &json!({"document": serde_json::from_str::<serde_json::Value>(ENDLESS_SCRIPT)
                .unwrap_or_else(|e| panic!("the fixture: {e}"))}),
        ),
        "create graph",
    )
    .await;
    let graph = graph["id"].as_str().unwrap_or_default();
    let mut runs = Vec::new();
    for _ in 0..8 {
        let run = json(
            client
                .post(format!("{}/api/v1/graphs/{graph}/runs", server.base))
                .json(&json!({})),
            "start",
        )
        .await;
        runs.push(run["id"].as_str().unwrap_or_default().to_string());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let busy = health(&client, &server.base, 300).await;
    for run in &runs {
        let _ = client
            .post(format!("{}/api/v1/runs/{run}/cancel", server.base))
            .send()
            .await;
    }
    println!(
        "| `/api/health`, idle | p50 {:.2} ms, p99 {:.2} ms |",
        percentile(&idle, 0.5),
        percentile(&idle, 0.99)
    );
    println!(
        "| `/api/health`, 8 endless scripts spinning | p50 {:.2} ms, p99 {:.2} ms |",
        percentile(&busy, 0.5),
        percentile(&busy, 0.99)
    );
}

fn address(n: usize) -> String {
    format!("10.{}.{}.{}", n / 65_536 % 256, n / 256 % 256, n % 256)
}

async fn flood(server: &Server, count: usize) {
    let client = client();
    let (before, _) = server.memory();
    let started = Instant::now();
    let answers = join_all((0..count).map(|n| {
        let client = client.clone();
        let url = format!("{}/api/v1/auth/login", server.base);
        async move {
            client
                .post(url)
                .header("x-forwarded-for", address(n))
                .json(&json!({"username": format!("nobody{n}"), "password": "a password"}))
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    }))
    .await;
    let elapsed = started.elapsed();
    let checked = answers.iter().filter(|s| **s == 401).count();
    let busy = answers.iter().filter(|s| **s == 503).count();
    let other = answers.len() - checked - busy;
    let (peak, now) = server.memory();
    println!(
        "| {count} concurrent log-ins, unknown names, {count} addresses | {checked} checked (401), \
         {busy} refused (503 + Retry-After), {other} other, in {:.2} s; peak memory {} MiB \
         (before {} MiB, after {} MiB) |",
        elapsed.as_secs_f64(),
        peak / 1024,
        before / 1024,
        now / 1024
    );
}

async fn log_ins_per_second(server: &Server) {
    let accounts = 100;
    let setup = client();
    for n in 0..accounts {
        sign_up(
            &setup,
            &server.base,
            &format!("user{n}"),
            &address(100_000 + n),
        )
        .await;
    }
    let started = Instant::now();
    let answers = join_all((0..accounts).map(|n| {
        let url = format!("{}/api/v1/auth/login", server.base);
        async move {
            let mut retries = 0;
            loop {
                let status = client()
                    .post(&url)
                    .header("x-forwarded-for", address(200_000 + n))
                    .json(&json!({"username": format!("user{n}"), "password": "bench password"}))
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0);
                if status != 503 || retries == 10 {
                    return (status, retries);
                }
                retries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }))
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let ok = answers.iter().filter(|(s, _)| *s == 200).count();
    let retried = answers.iter().filter(|(_, r)| *r > 0).count();
    println!(
        "| {accounts} right log-ins at once | {ok} logged in ({retried} after a 503 and a retry) \
         in {elapsed:.2} s: {:.0} log-ins/s |",
        ok as f64 / elapsed
    );
}

fn main() {
    let logins = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(300);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    println!("| measure | result |");
    println!("| --- | --- |");
    runtime.block_on(async {
        {
            let server = Server::start(&[
                "--max-runs",
                "8",
                "--max-runs-per-user",
                "100",
                "--trust-proxy",
            ]);
            scripts(&server).await;
        }
        {
            let server = Server::start(&["--trust-proxy"]);
            flood(&server, logins).await;
            log_ins_per_second(&server).await;
        }
    });
}
