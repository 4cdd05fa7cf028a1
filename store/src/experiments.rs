//! The `experiments` and `experiment_items` tables: a graph version run
//! over a dataset version, one item per example and repetition, each item
//! run at most once (its key, and a run id chosen before the run is
//! recorded), scored when its run ends.
//!
//! People reach experiments through an access decision ([`Allowed`]);
//! the server's driver, which makes the runs, reaches them by id
//! ([`Driving`]) and decides access for the experiment's maker itself
//! before each window of runs.

use heddle_engine::RunId;
use heddle_engine::scoring::{Scorer, ScorerSpec};
use serde_json::Value;

use crate::access::Allowed;
use crate::db::{Db, WritePool};
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::access::Role;
use heddle_wire::experiments::{
    Experiment, ExperimentItem, ExperimentItems, ExperimentStatus, ItemScore, ItemStatus,
    MAX_EXPERIMENT_RUNS, MAX_EXPERIMENTS_PER_GRAPH, MAX_NAME_CHARS, MAX_REPETITIONS,
    MAX_RUNNING_PER_ACCOUNT, MAX_SCORERS, NewExperiment, Progress, ReplyCounts,
};
use heddle_wire::graphs::GraphId;

pub mod gate;
mod ledger;
mod summary;

pub use ledger::{
    Driving, Item, Outcome, choose, claim, driving, keep_replies, record, replies_of, spent,
    started, unfinished,
};

/// How many experiments a listing shows, newest first.
pub const LIST_LIMIT: i64 = 50;
/// The most items one page of an experiment's items holds.
pub const MAX_ITEMS_PAGE: usize = 500;

#[derive(sqlx::FromRow)]
struct ExperimentRow {
    id: String,
    graph_id: String,
    graph_version: i64,
    dataset_id: String,
    dataset_name: Option<String>,
    dataset_version: i64,
    name: String,
    scorers: String,
    repetitions: i64,
    max_tokens: Option<i64>,
    max_cost_nanos: Option<i64>,
    status: String,
    stop_reason: Option<String>,
    maker: Option<String>,
    created_at: String,
    ended_at: Option<String>,
    record_replies: i64,
    replay_from: Option<String>,
    replayed: i64,
    live: i64,
}

macro_rules! select_experiments {
    ($rest:literal) => {
        concat!(
            "SELECT x.id, x.graph_id, x.graph_version, x.dataset_id, ",
            "(SELECT name FROM datasets d WHERE d.id = x.dataset_id) AS dataset_name, ",
            "x.dataset_version, x.name, x.scorers, x.repetitions, x.max_tokens, ",
            "x.max_cost_nanos, x.status, x.stop_reason, ",
            "(SELECT username FROM users u WHERE u.id = x.created_by) AS maker, ",
            "x.created_at, x.ended_at, x.record_replies, x.replay_from, ",
            "CAST(COALESCE((SELECT SUM(r.replayed) FROM experiment_replies r ",
            "WHERE r.experiment_id = x.id), 0) AS BIGINT) AS replayed, ",
            "CAST(COALESCE((SELECT SUM(r.live) FROM experiment_replies r ",
            "WHERE r.experiment_id = x.id), 0) AS BIGINT) AS live ",
            "FROM experiments x ",
            $rest
        )
    };
}

/// An experiment's scorers as stored: read back and checked again.
fn read_scorers(id: &str, stored: &str) -> Result<Vec<Value>, AppError> {
    serde_json::from_str(stored).map_err(|_| {
        tracing::error!(experiment = %id, "a stored experiment's scorers do not read back");
        AppError::Internal
    })
}

fn nanos(dollars: f64) -> i64 {
    (dollars * 1e9).round() as i64
}

