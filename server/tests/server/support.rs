//! A running server for a test: the real router over a fresh database in a
//! temporary directory, listening on a free port on 127.0.0.1.

use std::net::SocketAddr;

use heddle_server::{AppState, db, router};
use tempfile::TempDir;

pub struct TestServer {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    pub dir: TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("data/heddle.db").display());
        let pool = db::connect(&url).await.expect("database");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let state = AppState::new(pool, &dir.path().join("site"), addr);
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
            task,
        }
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
