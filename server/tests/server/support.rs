//! A running server for a test: the real router over a fresh database (a
//! SQLite file in a temporary directory, or a fresh PostgreSQL database
//! when `HEDDLE_TEST_POSTGRES` names a server: see [`test_database`]),
//! listening on a free port on 127.0.0.1, with an owner account logged in
//! (`server.api(...)` calls as the owner) and more users on demand
//! (`server.user("ada")`).

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::cookie::{CookieStore, Jar};

use heddle_server::runs::Runs;
use heddle_server::state::Settings;
use heddle_server::{AppState, router};
use heddle_store::db::Db;
use heddle_store::db::open as db;
use serde_json::Value;
use tempfile::TempDir;

/// The password every test account has.
pub const PASSWORD: &str = "correct horse battery";

/// One user's cookie jar and HTTP client: a browser, as the server sees it.
#[derive(Clone)]
pub struct Browser {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    pub jar: Arc<Jar>,
}

impl Browser {
    /// A browser with no session yet.
    pub fn new(addr: SocketAddr) -> Browser {
        let jar = Arc::new(Jar::default());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .cookie_provider(Arc::clone(&jar))
            .build()
            .expect("client");
        Browser { addr, client, jar }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
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
        status_and_json(request.send().await.expect("request")).await
    }

    /// Signs up `username` (with [`PASSWORD`]) in this browser.
    pub async fn sign_up(&self, username: &str) {
        let (status, body) = self
            .api(
                reqwest::Method::POST,
                "/api/v1/auth/signup",
                Some(serde_json::json!({"username": username, "password": PASSWORD})),
            )
            .await;
        assert_eq!(status, 201, "sign up {username}: {body}");
    }

    /// Logs `username` (with [`PASSWORD`]) in, in this browser.
    pub async fn log_in(&self, username: &str) {
        let (status, body) = self
            .api(
                reqwest::Method::POST,
                "/api/v1/auth/login",
                Some(serde_json::json!({"username": username, "password": PASSWORD})),
            )
            .await;
        assert_eq!(status, 200, "log in {username}: {body}");
    }

    /// The `Cookie` header this browser sends.
    pub fn cookie(&self) -> String {
        let url = self.url("/").parse().expect("url");
        self.jar
            .cookies(&url)
            .and_then(|value| value.to_str().ok().map(str::to_string))
            .unwrap_or_default()
    }

    /// A websocket upgrade request carrying this browser's cookie.
    pub fn ws_request(&self) -> tokio_tungstenite::tungstenite::handshake::client::Request {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = format!("ws://{}/api/v1/ws", self.addr)
            .into_client_request()
            .expect("ws request");
        if let Ok(cookie) = self.cookie().parse() {
            request.headers_mut().insert("cookie", cookie);
        }
        request
    }

    /// Calls a server function that takes JSON, as the hydrated app does.
    pub async fn call_json(&self, function: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(&format!("/api/{function}")))
            .header("accept", "application/json")
            .json(body)
            .send()
            .await
            .expect("POST")
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

/// Where a test's database lives: a SQLite file under `dir`, or, when
/// `HEDDLE_TEST_POSTGRES` holds the URL of a PostgreSQL server the tests
/// may create databases on, a fresh database there (so tests never share
/// one). `scripts/test` runs the suite once each way.
///
/// A PostgreSQL database is a copy of one migrated once per test process
/// (`CREATE DATABASE ... TEMPLATE`): migrating each of the suite's few
/// hundred databases from nothing cost it a fifth of its time. A server
/// opening it still runs the migrator, which finds every migration
/// applied; [`empty_test_database`] is for the tests of migrating itself.
pub async fn test_database(dir: &std::path::Path) -> String {
    match std::env::var("HEDDLE_TEST_POSTGRES") {
        Ok(admin) if !admin.is_empty() => {
            let template = migrated_template(&admin).await;
            fresh_postgres(&admin, Some(template)).await
        }
        _ => format!("sqlite://{}", dir.join("data/heddle.db").display()),
    }
}

/// Like [`test_database`], but with no table in it yet.
pub async fn empty_test_database(dir: &std::path::Path) -> String {
    match std::env::var("HEDDLE_TEST_POSTGRES") {
        Ok(admin) if !admin.is_empty() => fresh_postgres(&admin, None).await,
        _ => format!("sqlite://{}", dir.join("data/heddle.db").display()),
    }
}

/// Whether this pass runs on PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var("HEDDLE_TEST_POSTGRES").is_ok_and(|url| !url.is_empty())
}

