//! A run that takes its server down is quarantined, not retried forever:
//! real `heddle` processes, each killed (SIGKILL) while the run is in the
//! same step. The first server to take it over goes on with it; the next,
//! finding it at the very checkpoint where the last server died with it,
//! fails it saying what it was doing, and serves on.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use crate::replicas::events;
use crate::support::{Browser, Killed, serve_process, test_database};

async fn serve(dir: &std::path::Path, url: &str) -> (std::process::Child, std::net::SocketAddr) {
    // On PostgreSQL the next process takes the run once the lease lapses.
    serve_process(dir, url, &[], &[("HEDDLE_LEASE_SECONDS", "1")]).await
}

/// Waits until `spin` has started since the `resumes`-th `run_resumed`.
async fn spinning(owner: &Browser, run: &str, resumes: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the run never reached `spin`");
        let events = events(owner, run).await;
        let after = events
            .iter()
            .enumerate()
            .filter(|(_, event)| event["type"] == "run_resumed")
            .map(|(i, _)| i)
            .nth(resumes.wrapping_sub(1))
            .map_or(0, |i| i + 1);
        let started = resumes == 0 || after > 0;
        if started
            && events[after..]
                .iter()
                .any(|event| event["type"] == "node_started" && event["node"] == "spin")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_run_whose_servers_die_twice_at_the_same_step_is_quarantined() {
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let (first, addr) = serve(dir.path(), &url).await;
    let mut first = Killed(first);
    let owner = Browser::new(addr);
    owner.sign_up("owner").await;
    let (status, made) = owner
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": {
                "format_version": 2, "name": "takes its server down",
                "state": {"channels": {}},
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": "spin", "kind": "script", "config": {
                              "source": "let x = 0; loop { x += 1; }",
                              "max_operations": 100_000_000, "timeout_ms": 30_000}},
                          {"id": "end", "kind": "end"}],
                "edges": [{"id": "e1", "from": "start", "to": "spin"}, {"id": "e2", "from": "spin", "to": "end"}]
            }})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let graph = made["id"].as_str().unwrap().to_string();
    let (status, run) = owner
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run = run["id"].as_str().unwrap().to_string();

    // Its server dies in `spin`; the next one takes the run over.
    spinning(&owner, &run, 0).await;
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let (second, addr) = serve(dir.path(), &url).await;
    let mut second = Killed(second);
    let owner = Browser::new(addr);
    owner.log_in("owner").await;
    spinning(&owner, &run, 1).await;

    // That one dies in `spin` too, with no new checkpoint in between.
    second.0.kill().unwrap();
    second.0.wait().unwrap();
    let (third, addr) = serve(dir.path(), &url).await;
    let _third = Killed(third);
    let owner = Browser::new(addr);
    owner.log_in("owner").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        assert!(Instant::now() < deadline, "the run was never quarantined");
        let (status, record) = owner
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        assert_eq!(status, 200, "{record}");
        if record["status"] == "failed" {
            break record;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let error = ended["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "quarantined: the server running it stopped twice at step 1 (running `spin`)"
        ),
        "{error}"
    );
    let events = events(&owner, &run).await;
    let last = events.last().unwrap();
    assert_eq!(last["type"], "run_failed", "{last}");
    assert_eq!(last["error"], error);
    // Exactly two takeovers: it was not retried a third time.
    assert_eq!(
        events
            .iter()
            .filter(|event| event["type"] == "run_resumed")
            .count(),
        1,
        "{events:?}"
    );

    // The server serves on: another run finishes.
    let (status, made) = owner
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": {
                "format_version": 2, "name": "fine",
                "state": {"channels": {}},
                "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
                "edges": [{"id": "e", "from": "start", "to": "end"}]
            }})),
        )
        .await;
    assert_eq!(status, 201);
    let fine = made["id"].as_str().unwrap();
    let (status, started) = owner
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{fine}/runs"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 202);
    let id = started["id"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the new run never finished");
        let (_, record) = owner
            .api(Method::GET, &format!("/api/v1/runs/{id}"), None)
            .await;
        if record["status"] == "finished" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
