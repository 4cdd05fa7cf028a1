//! Checkpoints stored as changes after a snapshot (`run::stored_state`):
//! every checkpoint of a long, growing thread reads back exactly as saved,
//! by id and as the latest, on every store, through branches, a second
//! process and rows stored before changes were; and on the database stores
//! what a thread stores grows with what was added, not with the square of
//! it.

use std::collections::BTreeMap;

use heddle_engine::run::{Checkpoint, CheckpointStore, PendingTask, RunRecord, RunStatus};
use heddle_engine::{CheckpointId, NodeId, RunId, ThreadId};
use serde_json::{Value, json};

use crate::stores::{Sql, stores};

pub(crate) fn record(run: &str, thread: &str) -> RunRecord {
    RunRecord {
        run_id: RunId::from(run),
        thread_id: ThreadId::from(thread),
        graph: json!({"format_version": 2, "name": run}).to_string(),
        status: RunStatus::Running,
    }
}

/// A message of about 200 bytes, different for each `n`.
fn message(n: usize, branch: &str) -> Value {
    json!({
        "role": if n.is_multiple_of(2) { "user" } else { "assistant" },
        "content": format!("{branch} message {n}: {}", "words of the conversation ".repeat(7)),
        "id": format!("{branch}-{n}"),
    })
}

/// Checkpoint `n` of `run`: a conversation of `n` messages, a counter, a
/// note that is replaced and a transcript that grows as text.
pub(crate) fn checkpoint(
    thread: &str,
    run: &str,
    n: usize,
    parent: Option<&Checkpoint>,
) -> Checkpoint {
    let branch = run;
    let messages: Vec<Value> = (0..n).map(|i| message(i, branch)).collect();
    Checkpoint {
        id: CheckpointId::from(format!("{run}/{n}")),
        thread_id: ThreadId::from(thread),
        run_id: RunId::from(run),
        parent: parent.map(|p| p.id.clone()),
        step: n as u32,
        state: json!({
            "messages": messages,
            "count": n,
            "note": format!("the note at {n}"),
            "transcript": "abc".repeat(n),
            "memory": {"turns": n, "name": "Ada", "city": "London", "lang": "en"},
        }),
        next: vec![PendingTask {
            node: NodeId::from("chat"),
            arg: None,
            instance: None,
        }],
        arrivals: BTreeMap::new(),
        status: RunStatus::Running,
        interrupts: Vec::new(),
        completed: Vec::new(),
        next_seq: 0,
        error: None,
        created_at_us: 1_700_000_000_000_000 + n as u64,
        usage: Default::default(),
        reached_end: None,
    }
}

/// Saves checkpoints `from..to` of `run`, each the child of the one
/// before (the first the child of `parent`); returns them.
async fn grow(
    store: &dyn CheckpointStore,
    thread: &str,
    run: &str,
    from: usize,
    to: usize,
    parent: Option<&Checkpoint>,
) -> Vec<Checkpoint> {
    let mut saved: Vec<Checkpoint> = Vec::new();
    for n in from..to {
        let parent = saved.last().or(parent);
        let next = checkpoint(thread, run, n, parent);
        store.save(&next, &[]).await.unwrap();
        saved.push(next);
    }
    saved
}

#[tokio::test]
async fn every_checkpoint_of_a_long_growing_thread_reads_back_as_saved() {
    for store in stores().await {
        let name = store.name;
        let t = ThreadId::from("long");
        store.create_run(&record("main", "long")).await.unwrap();
        let main = grow(&**store, "long", "main", 0, 240, None).await;
        // A branch from the middle, as a fork makes: its own messages.
        store.create_run(&record("fork", "long")).await.unwrap();
        let fork = grow(&**store, "long", "fork", 100, 160, Some(&main[99])).await;
        for saved in main.iter().chain(&fork) {
            assert_eq!(
                store
                    .checkpoint(&t, saved.id.as_str())
                    .await
                    .unwrap()
                    .as_ref(),
                Some(saved),
                "{name}: {} reads back as saved",
                saved.id
            );
        }
        assert_eq!(
            store.latest(&t).await.unwrap().as_ref(),
            fork.last(),
            "{name}"
        );

        // A second process knows nothing of the first's last state: it reads
        // its base back and goes on, and both read everything the same.
        let Some(again) = store.reopen().await else {
            continue;
        };
        let on = grow(&*again, "long", "fork", 160, 200, fork.last()).await;
        for saved in main.iter().step_by(7).chain(&fork).chain(&on) {
            for reader in [&**store, &*again] {
                assert_eq!(
                    reader
                        .checkpoint(&t, saved.id.as_str())
                        .await
                        .unwrap()
                        .as_ref(),
                    Some(saved),
                    "{name}: {} reads back the same in both processes",
                    saved.id
                );
            }
        }
        // The first process's own last state is no longer the thread's
        // newest: what it writes next still reads back.
        let after = checkpoint("long", "main", 240, main.last());
        store.save(&after, &[]).await.unwrap();
        assert_eq!(
            again.latest(&t).await.unwrap(),
            Some(after),
            "{name}: written after the other process"
        );
    }
}

