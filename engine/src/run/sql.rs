//! What the SQL stores (`run::sqlite`, `run::postgres`) share: how records
//! are encoded into rows and read back, and how database errors become
//! [`StoreError`]s. The stores keep the same tables, so they read rows the
//! same way.

use std::sync::Arc;

use super::checkpoint::{Checkpoint, CheckpointSummary, RunStatus, ThreadSummary};
use super::event::Event;
use super::store::{RunRecord, StoreError, batch_span};
pub(crate) use super::stored_state::parse;
use crate::ids::{RunId, ThreadId};

/// Turns a database error into a store error, saying what was being done.
pub(crate) fn error(context: &str) -> impl Fn(sqlx::Error) -> StoreError + '_ {
    move |error| StoreError::Backend(format!("{context}: {error}"))
}

/// Like [`error`], for a write of `run`'s events from `first` on: the
/// primary key (run, first event) refusing the batch means those events
/// are already stored, which a caller should hear in those words.
pub(crate) fn write_error<'a>(
    context: &'static str,
    batch: Option<&'a Batch>,
) -> impl Fn(sqlx::Error) -> StoreError + 'a {
    move |error| match (batch, &error) {
        (Some(batch), sqlx::Error::Database(db)) if db.is_unique_violation() => {
            StoreError::Conflict(format!(
                "{context}: events from {} of run `{}` are already stored",
                batch.first, batch.run
            ))
        }
        _ => StoreError::Backend(format!("{context}: {error}")),
    }
}

/// A number as an SQL integer column holds it (a signed 64-bit integer).
pub(crate) fn integer(value: u64, what: &str) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::Corrupt(format!("{what} {value} is too large to store")))
}

/// A batch of one run's events as a row of `heddle_events` holds it.
pub(crate) struct Batch {
    pub(crate) run: RunId,
    pub(crate) first: i64,
    pub(crate) last: i64,
    /// The events, a JSON array.
    pub(crate) body: String,
}

impl Batch {
    /// `run`'s events as one row; `None` for no events. Refuses events of
    /// another run and a batch with a gap inside.
    pub(crate) fn of(run: &RunId, events: &[Arc<Event>]) -> Result<Option<Batch>, StoreError> {
        let Some((first, last)) = batch_span(run, events)? else {
            return Ok(None);
        };
        let body =
            super::stored_events::encode(events.iter().map(|event| &**event)).map_err(|e| {
                StoreError::Corrupt(format!("cannot encode the events of run `{run}`: {e}"))
            })?;
        Ok(Some(Batch {
            run: run.clone(),
            first: integer(first, "event")?,
            last: integer(last, "event")?,
            body,
        }))
    }
}

/// A stored batch of `heddle_events`: its first and last event, its body.
pub(crate) type BatchRow = (i64, i64, String);

/// The one batch that replaces `rows` (`run`'s stored batches from
/// `first` on, in order) when they are two or more, cover `first` to
/// `last` exactly and end the log there; `None` when they do not, and
/// nothing is to be rewritten ([`CheckpointStore::compact_events`]).
///
/// [`CheckpointStore::compact_events`]: super::store::CheckpointStore::compact_events
pub(crate) fn compacted(
    run: &RunId,
    rows: &[BatchRow],
    first: u64,
    last: u64,
) -> Result<Option<Batch>, StoreError> {
    let (first, last) = (integer(first, "event")?, integer(last, "event")?);
    let mut next = first;
    for (row_first, row_last, _) in rows {
        if *row_first != next || *row_last < *row_first || *row_last > last {
            return Ok(None);
        }
        next = row_last + 1;
    }
    if rows.len() < 2 || next != last + 1 {
        return Ok(None);
    }
    let mut events = Vec::new();
    for (_, _, body) in rows {
        events.extend(super::stored_events::decode(run, body)?);
    }
    let body = super::stored_events::encode(&events).map_err(|e| {
        StoreError::Corrupt(format!("cannot encode the events of run `{run}`: {e}"))
    })?;
    Ok(Some(Batch {
        run: run.clone(),
        first,
        last,
        body,
    }))
}

/// The events of `run`'s stored batches (in order) from `from_seq` on.
pub(crate) fn events_from(
    run: &RunId,
    batches: &[String],
    from_seq: u64,
) -> Result<Vec<Event>, StoreError> {
    let mut events = Vec::new();
    for batch in batches {
        let batch = super::stored_events::decode(run, batch)?;
        events.extend(batch.into_iter().filter(|event| event.seq >= from_seq));
    }
    Ok(events)
}

