//! A real `heddle` process killed with SIGKILL while a websocket client
//! watches a run: after a restart on the same database, every event number
//! the client saw still names the very event it saw, the log goes on
//! without a gap, and a client reconnecting from its last number + 1 is
//! told the run resumed.

use std::collections::BTreeMap;
use std::process::Child;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::replicas::start_counting;
use crate::support::{Browser, serve_process, test_database};

/// Starts `heddle serve` in `dir` on the database at `url`.
async fn serve(dir: &std::path::Path, url: &str) -> (Child, std::net::SocketAddr) {
    // On PostgreSQL the new process takes the run over when the dead
    // one's lease lapses.
    serve_process(dir, url, &[], &[("HEDDLE_LEASE_SECONDS", "1")]).await
}

#[tokio::test]
async fn event_numbers_seen_live_survive_a_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let (mut first, addr) = serve(dir.path(), &url).await;
    let owner = Browser::new(addr);
    owner.sign_up("owner").await;
    let run = start_counting(&owner, 10_000_000).await;

    // Watch it live, then kill the server mid-step.
    let (mut socket, _) = tokio_tungstenite::connect_async(owner.ws_request())
        .await
        .unwrap();
    socket
        .send(Message::text(
            json!({"type": "subscribe", "run_id": run, "from_seq": 0}).to_string(),
        ))
        .await
        .unwrap();
    let mut seen: BTreeMap<u64, Value> = BTreeMap::new();
    while seen.len() < 400 {
        let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
            .await
            .expect("events in time")
            .expect("open")
            .expect("a frame");
        if let Message::Text(text) = message {
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["type"] == "event" {
                let event = message["event"].clone();
                seen.insert(event["seq"].as_u64().unwrap(), event);
            }
        }
    }
    first.kill().unwrap();
    first.wait().unwrap();
    drop(socket);
    let last_seen = *seen.keys().next_back().unwrap();

    // A new process on the same database recovers the run.
    let (mut second, addr) = serve(dir.path(), &url).await;
    let owner = Browser::new(addr);
    owner.log_in("owner").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let events = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the recovered run never went on"
        );
        let (status, events) = owner
            .api(
                Method::GET,
                &format!("/api/v1/runs/{run}/events?from_seq=0"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{events}");
        let events = events.as_array().unwrap().clone();
        let resumed_after = events.iter().any(|event| {
            event["seq"].as_u64().unwrap() > last_seen && event["type"] == "run_resumed"
        });
        if resumed_after && events.len() as u64 > last_seen + 50 {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    owner
        .api(Method::POST, &format!("/api/v1/runs/{run}/cancel"), None)
        .await;

    let stored: BTreeMap<u64, &Value> = events
        .iter()
        .map(|event| (event["seq"].as_u64().unwrap(), event))
        .collect();
    for (seq, event) in &seen {
        assert_eq!(
            stored.get(seq).copied(),
            Some(event),
            "seq {seq} names another event after the crash"
        );
    }
    let seqs: Vec<u64> = stored.keys().copied().collect();
    assert_eq!(
        seqs,
        (0..seqs.len() as u64).collect::<Vec<_>>(),
        "the log goes on without a gap"
    );
    // Reconnecting from the last number seen + 1: the run resumed, before
    // any of its steps runs again.
    let after: Vec<&&Value> = stored.range(last_seen + 1..).map(|(_, e)| e).collect();
    let resumed = after
        .iter()
        .position(|event| event["type"] == "run_resumed")
        .expect("run_resumed after the last event seen");
    let resumed_step = after[resumed]["step"].as_u64().unwrap();
    assert!(
        after[resumed..]
            .iter()
            .filter(|event| event["type"] == "node_started")
            .all(|event| event["step"].as_u64().unwrap() >= resumed_step)
    );
    second.kill().unwrap();
    second.wait().unwrap();
}