fn dollars(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The scorers of a new experiment, checked: each one's problems named
/// at its place (`scorers[1].pattern: ...`), names unique.
pub fn check_scorers(scorers: &[Value]) -> Result<Vec<Scorer>, AppError> {
    if scorers.is_empty() || scorers.len() > MAX_SCORERS {
        return Err(AppError::InvalidInput(format!(
            "`scorers`: give 1 to {MAX_SCORERS} scorers"
        )));
    }
    let mut checked: Vec<Scorer> = Vec::with_capacity(scorers.len());
    for (index, value) in scorers.iter().enumerate() {
        let spec: ScorerSpec = serde_json::from_value(value.clone())
            .map_err(|error| AppError::InvalidInput(format!("`scorers[{index}]`: {error}")))?;
        let scorer = spec.compile().map_err(|problems| {
            AppError::InvalidInput(
                problems
                    .iter()
                    .map(|problem| match problem.path.is_empty() {
                        true => format!("`scorers[{index}]`: {}", problem.message),
                        false => {
                            format!("`scorers[{index}].{}`: {}", problem.path, problem.message)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
        if checked.iter().any(|other| other.name() == scorer.name()) {
            return Err(AppError::InvalidInput(format!(
                "`scorers[{index}]`: another scorer is named `{}`; give one a `name`",
                scorer.name()
            )));
        }
        checked.push(scorer);
    }
    Ok(checked)
}

fn check_name(name: Option<&str>) -> Result<Option<&str>, AppError> {
    let Some(name) = name.map(str::trim) else {
        return Ok(None);
    };
    if name.is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
    {
        return Err(AppError::InvalidInput(format!(
            "`name`: an experiment's name is 1 to {MAX_NAME_CHARS} characters, none of them \
             control characters"
        )));
    }
    Ok(Some(name))
}

/// The version of dataset `id` asked for (its latest when `asked` is
/// `None`), given what the graph has of it (`found`: its name and latest
/// version): refused when the graph has no such dataset, or no such
/// version with examples.
fn dataset_version(
    id: &str,
    found: Option<(String, i64)>,
    asked: Option<i64>,
) -> Result<(String, i64), AppError> {
    let Some((name, latest)) = found else {
        return Err(AppError::InvalidInput(format!(
            "`dataset_id`: this graph has no dataset `{id}`"
        )));
    };
    let version = asked.unwrap_or(latest);
    if !(1..=latest).contains(&version) {
        return Err(AppError::InvalidInput(match latest {
            0 => format!("`dataset_id`: dataset `{name}` has no examples yet"),
            _ => format!("`dataset_version`: dataset `{name}` has versions 1 to {latest}"),
        }));
    }
    Ok((name, version))
}

/// What a new experiment is, checked before anything is written.
struct Plan<'a> {
    name: Option<&'a str>,
    scorers: String,
    repetitions: i64,
    max_tokens: Option<i64>,
    max_cost_nanos: Option<i64>,
    /// Whether its replies are kept (a replay's are too).
    record_replies: bool,
}

fn plan<'a>(new: &'a NewExperiment, models: &[String]) -> Result<Plan<'a>, AppError> {
    let name = check_name(new.name.as_deref())?;
    let scorers = check_scorers(&new.scorers)?;
    // A judge that names a model the server does not have would score
    // every run 0: refused now, at its field.
    for (index, scorer) in scorers.iter().enumerate() {
        if let Some(Some(model)) = scorer.judge_model()
            && !models.iter().any(|known| known == model)
        {
            return Err(AppError::InvalidInput(format!(
                "`scorers[{index}].model`: no model `{model}` is configured on this server (known: {})",
                models.join(", ")
            )));
        }
    }
    let repetitions = new.repetitions.unwrap_or(1);
    if !(1..=MAX_REPETITIONS).contains(&repetitions) {
        return Err(AppError::InvalidInput(format!(
            "`repetitions`: 1 to {MAX_REPETITIONS}"
        )));
    }
    let max_tokens = match new.max_tokens {
        Some(0) => {
            return Err(AppError::InvalidInput(
                "`max_tokens`: at least 1 (leave it out for no ceiling)".into(),
            ));
        }
        Some(tokens) => Some(i64::try_from(tokens).unwrap_or(i64::MAX)),
        None => None,
    };
    let max_cost_nanos = match new.max_cost_usd {
        Some(cost) if !cost.is_finite() || cost <= 0.0 || cost > 1e6 => {
            return Err(AppError::InvalidInput(
                "`max_cost_usd`: more than 0 and at most 1,000,000 (leave it out for no ceiling)"
                    .into(),
            ));
        }
        Some(cost) => Some(nanos(cost)),
        None => None,
    };
    Ok(Plan {
        name,
        scorers: serde_json::to_string(&new.scorers).map_err(|_| AppError::Internal)?,
        repetitions: i64::from(repetitions),
        max_tokens,
        max_cost_nanos,
        record_replies: new.record_replies || new.replay_from.is_some(),
    })
}

/// Makes an experiment of the graph `allowed` names (editors, and keys
/// that may run it) over `graph_version` (checked by the caller: it exists
/// and compiles) and a version of one of the graph's datasets, with one
/// pending item per example and repetition. Refused when its maker
/// already has [`MAX_RUNNING_PER_ACCOUNT`] running, when the graph keeps
/// [`MAX_EXPERIMENTS_PER_GRAPH`], or when it would make more than
/// [`MAX_EXPERIMENT_RUNS`] runs.
pub async fn create(
    db: &Db,
    allowed: &Allowed,
    new: &NewExperiment,
    graph_version: i64,
    models: &[String],
) -> Result<Experiment, AppError> {
    allowed.at_least(Role::Editor)?;
    let plan = plan(new, models)?;
    let graph = allowed.graph().as_str();
    let maker = allowed.user().id.as_str();
    let key = allowed
        .trigger()
        .filter(|trigger| trigger.origin == heddle_wire::runs::RunOrigin::ApiKey)
        .map(|trigger| trigger.id.as_str());
    let id = format!("exp-{}", uuid::Uuid::new_v4());
    let now = crate::db::now();
    let made: Result<(), AppError> = on_db!(db, pool => {
        // The maker's lock: their count of running experiments cannot race.
        let mut tx = pool.begin_write(&format!("experiments of {maker}")).await?;
        let dataset: Option<(String, i64)> = sqlx::query_as(
            "SELECT name, version FROM datasets WHERE id = $1 AND graph_id = $2",
        )
        .bind(&new.dataset_id)
        .bind(graph)
        .fetch_optional(&mut *tx)
        .await?;
        let (dataset_name, version) = dataset_version(&new.dataset_id, dataset, new.dataset_version)?;
        let examples: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM dataset_examples WHERE dataset_id = $1 AND added_in <= $2
               AND (removed_in IS NULL OR removed_in > $2)",
        )
        .bind(&new.dataset_id)
        .bind(version)
        .fetch_one(&mut *tx)
        .await?;
        if examples == 0 {
            return Err(AppError::InvalidInput(format!(
                "`dataset_version`: version {version} of dataset `{dataset_name}` has no examples"
            )));
        }
        if examples.saturating_mul(plan.repetitions) > MAX_EXPERIMENT_RUNS as i64 {
            return Err(AppError::InvalidInput(format!(
                "`repetitions`: {examples} examples times {} repetitions is more than the \
                 {MAX_EXPERIMENT_RUNS} runs an experiment may make",
                plan.repetitions
            )));
        }
        let running: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM experiments WHERE created_by = $1 AND status = 'running'",
        )
        .bind(maker)
        .fetch_one(&mut *tx)
        .await?;
        if running >= MAX_RUNNING_PER_ACCOUNT as i64 {
            return Err(AppError::TooManyRuns {
                message: format!(
                    "{running} experiments of this account are running; the limit is \
                     {MAX_RUNNING_PER_ACCOUNT}. Wait for one to end, or cancel one"
                ),
                retry_after: 30,
            });
        }
        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM experiments WHERE graph_id = $1")
            .bind(graph)
            .fetch_one(&mut *tx)
            .await?;
        if kept >= MAX_EXPERIMENTS_PER_GRAPH as i64 {
            return Err(AppError::InvalidInput(format!(
                "this graph keeps {kept} experiments, the most it may; delete old ones first"
            )));
        }
        if let Some(source) = &new.replay_from {
            let recorded: Option<i64> = sqlx::query_scalar(
                "SELECT record_replies FROM experiments WHERE id = $1 AND graph_id = $2",
            )
            .bind(source)
            .bind(graph)
            .fetch_optional(&mut *tx)
            .await?;
            match recorded {
                None => {
                    return Err(AppError::InvalidInput(format!(
                        "`replay_from`: this graph has no experiment `{source}`"
                    )));
                }
                Some(0) => {
                    return Err(AppError::InvalidInput(format!(
                        "`replay_from`: experiment `{source}` did not record its replies \
                         (start it with `record_replies`)"
                    )));
                }
                Some(_) => {}
            }
        }
        let name = plan.name.map_or_else(
            || format!("Version {graph_version} on {dataset_name} v{version}"),
            str::to_owned,
        );
        sqlx::query(
            "INSERT INTO experiments (id, graph_id, graph_version, dataset_id, dataset_version,
                 name, scorers, repetitions, max_tokens, max_cost_nanos, status, created_by,
                 api_key_id, created_at, record_replies, replay_from)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'running', $11, $12, $13, $14, $15)",
        )
        .bind(&id)
        .bind(graph)
        .bind(graph_version)
        .bind(&new.dataset_id)
        .bind(version)
        .bind(&name)
        .bind(&plan.scorers)
        .bind(plan.repetitions)
        .bind(plan.max_tokens)
        .bind(plan.max_cost_nanos)
        .bind(maker)
        .bind(key)
        .bind(&now)
        .bind(i64::from(plan.record_replies))
        .bind(&new.replay_from)
        .execute(&mut *tx)
        .await?;
        for repetition in 1..=plan.repetitions {
            sqlx::query(
                "INSERT INTO experiment_items (experiment_id, example_id, repetition, position, status)
                 SELECT $1, id, $2, position, 'pending' FROM dataset_examples
                  WHERE dataset_id = $3 AND added_in <= $4 AND (removed_in IS NULL OR removed_in > $4)",
            )
            .bind(&id)
            .bind(repetition)
            .bind(&new.dataset_id)
            .bind(version)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    });
    made?;
    tracing::info!(experiment = %id, graph = %graph, "experiment started");
    get(db, allowed, &id).await
}

/// The graph's newest experiments (at most [`LIST_LIMIT`]), newest first,
/// each with its progress and scores.
pub async fn list(db: &Db, allowed: &Allowed) -> Result<Vec<Experiment>, AppError> {
    let rows: Vec<ExperimentRow> = on_db!(db, pool => sqlx::query_as(select_experiments!(
        "WHERE x.graph_id = $1 ORDER BY x.created_at DESC, x.id LIMIT $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(LIST_LIMIT)
    .fetch_all(pool)
    .await)?;
    let mut experiments = Vec::with_capacity(rows.len());
    for row in rows {
        experiments.push(complete(db, row).await?);
    }
    Ok(experiments)
}

/// One of the graph's experiments, with its progress and scores.
pub async fn get(db: &Db, allowed: &Allowed, id: &str) -> Result<Experiment, AppError> {
    let row: Option<ExperimentRow> = on_db!(db, pool => sqlx::query_as(select_experiments!(
        "WHERE x.graph_id = $1 AND x.id = $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(id)
    .fetch_optional(pool)
    .await)?;
    let row = row.ok_or_else(|| AppError::not_found(format!("experiment {id}")))?;
    complete(db, row).await
}

/// What an ended item adds to its experiment's figures.
#[derive(sqlx::FromRow)]
struct EndedRow {
    scores: Option<String>,
    tokens: Option<i64>,
    cost_nanos: Option<i64>,
    latency_ms: Option<i64>,
}

/// An experiment's row, with its progress, usage and scores added.
async fn complete(db: &Db, row: ExperimentRow) -> Result<Experiment, AppError> {
    let scorers = read_scorers(&row.id, &row.scorers)?;
    // Their names as a checked scorer has them (the given one, else the
    // kind's), read without compiling them: stored scorers were checked
    // when the experiment was made.
    let names: Vec<String> = scorers
        .iter()
        .filter_map(|value| serde_json::from_value::<ScorerSpec>(value.clone()).ok())
        .map(|spec| spec.given_name().unwrap_or(spec.kind_name()).to_owned())
        .collect();
    let counts: Vec<(String, i64)> = on_db!(db, pool => sqlx::query_as(
        "SELECT status, COUNT(*) FROM experiment_items WHERE experiment_id = $1 GROUP BY status",
    )
    .bind(&row.id)
    .fetch_all(pool)
    .await)?;
    let mut progress = Progress::default();
    for (status, n) in counts {
        let n = count(n);
        progress.total += n;
        match ItemStatus::parse(&status) {
            Some(ItemStatus::Pending) => progress.pending += n,
            Some(ItemStatus::Started) => progress.started += n,
            Some(ItemStatus::Scored) => progress.scored += n,
            Some(ItemStatus::Failed) => progress.failed += n,
            Some(ItemStatus::Skipped) => progress.skipped += n,
            None => {}
        }
    }
    let ended: Vec<EndedRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT scores, tokens, cost_nanos, latency_ms FROM experiment_items
          WHERE experiment_id = $1 AND status IN ('scored', 'failed')",
    )
    .bind(&row.id)
    .fetch_all(pool)
    .await)?;
    let mut tokens = 0u64;
    let mut cost = 0i64;
    let mut latencies = Vec::with_capacity(ended.len());
    let mut per_item = Vec::with_capacity(ended.len());
    for row in ended {
        tokens += row.tokens.map_or(0, count);
        cost += row.cost_nanos.unwrap_or(0);
        if let Some(latency) = row.latency_ms {
            latencies.push(count(latency));
        }
        per_item.push(read_item_scores(row.scores.as_deref()));
    }
    let (latency_p50_ms, latency_p95_ms) = summary::percentiles(&mut latencies);
    Ok(Experiment {
        scores: summary::per_scorer(&names, &per_item),
        id: row.id,
        graph_id: GraphId::from_stored(row.graph_id),
        graph_version: row.graph_version,
        dataset_id: row.dataset_id,
        dataset_name: row.dataset_name,
        dataset_version: row.dataset_version,
        name: row.name,
        scorers,
        repetitions: u32::try_from(row.repetitions).unwrap_or(1),
        max_tokens: row.max_tokens.map(count),
        max_cost_usd: row.max_cost_nanos.map(dollars),
        status: ExperimentStatus::parse(&row.status).unwrap_or(ExperimentStatus::Stopped),
        stop_reason: row.stop_reason,
        created_by: row.maker,
        created_at: row.created_at,
        ended_at: row.ended_at,
        progress,
        tokens,
        cost_usd: dollars(cost),
        latency_p50_ms,
        latency_p95_ms,
        record_replies: row.record_replies != 0,
        replay_from: row.replay_from,
        replies: ReplyCounts {
            replayed: count(row.replayed),
            live: count(row.live),
        },
    })
}

/// An item's scores as stored (none when not scored yet).
fn read_item_scores(stored: Option<&str>) -> Vec<ItemScore> {
    stored
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

#[derive(sqlx::FromRow)]
struct ItemRow {
    example_id: String,
    label: Option<String>,
    repetition: i64,
    status: String,
    run_id: Option<String>,
    output: Option<String>,
    scores: Option<String>,
    tokens: Option<i64>,
    cost_nanos: Option<i64>,
    latency_ms: Option<i64>,
    error: Option<String>,
}

/// A page of an experiment's items, in the dataset's order.
pub async fn items(
    db: &Db,
    allowed: &Allowed,
    id: &str,
    offset: usize,
    limit: usize,
) -> Result<ExperimentItems, AppError> {
    get(db, allowed, id).await?;
    let limit = limit.clamp(1, MAX_ITEMS_PAGE) as i64;
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let (total, rows): (i64, Vec<ItemRow>) = on_db!(db, pool => {
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM experiment_items WHERE experiment_id = $1",
        )
        .bind(id)
        .fetch_one(pool)
        .await?;
        let rows = sqlx::query_as(
            "SELECT i.example_id, e.label, i.repetition, i.status, i.run_id, i.output, i.scores,
                    i.tokens, i.cost_nanos, i.latency_ms, i.error
               FROM experiment_items i LEFT JOIN dataset_examples e ON e.id = i.example_id
              WHERE i.experiment_id = $1
              ORDER BY i.position, i.example_id, i.repetition LIMIT $2 OFFSET $3",
        )
        .bind(id)
        .bind(limit)
        .bind(offset)
        .fetch_all(pool)
        .await?;
        (total, rows)
    });
    Ok(ExperimentItems {
        total: count(total),
        items: rows
            .into_iter()
            .map(|row| ExperimentItem {
                example_id: row.example_id,
                label: row.label,
                repetition: u32::try_from(row.repetition).unwrap_or(1),
                status: ItemStatus::parse(&row.status).unwrap_or(ItemStatus::Pending),
                run_id: row.run_id.map(RunId::from),
                output: row
                    .output
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text).ok()),
                scores: read_item_scores(row.scores.as_deref()),
                tokens: row.tokens.map(count),
                cost_usd: row.cost_nanos.map(dollars),
                latency_ms: row.latency_ms.map(count),
                error: row.error,
            })
            .collect(),
    })
}

/// Cancels a running experiment (editors; an API key only one it
/// started): no more of its examples start, those pending are skipped.
/// Returns the runs still going, for the caller to cancel.
pub async fn cancel(db: &Db, allowed: &Allowed, id: &str) -> Result<Vec<RunId>, AppError> {
    allowed.at_least(Role::Editor)?;
    let experiment = get(db, allowed, id).await?;
    if let Some(trigger) = allowed.trigger() {
        let started_by: Option<String> = on_db!(db, pool => sqlx::query_scalar(
            "SELECT api_key_id FROM experiments WHERE id = $1",
        )
        .bind(id)
        .fetch_one(pool)
        .await)?;
        if started_by.as_deref() != Some(trigger.id.as_str()) {
            return Err(AppError::Forbidden(format!(
                "{} may cancel only the experiments it started",
                trigger.describe()
            )));
        }
    }
    if experiment.status != ExperimentStatus::Running {
        return Err(AppError::InvalidInput(format!(
            "experiment `{}` is {} already",
            experiment.name, experiment.status
        )));
    }
    end(db, id, ExperimentStatus::Cancelled, None)
        .await?
        .ok_or_else(|| {
            AppError::InvalidInput(format!("experiment `{}` ended already", experiment.name))
        })
}

/// Deletes an experiment that is not running (editors); its runs stay.
pub async fn delete(db: &Db, allowed: &Allowed, id: &str) -> Result<(), AppError> {
    allowed.at_least(Role::Editor)?;
    let experiment = get(db, allowed, id).await?;
    if experiment.status == ExperimentStatus::Running {
        return Err(AppError::InvalidInput(format!(
            "experiment `{}` is running; cancel it first",
            experiment.name
        )));
    }
    on_db!(db, pool => sqlx::query("DELETE FROM experiments WHERE id = $1 AND graph_id = $2")
        .bind(id)
        .bind(allowed.graph().as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    tracing::info!(experiment = %id, graph = %allowed.graph(), "experiment deleted");
    Ok(())
}

/// Ends a running experiment as `status`: its items not ended are skipped.
/// The runs of the items that had started, to be cancelled; `None` when it
/// was not running (it ended already).
///
/// Those runs are read in the same statement that skips their items, so a
/// driver choosing an item meanwhile either chose it first (its run is in
/// the list) or finds it skipped and starts nothing; a run the driver
/// starts of an item it chose before is cancelled by its own check that
/// the experiment still runs. (Read before the end, a run chosen in
/// between went on to its end: a cancelled experiment with a finished run.)
pub async fn end(
    db: &Db,
    id: &str,
    status: ExperimentStatus,
    reason: Option<&str>,
) -> Result<Option<Vec<RunId>>, AppError> {
    let why = format!("the experiment was {status} first");
    let (ended, started) = on_db!(db, pool => {
        let mut tx = pool.begin_write(&format!("experiment {id}")).await?;
        let changed = sqlx::query(
            "UPDATE experiments SET status = $1, stop_reason = $2, ended_at = $3, driver = NULL,
                    driver_until = NULL
              WHERE id = $4 AND status = 'running'",
        )
        .bind(status.as_str())
        .bind(reason)
        .bind(crate::db::now())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // Those not started never will be; those started are not waited
        // for (their runs are being cancelled) and count in no score.
        let started: Vec<Option<String>> = sqlx::query_scalar(
            "UPDATE experiment_items SET status = 'skipped', error = $2
              WHERE experiment_id = $1 AND status = 'started' RETURNING run_id",
        )
        .bind(id)
        .bind(&why)
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE experiment_items SET status = 'skipped', error = $2
              WHERE experiment_id = $1 AND status = 'pending'",
        )
        .bind(id)
        .bind(&why)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        (changed, started)
    });
    if ended == 0 {
        return Ok(None);
    }
    tracing::info!(experiment = %id, %status, reason = reason.unwrap_or(""), "experiment ended");
    Ok(Some(
        started.into_iter().flatten().map(RunId::from).collect(),
    ))
}
