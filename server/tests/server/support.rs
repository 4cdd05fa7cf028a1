//! A running server for a test: the real router over a fresh database in a
//! temporary directory, listening on a free port on 127.0.0.1.

use std::net::SocketAddr;

use heddle_server::runs::Runs;
use heddle_server::{AppState, db, router};
use serde_json::Value;
use tempfile::TempDir;

pub struct TestServer {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    pub dir: TempDir,
    pub runs: Runs,
    pub stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(8).await
    }

    /// A server running at most `max_runs` runs at once.
    pub async fn start_with(max_runs: usize) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("data/heddle.db").display());
        let pool = db::connect(&url).await.expect("database");
        let runs = Runs::new(pool.clone(), max_runs).await.expect("runs");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let state = AppState::new(pool, runs.clone(), shutdown, &dir.path().join("site"), addr);
        let task = tokio::spawn(async move {
            axum::serve(listener, router(state)).await.expect("serve");
        });
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        TestServer {
            addr,
            client,
            dir,
            runs,
            stop,
            task,
        }
    }

    /// A JSON request to the API; returns the status and the JSON body.
    pub async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self.client.request(method, self.url(path));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    /// Creates a graph from a document; returns its id.
    pub async fn create_graph(&self, document: Value) -> String {
        let (status, body) = self
            .api(
                reqwest::Method::POST,
                "/api/v1/graphs",
                Some(serde_json::json!({"document": document})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Polls a run until its status is not queued or running.
    pub async fn wait_for_run(&self, run_id: &str) -> Value {
        for _ in 0..500 {
            let (_, run) = self
                .api(
                    reqwest::Method::GET,
                    &format!("/api/v1/runs/{run_id}"),
                    None,
                )
                .await;
            if !matches!(run["status"].as_str(), Some("queued" | "running")) {
                return run;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("run {run_id} did not end");
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/api/v1/ws", self.addr)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("GET")
    }

    /// Calls a server function the way the hydrated app does.
    pub async fn call(&self, function: &str, form: &[(&str, &str)]) -> reqwest::Response {
        self.client
            .post(self.url(&format!("/api/{function}")))
            .header("accept", "application/json")
            .form(form)
            .send()
            .await
            .expect("POST")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The message of an API error body (`{"error": {"message": ...}}`), or ""
/// when the body is not one.
pub fn error_message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}
