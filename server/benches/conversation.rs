//! A conversation of a thousand turns (docs/performance.md, "Long
//! conversations"): what a chat thread stores and sends as it grows, on
//! SQLite and PostgreSQL, and the same conversation through LangGraph's
//! `SqliteSaver` in the same run.
//!
//! ```sh
//! HEDDLE_OFFLINE_PACE_MS=0 cargo bench -p heddle-server --bench conversation [-- TURNS]
//! pg_virtualenv bash -c 'HEDDLE_BENCH_POSTGRES="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE" \
//!   cargo bench -p heddle-server --bench conversation'
//! ```
//!
//! The real `heddle serve`, the chat agent example published, one turn at a
//! time through `POST /invoke` on one thread (the offline model answers).
//! Printed: the bytes the database holds after turns 10, 100 and the last
//! (the content of Heddle's tables, and for SQLite the file), per turn and
//! against the raw text of the messages; the bytes of the events a viewer
//! is sent per step of the last turn, against the step's own update; the
//! time to load the thread's newest state from the store (p50/p99); what a
//! prune by the default retention policy and by a strict one leaves. Then
//! the same messages through LangGraph 1.x with `SqliteSaver` (PyPI, in a
//! virtualenv under target/, installed on first use; skipped, saying so,
//! when it cannot be).

#[allow(dead_code)] // this bench uses a part of the shared helpers
mod support;

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use heddle_engine::ThreadId;
use heddle_engine::format::Retention;
use heddle_engine::run::{CheckpointStore, Event, EventPayload};
use serde_json::{Value, json};
use support::{Server, fresh_postgres, json, percentile, published};

/// Turns after which the stored bytes are measured (and the last).
const MARKS: [usize; 2] = [10, 100];

fn chat_agent() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/examples/graphs/chat_agent.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// What a user says at `turn`: a sentence of about 60 characters.
fn said(turn: usize) -> String {
    format!("Turn {turn}: what did we say about refunds and deliveries?")
}

/// The database a run of the bench uses.
enum Database {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Database {
    fn url(&self) -> String {
        match self {
            Database::Sqlite(path) => format!("sqlite://{}", path.display()),
            Database::Postgres(url) => url.clone(),
        }
    }

    /// The bytes the content of Heddle's run tables takes (text as stored,
    /// before any compression), and the database's own size on disk.
    async fn stored(&self) -> (u64, u64) {
        let content = "SELECT CAST(
             (SELECT COALESCE(SUM(LENGTH(body) + COALESCE(LENGTH(changes), 0)), 0) FROM heddle_checkpoints)
           + (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM heddle_events)
           + (SELECT COALESCE(SUM(LENGTH(document)), 0) FROM heddle_graphs)
           + (SELECT COALESCE(SUM(LENGTH(graph)), 0) FROM heddle_runs) AS BIGINT)";
        match self {
            Database::Sqlite(path) => {
                let pool = sqlx::SqlitePool::connect(&self.url())
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                let bytes: i64 = sqlx::query_scalar(content)
                    .fetch_one(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                pool.close().await;
                let wal = PathBuf::from(format!("{}-wal", path.display()));
                let file = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
                    + std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0);
                (bytes as u64, file)
            }
            Database::Postgres(url) => {
                let pool = sqlx::PgPool::connect(url)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                let bytes: i64 = sqlx::query_scalar(content)
                    .fetch_one(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                let disk: i64 = sqlx::query_scalar(
                    "SELECT CAST(pg_total_relation_size('heddle_checkpoints')
                          + pg_total_relation_size('heddle_events')
                          + pg_total_relation_size('heddle_graphs')
                          + pg_total_relation_size('heddle_runs') AS BIGINT)",
                )
                .fetch_one(&pool)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
                pool.close().await;
                (bytes as u64, disk as u64)
            }
        }
    }

    async fn store(&self) -> Arc<dyn CheckpointStore> {
        match self {
            Database::Sqlite(path) => {
                use heddle_engine::run::sqlite::{SqliteStore, SyncMode};
                SqliteStore::open(path, SyncMode::Normal)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"))
                    .shared()
            }
            Database::Postgres(url) => {
                use heddle_engine::run::postgres::PostgresStore;
                PostgresStore::connect(url)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"))
                    .shared()
            }
        }
    }
}

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_micros() as u64)
}

/// The raw text of a conversation's messages, in bytes.
fn raw_bytes(messages: &[Value]) -> u64 {
    messages
        .iter()
        .map(|m| m["content"].as_str().map_or(0, str::len) as u64)
        .sum()
}