/// The name of this process's migrated database, made on first use. Its
/// pool is closed before any copy is made of it (PostgreSQL copies only a
/// database nobody is connected to).
async fn migrated_template(admin: &str) -> &'static str {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let url = fresh_postgres(admin, None).await;
            let database = db::connect(&url).await.expect("the template migrated");
            database.close().await;
            reqwest::Url::parse(&url).expect("a URL").path()[1..].to_owned()
        })
        .await
}

async fn fresh_postgres(admin: &str, template: Option<&str>) -> String {
    use sqlx::Connection;
    let name = format!("heddle_test_{}", uuid::Uuid::new_v4().simple());
    let mut connection = sqlx::PgConnection::connect(admin)
        .await
        .expect("the PostgreSQL server HEDDLE_TEST_POSTGRES names");
    // The names are ours (a fixed prefix and hex digits), not input.
    let create = match template {
        Some(template) => format!("CREATE DATABASE {name} TEMPLATE {template}"),
        None => format!("CREATE DATABASE {name}"),
    };
    sqlx::query(sqlx::AssertSqlSafe(create))
        .execute(&mut connection)
        .await
        .expect("a fresh database");
    let mut url = reqwest::Url::parse(admin).expect("HEDDLE_TEST_POSTGRES is a URL");
    url.set_path(&name);
    url.to_string()
}

/// The servers' warnings and errors go to the test's own output, which the
/// harness shows when a test fails: a 500 then says why.
fn log_to_test_output() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another subscriber already set is fine: it logs instead.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .with_test_writer()
            .try_init();
    });
}

