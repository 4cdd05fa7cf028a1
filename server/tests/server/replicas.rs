//! Several `heddle serve` processes on one PostgreSQL database: a run
//! started through one, whose server is killed with SIGKILL mid-run, is
//! taken over by another when its lease lapses and finishes there, from
//! its newest checkpoint: the stored log has no gap and no reused number,
//! and no step ran twice (the run counts its node executions).

use std::process::Child;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::api_runs::counting_loop;
use crate::support::{Browser, on_postgres, serve_process, test_database};

/// A replica: `heddle serve` on `url` with the team's shared secret key,
/// `args`, and a one-second lease unless they say otherwise.
pub async fn replica_with(url: &str, key: &std::path::Path, args: &[&str]) -> (Child, Browser) {
    let key = key.display().to_string();
    let mut all = vec!["--key-file", key.as_str()];
    if !args.contains(&"--lease-seconds") {
        all.extend(["--lease-seconds", "1"]);
    }
    all.extend_from_slice(args);
    let dir = key_dir(&key);
    let (child, addr) = serve_process(&dir, url, &all, &[]).await;
    (child, Browser::new(addr))
}

pub async fn replica(url: &str, key: &std::path::Path) -> (Child, Browser) {
    replica_with(url, key, &[]).await
}

/// Where the replicas run: beside their key.
pub fn key_dir(key: &str) -> std::path::PathBuf {
    std::path::Path::new(key)
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

pub async fn events(browser: &Browser, run: &str) -> Vec<Value> {
    let (status, events) = browser
        .api(
            Method::GET,
            &format!("/api/v1/runs/{run}/events?from_seq=0"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{events}");
    events.as_array().unwrap().clone()
}

/// Run `run`'s record, read through `browser`.
pub async fn run_info(browser: &Browser, run: &str) -> Value {
    let (status, info) = browser
        .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
        .await;
    assert_eq!(status, 200, "{info}");
    info
}

/// Waits (up to `within`) for run `run` to finish, read through
/// `browser`: its record. It must stay queued or running until then.
pub async fn finished_through(browser: &Browser, run: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        assert!(Instant::now() < deadline, "no replica finished the run");
        let info = run_info(browser, run).await;
        if info["status"] == "finished" {
            return info;
        }
        assert!(
            info["status"] == "running" || info["status"] == "queued",
            "{info}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The log goes on from 0 without a gap or a reused number.
pub fn assert_numbered(stored: &[Value]) {
    let seqs: Vec<u64> = stored
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (0..stored.len() as u64).collect::<Vec<_>>(),
        "the log goes on without a gap or a reused number"
    );
}

/// Creates a graph from `document` through `browser`; its id.
pub async fn create_graph(browser: &Browser, document: Value) -> String {
    let (status, graph) = browser
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": document})),
        )
        .await;
    assert_eq!(status, 201, "{graph}");
    graph["id"].as_str().unwrap().to_string()
}

/// Starts a run of a counting loop graph up to `target`; its id.
pub async fn start_run(browser: &Browser, graph: &str, target: u64) -> String {
    let (status, run) = browser
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": target}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    run["id"].as_str().unwrap().to_string()
}

/// A counting loop of `target` steps, created and started through
/// `browser`; the run's id.
pub async fn start_counting(browser: &Browser, target: u64) -> String {
    let graph = create_graph(browser, counting_loop(target)).await;
    start_run(browser, &graph, target).await
}

/// Waits (up to 30 s) until run `run` has stored `events` events, read
/// through `browser`.
pub async fn under_way(browser: &Browser, run: &str, events_stored: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while events(browser, run).await.len() < events_stored {
        assert!(Instant::now() < deadline, "the run never got going");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Watches run `run` over a websocket opened with `request` (through any
/// server, or a proxy) until it stops: every event seen, and the closing
/// `run_idle` message.
pub async fn follow(
    request: tokio_tungstenite::tungstenite::handshake::client::Request,
    run: String,
) -> (Vec<Value>, Value) {
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("a websocket");
    socket
        .send(Message::text(
            json!({"type": "subscribe", "run_id": run, "from_seq": 0}).to_string(),
        ))
        .await
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), socket.next())
            .await
            .expect("the viewer hears in time")
            .expect("open")
            .expect("a frame");
        let Message::Text(text) = message else {
            continue;
        };
        let message: Value = serde_json::from_str(&text).unwrap();
        match message["type"].as_str() {
            Some("event") => seen.push(message["event"].clone()),
            Some("run_idle") => return (seen, message),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_run_whose_server_is_killed_finishes_on_another_replica() {
    if !on_postgres() {
        // Replicas need PostgreSQL; SQLite serves one process per file
        // (startup.rs shows a second one refused). The PostgreSQL pass
        // runs this test, and cannot skip it.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (mut a, through_a) = replica(&url, &key).await;
    let (b, through_b) = replica(&url, &key).await;
    let (c, through_c) = replica(&url, &key).await;
    through_a.sign_up("owner").await;
    through_b.log_in("owner").await;
    through_c.log_in("owner").await;

    const TARGET: u64 = 1_000;
    let run = start_counting(&through_a, TARGET).await;

    // A viewer on B follows the run live, whichever server executes it.
    let viewer = tokio::spawn(follow(through_b.ws_request(), run.clone()));

    // B sees the run A executes; once it is well under way, A dies.
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen_before_kill = loop {
        assert!(Instant::now() < deadline, "the run never got going on A");
        let seen = events(&through_b, &run).await;
        if seen.len() > 200 {
            break seen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    a.kill().unwrap();
    a.wait().unwrap();
    let killed_at = Instant::now();

    // Another replica takes it over when A's lease lapses, and finishes it.
    let finished = finished_through(&through_c, &run, Duration::from_secs(90)).await;
    assert!(
        killed_at.elapsed() >= Duration::from_millis(900),
        "taken over before the lease lapsed"
    );
    assert_eq!(finished["output"]["count"], TARGET, "{finished}");

    let stored = events(&through_b, &run).await;
    assert_numbered(&stored);
    for (before, after) in seen_before_kill.iter().zip(&stored) {
        assert_eq!(before, after, "an event seen before the kill changed");
    }
    assert!(
        stored.iter().any(|event| event["type"] == "run_resumed"),
        "the run went on from a checkpoint"
    );
    // No committed step ran twice. Events are stored ahead of their step's
    // checkpoint, so the step A was executing when it died may show in the
    // log (seen, not committed) and run again after `run_resumed`.
    let resumed_at = stored
        .iter()
        .position(|event| event["type"] == "run_resumed")
        .unwrap();
    let resumed_step = stored[resumed_at]["step"].as_u64().unwrap();
    let ticks = |events: &[Value]| -> Vec<u64> {
        events
            .iter()
            .filter(|event| event["type"] == "node_succeeded" && event["node"] == "tick")
            .map(|event| event["step"].as_u64().unwrap())
            .collect()
    };
    let (before, after) = (ticks(&stored[..resumed_at]), ticks(&stored[resumed_at..]));
    let unique = |steps: &[u64]| steps.windows(2).all(|pair| pair[0] < pair[1]);
    assert!(
        unique(&before) && unique(&after),
        "a step ran twice on one server"
    );
    assert!(after.iter().all(|step| *step >= resumed_step));
    let committed_before = before.iter().filter(|step| **step < resumed_step).count();
    assert!(
        before.len() - committed_before <= 1,
        "only the step in flight when A died may run again: {before:?}"
    );
    assert_eq!(
        committed_before + after.len(),
        TARGET as usize,
        "every step committed exactly once"
    );

    // The viewer on B saw every event once, in order, across the takeover.
    let (watched, idle) = viewer.await.unwrap();
    assert_eq!(idle["status"], "finished", "{idle}");
    assert_eq!(
        watched, stored,
        "the viewer on B saw the stored log exactly"
    );

    for mut replica in [b, c] {
        replica.kill().unwrap();
        replica.wait().unwrap();
    }
}

/// Sends `signal` (`STOP`, `CONT`) to a replica's process.
fn signal(replica: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &replica.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal}");
}

#[tokio::test]
async fn a_server_that_stalls_past_its_lease_gives_its_run_up() {
    if !on_postgres() {
        return;
    }
    // A is not dead, only frozen (a long pause, an overloaded machine)
    // past its lease: B takes the run over. When A wakes it must not write
    // another event or checkpoint of it: B's log goes on without A's, and
    // the run finishes on B.
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (mut a, through_a) = replica(&url, &key).await;
    let (mut b, through_b) = replica(&url, &key).await;
    through_a.sign_up("owner").await;
    through_b.log_in("owner").await;

    const TARGET: u64 = 1_000;
    let run = start_counting(&through_a, TARGET).await;
    under_way(&through_b, &run, 200).await;
    signal(&a, "STOP");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !events(&through_b, &run)
        .await
        .iter()
        .any(|event| event["type"] == "run_resumed")
    {
        assert!(Instant::now() < deadline, "B never took the run over");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    signal(&a, "CONT");

    let finished = finished_through(&through_b, &run, Duration::from_secs(90)).await;
    assert_eq!(finished["output"]["count"], TARGET, "{finished}");
    let stored = events(&through_b, &run).await;
    assert_numbered(&stored);
    let resumed_at = stored
        .iter()
        .position(|event| event["type"] == "run_resumed")
        .unwrap();
    // After B's `run_resumed`, only B's steps: each once, in order.
    let after: Vec<u64> = stored[resumed_at..]
        .iter()
        .filter(|event| event["type"] == "node_succeeded" && event["node"] == "tick")
        .map(|event| event["step"].as_u64().unwrap())
        .collect();
    assert!(
        after.windows(2).all(|pair| pair[0] < pair[1]),
        "A wrote into the log after B took the run over"
    );
    assert_eq!(
        stored
            .iter()
            .filter(|event| event["type"] == "run_resumed")
            .count(),
        1
    );
    // A is alive and serving, and shows the run B finished.
    let info = run_info(&through_a, &run).await;
    assert_eq!(info["status"], "finished", "{info}");

    for replica in [&mut a, &mut b] {
        replica.kill().unwrap();
        replica.wait().unwrap();
    }
}

#[tokio::test]
async fn a_server_writes_nothing_more_of_a_run_once_its_lease_is_taken() {
    if !on_postgres() {
        return;
    }
    // The moment another server takes a run's lease (here: the database
    // is told so, as a taking server's claim does), the server executing
    // it may not store one more event or checkpoint of it, even before
    // its next renewal notices: the new owner goes on from the log it
    // reads after its claim, and a late write would break it.
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (mut a, through_a) = replica_with(&url, &key, &["--lease-seconds", "600"]).await;
    through_a.sign_up("owner").await;
    let run = start_counting(&through_a, 10_000_000).await;
    under_way(&through_a, &run, 200).await;

    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(
        "UPDATE runs SET lease_owner = 'another-server', lease_expires_at = '9999' WHERE id = $1",
    )
    .bind(&run)
    .execute(&pool)
    .await
    .unwrap();
    let stored_at_takeover = events(&through_a, &run).await.len();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        events(&through_a, &run).await.len(),
        stored_at_takeover,
        "A stored events of a run it no longer held"
    );
    // And A left the run's record to its owner.
    let info = run_info(&through_a, &run).await;
    assert_eq!(info["status"], "running", "{info}");
    a.kill().unwrap();
    a.wait().unwrap();
}

#[tokio::test]
async fn queued_runs_are_taken_over_with_their_requests() {
    if !on_postgres() {
        return;
    }
    // Runs queued on A (A runs one at a time, and is busy) are not lost
    // when A dies before starting them: B does what each asked, a start
    // with a breakpoint and a resume with its answer.
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (mut a, through_a) = replica_with(&url, &key, &["--max-runs", "1"]).await;
    through_a.sign_up("owner").await;
    let (status, graph) = through_a
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": counting_loop(10_000_000)})),
        )
        .await;
    assert_eq!(status, 201, "{graph}");
    let graph = graph["id"].as_str().unwrap().to_string();
    let start = |body: Value| {
        let (through_a, graph) = (&through_a, &graph);
        async move {
            let (status, run) = through_a
                .api(
                    Method::POST,
                    &format!("/api/v1/graphs/{graph}/runs"),
                    Some(body),
                )
                .await;
            assert_eq!(status, 202, "{run}");
            run["id"].as_str().unwrap().to_string()
        }
    };
    // A paused run, answered while A is busy: its resume waits in A's queue.
    let approval: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../engine/examples/graphs/approval.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let (status, approval) = through_a
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": approval})),
        )
        .await;
    assert_eq!(status, 201, "{approval}");
    let (status, paused) = through_a
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{}/runs", approval["id"].as_str().unwrap()),
            Some(json!({"input": {"request": "order 1042"}})),
        )
        .await;
    assert_eq!(status, 202, "{paused}");
    let (paused, thread) = (
        paused["id"].as_str().unwrap().to_string(),
        paused["thread_id"].as_str().unwrap().to_string(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the approval never paused");
        let (_, info) = through_a
            .api(Method::GET, &format!("/api/v1/runs/{paused}"), None)
            .await;
        if info["status"] == "interrupted" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let busy = start(json!({"input": {"target": 10_000_000}})).await;
    let queued = start(json!({"input": {"target": 5}, "interrupt_before": ["tick"]})).await;
    let (status, resumed) = through_a
        .api(
            Method::POST,
            &format!("/api/v1/threads/{thread}/resume"),
            Some(json!({"value": true})),
        )
        .await;
    assert_eq!(status, 202, "{resumed}");
    assert_eq!(resumed["status"], "queued", "{resumed}");
    let (_, info) = through_a
        .api(Method::GET, &format!("/api/v1/runs/{queued}"), None)
        .await;
    assert_eq!(info["status"], "queued", "{info}");
    a.kill().unwrap();
    a.wait().unwrap();

    let (mut b, through_b) = replica(&url, &key).await;
    through_b.log_in("owner").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the queued run was lost");
        let (_, info) = through_b
            .api(Method::GET, &format!("/api/v1/runs/{queued}"), None)
            .await;
        if info["status"] == "interrupted" {
            // It paused before `tick`, as its request asked.
            assert_eq!(info["output"]["interrupts"][0]["node"], "tick", "{info}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The answer queued on A is given on B: the refund is approved.
    loop {
        assert!(Instant::now() < deadline, "the queued answer was lost");
        let (_, info) = through_b
            .api(Method::GET, &format!("/api/v1/runs/{paused}"), None)
            .await;
        if info["status"] == "finished" {
            assert_eq!(
                info["output"]["decision"], "Refund approved: order 1042",
                "{info}"
            );
            break;
        }
        assert_ne!(info["status"], "failed", "{info}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    through_b
        .api(Method::POST, &format!("/api/v1/runs/{busy}/cancel"), None)
        .await;
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test]
async fn a_server_shutting_down_hands_its_runs_over_after_their_step() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    // Leases far longer than the test waits: only the hand-over can move
    // the run.
    let (mut a, through_a) = replica_with(&url, &key, &["--lease-seconds", "60"]).await;
    let (b, through_b) = replica_with(&url, &key, &["--lease-seconds", "60"]).await;
    let _b = crate::support::Killed(b);
    through_a.sign_up("owner").await;
    through_b.log_in("owner").await;
    const TARGET: u64 = 1_000;
    let run = start_counting(&through_a, TARGET).await;
    under_way(&through_b, &run, 200).await;

    // SIGTERM: A finishes its step, gives the run back and exits cleanly.
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &a.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let exit = tokio::task::spawn_blocking(move || a.wait().unwrap())
        .await
        .unwrap();
    assert!(exit.success(), "{exit:?}");

    // B takes it over at once (not after the 60 s lease) and finishes it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let finished = loop {
        assert!(Instant::now() < deadline, "B never finished the run");
        let (_, info) = through_b
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        if info["status"] == "finished" {
            break info;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(finished["output"]["count"], TARGET, "{finished}");
    let stored = events(&through_b, &run).await;
    assert_numbered(&stored);
    // The step in flight at the signal finished on A: no step ran twice,
    // not even one seen and not committed.
    let ticks: Vec<u64> = stored
        .iter()
        .filter(|event| event["type"] == "node_started" && event["node"] == "tick")
        .map(|event| event["step"].as_u64().unwrap())
        .collect();
    assert!(
        ticks.windows(2).all(|pair| pair[0] < pair[1]),
        "a step started twice"
    );
    assert_eq!(ticks.len(), TARGET as usize);
    assert_eq!(
        stored
            .iter()
            .filter(|event| event["type"] == "run_resumed")
            .count(),
        1,
        "B went on from A's checkpoint"
    );
}

#[tokio::test]
async fn a_run_is_cancelled_through_another_server() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (mut a, through_a) = replica(&url, &key).await;
    let (mut b, through_b) = replica(&url, &key).await;
    through_a.sign_up("owner").await;
    through_b.log_in("owner").await;
    let run = start_counting(&through_a, 10_000_000).await;
    under_way(&through_b, &run, 50).await;

    // B does not execute it, and passes the cancel on to A, which stops it.
    let (status, info) = through_b
        .api(Method::POST, &format!("/api/v1/runs/{run}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{info}");
    let asked = Instant::now();
    loop {
        let (_, info) = through_b
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        if info["status"] == "cancelled" {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "the cancel never reached A: {info}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A stopped executing it: its log no longer grows.
    let stopped = events(&through_a, &run).await.len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(events(&through_a, &run).await.len(), stopped);

    for replica in [&mut a, &mut b] {
        replica.kill().unwrap();
        replica.wait().unwrap();
    }
}