/// What one database's run of the conversation measured.
struct Measured {
    /// (turn, content bytes, bytes on disk, raw message bytes).
    marks: Vec<(usize, u64, u64, u64)>,
    messages: Vec<Value>,
}

async fn converse(name: &str, database: Database, turns: usize) -> Measured {
    println!("== {name}");
    let server = Server::start_on(Some(&database.url()), &["--max-runs-per-user", "1000000"]);
    let (graph, key) = published(&server, chat_agent()).await;
    let client = reqwest::Client::new();
    let url = format!("{}/api/v1/graphs/{graph}/invoke", server.base);
    let mut thread: Option<String> = None;
    let mut marks = Vec::new();
    let mut last = Value::Null;
    let started = Instant::now();
    for turn in 1..=turns {
        let answer = json(
            client.post(&url).bearer_auth(&key).json(&json!({
                "input": {"messages": said(turn)},
                "thread_id": thread,
            })),
            "invoke",
        )
        .await;
        assert_eq!(answer["status"], "finished", "turn {turn}: {answer}");
        thread = answer["thread_id"].as_str().map(str::to_string);
        if MARKS.contains(&turn) || turn == turns {
            let messages = answer["output"]["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let (content, disk) = database.stored().await;
            marks.push((turn, content, disk, raw_bytes(&messages)));
        }
        last = answer;
    }
    println!(
        "{turns} turns in {:.1} s ({:.1} ms a turn)",
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() * 1000.0 / turns as f64
    );
    println!(
        "{:>6}  {:>12}  {:>10}  {:>12}  {:>10}  {:>12}  {:>9}",
        "turn", "stored", "per turn", "on disk", "per turn", "raw text", "× raw"
    );
    for (turn, content, disk, raw) in &marks {
        println!(
            "{turn:>6}  {content:>12}  {:>10}  {disk:>12}  {:>10}  {raw:>12}  {:>9.1}",
            content / *turn as u64,
            disk / *turn as u64,
            *content as f64 / (*raw).max(1) as f64
        );
    }

    // What a viewer of the last turn is sent, step by step.
    let run = last["run_id"].as_str().unwrap_or_default();
    let events: Vec<Event> = serde_json::from_value(
        json(
            client
                .get(format!("{}/api/v1/runs/{run}/events", server.base))
                .bearer_auth(&key),
            "events",
        )
        .await,
    )
    .unwrap_or_default();
    viewer_bytes(&events);
    let messages = last["output"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    drop(server);

    // Loading the thread's newest state, as a server starting a turn does:
    // once by a process that has not seen the thread (it reads the chain),
    // then as the server that wrote it does (the newest is in memory).
    let store = database.store().await;
    let thread = ThreadId::from(thread.unwrap_or_default());
    let started = Instant::now();
    assert!(
        store
            .latest(&thread)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_some()
    );
    println!(
        "load the newest state of the thread, first time in a process: {:.2} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let mut times = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let latest = store
            .latest(&thread)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        times.push(started.elapsed().as_micros() as u64);
        assert!(latest.is_some());
    }
    times.sort_unstable();
    println!(
        "load the newest state of the thread: p50 {:.2} ms   p99 {:.2} ms",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );

    // Retention: the server's default policy, then one that keeps the
    // newest ten checkpoints and compacts every log (the runs aged past it).
    let raw = marks.last().map_or(1, |mark| mark.3.max(1));
    for (what, keep, days, age_days) in [
        (
            "the default policy (1,000 checkpoints, logs for 90 days)",
            1000,
            90,
            0,
        ),
        (
            "keeping 10 checkpoints, logs compacted (runs 2 days old)",
            10,
            1,
            2,
        ),
    ] {
        let policy = Retention {
            keep_checkpoints: NonZeroU32::new(keep),
            keep_events_days: Some(days),
        };
        let started = Instant::now();
        let now = now_us() + age_days * 86_400_000_000;
        let pruned = store
            .prune(policy, now, 0, &|_| {})
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let took = started.elapsed().as_secs_f64();
        let (content, _) = database.stored().await;
        println!(
            "pruned by {what} in {took:.1} s: {} checkpoints and {} events removed; \
             {content} bytes stored ({} a turn, {:.1}× raw)",
            pruned.checkpoints,
            pruned.events,
            content / turns as u64,
            content as f64 / raw as f64
        );
    }
    assert!(
        store
            .latest(&thread)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_some()
    );
    println!();
    Measured { marks, messages }
}

/// Prints the bytes of the last turn's events, by step, beside the step's
/// updates (what its nodes wrote).
fn viewer_bytes(events: &[Event]) {
    let mut by_step: BTreeMap<Option<u32>, (u64, u64, u64)> = BTreeMap::new();
    for event in events {
        let bytes = serde_json::to_string(event).map_or(0, |t| t.len()) as u64;
        let step = match &event.payload {
            EventPayload::StepStarted { step, .. }
            | EventPayload::StepFinished { step, .. }
            | EventPayload::NodeStarted { step, .. }
            | EventPayload::NodeSucceeded { step, .. }
            | EventPayload::EdgeTaken { step, .. } => Some(*step),
            _ => None,
        };
        let entry = by_step.entry(step).or_default();
        entry.0 += bytes;
        entry.2 += 1;
        if let EventPayload::NodeSucceeded { update, .. } = &event.payload {
            entry.1 += serde_json::to_string(update).map_or(0, |t| t.len()) as u64;
        }
    }
    println!("the last turn's events, as a viewer is sent them:");
    for (step, (bytes, update, count)) in by_step {
        let step = step.map_or("run".to_string(), |s| format!("step {s}"));
        println!("  {step:<8} {count:>4} events  {bytes:>8} bytes  (its updates: {update} bytes)");
    }
}

/// The same messages through LangGraph's `SqliteSaver`: (turn, bytes of the
/// database file) at the same marks; `None` when LangGraph is not there.
fn langgraph(messages: &[Value], turns: usize, dir: &Path) -> Option<Vec<(usize, u64)>> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/langgraph-bench");
    let python = venv.join("bin/python");
    let ready = |python: &Path| {
        Command::new(python)
            .args(["-c", "import langgraph.checkpoint.sqlite"])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !ready(&python) {
        println!(
            "installing langgraph and langgraph-checkpoint-sqlite under {}",
            venv.display()
        );
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "--quiet",
                    "langgraph",
                    "langgraph-checkpoint-sqlite",
                ])
                .status()
                .is_ok_and(|s| s.success());
        if !made || !ready(&python) {
            println!("LangGraph could not be installed: its comparison is skipped");
            return None;
        }
    }
    let conversation = dir.join("conversation.json");
    std::fs::write(
        &conversation,
        serde_json::to_string(messages).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let marks: Vec<String> = MARKS.iter().map(usize::to_string).collect();
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/support/langgraph_conversation.py"
        ))
        .arg(&conversation)
        .arg(dir.join("langgraph.db"))
        .arg(turns.to_string())
        .arg(marks.join(","))
        .output()
        .unwrap_or_else(|e| panic!("python: {e}"));
    if !out.status.success() {
        println!(
            "LangGraph's run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let (turn, bytes) = line.split_once(' ')?;
                Some((turn.parse().ok()?, bytes.trim().parse().ok()?))
            })
            .collect(),
    )
}

