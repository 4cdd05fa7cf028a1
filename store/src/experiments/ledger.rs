//! The driver's side of experiments: which server drives each one (a
//! lease, like a run's), the items it starts (each run id chosen and
//! stored before the run is recorded with it), and what their runs came
//! to. Reached by id: the server's driver decides its maker's access
//! itself before each window of runs.

use heddle_engine::RunId;
use heddle_engine::usage::UsageTotals;
use serde_json::Value;

use super::{count, dollars, nanos, read_scorers};
use crate::db::{Db, WritePool};
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::experiments::{ExperimentStatus, ItemScore, ItemStatus};
use heddle_wire::graphs::GraphId;

/// What the server's driver needs of a running experiment.
#[derive(Debug, Clone)]
pub struct Driving {
    pub id: String,
    pub name: String,
    pub graph_id: GraphId,
    pub graph_version: i64,
    /// Its maker's id (`None` once their account is gone: it stops).
    pub maker: Option<String>,
    pub scorers: Vec<Value>,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub status: ExperimentStatus,
    /// Whether its runs' replies are kept.
    pub record_replies: bool,
    /// The experiment whose replies its runs are given back.
    pub replay_from: Option<String>,
}

/// A running experiment, by id, for its driver.
pub async fn driving(db: &Db, id: &str) -> Result<Option<Driving>, AppError> {
    let row: Option<DrivingRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT name, graph_id, graph_version, created_by, scorers, max_tokens,
                max_cost_nanos, status, record_replies, replay_from
           FROM experiments WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Driving {
        scorers: read_scorers(id, &row.scorers)?,
        id: id.to_owned(),
        name: row.name,
        graph_id: GraphId::from_stored(row.graph_id),
        graph_version: row.graph_version,
        maker: row.created_by,
        max_tokens: row.max_tokens.map(count),
        max_cost_usd: row.max_cost_nanos.map(dollars),
        status: ExperimentStatus::parse(&row.status).unwrap_or(ExperimentStatus::Stopped),
        record_replies: row.record_replies != 0,
        replay_from: row.replay_from,
    }))
}

#[derive(sqlx::FromRow)]
struct DrivingRow {
    name: String,
    graph_id: String,
    graph_version: i64,
    created_by: Option<String>,
    scorers: String,
    max_tokens: Option<i64>,
    max_cost_nanos: Option<i64>,
    status: String,
    record_replies: i64,
    replay_from: Option<String>,
}

/// The replies recorded by `experiment`'s run of `example_id`'s
/// `repetition` (JSON lines), if it kept them.
pub async fn replies_of(
    db: &Db,
    experiment: &str,
    example_id: &str,
    repetition: i64,
) -> Result<Option<String>, AppError> {
    Ok(on_db!(db, pool => sqlx::query_scalar(
        "SELECT lines FROM experiment_replies
          WHERE experiment_id = $1 AND example_id = $2 AND repetition = $3",
    )
    .bind(experiment)
    .bind(example_id)
    .bind(repetition)
    .fetch_optional(pool)
    .await)?)
}

/// Keeps the replies (JSON lines) of `experiment`'s run of `item`, with
/// how many calls were replayed and how many went live; a second keep of
/// the same item replaces the first.
pub async fn keep_replies(
    db: &Db,
    experiment: &str,
    item: &Item,
    lines: &str,
    replayed: u64,
    live: u64,
) -> Result<(), AppError> {
    let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    on_db!(db, pool => sqlx::query(
        "INSERT INTO experiment_replies (experiment_id, example_id, repetition, lines, replayed, live)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (experiment_id, example_id, repetition)
         DO UPDATE SET lines = excluded.lines, replayed = excluded.replayed, live = excluded.live",
    )
    .bind(experiment)
    .bind(&item.example_id)
    .bind(item.repetition)
    .bind(lines)
    .bind(as_i64(replayed))
    .bind(as_i64(live))
    .execute(pool)
    .await
    .map(|_| ()))?;
    Ok(())
}

/// Takes (or renews) the drive of running experiments for `owner` until
/// `until`: those with no driver, or whose driver's lease lapsed (with
/// `all`, every running one: a SQLite file's only server, at start), and
/// those it drives already. Returns their ids.
pub async fn claim(db: &Db, owner: &str, until: &str, all: bool) -> Result<Vec<String>, AppError> {
    let now = if all {
        "9999".to_string()
    } else {
        crate::db::now()
    };
    let ids: Vec<String> = on_db!(db, pool => {
        let mut tx = pool.begin_write("experiment drivers").await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM experiments WHERE status = 'running'
                AND (driver IS NULL OR driver = $1 OR driver_until < $2)",
        )
        .bind(owner)
        .bind(&now)
        .fetch_all(&mut *tx)
        .await?;
        for id in &ids {
            sqlx::query("UPDATE experiments SET driver = $1, driver_until = $2 WHERE id = $3")
                .bind(owner)
                .bind(until)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        ids
    });
    Ok(ids)
}

/// An item whose run was chosen: what its run is asked and what it
/// should answer.
#[derive(Debug, Clone)]
pub struct Item {
    pub example_id: String,
    pub repetition: i64,
    pub run_id: RunId,
    pub input: Value,
    pub reference: Option<Value>,
}

#[derive(sqlx::FromRow)]
struct StartedRow {
    example_id: String,
    repetition: i64,
    run_id: String,
    input: String,
    reference: Option<String>,
}

impl StartedRow {
    fn into_item(self) -> Item {
        Item {
            input: serde_json::from_str(&self.input).unwrap_or(Value::Null),
            reference: self
                .reference
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            example_id: self.example_id,
            repetition: self.repetition,
            run_id: RunId::from(self.run_id),
        }
    }
}

