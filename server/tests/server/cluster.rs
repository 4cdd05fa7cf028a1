//! Several servers on one PostgreSQL database behave as one, with no
//! sticky sessions: an access change made through one closes the sockets
//! it concerns on the others, log-in limits count every server's attempts,
//! graph pages hear of runs executing anywhere, and `--role web` servers
//! queue the runs they are asked for, which `--role worker` servers take.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::api_runs::counting_loop;
use crate::replicas::{create_graph, events, replica, replica_with, start_run as start};
use crate::support::{
    Browser, Killed, error_message, heddle, on_postgres, test_database, worker_process,
};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn socket(browser: &Browser) -> Socket {
    tokio_tungstenite::connect_async(browser.ws_request())
        .await
        .expect("a websocket")
        .0
}

async fn send(socket: &mut Socket, message: Value) {
    socket
        .send(Message::text(message.to_string()))
        .await
        .expect("sent");
}

/// The next JSON message within `wait`; `None` when the socket closed.
async fn next_within(socket: &mut Socket, wait: Duration) -> Option<Value> {
    loop {
        let message = tokio::time::timeout(wait, socket.next())
            .await
            .expect("a message in time");
        match message {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(&text).ok(),
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(_)) => {}
        }
    }
}

/// Watches `graph` on `socket`, registered once a ping comes back.
async fn watch(socket: &mut Socket, graph: &str) {
    send(socket, json!({"type": "watch_graph", "graph_id": graph})).await;
    send(socket, json!({"type": "ping"})).await;
    while next_within(socket, Duration::from_secs(10))
        .await
        .expect("open")["type"]
        != "pong"
    {}
}

async fn status_of(browser: &Browser, run: &str) -> String {
    let (status, info) = browser
        .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
        .await;
    assert_eq!(status, 200, "{info}");
    info["status"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_revoke_through_one_server_ends_access_on_another_at_once() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (a, owner) = replica(&url, &key).await;
    let _a = Killed(a);
    let (b, on_b) = replica(&url, &key).await;
    let _b = Killed(b);
    owner.sign_up("owner").await;
    let teammate = Browser::new(on_b.addr);
    teammate.sign_up("tess").await;
    let graph = create_graph(&owner, counting_loop(1)).await;
    let (status, link) = owner
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    assert_eq!(status, 201, "{link}");
    let token = link["path"].as_str().unwrap().trim_start_matches("/share/");
    let (status, body) = teammate
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert_eq!(status, 200, "{body}");

    // The teammate watches the graph on B; the owner revokes the link on A.
    let mut watching = socket(&teammate).await;
    watch(&mut watching, &graph).await;
    let revoked_at = Instant::now();
    let (status, _) = owner
        .api(
            Method::DELETE,
            &format!(
                "/api/v1/graphs/{graph}/links/{}",
                link["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(status, 204);
    // B hears of it at once, not at its own periodic check (30 s).
    let message = next_within(&mut watching, Duration::from_secs(10))
        .await
        .expect("the socket stays open");
    assert_eq!(message["type"], "access_revoked", "{message}");
    assert_eq!(message["graph_id"], graph.as_str());
    assert!(revoked_at.elapsed() < Duration::from_secs(10));
    let (status, _) = teammate
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 410, "their access ended, and they are told so");

    // A log-out through A closes the owner's socket on B (cookies are
    // per host, so the owner's browser sends its session to B as well).
    let owner_on_b = Browser {
        addr: on_b.addr,
        client: owner.client.clone(),
        jar: owner.jar.clone(),
    };
    let mut owners = socket(&owner_on_b).await;
    watch(&mut owners, &graph).await;
    let (status, _) = owner.api(Method::POST, "/api/v1/auth/logout", None).await;
    assert_eq!(status, 204);
    assert_eq!(
        next_within(&mut owners, Duration::from_secs(10)).await,
        None,
        "B closes the socket of a session ended through A"
    );
}

#[tokio::test]
async fn log_in_limits_count_the_attempts_on_every_server() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (a, on_a) = replica(&url, &key).await;
    let _a = Killed(a);
    let (b, on_b) = replica(&url, &key).await;
    let _b = Killed(b);
    on_a.sign_up("kim").await;
    // Wrong passwords, alternating between the servers: the account's
    // burst (5) is spent across both, and the next attempt is refused on
    // either, whatever the password.
    for attempt in 0..5 {
        let through = if attempt % 2 == 0 { &on_a } else { &on_b };
        let (status, body) = Browser::new(through.addr)
            .api(
                Method::POST,
                "/api/v1/auth/login",
                Some(json!({"username": "kim", "password": "wrong password"})),
            )
            .await;
        assert_eq!(status, 401, "attempt {attempt}: {body}");
    }
    for through in [&on_a, &on_b] {
        let (status, body) = Browser::new(through.addr)
            .api(
                Method::POST,
                "/api/v1/auth/login",
                Some(json!({"username": "kim", "password": crate::support::PASSWORD})),
            )
            .await;
        assert_eq!(status, 429, "{body}");
        let message = error_message(&body);
        assert!(
            message.starts_with("too many log-in attempts for this username; try again in"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn web_servers_queue_runs_and_workers_execute_them() {
    if !on_postgres() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (web, owner) = replica_with(&url, &key, &["--role", "web"]).await;
    let _web = Killed(web);
    owner.sign_up("owner").await;
    let graph = create_graph(&owner, counting_loop(40)).await;
    let mut watching = socket(&owner).await;
    watch(&mut watching, &graph).await;

    // With no server to execute it, a run waits in the queue.
    let first = start(&owner, &graph, 40).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(status_of(&owner, &first).await, "queued");
    assert!(events(&owner, &first).await.is_empty());

    // A worker takes it, and the next one as soon as it is queued.
    let key_arg = key.display().to_string();
    let _worker = Killed(
        worker_process(
            dir.path(),
            &url,
            &["--lease-seconds", "1", "--key-file", &key_arg],
        )
        .await,
    );
    let second = start(&owner, &graph, 40).await;
    for run in [&first, &second] {
        let deadline = Instant::now() + Duration::from_secs(30);
        while status_of(&owner, run).await != "finished" {
            assert!(Instant::now() < deadline, "run {run} never finished");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Its log, read through the web server, is whole: 40 steps of the
        // loop, numbered without a gap.
        let log = events(&owner, run).await;
        let seqs: Vec<u64> = log.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
        let (_, info) = owner
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        assert_eq!(info["output"]["count"], 40, "{info}");
    }

    // The graph page on the web server heard both runs start and end on
    // the worker.
    let mut heard: Vec<(String, String)> = Vec::new();
    while heard.len() < 4 {
        let message = next_within(&mut watching, Duration::from_secs(10))
            .await
            .expect("open");
        if message["type"] == "notice" {
            heard.push((
                message["run_id"].as_str().unwrap().to_string(),
                message["status"].as_str().unwrap().to_string(),
            ));
        }
    }
    for run in [&first, &second] {
        let statuses: Vec<&str> = heard
            .iter()
            .filter(|(id, _)| id == run)
            .map(|(_, status)| status.as_str())
            .collect();
        assert_eq!(statuses, ["running", "finished"], "{run}");
    }
}

#[test]
fn web_and_worker_roles_need_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    for role in ["web", "worker"] {
        let output = heddle()
            .args(["serve", "--port", "0", "--role", role, "--database-url"])
            .arg(format!("sqlite://{}", dir.path().join("one.db").display()))
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "`--role {role}` needs PostgreSQL: a SQLite file is served by one server"
            )),
            "{stderr}"
        );
    }
}
