//! A [`CheckpointStore`] on PostgreSQL (feature `postgres`).
//!
//! The SQLite store keeps a server's runs in a file beside it; this one is
//! for deployments whose data lives in PostgreSQL: several processes can
//! share it, and it is backed up and replicated with the rest of the
//! application's data. Its tables are the SQLite store's
//! (`migrations/postgres`, versions from 1001 so they share a database
//! with an application's own migrations).
//!
//! A checkpoint, the events since the previous one and the run's status
//! are written by one statement, hence in one transaction: a killed
//! process loses no committed step and never leaves half of one (with
//! PostgreSQL's default `synchronous_commit = on`, a commit also survives
//! a power cut).
//!
//! Events are numbered without gaps. The statement that writes a batch
//! checks that it begins right after the run's stored log, and writes
//! nothing (not the checkpoint either) when it does not. Two writers of
//! the same events at once may both pass that check; the primary key
//! (run, first event) then makes the second wait for the first and fails
//! it once the first commits. So, as with the other stores, concurrent
//! writers of one run are serialised and the second writer of the same
//! events is refused. Saves without events are all kept, in the order
//! they drew their `position`.

use std::sync::Arc;

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use super::checkpoint::Checkpoint;
use super::event::Event;
use super::sql::{Batch, BatchRow, compacted, error, integer, write_error};
use super::store::{CheckpointStore, StoreError, StoreFuture};
use super::stored_state::{Encoded, Tips, Written};

mod retention;

