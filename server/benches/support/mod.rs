//! What the server benches share: the real `heddle` binary on loopback
//! with a throw-away database, its memory as the kernel counts it, and
//! percentiles.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `heddle serve` process; killed when dropped.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `heddle serve --port 0` with `args`, on a new SQLite database.
    pub fn start(args: &[&str]) -> Server {
        Server::start_on(None, args)
    }

    /// Starts `heddle serve --port 0` with `args`, on the database at
    /// `url` (a new SQLite file when `None`).
    pub fn start_on(url: Option<&str>, args: &[&str]) -> Server {
        Server::spawn(url, args, &[])
    }

    /// Starts `heddle serve --port 0` with `args` and environment `env`,
    /// on a new SQLite database.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn(None, args, env)
    }

    fn spawn(url: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let url = url.map_or_else(
            || format!("sqlite://{}", dir.path().join("bench.db").display()),
            str::to_string,
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_heddle"))
            .args(["serve", "--port", "0"])
            .args(args)
            .env("DATABASE_URL", url)
            .env("RUST_LOG", "warn")
            // Benches run long loops; a bench that measures a ceiling
            // passes its own.
            .env("HEDDLE_MAX_STEPS_PER_RUN", "4000000000")
            .env("HEDDLE_MAX_RUN_ACTIVE_SECS", "0")
            .envs(env.iter().copied())
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start heddle: {e}"));
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let base = line
            .trim()
            .trim_start_matches("Heddle is listening on ")
            .to_string();
        Server {
            child,
            base,
            _dir: dir,
        }
    }

    /// Its peak and current resident memory, in KiB (VmHWM, VmRSS).
    pub fn memory(&self) -> (u64, u64) {
        memory(self.child.id())
    }
}

/// The peak and current resident memory of process `pid`, in KiB.
pub fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The `q` quantile of sorted microseconds, in milliseconds.
pub fn percentile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q) as usize] as f64 / 1000.0
}

/// Sends `request` and reads its JSON answer; panics (naming `what`) on an
/// error status, as a bench cannot go on without it.
pub async fn json(request: reqwest::RequestBuilder, what: &str) -> serde_json::Value {
    request
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .json()
        .await
        .unwrap_or(serde_json::Value::Null)
}

/// A fresh database on the PostgreSQL server `admin` names.
pub async fn fresh_postgres(admin: &str) -> String {
    let name = format!("heddle_bench_{}", uuid::Uuid::new_v4().simple());
    let mut connection = <sqlx::PgConnection as sqlx::Connection>::connect(admin)
        .await
        .unwrap_or_else(|e| panic!("HEDDLE_BENCH_POSTGRES: {e}"));
    // The name is ours (a fixed prefix and hex digits).
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut connection)
        .await
        .unwrap_or_else(|e| panic!("create database: {e}"));
    let mut url = reqwest::Url::parse(admin).unwrap_or_else(|e| panic!("{admin}: {e}"));
    url.set_path(&name);
    url.to_string()
}

/// A logged-in owner of `server`, a published graph, and a key for it.
pub async fn published(server: &Server, document: serde_json::Value) -> (String, String) {
    let owner = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap_or_else(|e| panic!("client: {e}"));
    let _ = owner
        .post(format!("{}/api/v1/auth/signup", server.base))
        .json(&serde_json::json!({"username": "bench", "password": "bench password"}))
        .send()
        .await;
    let _ = owner
        .post(format!("{}/api/v1/auth/login", server.base))
        .json(&serde_json::json!({"username": "bench", "password": "bench password"}))
        .send()
        .await;
    let graph = json(
        owner
            .post(format!("{}/api/v1/graphs", server.base))
            .json(&serde_json::json!({"document": document})),
        "create",
    )
    .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    json(
        owner
            .put(format!("{}/api/v1/graphs/{graph}/published", server.base))
            .json(&serde_json::json!({"version": 1})),
        "publish",
    )
    .await;
    let key = json(
        owner
            .post(format!("{}/api/v1/keys", server.base))
            .json(&serde_json::json!({"name": "bench", "graphs": [graph]})),
        "key",
    )
    .await["secret"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (graph, key)
}
