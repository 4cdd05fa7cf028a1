//! A [`CheckpointStore`] on SQLite (feature `sqlite`).
//!
//! A checkpoint and the events since the previous one are written in one
//! transaction. In WAL mode with `SyncMode::Normal` a commit survives a
//! killed process but not a power cut; `SyncMode::Full` fsyncs every commit
//! and survives both (see docs/performance.md for what each costs).
//!
//! Events are numbered without gaps: a batch of events that does not
//! follow the run's stored log is refused by the primary key (run, first
//! event) and a trigger (migration 1002), whoever writes it. Writers are
//! serialised by SQLite's one write lock, so of two writers of the same
//! events the second is refused.
//!
//! Three choices keep a step's save near the cost of one small commit:
//! saves go through one held connection (taking one from the pool costs
//! about 50 µs), a save is one statement (an `INSTEAD OF` trigger on the
//! `heddle_saves` view writes the events, the checkpoint and the run's
//! status), and the WAL is checkpointed into the database every 10,000
//! pages rather than 1,000, since each WAL checkpoint syncs the file.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::checkpoint::Checkpoint;
use super::event::Event;
use super::sql::{Batch, BatchRow, compacted, error, integer, write_error};
use super::store::{CheckpointStore, StoreError, StoreFuture};
use super::stored_state::{Encoded, Tips};

mod retention;

/// How hard each commit is pushed to disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SyncMode {
    /// Survives a killed process, not a power cut (`synchronous=NORMAL`).
    #[default]
    Normal,
    /// Survives a power cut: every commit is fsynced (`synchronous=FULL`).
    Full,
}