/// One of the engine's example graphs (engine/examples/graphs), as a
/// document to create.
pub fn example(file: &str) -> Value {
    let path = format!(
        "{}/../engine/examples/graphs/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub struct TestServer {
    pub addr: SocketAddr,
    /// The database's URL.
    pub database_url: String,
    /// The owner's client (logged in).
    pub client: reqwest::Client,
    pub owner: Browser,
    pub dir: TempDir,
    pub runs: Runs,
    pub stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    /// Moves experiments on, as `heddle serve` does.
    experiments: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(8).await
    }

    /// A server running at most `max_runs` runs at once.
    pub async fn start_with(max_runs: usize) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = test_database(dir.path()).await;
        let database = db::connect(&url).await.expect("database");
        let runs = Runs::new(database.clone(), max_runs).await.expect("runs");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        // Tests start many runs as one user; the per-user limit has its own test.
        let mut settings = Settings::default();
        settings.max_runs_per_user = 10_000;
        settings.max_runs_per_owner = 10_000;
        Self::start_on(dir, url, database, runs, listener, addr, settings, true).await
    }

    /// A server whose graphs get these models and tools (tests/secrets.rs).
    #[allow(dead_code)]
    pub async fn start_with_registry(registry: heddle_engine::Registry) -> TestServer {
        let mut settings = Settings::default();
        settings.max_runs_per_user = 10_000;
        settings.max_runs_per_owner = 10_000;
        Self::start_full(settings, registry).await
    }

    /// A server with these settings (and no raised run limit).
    pub async fn start_with_settings(settings: Settings) -> TestServer {
        Self::start_full(settings, heddle_engine::Registry::new()).await
    }

    async fn start_full(settings: Settings, registry: heddle_engine::Registry) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = test_database(dir.path()).await;
        let database = db::connect(&url).await.expect("database");
        let runs = Runs::with_registry(database.clone(), 8, registry)
            .await
            .expect("runs");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        Self::start_on(dir, url, database, runs, listener, addr, settings, true).await
    }

    /// A server on an existing database (its accounts as they are: the
    /// owner's browser is not logged in).
    #[allow(dead_code)]
    pub async fn open(url: &str) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let database = db::connect(url).await.expect("database");
        let runs = Runs::new(database.clone(), 8).await.expect("runs");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let settings = Settings::default();
        Self::start_on(
            dir,
            url.to_string(),
            database,
            runs,
            listener,
            addr,
            settings,
            false,
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn start_on(
        dir: TempDir,
        database_url: String,
        database: Db,
        runs: Runs,
        listener: tokio::net::TcpListener,
        addr: SocketAddr,
        settings: Settings,
        sign_up: bool,
    ) -> TestServer {
        log_to_test_output();
        let (stop, shutdown) = tokio::sync::watch::channel(false);
        let state = AppState::new(
            database,
            runs.clone(),
            shutdown,
            &dir.path().join("site"),
            addr,
        )
        .with_settings(settings);
        let task = tokio::spawn(async move {
            axum::serve(
                listener,
                router(state).into_make_service_with_connect_info::<SocketAddr>(),
            )
            .await
            .expect("serve");
        });
        let experiments = heddle_server::experiments::keep_driving(runs.clone());
        let owner = Browser::new(addr);
        if sign_up {
            owner.sign_up("owner").await;
        }
        TestServer {
            addr,
            database_url,
            client: owner.client.clone(),
            owner,
            dir,
            runs,
            stop,
            task,
            experiments,
        }
    }

    /// A JSON request to the API as the owner.
    pub async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.owner.api(method, path, body).await
    }

    /// A new user, signed up and logged in, in a browser of their own.
    pub async fn user(&self, username: &str) -> Browser {
        let browser = Browser::new(self.addr);
        browser.sign_up(username).await;
        browser
    }

    /// A browser with nobody logged in.
    pub fn anonymous(&self) -> Browser {
        Browser::new(self.addr)
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

    /// Starts a run of `graph` with `body` (`{"input": ...}` and options);
    /// its id. The start must be accepted.
    pub async fn start_run(&self, graph: &str, body: Value) -> String {
        let (status, run) = self
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/graphs/{graph}/runs"),
                Some(body),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        run["id"].as_str().unwrap().to_string()
    }

    /// A share link to `graph` with `role`, made by the owner: its id and
    /// its token.
    pub async fn share_link(&self, graph: &str, role: &str) -> (String, String) {
        let (status, link) = self
            .api(
                reqwest::Method::POST,
                &format!("/api/v1/graphs/{graph}/links"),
                Some(serde_json::json!({"role": role})),
            )
            .await;
        assert_eq!(status, 201, "{link}");
        let token = link["path"]
            .as_str()
            .unwrap()
            .trim_start_matches("/share/")
            .to_string();
        (link["id"].as_str().unwrap().to_string(), token)
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

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Another connection to the server's database (to age a link, say).
    pub async fn db(&self) -> Db {
        db::connect(&self.database_url).await.expect("database")
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.expect("GET")
    }

    /// Calls a server function as the owner.
    pub async fn call(&self, function: &str, form: &[(&str, &str)]) -> reqwest::Response {
        self.owner.call(function, form).await
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
        self.experiments.abort();
    }
}

/// A script calling with an API key (`Authorization: Bearer`), and no
/// cookies.
pub struct KeyClient {
    pub addr: SocketAddr,
    pub secret: String,
    pub client: reqwest::Client,
}

impl KeyClient {
    pub fn new(addr: SocketAddr, secret: &str) -> KeyClient {
        KeyClient {
            addr,
            secret: secret.to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        }
    }

    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("http://{}{path}", self.addr))
            .bearer_auth(&self.secret)
    }

    /// A JSON request; the status and the JSON body.
    pub async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        status_and_json(request.send().await.expect("request")).await
    }
}

impl Browser {
    /// Makes an API key (`{"name", "scope", "graphs", ...}`) as this user;
    /// the answer (the key and its secret).
    pub async fn make_key(&self, request: Value) -> Value {
        let (status, body) = self
            .api(reqwest::Method::POST, "/api/v1/keys", Some(request))
            .await;
        assert_eq!(status, 201, "{body}");
        body
    }

    /// A client with a new key of this user's on `graphs` with `scope`.
    pub async fn key_client(&self, scope: &str, graphs: &[&str]) -> KeyClient {
        let made = self
            .make_key(serde_json::json!({"name": format!("{scope} key"), "scope": scope, "graphs": graphs}))
            .await;
        KeyClient::new(self.addr, made["secret"].as_str().unwrap())
    }
}

/// A request a role check makes: method, path, body.
pub type Request = (reqwest::Method, String, Option<Value>);