/// A thread's row of the thread list: its newest checkpoint and how many
/// runs it has had.
pub(crate) fn thread_summary(body: &str, runs: i64) -> Result<ThreadSummary, StoreError> {
    let checkpoint: Checkpoint = parse(body)?;
    Ok(ThreadSummary {
        thread_id: checkpoint.thread_id.clone(),
        latest: CheckpointSummary::from(&checkpoint),
        runs: u64::try_from(runs).unwrap_or(0),
    })
}

/// `SELECT <a run record's columns> FROM heddle_runs r ...`: the graph
/// from `heddle_graphs` by its hash, or the run's own copy for runs
/// recorded before documents were shared.
macro_rules! select_runs {
    () => {
        "SELECT r.run_id, r.thread_id, COALESCE(g.document, r.graph) AS graph, r.status
         FROM heddle_runs r LEFT JOIN heddle_graphs g ON g.hash = r.graph_hash"
    };
}
pub(crate) use select_runs;

/// The key a graph document is stored under: the SHA-256 of its text, in
/// hex.
pub(crate) fn graph_hash(document: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(document.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A row of `heddle_runs`.
#[derive(sqlx::FromRow)]
pub(crate) struct RunRow {
    run_id: String,
    thread_id: String,
    graph: String,
    status: String,
}

impl TryFrom<RunRow> for RunRecord {
    type Error = StoreError;

    fn try_from(row: RunRow) -> Result<Self, StoreError> {
        Ok(RunRecord {
            status: RunStatus::parse(&row.status).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "run `{}` has an unknown status `{}`",
                    row.run_id, row.status
                ))
            })?,
            run_id: RunId::from(row.run_id),
            thread_id: ThreadId::from(row.thread_id),
            graph: row.graph,
        })
    }
}

/// How a SQL store reads checkpoints back and encodes new ones as changes
/// ([`super::stored_state`]), written once for both: expands inside each
/// store's own `impl` (its `pool` and `tips` fields).
macro_rules! shared_encoding {
    () => {
        /// Reads checkpoint `id` of `thread` back (the newest for `None`), its
        /// state rebuilt from its chain, with its row.
        async fn load(
            &self,
            thread: &$crate::ids::ThreadId,
            id: Option<&str>,
        ) -> Result<
            Option<(
                $crate::run::checkpoint::Checkpoint,
                $crate::run::stored_state::StoredRow,
            )>,
            $crate::run::store::StoreError,
        > {
            use $crate::run::stored_state::{StoredRow, stored_columns};
            let row: Option<StoredRow> = match id {
                Some(id) => {
                    sqlx::query_as(concat!(
                        "SELECT ",
                        stored_columns!(),
                        " FROM heddle_checkpoints
                 WHERE thread_id = $1 AND checkpoint_id = $2 ORDER BY position LIMIT 1"
                    ))
                    .bind(thread.as_str())
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                }
                None => {
                    sqlx::query_as(concat!(
                        "SELECT ",
                        stored_columns!(),
                        " FROM heddle_checkpoints
                 WHERE thread_id = $1 ORDER BY position DESC LIMIT 1"
                    ))
                    .bind(thread.as_str())
                    .fetch_optional(&self.pool)
                    .await
                }
            }
            .map_err($crate::run::sql::error("cannot read the checkpoint"))?;
            let Some(row) = row else {
                return Ok(None);
            };
            if row.is_snapshot() {
                let checkpoint = $crate::run::sql::parse(&row.body)?;
                return Ok(Some((checkpoint, row)));
            }
            // The newest a store wrote or read of a thread is in memory:
            // its chain need not be read back.
            if let Some(state) = self.tips.state_if(thread, &row.checkpoint_id) {
                let mut checkpoint: $crate::run::checkpoint::Checkpoint =
                    $crate::run::sql::parse(&row.body)?;
                checkpoint.state = serde_json::Value::Object(state);
                return Ok(Some((checkpoint, row)));
            }
            let chain: Vec<StoredRow> = sqlx::query_as(concat!(
                "SELECT ",
                stored_columns!(),
                " FROM heddle_checkpoints
             WHERE snapshot_id = $1 AND thread_id = $2 ORDER BY position"
            ))
            .bind(row.snapshot_id.as_deref())
            .bind(thread.as_str())
            .fetch_all(&self.pool)
            .await
            .map_err($crate::run::sql::error(
                "cannot read the checkpoint's changes",
            ))?;
            let checkpoint = $crate::run::stored_state::rebuild(&row.checkpoint_id, &chain)?
                .ok_or_else(|| {
                    $crate::run::store::StoreError::Corrupt(format!(
                        "checkpoint `{}` is not in its own chain",
                        row.checkpoint_id
                    ))
                })?;
            if id.is_none()
                && let Some(tip) = $crate::run::stored_state::Tip::of_loaded(&checkpoint, &row)
            {
                self.tips.offer(thread, tip);
            }
            Ok(Some((checkpoint, row)))
        }

        /// Encodes checkpoints to be written in this order: each as its
        /// changes from the newest checkpoint written of its thread (kept in
        /// memory, or read back), or as a snapshot; with `whole_first`,
        /// the first of each thread is a snapshot (its base was pruned).
        async fn encode_all(
            &self,
            checkpoints: &[&$crate::run::checkpoint::Checkpoint],
            whole_first: bool,
        ) -> Result<
            (
                Vec<$crate::run::stored_state::Encoded>,
                $crate::run::stored_state::Written,
            ),
            $crate::run::store::StoreError,
        > {
            let mut rows = Vec::new();
            let mut tips: Vec<($crate::ids::ThreadId, $crate::run::stored_state::Tip)> = Vec::new();
            for checkpoint in checkpoints.iter().copied() {
                let thread = &checkpoint.thread_id;
                let mut base = match tips.iter().position(|(t, _)| t == thread) {
                    Some(i) => Some(tips.swap_remove(i).1),
                    // A base that went (a prune): the thread's first
                    // checkpoint here is stored whole.
                    None if whole_first => {
                        self.tips.take(thread);
                        None
                    }
                    None => self.tips.take(thread),
                };
                if base.is_none()
                    && !whole_first
                    && let Some(parent) = &checkpoint.parent
                    && let Some((loaded, row)) = self.load(thread, Some(parent.as_str())).await?
                {
                    base = $crate::run::stored_state::Tip::of_loaded(&loaded, &row);
                }
                let (encoded, tip) = $crate::run::stored_state::encode(checkpoint, base)?;
                rows.push(encoded);
                if let Some(tip) = tip {
                    tips.push((thread.clone(), tip));
                }
            }
            Ok((rows, $crate::run::stored_state::Written { tips }))
        }
    };
}
pub(crate) use shared_encoding;