/// Checkpoints and events in a SQLite database.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// Saves go through one connection of their own: SQLite has one writer
    /// at a time anyway, and taking a connection from the pool for every
    /// step would cost more than the write.
    writer: Arc<tokio::sync::Mutex<sqlx::SqliteConnection>>,
    /// Each thread's newest checkpoint written, the base of its next.
    tips: Arc<Tips>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`.
    pub async fn open(path: impl AsRef<Path>, sync: SyncMode) -> Result<Self, StoreError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Backend(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(error("options"))?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match sync {
                SyncMode::Normal => SqliteSynchronous::Normal,
                SyncMode::Full => SqliteSynchronous::Full,
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5))
            .pragma("wal_autocheckpoint", "10000");
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Backend(format!("cannot open {}: {e}", path.display())))?;
        Self::from_pool(pool).await
    }

    /// Uses an open pool (an application's own database), adding the
    /// store's tables if they are missing.
    pub async fn from_pool(pool: SqlitePool) -> Result<Self, StoreError> {
        migrate(&pool).await?;
        let writer = pool
            .acquire()
            .await
            .map_err(error("cannot open a writer connection"))?
            .detach();
        Ok(SqliteStore {
            pool,
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            tips: Arc::default(),
        })
    }

    /// The pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The store, shared.
    pub fn shared(self) -> Arc<dyn CheckpointStore> {
        Arc::new(self)
    }

    super::sql::shared_encoding!();
}

/// Deletes the records of `runs` with their checkpoints and events (by
/// cascade), and the graph documents no other run refers to, in the
/// caller's transaction: what an application that keeps runs of its own
/// calls when it deletes what they belong to, so that it never writes SQL
/// against the engine's tables. Returns how many runs were deleted.
///
/// Delete a thread's runs together: a later run's checkpoints may be
/// stored as changes from an earlier run's (see `run::stored_state`).
pub async fn delete_runs_with(
    connection: &mut sqlx::SqliteConnection,
    runs: &[String],
) -> Result<u64, StoreError> {
    let ids = serde_json::to_string(runs).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let hashes: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT graph_hash FROM heddle_runs
         WHERE graph_hash IS NOT NULL AND run_id IN (SELECT value FROM json_each($1))",
    )
    .bind(&ids)
    .fetch_all(&mut *connection)
    .await
    .map_err(error("deleting runs"))?;
    let deleted =
        sqlx::query("DELETE FROM heddle_runs WHERE run_id IN (SELECT value FROM json_each($1))")
            .bind(&ids)
            .execute(&mut *connection)
            .await
            .map(|done| done.rows_affected())
            .map_err(error("deleting runs"))?;
    // This runs holding SQLite's write lock (the delete above took it): no
    // run can come to refer to one of these before the caller commits.
    let hashes = serde_json::to_string(&hashes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    sqlx::query(
        "DELETE FROM heddle_graphs WHERE hash IN (SELECT value FROM json_each($1))
           AND NOT EXISTS (SELECT 1 FROM heddle_runs r WHERE r.graph_hash = heddle_graphs.hash)",
    )
    .bind(hashes)
    .execute(&mut *connection)
    .await
    .map_err(error("deleting the runs' graphs"))?;
    Ok(deleted)
}

/// Adds the store's tables to a database if they are missing (its own
/// migrations, versions from 1001, beside the application's).
pub async fn migrate(pool: &SqlitePool) -> Result<(), StoreError> {
    let mut migrator = sqlx::migrate!("./migrations/sqlite");
    migrator.set_ignore_missing(true);
    migrator
        .run(pool)
        .await
        .map_err(|e| StoreError::Backend(format!("cannot create the checkpoint tables: {e}")))
}

/// What the save trigger says when a row's base was pruned (migration
/// 1005): the row is then written whole.
const BASE_GONE: &str = "heddle: the base checkpoint is no longer stored";

/// Whether a save was refused because its base was pruned meanwhile.
fn base_gone(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.message().contains(BASE_GONE))
}

/// How a save went: written, or refused as its base was pruned (nothing
/// written).
#[derive(PartialEq)]
enum Saved {
    Written,
    BaseGone,
}

/// One statement: the `heddle_saves` trigger writes the events, the
/// checkpoint and the run's status atomically.
async fn save_one(
    connection: &mut sqlx::SqliteConnection,
    checkpoint: &Checkpoint,
    row: &Encoded,
    events: &[Arc<Event>],
) -> Result<Saved, StoreError> {
    let batch = Batch::of(&checkpoint.run_id, events)?;
    let saved = sqlx::query(
        "INSERT INTO heddle_saves
           (thread_id, checkpoint_id, run_id, parent_id, step, status, created_at_us, body,
            changes, base_id, snapshot_id, budget, events, first_seq, last_seq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(checkpoint.thread_id.as_str())
    .bind(checkpoint.id.as_str())
    .bind(checkpoint.run_id.as_str())
    .bind(checkpoint.parent.as_ref().map(|p| p.as_str()))
    .bind(i64::from(checkpoint.step))
    .bind(checkpoint.status.as_str())
    .bind(integer(checkpoint.created_at_us, "time")?)
    .bind(&row.body)
    .bind(row.changes.as_deref())
    .bind(row.base.as_ref().map(|b| b.as_str()))
    .bind(row.snapshot.as_str())
    .bind(row.budget)
    .bind(batch.as_ref().map(|b| b.body.as_str()))
    .bind(batch.as_ref().map(|b| b.first))
    .bind(batch.as_ref().map(|b| b.last))
    .execute(connection)
    .await;
    match saved {
        Ok(_) => Ok(Saved::Written),
        Err(error) if base_gone(&error) => Ok(Saved::BaseGone),
        Err(error) => Err(write_error("cannot save the checkpoint", batch.as_ref())(
            error,
        )),
    }
}

impl CheckpointStore for SqliteStore {
    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut writer = self.writer.lock().await;
            for whole in [false, true] {
                let (rows, written) = self.encode_all(&[checkpoint], whole).await?;
                let mut saved = Saved::Written;
                for row in &rows {
                    saved = save_one(&mut writer, checkpoint, row, events).await?;
                }
                if saved == Saved::Written {
                    self.tips.settle(written);
                    return Ok(());
                }
            }
            Err(StoreError::Conflict(format!(
                "checkpoint `{}` was refused whole",
                checkpoint.id
            )))
        })
    }

    fn append_events<'a>(&'a self, events: &'a [Arc<Event>]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Some(first) = events.first() else {
                return Ok(());
            };
            let Some(batch) = Batch::of(&first.run_id, events)? else {
                return Ok(());
            };
            sqlx::query(
                "INSERT INTO heddle_events (run_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)",
            )
            .bind(batch.run.as_str())
            .bind(batch.first)
            .bind(batch.last)
            .bind(&batch.body)
            .execute(&self.pool)
            .await
            .map_err(write_error("cannot store events", Some(&batch)))?;
            Ok(())
        })
    }

    fn compact_events<'a>(
        &'a self,
        run: &'a crate::ids::RunId,
        first: u64,
        last: u64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            // Immediate: nothing is appended between the read and the
            // rewrite, and the continuity trigger sees the rewritten batch
            // follow the log.
            let mut writer = self.writer.lock().await;
            let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE")
                .await
                .map_err(error("cannot begin"))?;
            let rows: Vec<BatchRow> = sqlx::query_as(
                "SELECT first_seq, last_seq, body FROM heddle_events
                 WHERE run_id = ? AND first_seq >= ? ORDER BY first_seq",
            )
            .bind(run.as_str())
            .bind(integer(first, "event")?)
            .fetch_all(&mut *tx)
            .await
            .map_err(error("cannot read the events to compact"))?;
            let Some(batch) = compacted(run, &rows, first, last)? else {
                return Ok(());
            };
            sqlx::query("DELETE FROM heddle_events WHERE run_id = ? AND first_seq >= ?")
                .bind(run.as_str())
                .bind(batch.first)
                .execute(&mut *tx)
                .await
                .map_err(error("cannot compact the events"))?;
            sqlx::query(
                "INSERT INTO heddle_events (run_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)",
            )
            .bind(run.as_str())
            .bind(batch.first)
            .bind(batch.last)
            .bind(&batch.body)
            .execute(&mut *tx)
            .await
            .map_err(error("cannot compact the events"))?;
            tx.commit().await.map_err(error("cannot commit"))
        })
    }

    fn prune<'a>(
        &'a self,
        policy: crate::format::Retention,
        now_us: u64,
        changed_since_us: u64,
        progress: &'a (dyn Fn(super::Pruned) + Send + Sync),
    ) -> StoreFuture<'a, super::Pruned> {
        Box::pin(self.prune_all(policy, now_us, changed_since_us, progress))
    }

    fn pin<'a>(&'a self, pin: &'a super::CheckpointPin) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            // Only a stored checkpoint; SQLite serialises this with a
            // prune, so a pin never names one a prune is removing.
            sqlx::query(
                "INSERT INTO heddle_pins (kind, id, thread_id, checkpoint_id, created_at_us)
                 SELECT $1, $2, $3, $4, $5 WHERE EXISTS (
                     SELECT 1 FROM heddle_checkpoints WHERE thread_id = $3 AND checkpoint_id = $4)
                 ON CONFLICT DO NOTHING",
            )
            .bind(&pin.kind)
            .bind(&pin.id)
            .bind(pin.thread.as_str())
            .bind(pin.checkpoint.as_str())
            .bind(integer(super::emitter::now_us(), "time")?)
            .execute(&self.pool)
            .await
            .map_err(error("cannot pin the checkpoint"))?;
            let stored: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM heddle_pins WHERE kind = $1 AND id = $2
                                AND thread_id = $3 AND checkpoint_id = $4)",
            )
            .bind(&pin.kind)
            .bind(&pin.id)
            .bind(pin.thread.as_str())
            .bind(pin.checkpoint.as_str())
            .fetch_one(&self.pool)
            .await
            .map_err(error("cannot pin the checkpoint"))?;
            super::prune::pinned(pin, stored)
        })
    }

    fn unpin<'a>(&'a self, kind: &'a str, id: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let done = sqlx::query("DELETE FROM heddle_pins WHERE kind = ? AND id = ?")
                .bind(kind)
                .bind(id)
                .execute(&self.pool)
                .await
                .map_err(error("cannot unpin"))?;
            Ok(done.rows_affected())
        })
    }

    fn save_batch<'a>(&'a self, batch: &'a [(Checkpoint, Vec<Arc<Event>>)]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut writer = self.writer.lock().await;
            let checkpoints: Vec<&Checkpoint> = batch.iter().map(|(c, _)| c).collect();
            let mut whole = false;
            let written = loop {
                let (rows, written) = self.encode_all(&checkpoints, whole).await?;
                let mut tx = sqlx::Connection::begin(&mut *writer)
                    .await
                    .map_err(error("cannot begin"))?;
                let mut saved = Saved::Written;
                for ((checkpoint, events), row) in batch.iter().zip(&rows) {
                    saved = save_one(&mut tx, checkpoint, row, events).await?;
                    if saved == Saved::BaseGone {
                        break;
                    }
                }
                match saved {
                    Saved::Written => {
                        tx.commit().await.map_err(error("cannot commit"))?;
                        break written;
                    }
                    // Undone; again, each thread's first checkpoint whole.
                    Saved::BaseGone if !whole => whole = true,
                    Saved::BaseGone => {
                        return Err(StoreError::Conflict(
                            "a batch of checkpoints was refused whole".into(),
                        ));
                    }
                }
            };
            self.tips.settle(written);
            Ok(())
        })
    }

    super::sql::shared_methods!(threads: "SELECT c.body, (SELECT COUNT(*) FROM heddle_runs r WHERE r.thread_id = c.thread_id)
                 FROM heddle_checkpoints c
                 WHERE c.position = (SELECT MAX(position) FROM heddle_checkpoints WHERE thread_id = c.thread_id)
                 ORDER BY c.position DESC");
}