impl TestServer {
    /// Who may do what on `graph`: to a stranger (`eddie`) every request
    /// answers 404 and to nobody 401; made a viewer, eddie reads (200) and
    /// is refused every write (403).
    pub async fn viewer_reads_and_strangers_see_nothing(
        &self,
        graph: &str,
        reads: &[Request],
        writes: &[Request],
    ) {
        let eddie = self.user("eddie").await;
        for (method, path, body) in reads.iter().chain(writes) {
            let (status, answer) = eddie.api(method.clone(), path, body.clone()).await;
            assert_eq!(status, 404, "a stranger: {method} {path}: {answer}");
            let (status, answer) = self
                .anonymous()
                .api(method.clone(), path, body.clone())
                .await;
            assert_eq!(status, 401, "nobody: {method} {path}: {answer}");
        }
        let (status, _) = self
            .api(
                reqwest::Method::PUT,
                &format!("/api/v1/graphs/{graph}/members/eddie"),
                Some(serde_json::json!({"role": "viewer"})),
            )
            .await;
        assert_eq!(status, 204);
        for (method, path, body) in reads {
            let (status, answer) = eddie.api(method.clone(), path, body.clone()).await;
            assert_eq!(status, 200, "a viewer: {method} {path}: {answer}");
        }
        for (method, path, body) in writes {
            let (status, answer) = eddie.api(method.clone(), path, body.clone()).await;
            assert_eq!(status, 403, "a viewer: {method} {path}: {answer}");
        }
    }

    /// Publishes version `version` of `graph` as the owner.
    pub async fn publish(&self, graph: &str, version: i64) {
        let (status, body) = self
            .api(
                reqwest::Method::PUT,
                &format!("/api/v1/graphs/{graph}/published"),
                Some(serde_json::json!({"version": version})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

/// A response's status, and its body as JSON (a string when it is not
/// JSON, `null` when empty).
pub async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, value)
}

/// The message of an API error body (`{"error": {"message": ...}}`), or ""
/// when the body is not one.
pub fn error_message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// The real `heddle` binary, with none of the environment's server
/// settings.
pub fn heddle() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_heddle"));
    command
        .env_remove("DATABASE_URL")
        .env_remove("HEDDLE_PORT")
        .env_remove("HEDDLE_HOST");
    command
}

/// Starts `heddle serve --port 0` on the database at `url` with `args`
/// and `env`, in `dir`; the process and the address it listens on.
pub async fn serve_process(
    dir: &std::path::Path,
    url: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (std::process::Child, SocketAddr) {
    let mut command = heddle();
    command
        .args(["serve", "--port", "0", "--database-url", url])
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let base = listening(&mut child);
        let addr = base.trim_start_matches("http://").parse().unwrap();
        (child, addr)
    })
    .await
    .unwrap()
}

/// A process killed when the test ends, passed or failed: nothing a test
/// started outlives it (a forgotten nginx would even hold the test
/// runner's output open).
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `heddle serve --role worker` on `url` in `dir`, and waits for it
/// to say it runs (a worker serves no HTTP).
pub async fn worker_process(
    dir: &std::path::Path,
    url: &str,
    args: &[&str],
) -> std::process::Child {
    let mut command = heddle();
    command
        .args(["serve", "--role", "worker", "--database-url", url])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the first line");
        assert!(
            line.starts_with("Heddle worker is running"),
            "unexpected first line: {line:?}"
        );
        child
    })
    .await
    .unwrap()
}

/// Reads the first line a `heddle serve` started with piped stdout
/// prints; the base URL it listens on (`http://127.0.0.1:PORT`).
pub fn listening(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    let stdout = child.stdout.take().expect("piped stdout");
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the first line");
    line.trim()
        .strip_prefix("Heddle is listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string()
}

/// An OpenAI-compatible model endpoint on loopback: each chat completion
/// is answered with `answer(request)`, and the counter counts the calls.
/// The model asks for a stream first and this endpoint answers whole, so
/// the model asks again plainly: a call is counted once, by that request.
#[allow(dead_code)]
pub async fn fake_model(
    answer: impl Fn(&Value) -> String + Send + Sync + 'static,
) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let answer = Arc::new(answer);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let (counted, answer) = (Arc::clone(&counted), Arc::clone(&answer));
            async move {
                counted.fetch_add(usize::from(body["stream"] != true), Ordering::SeqCst);
                axum::Json(serde_json::json!({
                    "id": "c", "object": "chat.completion", "created": 1, "model": "fake-model",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": answer(&body)}}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("local addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (url, calls)
}
