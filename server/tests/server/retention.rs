//! `heddle prune` as a process, on the test's database (SQLite, or
//! PostgreSQL in the second pass): killed with SIGKILL while it prunes, it
//! loses nothing (every checkpoint reads back as saved or is gone as the
//! policy says, every thread's newest and every run's last stay); run
//! again, it finishes the work and says what it did.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use heddle_engine::run::postgres::PostgresStore;
use heddle_engine::run::sqlite::SqliteStore;
use heddle_engine::run::{Checkpoint, CheckpointStore, RunRecord, RunStatus};
use heddle_engine::{CheckpointId, RunId, ThreadId};
use heddle_store::db::Db;
use serde_json::json;

use crate::support::{heddle, test_database};

const THREADS: usize = 120;
const RUNS: usize = 3;
const STEPS: usize = 8;

async fn open(url: &str) -> (Db, std::sync::Arc<dyn CheckpointStore>) {
    let db = heddle_store::db::open::connect(url).await.unwrap();
    let store = match &db {
        Db::Sqlite(pool) => SqliteStore::from_pool(pool.clone()).await.unwrap().shared(),
        Db::Postgres(pool) => PostgresStore::from_pool(pool.clone())
            .await
            .unwrap()
            .shared(),
    };
    (db, store)
}

/// A checkpoint of a conversation `n` messages long.
fn checkpoint(thread: usize, run: usize, step: usize, parent: Option<&Checkpoint>) -> Checkpoint {
    let n = run * STEPS + step;
    let messages: Vec<serde_json::Value> = (0..=n)
        .map(|i| json!({"role": "user", "content": format!("thread {thread} message {i} of a conversation about looms")}))
        .collect();
    Checkpoint {
        id: CheckpointId::from(format!("t{thread}-r{run}/{step}")),
        thread_id: ThreadId::from(format!("t{thread}")),
        run_id: RunId::from(format!("t{thread}-r{run}")),
        parent: parent.map(|p| p.id.clone()),
        step: step as u32,
        state: json!({"messages": messages, "turn": run}),
        next: Vec::new(),
        arrivals: Default::default(),
        status: if step + 1 == STEPS {
            RunStatus::Finished
        } else {
            RunStatus::Running
        },
        interrupts: Vec::new(),
        completed: Vec::new(),
        next_seq: 0,
        error: None,
        created_at_us: 1_700_000_000_000_000,
        usage: Default::default(),
        reached_end: None,
    }
}

/// Every checkpoint saved, by thread.
async fn fill(store: &dyn CheckpointStore) -> BTreeMap<String, Vec<Checkpoint>> {
    let mut saved = BTreeMap::new();
    for thread in 0..THREADS {
        let mut all: Vec<Checkpoint> = Vec::new();
        for run in 0..RUNS {
            store
                .create_run(&RunRecord {
                    run_id: RunId::from(format!("t{thread}-r{run}")),
                    thread_id: ThreadId::from(format!("t{thread}")),
                    graph: json!({"format_version": 2, "name": "chat"}).to_string(),
                    status: RunStatus::Running,
                })
                .await
                .unwrap();
            for step in 0..STEPS {
                let next = checkpoint(thread, run, step, all.last());
                store.save(&next, &[]).await.unwrap();
                all.push(next);
            }
        }
        saved.insert(format!("t{thread}"), all);
    }
    saved
}

/// Every checkpoint reads back as saved or is gone; each thread's newest
/// two and each run's last are there. Returns how many are gone.
async fn nothing_lost(
    store: &dyn CheckpointStore,
    saved: &BTreeMap<String, Vec<Checkpoint>>,
) -> usize {
    let mut gone = 0;
    for (thread, all) in saved {
        let thread = ThreadId::from(thread.as_str());
        for (i, checkpoint) in all.iter().enumerate() {
            let must_stay = i + 2 >= all.len() || checkpoint.status == RunStatus::Finished;
            match store
                .checkpoint(&thread, checkpoint.id.as_str())
                .await
                .unwrap()
            {
                Some(read) => assert_eq!(&read, checkpoint, "{} reads back", checkpoint.id),
                None if must_stay => panic!("{} was pruned", checkpoint.id),
                None => gone += 1,
            }
        }
        assert_eq!(store.latest(&thread).await.unwrap().as_ref(), all.last());
    }
    gone
}

#[tokio::test]
async fn a_prune_killed_midway_loses_nothing_and_a_second_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let (db, store) = open(&url).await;
    let saved = fill(&*store).await;

    let mut child = heddle()
        .args(["prune", "--database-url", &url, "--keep-checkpoints", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let first = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    // SIGKILL, as soon as it has pruned its first thread.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first.starts_with("thread t"), "{first}");
    let after_kill = nothing_lost(&*store, &saved).await;
    assert!(after_kill > 0, "the first thread was pruned");

    let output = heddle()
        .args(["prune", "--database-url", &url, "--keep-checkpoints", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let total = stdout.lines().last().unwrap_or_default();
    assert!(total.starts_with("Pruned "), "{stdout}");
    let gone = nothing_lost(&*store, &saved).await;
    assert!(gone > after_kill, "{after_kill} then {gone}");
    // What stays of each thread: its newest two, each run's last, and the
    // snapshots those are stored as changes from.
    let rows = THREADS * RUNS * STEPS - gone;
    assert!(
        rows <= THREADS * (2 + RUNS + RUNS),
        "{rows} checkpoints stay of {}",
        THREADS * RUNS * STEPS
    );

    // The threads go on.
    for (thread, all) in saved.iter().take(3) {
        let last = all.last().unwrap();
        let mut next = last.clone();
        next.id = CheckpointId::from(format!("{thread}-r9/0"));
        next.parent = Some(last.id.clone());
        store
            .create_run(&RunRecord {
                run_id: RunId::from(format!("{thread}-r9")),
                thread_id: last.thread_id.clone(),
                graph: json!({"format_version": 2, "name": "chat"}).to_string(),
                status: RunStatus::Running,
            })
            .await
            .unwrap();
        next.run_id = RunId::from(format!("{thread}-r9"));
        store.save(&next, &[]).await.unwrap();
        assert_eq!(store.latest(&last.thread_id).await.unwrap(), Some(next));
    }
    db.close().await;
}
