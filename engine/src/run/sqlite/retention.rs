//! Pruning a SQLite store ([`CheckpointStore::prune`]): the plan of
//! `run::prune`, each thread and each run in an immediate transaction of
//! its own, which takes SQLite's one write lock first, so no save comes
//! between reading the rows and removing them (a save whose base went is
//! then written whole: see `heddle_save`, migration 1005).
//!
//! [`CheckpointStore::prune`]: crate::run::CheckpointStore::prune

use std::collections::HashSet;

use super::SqliteStore;
use crate::format::Retention;
use crate::ids::RunId;
use crate::run::prune::{
    RowMeta, first_event, meta_columns, net_changes, outcome, plan, policy_of, rebased,
};
use crate::run::sql::{BatchRow, error, integer};
use crate::run::store::{Pruned, StoreError};
use crate::run::stored_state::{StoredRow, stored_columns};

/// How many runs one query lists for compaction.
const RUNS_AT_ONCE: i64 = 200;

const DAY_US: i64 = 86_400_000_000;

impl SqliteStore {
    pub(super) async fn prune_all(
        &self,
        policy: Retention,
        now_us: u64,
        changed_since_us: u64,
        progress: &(dyn Fn(Pruned) + Send + Sync),
    ) -> Result<Pruned, StoreError> {
        let mut total = Pruned::default();
        let threads: Vec<String> = sqlx::query_scalar(
            "SELECT thread_id FROM heddle_checkpoints GROUP BY thread_id
             HAVING COUNT(*) > 1 AND MAX(created_at_us) > ?",
        )
        .bind(integer(changed_since_us, "time")?)
        .fetch_all(&self.pool)
        .await
        .map_err(error("cannot list the threads to prune"))?;
        for thread in threads {
            let pruned = self.prune_thread(&thread, policy).await?;
            if pruned.checkpoints > 0 {
                total.add(&pruned);
                progress(pruned);
            }
        }
        let now = integer(now_us, "time")?;
        let mut after = String::new();
        loop {
            // A graph's own number of days, else the server's; none keeps
            // the log. Only a document that names the key is parsed.
            let runs: Vec<String> = sqlx::query_scalar(
                "SELECT r.run_id FROM heddle_runs r
                 LEFT JOIN heddle_graphs g ON g.hash = r.graph_hash
                 WHERE r.run_id > ?
                   AND r.status IN ('finished', 'failed', 'cancelled')
                   AND r.updated_at_us < ? - ? * COALESCE(
                       CASE WHEN COALESCE(g.document, r.graph) LIKE '%\"keep_events_days\"%'
                            THEN json_extract(COALESCE(g.document, r.graph),
                                              '$.retention.keep_events_days') END,
                       ?)
                   AND EXISTS (SELECT 1 FROM heddle_events e
                               WHERE e.run_id = r.run_id AND e.first_seq > 0)
                 ORDER BY r.run_id LIMIT ?",
            )
            .bind(&after)
            .bind(now)
            .bind(DAY_US)
            .bind(policy.keep_events_days.map(i64::from))
            .bind(RUNS_AT_ONCE)
            .fetch_all(&self.pool)
            .await
            .map_err(error("cannot list the runs to compact"))?;
            let Some(last) = runs.last() else {
                break;
            };
            after = last.clone();
            for run in runs {
                let pruned = self.compact_to_outcome(&run).await?;
                if pruned.events > 0 {
                    total.add(&pruned);
                    progress(pruned);
                }
            }
        }
        Ok(total)
    }