/// What a SQL checkpoint store does the same way on SQLite and PostgreSQL
/// (recording a run, and every read), written once: both read `$1`-style
/// parameters, so the same queries run on either. It expands inside each
/// store's `impl CheckpointStore` (its `pool` field is the store's own pool
/// type); `threads` is the one query each database words its own way.
/// Saves differ (one held connection and a trigger on SQLite, one
/// statement on PostgreSQL) and stay in each store.
macro_rules! shared_methods {
    (threads: $threads:literal) => {
    fn create_run<'a>(&'a self, run: &'a $crate::run::store::RunRecord) -> $crate::run::store::StoreFuture<'a, ()> {
        Box::pin(async move {
            let now = $crate::run::sql::integer($crate::run::emitter::now_us(), "time")?;
            let hash = $crate::run::sql::graph_hash(&run.graph);
            // Tried twice: on PostgreSQL, deleting the last other run of the
            // same document at this very moment takes it away once.
            let mut tries = 0;
            loop {
                tries += 1;
                let recorded: Result<(), sqlx::Error> = async {
                    let mut tx = self.pool.begin().await?;
                    // Each distinct document once; the run refers to it.
                    sqlx::query(
                        "INSERT INTO heddle_graphs (hash, document) VALUES ($1, $2)
                         ON CONFLICT (hash) DO NOTHING",
                    )
                    .bind(&hash)
                    .bind(&run.graph)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query(
                        "INSERT INTO heddle_runs
                           (run_id, thread_id, graph, graph_hash, status, created_at_us, updated_at_us)
                         VALUES ($1, $2, 'null', $3, $4, $5, $6)",
                    )
                    .bind(run.run_id.as_str())
                    .bind(run.thread_id.as_str())
                    .bind(&hash)
                    .bind(run.status.as_str())
                    .bind(now)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                    tx.commit().await
                }
                .await;
                match recorded {
                    Ok(()) => break,
                    Err(_) if tries < 2 => continue,
                    Err(error) => {
                        return Err($crate::run::sql::error("cannot record the run")(error));
                    }
                }
            }
            Ok(())
        })
    }


    fn checkpoint<'a>(
        &'a self,
        thread: &'a $crate::ids::ThreadId,
        id: &'a str,
    ) -> $crate::run::store::StoreFuture<'a, Option<$crate::run::checkpoint::Checkpoint>> {
        Box::pin(async move { Ok(self.load(thread, Some(id)).await?.map(|(checkpoint, _)| checkpoint)) })
    }

    fn latest<'a>(&'a self, thread: &'a $crate::ids::ThreadId) -> $crate::run::store::StoreFuture<'a, Option<$crate::run::checkpoint::Checkpoint>> {
        Box::pin(async move { Ok(self.load(thread, None).await?.map(|(checkpoint, _)| checkpoint)) })
    }

    fn last_of_run<'a>(&'a self, run: &'a $crate::ids::RunId) -> $crate::run::store::StoreFuture<'a, Option<$crate::run::checkpoint::Checkpoint>> {
        Box::pin(async move {
            let found: Option<(String, String)> = sqlx::query_as(
                "SELECT thread_id, checkpoint_id FROM heddle_checkpoints WHERE run_id = $1
                 ORDER BY position DESC LIMIT 1",
            )
            .bind(run.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot read the run's last checkpoint"))?;
            let Some((thread, id)) = found else {
                return Ok(None);
            };
            let thread = $crate::ids::ThreadId::from(thread);
            Ok(self.load(&thread, Some(&id)).await?.map(|(checkpoint, _)| checkpoint))
        })
    }

    fn history<'a>(&'a self, thread: &'a $crate::ids::ThreadId) -> $crate::run::store::StoreFuture<'a, Vec<$crate::run::checkpoint::CheckpointSummary>> {
        Box::pin(async move {
            let bodies: Vec<String> = sqlx::query_scalar(
                "SELECT body FROM heddle_checkpoints WHERE thread_id = $1 ORDER BY position",
            )
            .bind(thread.as_str())
            .fetch_all(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot read the history"))?;
            bodies
                .iter()
                .map(|body| $crate::run::sql::parse::<$crate::run::checkpoint::Checkpoint>(body).map(|c| $crate::run::checkpoint::CheckpointSummary::from(&c)))
                .collect()
        })
    }

    fn threads<'a>(&'a self) -> $crate::run::store::StoreFuture<'a, Vec<$crate::run::checkpoint::ThreadSummary>> {
        Box::pin(async move {
            let rows: Vec<(String, i64)> = sqlx::query_as(
                $threads
            )
            .fetch_all(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot list the threads"))?;
            rows.iter()
                .map(|(body, runs)| $crate::run::sql::thread_summary(body, *runs))
                .collect()
        })
    }

    fn run<'a>(&'a self, run: &'a $crate::ids::RunId) -> $crate::run::store::StoreFuture<'a, Option<$crate::run::store::RunRecord>> {
        Box::pin(async move {
            let row: Option<$crate::run::sql::RunRow> = sqlx::query_as(
                concat!($crate::run::sql::select_runs!(), " WHERE r.run_id = $1"),
            )
            .bind(run.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot read the run"))?;
            row.map($crate::run::store::RunRecord::try_from).transpose()
        })
    }

    fn unfinished<'a>(&'a self) -> $crate::run::store::StoreFuture<'a, Vec<$crate::run::store::RunRecord>> {
        Box::pin(async move {
            let rows: Vec<$crate::run::sql::RunRow> = sqlx::query_as(
                concat!(
                    $crate::run::sql::select_runs!(),
                    " WHERE r.status = 'running' ORDER BY r.created_at_us, r.run_id"
                ),
            )
            .fetch_all(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot list unfinished runs"))?;
            rows.into_iter().map($crate::run::store::RunRecord::try_from).collect()
        })
    }

    fn events<'a>(&'a self, run: &'a $crate::ids::RunId, from_seq: u64) -> $crate::run::store::StoreFuture<'a, Vec<$crate::run::event::Event>> {
        Box::pin(async move {
            let batches: Vec<String> = sqlx::query_scalar(
                "SELECT body FROM heddle_events WHERE run_id = $1 AND last_seq >= $2
                 ORDER BY first_seq",
            )
            .bind(run.as_str())
            .bind(i64::try_from(from_seq).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err($crate::run::sql::error("cannot read the events"))?;
            $crate::run::sql::events_from(run, &batches, from_seq)
        })
    }
    };
}
pub(crate) use shared_methods;
