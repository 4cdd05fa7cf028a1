//! The real `heddle` binary: it serves, stops cleanly on SIGTERM, and turns
//! bad configuration into one clear line and a failing exit code.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{heddle, listening};

/// `heddle serve` on a free port in `dir`, with its default database;
/// the process, once it listens, and its URL.
fn serve_in(dir: &std::path::Path) -> (std::process::Child, String) {
    let mut child = heddle()
        .args(["serve", "--port", "0"])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = listening(&mut child);
    (child, url)
}

#[test]
fn serves_creates_its_database_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = serve_in(dir.path());

    // The default database is ./data/heddle.db, created on first start,
    // with the secrets key beside it, readable by its owner only.
    assert!(dir.path().join("data/heddle.db").is_file());
    let key = std::fs::metadata(dir.path().join("data/heddle.key")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(key.permissions().mode() & 0o777, 0o600);
    }

    let body = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            reqwest::get(format!("{url}/api/health"))
                .await?
                .text()
                .await
        })
    })
    .join()
    .unwrap()
    .unwrap();
    assert!(body.contains("\"ok\""));

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "heddle did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "graceful shutdown exits 0, got {exit}");
}

#[test]
fn a_second_server_on_one_sqlite_file_is_refused_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let (mut first, _) = serve_in(dir.path());
    let second = heddle()
        .args(["serve", "--port", "0"])
        .env("RUST_LOG", "off")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let _ = first.kill();
    let _ = first.wait();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line, got: {stderr}");
    assert!(
        stderr.contains("another Heddle server is serving"),
        "{stderr}"
    );
    assert!(stderr.contains("PostgreSQL"), "{stderr}");

    // Once the first has stopped (even killed), the file is free again.
    let (mut again, _) = serve_in(dir.path());
    let _ = again.kill();
    let _ = again.wait();
}

fn fails_with_one_line(args: &[&str], envs: &[(&str, &str)], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let output = heddle()
        .args(args)
        .envs(envs.iter().copied())
        .env("RUST_LOG", "off")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line, got: {stderr}");
    assert!(stderr.starts_with("heddle: "), "{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_bad_database_url_is_one_clear_line() {
    fails_with_one_line(
        &[],
        &[("DATABASE_URL", "mysql://root:pw@localhost/x")],
        "is not supported",
    );
    fails_with_one_line(
        &["serve", "--database-url", "sqlite://x.db?mode=bogus"],
        &[],
        "is not a valid database URL",
    );
}

#[test]
fn an_unwritable_data_directory_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("blocker");
    std::fs::write(&file, "").unwrap();
    let url = format!("sqlite://{}/data/heddle.db", file.display());
    fails_with_one_line(
        &[],
        &[("DATABASE_URL", &url)],
        "cannot create the data directory",
    );
}

#[test]
fn a_port_in_use_is_one_clear_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    fails_with_one_line(
        &[],
        &[("HEDDLE_PORT", &port)],
        "cannot listen on 127.0.0.1:",
    );
}

#[tokio::test]
async fn serve_uses_the_model_endpoint_the_environment_names() {
    let (endpoint, _) = crate::support::fake_model(|_| "pong".into()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = heddle()
        .args(["serve", "--port", "0"])
        .env("HEDDLE_MODEL_BASE_URL", &endpoint)
        .env("HEDDLE_MODEL", "fake-model")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = listening(&mut child);
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let signup = client
        .post(format!("{base}/api/v1/auth/signup"))
        .json(&serde_json::json!({"username": "owner", "password": "correct horse battery"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signup.status(), 201);
    let graph: serde_json::Value = client
        .post(format!("{base}/api/v1/graphs"))
        .json(&serde_json::json!({"document": {
            "format_version": 2, "name": "ping",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [{"id": "start", "kind": "start"}, {"id": "ask", "kind": "llm"}],
            "edges": [{"id": "e", "from": "start", "to": "ask"}]
        }}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run: serde_json::Value = client
        .post(format!(
            "{base}/api/v1/graphs/{}/runs",
            graph["id"].as_str().unwrap()
        ))
        .json(&serde_json::json!({"input": {"messages": [{"role": "user", "content": "ping"}]}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run_url = format!("{base}/api/v1/runs/{}", run["id"].as_str().unwrap());
    let mut finished = serde_json::Value::Null;
    for _ in 0..200 {
        finished = client
            .get(&run_url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if finished["status"] == "finished" || finished["status"] == "failed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(finished["status"], "finished", "{finished}");
    assert_eq!(finished["output"]["messages"][1]["content"], "pong");
}