    async fn prune_thread(&self, thread: &str, server: Retention) -> Result<Pruned, StoreError> {
        let document: Option<String> = sqlx::query_scalar(
            "SELECT COALESCE(g.document, r.graph) FROM heddle_runs r
             LEFT JOIN heddle_graphs g ON g.hash = r.graph_hash
             WHERE r.thread_id = ? ORDER BY r.created_at_us DESC LIMIT 1",
        )
        .bind(thread)
        .fetch_optional(&self.pool)
        .await
        .map_err(error("cannot read the thread's graph"))?;
        let Some(keep) = policy_of(document.as_deref(), server).keep_checkpoints else {
            return Ok(Pruned::default());
        };
        let mut writer = self.writer.lock().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE")
            .await
            .map_err(error("cannot begin"))?;
        let rows: Vec<RowMeta> = sqlx::query_as(concat!(
            "SELECT ",
            meta_columns!(),
            " FROM heddle_checkpoints WHERE thread_id = ? ORDER BY position"
        ))
        .bind(thread)
        .fetch_all(&mut *tx)
        .await
        .map_err(error("cannot read the thread's checkpoints"))?;
        if rows.len() <= keep.get() as usize {
            return Ok(Pruned::default());
        }
        let pinned: HashSet<String> =
            sqlx::query_scalar("SELECT checkpoint_id FROM heddle_pins WHERE thread_id = ?")
                .bind(thread)
                .fetch_all(&mut *tx)
                .await
                .map_err(error("cannot read the thread's pins"))?
                .into_iter()
                .collect();
        let plan = plan(&rows, keep.get() as usize, &pinned)?;
        if plan.delete.is_empty() {
            return Ok(Pruned::default());
        }
        if !plan.rebase.is_empty() {
            let stored: Vec<StoredRow> = sqlx::query_as(concat!(
                "SELECT ",
                stored_columns!(),
                " FROM heddle_checkpoints WHERE thread_id = ? ORDER BY position"
            ))
            .bind(thread)
            .fetch_all(&mut *tx)
            .await
            .map_err(error("cannot read the thread's checkpoints"))?;
            for ((position, changes), (_, _, base)) in
                rebased(&stored, &plan)?.iter().zip(&plan.rebase)
            {
                sqlx::query(
                    "UPDATE heddle_checkpoints SET changes = ?, base_id = ? WHERE position = ?",
                )
                .bind(changes)
                .bind(base)
                .bind(position)
                .execute(&mut *tx)
                .await
                .map_err(error("cannot store a kept checkpoint again"))?;
            }
        }
        let positions = serde_json::to_string(&plan.delete).map_err(|e| {
            StoreError::Corrupt(format!("cannot list the checkpoints to remove: {e}"))
        })?;
        sqlx::query(
            "DELETE FROM heddle_checkpoints WHERE position IN (SELECT value FROM json_each(?))",
        )
        .bind(positions)
        .execute(&mut *tx)
        .await
        .map_err(error("cannot remove checkpoints"))?;
        tx.commit().await.map_err(error("cannot commit"))?;
        Ok(Pruned {
            what: thread.to_owned(),
            threads: 1,
            checkpoints: plan.delete.len() as u64,
            rebased: plan.rebase.len() as u64,
            ..Pruned::default()
        })
    }

    async fn compact_to_outcome(&self, run: &str) -> Result<Pruned, StoreError> {
        let mut writer = self.writer.lock().await;
        let mut tx = sqlx::Connection::begin_with(&mut *writer, "BEGIN IMMEDIATE")
            .await
            .map_err(error("cannot begin"))?;
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM heddle_runs WHERE run_id = ?")
                .bind(run)
                .fetch_optional(&mut *tx)
                .await
                .map_err(error("cannot read the run"))?;
        if !matches!(status.as_deref(), Some("finished" | "failed" | "cancelled")) {
            return Ok(Pruned::default());
        }
        let rows: Vec<BatchRow> = sqlx::query_as(
            "SELECT first_seq, last_seq, body FROM heddle_events WHERE run_id = ? ORDER BY first_seq",
        )
        .bind(run)
        .fetch_all(&mut *tx)
        .await
        .map_err(error("cannot read the run's events"))?;
        let run_id = RunId::from(run);
        let net = match first_event(&run_id, &rows)? {
            // Read beside the transaction: the run ended, nothing of it
            // changes any more.
            Some(first) if rows.len() > 1 => net_changes(self, &run_id, &first).await?,
            _ => Default::default(),
        };
        let Some((batch, removed)) = outcome(&run_id, &rows, net)? else {
            return Ok(Pruned::default());
        };
        sqlx::query("DELETE FROM heddle_events WHERE run_id = ?")
            .bind(run)
            .execute(&mut *tx)
            .await
            .map_err(error("cannot compact the run's events"))?;
        sqlx::query(
            "INSERT INTO heddle_events (run_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)",
        )
        .bind(run)
        .bind(batch.first)
        .bind(batch.last)
        .bind(&batch.body)
        .execute(&mut *tx)
        .await
        .map_err(error("cannot compact the run's events"))?;
        tx.commit().await.map_err(error("cannot commit"))?;
        Ok(Pruned {
            what: run.to_owned(),
            runs: 1,
            events: removed,
            ..Pruned::default()
        })
    }
}
