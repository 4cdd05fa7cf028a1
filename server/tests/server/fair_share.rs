//! Fair use between accounts and the server's ceilings, against the real
//! `heddle` binary over HTTP (on SQLite, and on PostgreSQL when the tests
//! have one): an account's flood through many API keys neither holds up
//! another account's run nor grows past the account's cap, its fan-out of
//! model calls does not hold up another account's call, and a graph
//! cannot ask for more steps, fan-out items or active time than the
//! server allows.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::replicas::{create_graph, replica_with, run_info};
use crate::support::{
    Browser, KeyClient, Killed, error_message, on_postgres, serve_process, test_database,
};

/// start -> wait `ms` -> end.
fn nap(ms: u64) -> Value {
    json!({
        "format_version": 2,
        "name": "nap",
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

/// A server on its own database with `args`; the process and its address.
async fn server(dir: &std::path::Path, args: &[&str]) -> (Killed, SocketAddr) {
    let url = test_database(dir).await;
    let (child, addr) = serve_process(dir, &url, args, &[("HEDDLE_OFFLINE_PACE_MS", "0")]).await;
    (Killed(child), addr)
}

async fn publish(owner: &Browser, graph: &str) {
    let (status, body) = owner
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/published"),
            Some(json!({"version": 1})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

/// Invokes the published graph through a key without waiting; the
/// response.
async fn invoke(key: &KeyClient, graph: &str) -> reqwest::Response {
    key.request(Method::POST, &format!("/api/v1/graphs/{graph}/invoke"))
        .json(&json!({"input": {}, "wait_seconds": 0}))
        .send()
        .await
        .expect("invoke")
}

async fn invoked_run(key: &KeyClient, graph: &str) -> String {
    let response = invoke(key, graph).await;
    let status = response.status().as_u16();
    let body: Value = response.json().await.expect("json");
    assert_eq!(status, 202, "{body}");
    body["run_id"].as_str().expect("run id").to_string()
}

/// Starts a run of `graph` as `browser`'s account, from the API; its id.
async fn start(browser: &Browser, graph: &str) -> (u16, Value) {
    browser
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {}})),
        )
        .await
}

/// Waits until run `run` stopped; its record.
async fn ended(browser: &Browser, run: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let info = run_info(browser, run).await;
        if info["status"] != "queued" && info["status"] != "running" {
            return info;
        }
        assert!(Instant::now() < deadline, "the run never ended: {info}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Of `runs`, those still queued (not started) now.
async fn still_queued(browser: &Browser, runs: &[String]) -> Vec<String> {
    let mut queued = Vec::new();
    for run in runs {
        if run_info(browser, run).await["status"] == "queued" {
            queued.push(run.clone());
        }
    }
    queued
}

/// How many of `behind` started before `first` did (each must finish).
async fn started_before(browser: &Browser, first: &Value, behind: &[String]) -> usize {
    let first_start = first["started_at"].as_str().expect("started");
    let mut before = 0;
    for run in behind {
        let info = ended(browser, run).await;
        assert_eq!(info["status"], "finished", "{info}");
        if info["started_at"].as_str().expect("started") < first_start {
            before += 1;
        }
    }
    before
}

#[tokio::test]
async fn an_accounts_flood_through_many_keys_does_not_hold_up_another_accounts_run() {
    let dir = tempfile::tempdir().expect("dir");
    let (_server, addr) =
        server(dir.path(), &["--max-runs", "2", "--max-runs-per-user", "4"]).await;
    let alice = Browser::new(addr);
    alice.sign_up("alice").await;
    let bob = Browser::new(addr);
    bob.sign_up("bob").await;
    let flood = create_graph(&alice, nap(1500)).await;
    publish(&alice, &flood).await;
    // Three keys, four runs each: 12 runs for 2 slots.
    let mut runs = Vec::new();
    for _ in 0..3 {
        let key = alice.key_client("run", &[flood.as_str()]).await;
        for _ in 0..4 {
            runs.push(invoked_run(&key, &flood).await);
        }
    }
    let own = create_graph(&bob, nap(10)).await;
    let (status, run) = start(&bob, &own).await;
    assert_eq!(status, 202, "{run}");
    let bobs = run["id"].as_str().expect("id").to_string();
    // Alice's runs still recorded as queued once Bob's was queued wait
    // behind it: Bob's takes one of the next free slots, not the
    // thirteenth. (A run given a slot just before Bob's came is still
    // recorded as queued while it prepares: at most one per slot.)
    let behind = still_queued(&alice, &runs).await;
    assert!(
        behind.len() > 4,
        "the flood ran out before the other account came: {behind:?}"
    );
    let bobs = ended(&bob, &bobs).await;
    assert_eq!(bobs["status"], "finished", "{bobs}");
    let before = started_before(&alice, &bobs, &behind).await;
    assert!(before <= 2, "{before} of Alice's waiting runs went first");
}

#[tokio::test]
async fn an_accounts_runs_are_capped_over_all_its_keys_with_retry_after() {
    let dir = tempfile::tempdir().expect("dir");
    let (_server, addr) = server(
        dir.path(),
        &[
            "--max-runs",
            "1",
            "--max-runs-per-user",
            "2",
            "--max-runs-per-owner",
            "5",
        ],
    )
    .await;
    let alice = Browser::new(addr);
    alice.sign_up("alice").await;
    let bob = Browser::new(addr);
    bob.sign_up("bob").await;
    let graph = create_graph(&alice, nap(60_000)).await;
    publish(&alice, &graph).await;
    let mut keys = Vec::new();
    for _ in 0..3 {
        keys.push(alice.key_client("run", &[graph.as_str()]).await);
    }
    // Two per key (each key's own limit), five in all.
    for key in &keys[..2] {
        for _ in 0..2 {
            invoked_run(key, &graph).await;
        }
    }
    invoked_run(&keys[2], &graph).await;
    // The sixth, through a key with room of its own, is over the account's.
    let refused = invoke(&keys[2], &graph).await;
    assert_eq!(refused.status().as_u16(), 429);
    let retry_after = refused
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    assert!(
        retry_after.is_some_and(|seconds| seconds > 0),
        "{retry_after:?}"
    );
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["error"]["code"], "too_many_requests", "{body}");
    assert!(
        error_message(&body).contains("the limit is 5 per account"),
        "{body}"
    );
    // Alice's own runs from the app count against the same cap.
    let (status, body) = start(&alice, &graph).await;
    assert_eq!(status, 429, "{body}");
    assert!(error_message(&body).contains("per account"), "{body}");
    // Another account is not held to Alice's.
    let others = create_graph(&bob, nap(10)).await;
    let (status, body) = start(&bob, &others).await;
    assert_eq!(status, 202, "{body}");
}

/// ping <-> pong, up to 100 steps as far as the graph is concerned.
fn ping_pong() -> Value {
    json!({
        "format_version": 2,
        "name": "ping pong",
        "state": {"channels": {"count": {"type": "number", "reducer": "sum"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ping", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "pong", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ping"},
            {"id": "e2", "from": "ping", "to": "pong"},
            {"id": "e3", "from": "pong", "to": "ping"}
        ],
        "limits": {"max_steps": 100}
    })
}

/// A fan-out over five items, with the node's default `max_items`.
fn fan_out_of_five() -> Value {
    json!({
        "format_version": 2,
        "name": "fan out",
        "state": {"channels": {
            "numbers": {"type": "list", "reducer": "replace"},
            "squares": {"type": "list", "reducer": "append"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "make", "kind": "set", "config": {"values": {"numbers": {"value": [1, 2, 3, 4, 5]}}}},
            {"id": "spread", "kind": "fan_out", "config": {"over": "numbers", "to": "square"}},
            {"id": "square", "kind": "set", "config": {"values": {"squares": {"expr": "item * item"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "make"},
            {"id": "e2", "from": "make", "to": "spread"}
        ]
    })
}

/// Waits a minute at a time, forever (up to its steps).
fn waits_forever() -> Value {
    json!({
        "format_version": 2,
        "name": "holds a slot",
        "state": {"channels": {"note": {"type": "string", "reducer": "replace"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "nap", "kind": "wait", "config": {"ms": 60000}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "nap"},
            {"id": "e2", "from": "nap", "to": "nap"}
        ],
        "limits": {"max_steps": 1000}
    })
}

#[tokio::test]
async fn graphs_cannot_ask_for_more_than_the_servers_ceilings() {
    let dir = tempfile::tempdir().expect("dir");
    let (_server, addr) = server(
        dir.path(),
        &[
            "--max-steps-per-run",
            "5",
            "--max-fan-out-items",
            "3",
            "--max-run-active-secs",
            "1",
        ],
    )
    .await;
    let alice = Browser::new(addr);
    alice.sign_up("alice").await;
    for (document, ceiling, says) in [
        (ping_pong(), "max_steps_per_run", "the graph asks for 100"),
        (
            fan_out_of_five(),
            "max_fan_out_items",
            "5 items is more than the server's ceiling",
        ),
        (waits_forever(), "max_run_active_secs", "active for 1 s"),
    ] {
        let graph = create_graph(&alice, document).await;
        let (status, run) = start(&alice, &graph).await;
        assert_eq!(status, 202, "{run}");
        let info = ended(&alice, run["id"].as_str().expect("id")).await;
        assert_eq!(info["status"], "failed", "{info}");
        let error = info["error"].as_str().unwrap_or_default();
        assert!(error.contains(&format!("`{ceiling}`")), "{error}");
        assert!(error.contains(says), "{error}");
    }
}

#[tokio::test]
async fn on_two_servers_a_flood_does_not_hold_up_another_accounts_run() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let args = ["--max-runs", "1", "--max-runs-per-user", "4"];
    let (one, on_one) = replica_with(&url, &key, &args).await;
    let _one = Killed(one);
    let (two, on_two) = replica_with(&url, &key, &args).await;
    let _two = Killed(two);
    on_one.sign_up("alice").await;
    on_two.sign_up("bob").await;
    let flood = create_graph(&on_one, nap(1500)).await;
    publish(&on_one, &flood).await;
    // Three keys, four runs each, every other one through each server.
    let mut on_second = Vec::new();
    for _ in 0..3 {
        let made = on_one
            .make_key(json!({"name": "flood", "scope": "run", "graphs": [flood]}))
            .await;
        let secret = made["secret"].as_str().expect("secret");
        let keys = [
            KeyClient::new(on_one.addr, secret),
            KeyClient::new(on_two.addr, secret),
        ];
        for n in 0..4 {
            let run = invoked_run(&keys[n % 2], &flood).await;
            if n % 2 == 1 {
                on_second.push(run);
            }
        }
    }
    let own = create_graph(&on_two, nap(10)).await;
    let (status, run) = start(&on_two, &own).await;
    assert_eq!(status, 202, "{run}");
    let behind = still_queued(&on_one, &on_second).await;
    assert!(
        behind.len() > 2,
        "the flood ran out before Bob came: {behind:?}"
    );
    let bobs = ended(&on_two, run["id"].as_str().expect("id")).await;
    assert_eq!(bobs["status"], "finished", "{bobs}");
    // At most the one run given the second server's slot just before
    // Bob's came goes first.
    let before = started_before(&on_one, &bobs, &behind).await;
    assert!(before <= 1, "{before} of Alice's waiting runs went first");
}

/// A fan-out of `items` model calls, each writing a note.
fn many_model_calls(items: usize) -> Value {
    let topics: Vec<String> = (0..items).map(|i| format!("topic {i}")).collect();
    json!({
        "format_version": 2,
        "name": "many calls",
        "state": {"channels": {
            "messages": {"type": "messages", "reducer": "add_messages"},
            "topics": {"type": "list", "reducer": "replace"},
            "notes": {"type": "list", "reducer": "append"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "make", "kind": "set", "config": {"values": {"topics": {"value": topics}}}},
            {"id": "spread", "kind": "fan_out", "config": {"over": "topics", "to": "write"}},
            {"id": "write", "kind": "llm", "config": {"prompt": "Say a word about {{item}}.", "output": "notes"}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "make"},
            {"id": "e2", "from": "make", "to": "spread"}
        ]
    })
}

/// One model call.
fn one_model_call() -> Value {
    json!({
        "format_version": 2,
        "name": "one call",
        "state": {"channels": {
            "messages": {"type": "messages", "reducer": "add_messages"},
            "note": {"type": "string"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "write", "kind": "llm", "config": {"prompt": "Say a word.", "output": "note"}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "write"}]
    })
}

#[tokio::test]
async fn an_accounts_fan_out_of_model_calls_does_not_hold_up_another_accounts_call() {
    let dir = tempfile::tempdir().expect("dir");
    let url = test_database(dir.path()).await;
    // One model call at a time, each taking a while (the offline model
    // streams a word every 5 ms).
    let (child, addr) = serve_process(
        dir.path(),
        &url,
        &["--max-model-calls", "1"],
        &[("HEDDLE_OFFLINE_PACE_MS", "5")],
    )
    .await;
    let _server = Killed(child);
    let alice = Browser::new(addr);
    alice.sign_up("alice").await;
    let bob = Browser::new(addr);
    bob.sign_up("bob").await;
    let flood = create_graph(&alice, many_model_calls(12)).await;
    let (status, run) = start(&alice, &flood).await;
    assert_eq!(status, 202, "{run}");
    let alices = run["id"].as_str().expect("id").to_string();
    // Bob's run comes once Alice's calls are waiting at the gate.
    let deadline = Instant::now() + Duration::from_secs(60);
    while run_info(&alice, &alices).await["status"] != "running" {
        assert!(Instant::now() < deadline, "Alice's run never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let own = create_graph(&bob, one_model_call()).await;
    let (status, run) = start(&bob, &own).await;
    assert_eq!(status, 202, "{run}");
    let bobs = ended(&bob, run["id"].as_str().expect("id")).await;
    assert_eq!(bobs["status"], "finished", "{bobs}");
    // Bob's call took the next free turn: Alice's run still had calls to
    // make (first come, first served, it would have made all twelve first).
    let alices_now = run_info(&alice, &alices).await;
    assert_eq!(
        alices_now["status"], "running",
        "Alice's calls all went first: {}",
        alices_now["usage"]
    );
    let alices = ended(&alice, &alices).await;
    assert_eq!(alices["status"], "finished", "{alices}");
    assert_eq!(alices["usage"]["calls"], 12, "{alices}");
}
