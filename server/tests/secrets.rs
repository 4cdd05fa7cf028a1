//! Secrets: a planted value is used by the run that needs it (the fake
//! model endpoint sees it as the bearer token) and appears in no export,
//! response body or log line. Imports naming missing credentials ask for a
//! binding.
//!
//! A test binary of its own: it installs a global log subscriber to search
//! what the server logs, which must not touch the other tests.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

#[path = "server/support.rs"]
#[allow(dead_code)] // this binary uses a part of the shared helpers
mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestServer, error_message};

const PLANTED: &str = "sk-planted-7d1e4f0c9b2a4e55";

/// Everything the server logs, for searching.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Every test's logs, from when this is first called: a global subscriber
/// (a thread-local one misses events whose callsites other tests' threads
/// cached as uninteresting).
fn global_logs() -> Logs {
    static LOGS: std::sync::OnceLock<Logs> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Logs::default();
        let writer = logs.clone();
        // Everything our crates log, down to TRACE; other crates at INFO
        // (all of hyper's and sqlx's traces would slow every other test in
        // this binary to a crawl).
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "info,heddle_server=trace,heddle_app=trace,heddle_engine=trace",
            ))
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");
        logs
    })
    .clone()
}

/// A fake OpenAI-compatible endpoint that answers "pong" and remembers the
/// `Authorization` headers it got.
async fn endpoint() -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::http::HeaderMap;
    use axum::routing::post;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |headers: HeaderMap| {
            let record = Arc::clone(&record);
            async move {
                if let Some(value) = headers.get("authorization") {
                    record
                        .lock()
                        .unwrap()
                        .push(value.to_str().unwrap_or_default().to_string());
                }
                axum::Json(json!({
                    "id": "c", "object": "chat.completion", "created": 1, "model": "fake-model",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "pong"}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

fn graph_naming(credential: &str) -> Value {
    json!({
        "format_version": 2, "name": "keyed",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ask", "kind": "llm", "config": {"credential": credential, "system": "Be brief."}}
        ],
        "edges": [{"id": "e", "from": "start", "to": "ask"}]
    })
}

#[tokio::test]
async fn a_secret_is_used_by_runs_and_appears_in_no_export_response_or_log() {
    let logs = global_logs();

    let (url, seen) = endpoint().await;
    let (registry, _) = heddle_server::models::from_vars(|name| match name {
        "HEDDLE_MODEL_BASE_URL" => Some(url.clone()),
        "HEDDLE_MODEL" => Some("fake-model".into()),
        _ => None,
    });
    let server = TestServer::start_with_registry(registry).await;
    let mut bodies: Vec<String> = Vec::new();
    let mut call = async |method: Method, path: &str, body: Option<Value>| {
        let (status, answer) = server.api(method, path, body).await;
        bodies.push(answer.to_string());
        (status, answer)
    };

    let (status, _) = call(
        Method::PUT,
        "/api/v1/secrets/openai",
        Some(json!({"value": PLANTED})),
    )
    .await;
    assert_eq!(status, 204);
    let (status, listed) = call(Method::GET, "/api/v1/secrets", None).await;
    assert_eq!(status, 200);
    assert_eq!(listed[0]["name"], "openai");
    assert!(listed[0].get("value").is_none());

    let (status, created) = call(
        Method::POST,
        "/api/v1/graphs",
        Some(json!({"document": graph_naming("openai")})),
    )
    .await;
    assert_eq!(status, 201);
    let graph = created["id"].as_str().unwrap().to_string();
    let (status, run) = call(
        Method::POST,
        &format!("/api/v1/graphs/{graph}/runs"),
        Some(json!({"input": {"messages": [{"role": "user", "content": "ping"}]}})),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let run_id = run["id"].as_str().unwrap().to_string();
    let finished = server.wait_for_run(&run_id).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the endpoint was called");
    assert!(
        seen.iter()
            .all(|header| *header == format!("Bearer {PLANTED}")),
        "the run used the owner's secret: {seen:?}"
    );

    for path in [
        format!("/api/v1/graphs/{graph}"),
        format!("/api/v1/graphs/{graph}/export"),
        format!("/api/v1/graphs/{graph}/versions/1"),
        format!("/api/v1/graphs/{graph}/runs"),
        format!("/api/v1/runs/{run_id}"),
        format!("/api/v1/runs/{run_id}/events"),
        format!(
            "/api/v1/threads/{}",
            finished["thread_id"].as_str().unwrap()
        ),
        "/api/v1/auth/me".to_string(),
    ] {
        let (status, _) = call(Method::GET, &path, None).await;
        assert_eq!(status, 200, "{path}");
    }
    for function in ["list_secrets", "list_graphs"] {
        bodies.push(server.call(function, &[]).await.text().await.unwrap());
    }
    bodies.push(
        server
            .call("get_graph", &[("id", &graph)])
            .await
            .text()
            .await
            .unwrap(),
    );
    bodies.push(
        server
            .get(&format!("/graphs/{graph}"))
            .await
            .text()
            .await
            .unwrap(),
    );
    bodies.push(server.get("/settings").await.text().await.unwrap());

    let export = &bodies
        .iter()
        .find(|b| b.contains("\"credential\""))
        .cloned();
    assert!(export.is_some(), "the export names the credential");
    for body in &bodies {
        assert!(
            !body.contains(PLANTED),
            "a response holds the secret: {body}"
        );
    }
    let logged = logs.text();
    assert!(
        logged.contains(&format!("graph={graph}")),
        "this server's logs were captured"
    );
    assert!(logged.contains("secret saved"), "the logs were captured");
    assert!(!logged.contains(PLANTED), "a log line holds the secret");
}

#[tokio::test]
async fn a_run_naming_a_missing_credential_is_refused_with_its_name() {
    let server = TestServer::start().await;
    let graph = server.create_graph(graph_naming("anthropic")).await;
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {}})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    let problem = &body["error"]["problems"][0];
    assert_eq!(problem["node"], "ask");
    assert!(
        problem["message"]
            .as_str()
            .unwrap()
            .starts_with("no secret named `anthropic` is bound"),
        "{problem}"
    );
}

#[tokio::test]
async fn an_import_naming_missing_credentials_asks_for_a_binding() {
    let server = TestServer::start().await;
    let (status, dry) = server
        .api(
            Method::POST,
            "/api/v1/graphs/import?dry_run=true",
            Some(graph_naming("team-openai")),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(dry["missing_credentials"], json!(["team-openai"]));

    let (status, refused) = server
        .api(
            Method::POST,
            "/api/v1/graphs/import",
            Some(graph_naming("team-openai")),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(refused["error"]["code"], "missing_credentials");
    assert_eq!(
        refused["error"]["missing_credentials"],
        json!(["team-openai"])
    );
    assert!(error_message(&refused).contains("`team-openai`"));

    // Bound to one of the importer's own secrets, it goes in.
    server
        .api(
            Method::PUT,
            "/api/v1/secrets/mine",
            Some(json!({"value": "k"})),
        )
        .await;
    let (status, imported) = server
        .api(
            Method::POST,
            "/api/v1/graphs/import",
            Some(json!({
                "document": graph_naming("team-openai"),
                "bindings": {"team-openai": "mine"}
            })),
        )
        .await;
    assert_eq!(status, 201, "{imported}");
    let (_, graph) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{}", imported["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(
        graph["document"]["nodes"][1]["config"]["credential"],
        "mine"
    );
}