/// The experiment's started items (their runs recorded, or chosen and
/// maybe not recorded yet: a crash came between).
pub async fn started(db: &Db, id: &str) -> Result<Vec<Item>, AppError> {
    let rows: Vec<StartedRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT i.example_id, i.repetition, i.run_id, e.input, e.reference
           FROM experiment_items i JOIN dataset_examples e ON e.id = i.example_id
          WHERE i.experiment_id = $1 AND i.status = 'started' AND i.run_id IS NOT NULL
          ORDER BY i.position, i.example_id, i.repetition",
    )
    .bind(id)
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(StartedRow::into_item).collect())
}

/// Chooses runs for up to `limit` pending items, in the dataset's order:
/// each gets a new run id, once (a compare-and-set on its status), and
/// is started. The caller records each run with its id.
pub async fn choose(db: &Db, id: &str, limit: usize) -> Result<Vec<Item>, AppError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows: Vec<(String, i64)> = on_db!(db, pool => sqlx::query_as(
        "SELECT example_id, repetition FROM experiment_items
          WHERE experiment_id = $1 AND status = 'pending'
          ORDER BY position, example_id, repetition LIMIT $2",
    )
    .bind(id)
    .bind(limit)
    .fetch_all(pool)
    .await)?;
    let mut chosen = std::collections::HashSet::new();
    for (example, repetition) in rows {
        let run_id = format!("run-{}", uuid::Uuid::new_v4());
        let changed = on_db!(db, pool => sqlx::query(
            "UPDATE experiment_items SET status = 'started', run_id = $1
              WHERE experiment_id = $2 AND example_id = $3 AND repetition = $4
                AND status = 'pending'",
        )
        .bind(&run_id)
        .bind(id)
        .bind(&example)
        .bind(repetition)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        if changed > 0 {
            chosen.insert(run_id);
        }
    }
    Ok(started(db, id)
        .await?
        .into_iter()
        .filter(|item| chosen.contains(item.run_id.as_str()))
        .collect())
}

/// What one item's run came to.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: ItemStatus,
    pub output: Option<Value>,
    pub scores: Vec<ItemScore>,
    pub usage: UsageTotals,
    pub latency_ms: Option<u64>,
    pub error: Option<String>,
}

/// Records what a started item's run came to; `false` when it was not
/// started (recorded already, or the experiment ended and skipped it).
pub async fn record(db: &Db, id: &str, item: &Item, outcome: &Outcome) -> Result<bool, AppError> {
    let output = outcome.output.as_ref().map(kept_output);
    let scores = serde_json::to_string(&outcome.scores).map_err(|_| AppError::Internal)?;
    let tokens = i64::try_from(outcome.usage.tokens()).unwrap_or(i64::MAX);
    let changed = on_db!(db, pool => sqlx::query(
        "UPDATE experiment_items SET status = $1, output = $2, scores = $3, tokens = $4,
                cost_nanos = $5, latency_ms = $6, error = $7
          WHERE experiment_id = $8 AND example_id = $9 AND repetition = $10
            AND status = 'started'",
    )
    .bind(outcome.status.as_str())
    .bind(output)
    .bind(scores)
    .bind(tokens)
    .bind(nanos(outcome.usage.cost_usd))
    .bind(outcome.latency_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)))
    .bind(outcome.error.as_deref())
    .bind(id)
    .bind(&item.example_id)
    .bind(item.repetition)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(changed > 0)
}

/// The most bytes of JSON of a run's output its item keeps; a larger one
/// is kept as its size (the run itself keeps it all, and it was scored
/// whole), so a page of items stays small whatever the graph makes.
pub const MAX_KEPT_OUTPUT_BYTES: usize = 64 * 1024;

/// A run's output as its item keeps it.
fn kept_output(output: &Value) -> String {
    let text = output.to_string();
    if text.len() <= MAX_KEPT_OUTPUT_BYTES {
        text
    } else {
        serde_json::json!({"truncated": true, "bytes": text.len()}).to_string()
    }
}

/// What the experiment's ended runs used: tokens and cost in dollars.
pub async fn spent(db: &Db, id: &str) -> Result<(u64, f64), AppError> {
    let (tokens, cost): (i64, i64) = on_db!(db, pool => sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(tokens), 0) AS BIGINT), CAST(COALESCE(SUM(cost_nanos), 0) AS BIGINT)
           FROM experiment_items WHERE experiment_id = $1",
    )
    .bind(id)
    .fetch_one(pool)
    .await)?;
    Ok((count(tokens), dollars(cost)))
}

/// Whether the experiment has items still pending or started.
pub async fn unfinished(db: &Db, id: &str) -> Result<bool, AppError> {
    let n: i64 = on_db!(db, pool => sqlx::query_scalar(
        "SELECT COUNT(*) FROM experiment_items
          WHERE experiment_id = $1 AND status IN ('pending', 'started')",
    )
    .bind(id)
    .fetch_one(pool)
    .await)?;
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_past_its_bound_is_kept_as_its_size() {
        assert_eq!(kept_output(&serde_json::json!({"a": 1})), "{\"a\":1}");
        let big = serde_json::json!({"text": "x".repeat(MAX_KEPT_OUTPUT_BYTES)});
        let kept: Value = serde_json::from_str(&kept_output(&big)).expect("JSON");
        assert_eq!(kept["truncated"], true);
        assert_eq!(kept["bytes"], MAX_KEPT_OUTPUT_BYTES + 11);
    }
}