#[tokio::main]
async fn main() {
    let turns: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(1000);
    if std::env::var("HEDDLE_OFFLINE_PACE_MS").as_deref() != Ok("0") {
        println!(
            "(set HEDDLE_OFFLINE_PACE_MS=0: the offline model otherwise types at a person's pace)"
        );
    }
    println!("a conversation of {turns} turns with the chat agent, one thread\n");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sqlite = converse(
        "SQLite",
        Database::Sqlite(dir.path().join("conversation.db")),
        turns,
    )
    .await;
    match std::env::var("HEDDLE_BENCH_POSTGRES") {
        Ok(admin) if !admin.is_empty() => {
            let url = fresh_postgres(&admin).await;
            converse("PostgreSQL", Database::Postgres(url), turns).await;
        }
        _ => println!("(PostgreSQL not measured: set HEDDLE_BENCH_POSTGRES)\n"),
    }

    println!("== LangGraph, SqliteSaver, the same messages");
    if let Some(marks) = langgraph(&sqlite.messages, turns, dir.path()) {
        println!(
            "{:>6}  {:>12}  {:>10}  {:>9}",
            "turn", "on disk", "per turn", "× raw"
        );
        for (turn, bytes) in marks {
            let raw = sqlite
                .marks
                .iter()
                .find(|mark| mark.0 == turn)
                .map_or(0, |mark| mark.3);
            println!(
                "{turn:>6}  {bytes:>12}  {:>10}  {:>9.1}",
                bytes / turn as u64,
                bytes as f64 / raw.max(1) as f64
            );
        }
    }
}
