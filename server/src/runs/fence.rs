//! The checkpoint store of a server that shares PostgreSQL with other
//! replicas: it writes a run's events and checkpoints only while it holds
//! the run's lease.
//!
//! A server that stalls past its lease (a long pause, an overloaded
//! machine) is not dead: another one takes the run over, reads where its
//! log ends and goes on from there. Without a fence the stalled server's
//! next batch lands first, the new owner's own batch no longer follows
//! the log, and the run fails on the server that was right. Each write
//! here checks the lease and locks the run's record in the transaction
//! that writes, so the takeover and the write are ordered: either the
//! write lands before the new owner reads the log, or it is refused. A
//! writer frozen with the record locked would hold a takeover off for as
//! long as it is frozen; the database ends its session after a lease's
//! worth of idling in the transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use heddle_engine::run::postgres::{PostgresStore, append_events_with};
use heddle_engine::run::{
    Checkpoint, CheckpointPin, CheckpointStore, CheckpointSummary, Event, Pruned, RunRecord,
    StoreError, StoreFuture, ThreadSummary,
};
use heddle_engine::{RunId, ThreadId};
use heddle_store::runs as records;
use sqlx::{PgPool, Postgres, Transaction};

/// A [`PostgresStore`] whose writes are fenced by the `runs` leases of
/// `owner` (this server).
pub struct LeaseFenced {
    store: PostgresStore,
    pool: PgPool,
    owner: String,
    /// How long this server's leases last, in milliseconds: how long the
    /// database lets a write hold the run's record while it stalls.
    lease_ms: Arc<AtomicU64>,
}

impl LeaseFenced {
    pub fn new(store: PostgresStore, owner: String, lease_ms: Arc<AtomicU64>) -> Self {
        LeaseFenced {
            pool: store.pool().clone(),
            store,
            owner,
            lease_ms,
        }
    }

    async fn begin(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        self.pool.begin().await.map_err(cannot_check)
    }

    /// Refuses unless this server may write `run`'s data; the run's record
    /// stays locked until `tx` ends.
    async fn check(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        run: &RunId,
    ) -> Result<(), StoreError> {
        // A writer stalled for a whole lease has lost it anyway (it renews
        // every third of one): past that its lock only delays a takeover.
        let stall = Duration::from_millis(self.lease_ms.load(Ordering::Relaxed));
        if records::may_write_run(tx, run, &self.owner, stall)
            .await
            .map_err(cannot_check)?
        {
            Ok(())
        } else {
            Err(StoreError::Fenced(format!(
                "run `{run}` is no longer this server's: another server took it over"
            )))
        }
    }
}

fn cannot_check(error: sqlx::Error) -> StoreError {
    StoreError::Backend(format!("cannot check the run's lease: {error}"))
}

fn committed(result: Result<(), sqlx::Error>) -> Result<(), StoreError> {
    result.map_err(|error| StoreError::Backend(format!("cannot commit: {error}")))
}

impl CheckpointStore for LeaseFenced {
    fn create_run<'a>(&'a self, run: &'a RunRecord) -> StoreFuture<'a, ()> {
        // A new run: nobody else can hold it yet.
        self.store.create_run(run)
    }

    fn save<'a>(
        &'a self,
        checkpoint: &'a Checkpoint,
        events: &'a [Arc<Event>],
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            self.check(&mut tx, &checkpoint.run_id).await?;
            let written = self.store.save_in(&mut tx, &[(checkpoint, events)]).await?;
            committed(tx.commit().await)?;
            self.store.committed(written);
            Ok(())
        })
    }

    fn append_events<'a>(&'a self, events: &'a [Arc<Event>]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Some(first) = events.first() else {
                return Ok(());
            };
            let mut tx = self.begin().await?;
            self.check(&mut tx, &first.run_id).await?;
            append_events_with(&mut *tx, events).await?;
            committed(tx.commit().await)
        })
    }

    fn save_batch<'a>(&'a self, batch: &'a [(Checkpoint, Vec<Arc<Event>>)]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut tx = self.begin().await?;
            for (checkpoint, _) in batch {
                self.check(&mut tx, &checkpoint.run_id).await?;
            }
            let batch: Vec<(&Checkpoint, &[Arc<Event>])> =
                batch.iter().map(|(c, e)| (c, e.as_slice())).collect();
            let written = self.store.save_in(&mut tx, &batch).await?;
            committed(tx.commit().await)?;
            self.store.committed(written);
            Ok(())
        })
    }

    fn checkpoint<'a>(
        &'a self,
        thread: &'a ThreadId,
        id: &'a str,
    ) -> StoreFuture<'a, Option<Checkpoint>> {
        self.store.checkpoint(thread, id)
    }

    fn latest<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Option<Checkpoint>> {
        self.store.latest(thread)
    }

    fn last_of_run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<Checkpoint>> {
        self.store.last_of_run(run)
    }

    fn history<'a>(&'a self, thread: &'a ThreadId) -> StoreFuture<'a, Vec<CheckpointSummary>> {
        self.store.history(thread)
    }

    fn threads<'a>(&'a self) -> StoreFuture<'a, Vec<ThreadSummary>> {
        self.store.threads()
    }

    fn run<'a>(&'a self, run: &'a RunId) -> StoreFuture<'a, Option<RunRecord>> {
        self.store.run(run)
    }

    fn unfinished<'a>(&'a self) -> StoreFuture<'a, Vec<RunRecord>> {
        self.store.unfinished()
    }

    fn events<'a>(&'a self, run: &'a RunId, from_seq: u64) -> StoreFuture<'a, Vec<Event>> {
        self.store.events(run, from_seq)
    }

    fn prune<'a>(
        &'a self,
        policy: heddle_engine::format::Retention,
        now_us: u64,
        changed_since_us: u64,
        progress: &'a (dyn Fn(Pruned) + Send + Sync),
    ) -> StoreFuture<'a, Pruned> {
        self.store.prune(policy, now_us, changed_since_us, progress)
    }

    fn pin<'a>(&'a self, pin: &'a CheckpointPin) -> StoreFuture<'a, ()> {
        self.store.pin(pin)
    }

    fn unpin<'a>(&'a self, kind: &'a str, id: &'a str) -> StoreFuture<'a, u64> {
        self.store.unpin(kind, id)
    }

    /// Not fenced: a compaction changes no event, whoever holds the lease.
    fn compact_events<'a>(&'a self, run: &'a RunId, first: u64, last: u64) -> StoreFuture<'a, ()> {
        self.store.compact_events(run, first, last)
    }
}