/// Checkpoints and events in a PostgreSQL database.
#[derive(Clone, Debug)]
pub struct PostgresStore {
    pool: PgPool,
    /// Each thread's newest checkpoint this process wrote, the base of its
    /// next (see `run::stored_state`).
    tips: Arc<Tips>,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host/db`),
    /// adding the store's tables if they are missing.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        // The error leaves the URL out: it may hold a password.
        let pool = PgPoolOptions::new()
            .connect(url)
            .await
            .map_err(error("cannot connect to PostgreSQL"))?;
        Self::from_pool(pool).await
    }

    /// Uses an open pool (an application's own database), adding the
    /// store's tables if they are missing.
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        migrate(&pool).await?;
        Ok(PostgresStore {
            pool,
            tips: Arc::default(),
        })
    }

    /// The pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The store, shared.
    pub fn shared(self) -> Arc<dyn CheckpointStore> {
        Arc::new(self)
    }

    /// Saves checkpoints, each with its events, in order, through
    /// `connection`: a transaction of the caller's (a server that fences a
    /// run's writes behind its lease saves in the transaction that checked
    /// the lease). Hand what it returns to [`committed`](Self::committed)
    /// once the transaction commits.
    pub async fn save_in(
        &self,
        connection: &mut sqlx::PgConnection,
        batch: &[(&Checkpoint, &[Arc<Event>])],
    ) -> Result<Written, StoreError> {
        let checkpoints: Vec<&Checkpoint> = batch.iter().map(|(c, _)| *c).collect();
        let (rows, mut written) = self.encode_all(&checkpoints, false).await?;
        let mut rows = rows.into_iter();
        let mut at = 0;
        while let Some(((checkpoint, events), row)) = batch.get(at).zip(rows.next()) {
            if save_row(&mut *connection, checkpoint, &row, events).await? == Saved::BaseGone {
                // Nothing of it was written: it and the rest again, each
                // thread's first whole.
                let whole;
                (whole, written) = self.encode_all(&checkpoints[at..], true).await?;
                let mut whole = whole.into_iter();
                let Some(first) = whole.next() else { break };
                if save_row(&mut *connection, checkpoint, &first, events).await? != Saved::Written {
                    return Err(StoreError::Conflict(format!(
                        "checkpoint `{}` was refused whole",
                        checkpoint.id
                    )));
                }
                rows = whole;
            }
            at += 1;
        }
        Ok(written)
    }

    /// Takes up what a committed [`save_in`](Self::save_in) wrote: the
    /// next checkpoints of those threads are stored as changes from them.
    pub fn committed(&self, written: Written) {
        self.tips.settle(written);
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
    connection: &mut sqlx::PgConnection,
    runs: &[String],
) -> Result<u64, StoreError> {
    use sqlx::Connection;
    let gone: Vec<Option<String>> = sqlx::query_scalar(
        "DELETE FROM heddle_runs WHERE run_id = ANY($1)
         RETURNING graph_hash",
    )
    .bind(runs)
    .fetch_all(&mut *connection)
    .await
    .map_err(error("deleting runs"))?;
    let deleted = u64::try_from(gone.len()).unwrap_or(u64::MAX);
    let mut hashes: Vec<String> = gone.into_iter().flatten().collect();
    hashes.sort();
    hashes.dedup();
    // A run being recorded at this moment with the same document holds it
    // (its key is referenced): then deleting it fails, and it stays, in a
    // savepoint that leaves the caller's transaction whole.
    let mut savepoint = connection
        .begin()
        .await
        .map_err(error("deleting the runs' graphs"))?;
    let forgotten = sqlx::query(
        "DELETE FROM heddle_graphs g WHERE g.hash = ANY($1)
           AND NOT EXISTS (SELECT 1 FROM heddle_runs r WHERE r.graph_hash = g.hash)",
    )
    .bind(&hashes)
    .execute(&mut *savepoint)
    .await;
    match forgotten {
        Ok(_) => savepoint.commit().await,
        Err(_) => savepoint.rollback().await,
    }
    .map_err(error("deleting the runs' graphs"))?;
    Ok(deleted)
}

/// Adds the store's tables to a database if they are missing (its own
/// migrations, versions from 1001, beside the application's).
pub async fn migrate(pool: &PgPool) -> Result<(), StoreError> {
    let mut migrator = sqlx::migrate!("./migrations/postgres");
    migrator.set_ignore_missing(true);
    migrator
        .run(pool)
        .await
        .map_err(|e| StoreError::Backend(format!("cannot create the checkpoint tables: {e}")))
}

/// The refusal of a batch that does not begin at `next_seq`, where the
/// run's stored log ends.
fn does_not_follow(batch: &Batch, next_seq: i64) -> StoreError {
    StoreError::Conflict(format!(
        "event {} of run `{}` does not follow {next_seq}",
        batch.first, batch.run
    ))
}

/// The channel on which a stored batch of a run's events is announced
/// (`NOTIFY`, delivered when the write commits; the payload is the run's
/// id): other processes tailing the run's log `LISTEN` on it and read the
/// new events from the table.
pub const EVENTS_CHANNEL: &str = "heddle_run_events";

/// Saves a checkpoint (encoded as `row`) with its events and the run's
/// status in one statement: one round trip, and the statement is its own
/// transaction (or part of the caller's, [`PostgresStore::save_in`]). `go`
/// says whether the events follow the stored log (or there are none);
/// every write is conditional on it, so a refused save writes nothing.
async fn save_row<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    checkpoint: &Checkpoint,
    row: &Encoded,
    events: &[Arc<Event>],
) -> Result<Saved, StoreError> {
    let batch = Batch::of(&checkpoint.run_id, events)?;
    let (follows, next_seq, based): (bool, i64, bool) = sqlx::query_as(
        "WITH tail AS (
             SELECT COALESCE(
                 (SELECT last_seq + 1 FROM heddle_events WHERE run_id = $3
                  ORDER BY first_seq DESC LIMIT 1),
                 0) AS next_seq
         ),
         -- A prune may have removed the base meanwhile: the row is then
         -- written whole (a prune locks the table, so it never comes
         -- between this check and the insert).
         based AS (
             SELECT ($13::TEXT IS NULL OR EXISTS (
                 SELECT 1 FROM heddle_checkpoints
                 WHERE snapshot_id = $14 AND checkpoint_id = $13
                 ORDER BY position DESC LIMIT 1)) AS based
         ),
         go AS (
             SELECT next_seq, ($10::BIGINT IS NULL OR $10 = next_seq) AND based AS follows,
                    based
             FROM tail, based
         ),
         saved_events AS (
             INSERT INTO heddle_events (run_id, first_seq, last_seq, body)
             SELECT $3, $10, $11, $9 FROM go WHERE follows AND $10 IS NOT NULL
         ),
         saved_checkpoint AS (
             INSERT INTO heddle_checkpoints
                 (thread_id, checkpoint_id, run_id, parent_id, step, status, created_at_us, body,
                  changes, base_id, snapshot_id, budget)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $12, $13, $14, $15 FROM go WHERE follows
         ),
         -- Most saves leave the status as it was: skip the write then.
         new_status AS (
             UPDATE heddle_runs SET status = $6, updated_at_us = $7
             FROM go WHERE follows AND run_id = $3 AND status <> $6
         )
         SELECT go.follows, go.next_seq, go.based FROM go
         -- Wakes whoever tails the run's log (delivered on commit).
         LEFT JOIN LATERAL (SELECT pg_notify('heddle_run_events', $3)
                            WHERE go.follows AND $10::BIGINT IS NOT NULL) woken ON true",
    )
    .bind(checkpoint.thread_id.as_str())
    .bind(checkpoint.id.as_str())
    .bind(checkpoint.run_id.as_str())
    .bind(checkpoint.parent.as_ref().map(|p| p.as_str()))
    .bind(i64::from(checkpoint.step))
    .bind(checkpoint.status.as_str())
    .bind(integer(checkpoint.created_at_us, "time")?)
    .bind(&row.body)
    .bind(batch.as_ref().map(|b| b.body.as_str()))
    .bind(batch.as_ref().map(|b| b.first))
    .bind(batch.as_ref().map(|b| b.last))
    .bind(row.changes.as_deref())
    .bind(row.base.as_ref().map(|b| b.as_str()))
    .bind(row.snapshot.as_str())
    .bind(row.budget)
    .fetch_one(executor)
    .await
    .map_err(write_error("cannot save the checkpoint", batch.as_ref()))?;
    match batch {
        _ if !based => Ok(Saved::BaseGone),
        Some(batch) if !follows => Err(does_not_follow(&batch, next_seq)),
        _ => Ok(Saved::Written),
    }
}

/// How a save went: written, or not as its base was pruned (nothing
/// written).
#[derive(PartialEq)]
enum Saved {
    Written,
    BaseGone,
}

/// Stores a batch of events ahead of their checkpoint
/// ([`CheckpointStore::append_events`]) through `executor`: the pool, or
/// the caller's transaction.
pub async fn append_events_with<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    events: &[Arc<Event>],
) -> Result<(), StoreError> {
    let Some(first) = events.first() else {
        return Ok(());
    };
    let Some(batch) = Batch::of(&first.run_id, events)? else {
        return Ok(());
    };
    // As in a save: the insert happens only if the batch follows.
    let (follows, next_seq): (bool, i64) = sqlx::query_as(
        "WITH tail AS (
             SELECT COALESCE(
                 (SELECT last_seq + 1 FROM heddle_events WHERE run_id = $1
                  ORDER BY first_seq DESC LIMIT 1),
                 0) AS next_seq
         ),
         go AS (SELECT next_seq, $2 = next_seq AS follows FROM tail),
         saved AS (
             INSERT INTO heddle_events (run_id, first_seq, last_seq, body)
             SELECT $1, $2, $3, $4 FROM go WHERE follows
         )
         SELECT go.follows, go.next_seq FROM go
         LEFT JOIN LATERAL (SELECT pg_notify('heddle_run_events', $1)
                            WHERE go.follows) woken ON true",
    )
    .bind(batch.run.as_str())
    .bind(batch.first)
    .bind(batch.last)
    .bind(&batch.body)
    .fetch_one(executor)
    .await
    .map_err(write_error("cannot store events", Some(&batch)))?;
    if follows {
        Ok(())
    } else {
        Err(does_not_follow(&batch, next_seq))
    }
}

impl CheckpointStore for PostgresStore {
    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            for whole in [false, true] {
                let (rows, written) = self.encode_all(&[checkpoint], whole).await?;
                let mut saved = Saved::Written;
                for row in &rows {
                    saved = save_row(&self.pool, checkpoint, row, events).await?;
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

    fn compact_events<'a>(
        &'a self,
        run: &'a crate::ids::RunId,
        first: u64,
        last: u64,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut tx = self.pool.begin().await.map_err(error("cannot begin"))?;
            // Locked: a second compaction of the same batches waits, then
            // finds them gone and leaves them.
            let rows: Vec<BatchRow> = sqlx::query_as(
                "SELECT first_seq, last_seq, body FROM heddle_events
                 WHERE run_id = $1 AND first_seq >= $2 ORDER BY first_seq FOR UPDATE",
            )
            .bind(run.as_str())
            .bind(integer(first, "event")?)
            .fetch_all(&mut *tx)
            .await
            .map_err(error("cannot read the events to compact"))?;
            let Some(batch) = compacted(run, &rows, first, last)? else {
                return Ok(());
            };
            sqlx::query(
                "DELETE FROM heddle_events WHERE run_id = $1 AND first_seq >= $2
                 AND first_seq <= $3",
            )
            .bind(run.as_str())
            .bind(batch.first)
            .bind(batch.last)
            .execute(&mut *tx)
            .await
            .map_err(error("cannot compact the events"))?;
            sqlx::query(
                "INSERT INTO heddle_events (run_id, first_seq, last_seq, body)
                 VALUES ($1, $2, $3, $4)",
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
            // Only a stored checkpoint: a prune locks the pins too, so this
            // waits for it and then sees what it removed.
            let stored: bool = sqlx::query_scalar(
                "WITH stored AS (
                     INSERT INTO heddle_pins (kind, id, thread_id, checkpoint_id, created_at_us)
                     SELECT $1, $2, $3, $4, $5 WHERE EXISTS (
                         SELECT 1 FROM heddle_checkpoints
                         WHERE thread_id = $3 AND checkpoint_id = $4)
                     ON CONFLICT DO NOTHING
                     RETURNING 1
                 )
                 SELECT EXISTS (SELECT 1 FROM stored) OR EXISTS (
                     SELECT 1 FROM heddle_pins
                     WHERE kind = $1 AND id = $2 AND thread_id = $3 AND checkpoint_id = $4)",
            )
            .bind(&pin.kind)
            .bind(&pin.id)
            .bind(pin.thread.as_str())
            .bind(pin.checkpoint.as_str())
            .bind(integer(super::emitter::now_us(), "time")?)
            .fetch_one(&self.pool)
            .await
            .map_err(error("cannot pin the checkpoint"))?;
            super::prune::pinned(pin, stored)
        })
    }

    fn unpin<'a>(&'a self, kind: &'a str, id: &'a str) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let done = sqlx::query("DELETE FROM heddle_pins WHERE kind = $1 AND id = $2")
                .bind(kind)
                .bind(id)
                .execute(&self.pool)
                .await
                .map_err(error("cannot unpin"))?;
            Ok(done.rows_affected())
        })
    }

    fn append_events<'a>(&'a self, events: &'a [Arc<Event>]) -> StoreFuture<'a, ()> {
        Box::pin(append_events_with(&self.pool, events))
    }

    fn save_batch<'a>(&'a self, batch: &'a [(Checkpoint, Vec<Arc<Event>>)]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut tx = self.pool.begin().await.map_err(error("cannot begin"))?;
            let batch: Vec<(&Checkpoint, &[Arc<Event>])> =
                batch.iter().map(|(c, e)| (c, e.as_slice())).collect();
            let written = self.save_in(&mut tx, &batch).await?;
            tx.commit().await.map_err(error("cannot commit"))?;
            self.committed(written);
            Ok(())
        })
    }

    super::sql::shared_methods!(threads: "SELECT c.body, (SELECT COUNT(*) FROM heddle_runs r WHERE r.thread_id = c.thread_id)
                 FROM (SELECT DISTINCT ON (thread_id) thread_id, position, body
                       FROM heddle_checkpoints ORDER BY thread_id, position DESC) c
                 ORDER BY c.position DESC");
}