impl Sql {
    /// The bytes a thread's checkpoint rows hold (bodies and changes), and
    /// how many of them are snapshots.
    async fn stored(&self, thread: &str) -> (i64, i64) {
        let query = "SELECT CAST(COALESCE(SUM(LENGTH(body) + COALESCE(LENGTH(changes), 0)), 0) AS BIGINT),
                            CAST(COALESCE(SUM(CASE WHEN changes IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT)
                     FROM heddle_checkpoints WHERE thread_id = $1";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => sqlx::query_as(query)
                .bind(thread)
                .fetch_one(pool)
                .await
                .unwrap(),
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => sqlx::query_as(query)
                .bind(thread)
                .fetch_one(pool)
                .await
                .unwrap(),
        }
    }

    /// A checkpoint as a version before changes stored it: the whole
    /// checkpoint in its body, no other column.
    async fn store_old(&self, checkpoint: &Checkpoint) {
        let insert = "INSERT INTO heddle_checkpoints
                        (thread_id, checkpoint_id, run_id, parent_id, step, status, created_at_us, body)
                      VALUES ($1, $2, $3, $4, $5, 'running', $6, $7)";
        let body = serde_json::to_string(checkpoint).unwrap();
        let parent = checkpoint.parent.as_ref().map(|p| p.to_string());
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => {
                sqlx::query(insert)
                    .bind(checkpoint.thread_id.as_str())
                    .bind(checkpoint.id.as_str())
                    .bind(checkpoint.run_id.as_str())
                    .bind(parent)
                    .bind(i64::from(checkpoint.step))
                    .bind(checkpoint.created_at_us as i64)
                    .bind(body)
                    .execute(pool)
                    .await
                    .unwrap();
            }
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => {
                sqlx::query(insert)
                    .bind(checkpoint.thread_id.as_str())
                    .bind(checkpoint.id.as_str())
                    .bind(checkpoint.run_id.as_str())
                    .bind(parent)
                    .bind(i64::from(checkpoint.step))
                    .bind(checkpoint.created_at_us as i64)
                    .bind(body)
                    .execute(pool)
                    .await
                    .unwrap();
            }
        }
    }
}

#[tokio::test]
async fn a_growing_thread_stores_what_was_added_not_its_whole_state_each_time() {
    for store in stores().await {
        let Some(location) = store.location.clone() else {
            continue;
        };
        let name = store.name;
        let sql = Sql::open(&location).await;
        store.create_run(&record("chat", "chat")).await.unwrap();
        let saved = grow(&**store, "chat", "chat", 0, 400, None).await;
        let newest = serde_json::to_string(&saved[399].state).unwrap().len() as i64;
        let whole: i64 = saved
            .iter()
            .map(|c| serde_json::to_string(c).unwrap().len() as i64)
            .sum();
        let (bytes, snapshots) = sql.stored("chat").await;
        // Linear in the newest state (each checkpoint's own fields, about
        // the size of a message here, count too), where the whole state
        // each time grows with the square of the thread.
        assert!(
            bytes < 8 * newest && bytes * 10 < whole,
            "{name}: {bytes} bytes stored for a newest state of {newest} ({whole} whole)"
        );
        assert!(
            (2..=40).contains(&snapshots),
            "{name}: {snapshots} snapshots"
        );
    }
}

#[tokio::test]
async fn rows_stored_before_changes_read_back_and_a_chain_goes_on_from_them() {
    for store in stores().await {
        let Some(location) = store.location.clone() else {
            continue;
        };
        let name = store.name;
        let sql = Sql::open(&location).await;
        store.create_run(&record("old", "old")).await.unwrap();
        let old0 = checkpoint("old", "old", 0, None);
        let old1 = checkpoint("old", "old", 1, Some(&old0));
        sql.store_old(&old0).await;
        sql.store_old(&old1).await;
        let t = ThreadId::from("old");
        assert_eq!(
            store.latest(&t).await.unwrap().as_ref(),
            Some(&old1),
            "{name}"
        );
        // A new version goes on from the old rows in a new process (no
        // state of them in memory).
        let again = store.reopen().await.unwrap();
        let new = grow(&*again, "old", "old", 2, 60, Some(&old1)).await;
        for saved in [&old0, &old1].into_iter().chain(&new) {
            assert_eq!(
                store
                    .checkpoint(&t, saved.id.as_str())
                    .await
                    .unwrap()
                    .as_ref(),
                Some(saved),
                "{name}: {}",
                saved.id
            );
        }
        let (_, snapshots) = sql.stored("old").await;
        assert!(
            snapshots < 30,
            "{name}: {snapshots} snapshots of 60 checkpoints"
        );
    }
}
