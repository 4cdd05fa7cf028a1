//! The database side of runs and threads: the only place the `runs` and
//! `threads` tables are touched (the engine keeps checkpoints and events in
//! its own tables, through its checkpoint store). Used by the run list
//! server function, the JSON API and the server's run manager alike.
//!
//! Functions here take ids, not an access decision: callers find a run's
//! or thread's graph ([`graph_of_run`], [`graph_of_thread`]) and decide
//! access on it before they read anything else.

use heddle_engine::state::from_stored_json;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use heddle_engine::ids::{RunId, ThreadId};
use heddle_engine::run::{Event, RunStatus};
use heddle_engine::usage::UsageTotals;
use serde_json::Value;

use crate::access::{Allowed, OnRun, OnThread, Trigger};
use crate::db::{Db, WritePool};
use crate::on_db;
use heddle_wire::AppError;
use heddle_wire::accounts::User;
use heddle_wire::graphs::GraphId;
use heddle_wire::runs::{
    DayUsage, ForkOrigin, ForkRequest, GraphUsage, RunInfo, RunOrigin, StartRequest, ThreadInfo,
    ThreadView, input_summary,
};

/// What a run manager call returns.
pub type RunFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AppError>> + Send + 'a>>;

/// The server's run manager, as the app's server functions reach it (it
/// lives in the server crate; the server puts an `Arc<dyn RunControl>` in
/// every request's context). Each call takes the access decision that
/// allows it.
pub trait RunControl: Send + Sync + 'static {
    /// Starts a run of the graph `allowed` names (an editor's).
    fn start<'a>(&'a self, allowed: &'a Allowed, request: StartRequest) -> RunFuture<'a, RunInfo>;
    /// One run.
    fn get<'a>(&'a self, run: &'a OnRun) -> RunFuture<'a, RunInfo>;
    /// Stops a run.
    fn cancel<'a>(&'a self, run: &'a OnRun) -> RunFuture<'a, RunInfo>;
    /// Forks a run.
    fn fork<'a>(&'a self, run: &'a OnRun, request: ForkRequest) -> RunFuture<'a, RunInfo>;
    /// A run's events from `from_seq` on.
    fn events<'a>(&'a self, run: &'a OnRun, from_seq: u64) -> RunFuture<'a, Vec<Arc<Event>>>;
    /// The state of checkpoint `checkpoint` of the run's thread, which the
    /// run's first event names as its base (`None` when not stored).
    fn base_state<'a>(
        &'a self,
        run: &'a OnRun,
        checkpoint: &'a str,
    ) -> RunFuture<'a, Option<serde_json::Map<String, Value>>>;
    /// A thread with its newest state and messages.
    fn thread<'a>(&'a self, thread: &'a OnThread) -> RunFuture<'a, ThreadView>;
    /// Resumes a thread's paused run.
    fn resume<'a>(&'a self, thread: &'a OnThread, value: Value) -> RunFuture<'a, RunInfo>;
    /// Stops every queued or running run of the graph (its owner is
    /// deleting it).
    fn stop_all<'a>(&'a self, allowed: &'a Allowed) -> RunFuture<'a, ()>;
    /// The version an experiment would run (`version`, or the newest),
    /// checked to exist and compile for the caller.
    fn version_to_run<'a>(
        &'a self,
        allowed: &'a Allowed,
        version: Option<i64>,
    ) -> RunFuture<'a, i64>;
    /// The models the server's runs (and judges) may name.
    fn model_names(&self) -> Vec<String>;
}

/// A run status as this module's SQL spells it: the quoted
/// `RunStatus::as_str()` (a test checks each), so no query names a status
/// the enum does not have; `active` is `RunStatus::is_active`'s pair.
macro_rules! status {
    (queued) => {
        "'queued'"
    };
    (running) => {
        "'running'"
    };
    (interrupted) => {
        "'interrupted'"
    };
    (active) => {
        "('queued', 'running')"
    };
}

/// A run origin as this module's SQL spells it: the quoted
/// `RunOrigin::as_str()` (checked by the same test).
macro_rules! origin {
    (app) => {
        "'app'"
    };
    (experiment) => {
        "'experiment'"
    };
}

/// `SELECT <the run columns> FROM runs <rest>`, as one literal.
macro_rules! select_runs {
    ($rest:expr) => {
        concat!(
            "SELECT id, graph_id, graph_version, thread_id, status, input, output, error, ",
            "created_at, started_at, finished_at, ",
            "(SELECT username FROM users WHERE users.id = runs.user_id) AS started_by, ",
            "origin, origin_label, forked_from, forked_at_step, ",
            "model_calls, prompt_tokens, completion_tokens, cached_tokens, cost_nanos, ",
            "unpriced_calls FROM runs ",
            $rest
        )
    };
}

/// `SELECT <the thread columns> FROM threads t <rest>`, as one literal.
macro_rules! select_threads {
    ($rest:literal) => {
        concat!(
            "SELECT t.id, t.graph_id, t.created_at, t.updated_at,
                    (SELECT COUNT(*) FROM runs r WHERE r.thread_id = t.id) AS runs,
                    (SELECT status FROM runs r WHERE r.thread_id = t.id
                     ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1) AS last_status,
                    (SELECT input FROM runs r WHERE r.thread_id = t.id
                     ORDER BY r.created_at, r.rowid LIMIT 1) AS first_input,
                    (SELECT CAST(COALESCE(SUM(r.prompt_tokens + r.completion_tokens), 0) AS BIGINT)
                     FROM runs r WHERE r.thread_id = t.id) AS tokens,
                    (SELECT CAST(COALESCE(SUM(r.cost_nanos), 0) AS BIGINT)
                     FROM runs r WHERE r.thread_id = t.id) AS cost_nanos
             FROM threads t ",
            $rest
        )
    };
}

/// A `runs` row as stored: JSON and statuses as text.
#[derive(sqlx::FromRow)]
struct RunRow {
    id: String,
    graph_id: String,
    graph_version: i64,
    thread_id: String,
    status: String,
    input: String,
    output: Option<String>,
    error: Option<String>,
    created_at: String,
    started_at: Option<String>,
    finished_at: Option<String>,
    started_by: Option<String>,
    origin: String,
    origin_label: Option<String>,
    forked_from: Option<String>,
    forked_at_step: Option<i64>,
    model_calls: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
    cached_tokens: i64,
    cost_nanos: i64,
    unpriced_calls: i64,
}

/// Dollars as stored: whole billionths.
fn nanos(dollars: f64) -> i64 {
    (dollars * 1e9).round() as i64
}

fn dollars(nanos: i64) -> f64 {
    nanos as f64 / 1e9
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl TryFrom<RunRow> for RunInfo {
    type Error = AppError;

    fn try_from(row: RunRow) -> Result<Self, AppError> {
        let broken = |what: &str| {
            tracing::error!(run = %row.id, "a stored run's {what} does not read back");
            AppError::Internal
        };
        let origin = RunOrigin::parse(&row.origin).ok_or_else(|| broken("origin"))?;
        Ok(RunInfo {
            status: status(&row.status).ok_or_else(|| broken("status"))?,
            // Rows stored before values were bounded read back cut.
            input: from_stored_json(&row.input).map_err(|_| broken("input"))?,
            output: row
                .output
                .as_deref()
                .map(from_stored_json)
                .transpose()
                .map_err(|_| broken("output"))?,
            id: RunId::from(row.id),
            graph_id: GraphId::from_stored(row.graph_id),
            graph_version: row.graph_version,
            thread_id: ThreadId::from(row.thread_id),
            error: row.error,
            created_at: row.created_at,
            started_at: row.started_at,
            finished_at: row.finished_at,
            started_by: row.started_by,
            origin,
            origin_label: row.origin_label,
            usage: UsageTotals {
                calls: count(row.model_calls),
                prompt_tokens: count(row.prompt_tokens),
                completion_tokens: count(row.completion_tokens),
                cached_tokens: count(row.cached_tokens),
                cost_usd: dollars(row.cost_nanos),
                unpriced_calls: count(row.unpriced_calls),
            },
            forked_from: row
                .forked_from
                .zip(row.forked_at_step)
                .and_then(|(run_id, step)| {
                    Some(ForkOrigin {
                        run_id: RunId::from(run_id),
                        step: u32::try_from(step).ok()?,
                    })
                }),
        })
    }
}

#[derive(sqlx::FromRow)]
struct ThreadRow {
    id: String,
    graph_id: String,
    created_at: String,
    updated_at: String,
    runs: i64,
    last_status: Option<String>,
    first_input: Option<String>,
    tokens: i64,
    cost_nanos: i64,
}

impl From<ThreadRow> for ThreadInfo {
    fn from(row: ThreadRow) -> Self {
        ThreadInfo {
            id: ThreadId::from(row.id),
            graph_id: GraphId::from_stored(row.graph_id),
            created_at: row.created_at,
            updated_at: row.updated_at,
            runs: row.runs,
            last_status: row.last_status.as_deref().and_then(status),
            title: row
                .first_input
                .and_then(|input| from_stored_json(&input).ok())
                .and_then(|input| input_summary(&input)),
            tokens: count(row.tokens),
            cost_usd: dollars(row.cost_nanos),
        }
    }
}

fn status(text: &str) -> Option<RunStatus> {
    RunStatus::parse(text)
}

fn runs(rows: Vec<RunRow>) -> Result<Vec<RunInfo>, AppError> {
    rows.into_iter().map(RunInfo::try_from).collect()
}

/// One run (`None` when there is no such run).
pub async fn get(db: &Db, run_id: &RunId) -> Result<Option<RunInfo>, AppError> {
    let row: Option<RunRow> = on_db!(db, pool => sqlx::query_as(select_runs!("WHERE id = $1"))
        .bind(run_id.as_str())
        .fetch_optional(pool)
        .await)?;
    row.map(RunInfo::try_from).transpose()
}

/// How many runs wait for a slot on any server.
pub async fn count_queued(db: &Db) -> Result<i64, AppError> {
    Ok(on_db!(db, pool => sqlx::query_scalar(
        concat!("SELECT COUNT(*) FROM runs WHERE status = ", status!(queued))
    )
    .fetch_one(pool)
    .await)?)
}

/// A graph's runs, newest first (at most `limit`, 1 to 1,000).
pub async fn list(db: &Db, allowed: &Allowed, limit: i64) -> Result<Vec<RunInfo>, AppError> {
    let rows: Vec<RunRow> = on_db!(db, pool => sqlx::query_as(select_runs!(
        "WHERE graph_id = $1 ORDER BY created_at DESC, rowid DESC LIMIT $2"
    ))
    .bind(allowed.graph().as_str())
    .bind(limit.clamp(1, 1000))
    .fetch_all(pool)
    .await)?;
    runs(rows)
}

/// Runs recorded as queued, oldest first: after a restart, the ones to
/// queue again.
pub async fn queued(db: &Db) -> Result<Vec<RunInfo>, AppError> {
    let rows: Vec<RunRow> = on_db!(db, pool => sqlx::query_as(select_runs!(
        concat!("WHERE status = ", status!(queued), " ORDER BY created_at, rowid")
    ))
    .fetch_all(pool)
    .await)?;
    runs(rows)
}

/// The run a page opening on the graph shows: the newest that is queued
/// or running (it joins it live), else the newest started from the editor
/// that is waiting for a person or ran the graph's current version (where
/// the person left off: its trace, state and events are there on a reload
/// as they were before it). A finished run of an older version is not
/// drawn over the graph as it is now: it is in the run history, opened
/// from there on the version it ran. An experiment's runs are not among
/// them, nor finished runs started by others' callers (the API, a
/// webhook, a schedule).
pub async fn run_to_show(db: &Db, graph: &GraphId) -> Result<Option<String>, AppError> {
    if let Some(active) = active_notice(db, graph).await? {
        return Ok(Some(active.run_id.to_string()));
    }
    // Newest first along the graph's runs index: it stops at the first
    // that fits, however many runs the graph has had.
    Ok(on_db!(db, pool => sqlx::query_scalar(
        concat!("SELECT id FROM runs WHERE graph_id = $1 AND origin = ", origin!(app),
            " AND (status = ", status!(interrupted),
            " OR graph_version = (SELECT version FROM graphs WHERE id = $1))
         ORDER BY created_at DESC, rowid DESC LIMIT 1"),
    )
    .bind(graph.as_str())
    .fetch_optional(pool)
    .await)?)
}

/// The newest run of a graph that is queued or running, as the notice its
/// start sent: what a page that begins to watch the graph may have missed.
/// An experiment's runs are not among them (pages do not follow those).
pub async fn active_notice(
    db: &Db,
    graph: &GraphId,
) -> Result<Option<heddle_wire::protocol::RunNotice>, AppError> {
    let row: Option<(String, String, String, String)> = on_db!(db, pool => sqlx::query_as(
        concat!("SELECT id, thread_id, status, origin FROM runs WHERE graph_id = $1 AND status IN ",
            status!(active), " AND origin <> ", origin!(experiment),
            " ORDER BY created_at DESC, rowid DESC LIMIT 1"),
    )
    .bind(graph.as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(row.and_then(|(run, thread, text, origin)| {
        Some(heddle_wire::protocol::RunNotice {
            graph_id: graph.clone(),
            run_id: RunId::from(run),
            thread_id: ThreadId::from(thread),
            status: status(&text)?,
            origin: RunOrigin::parse(&origin)?,
        })
    }))
}

/// Records a thread of a graph (nothing if it exists).
pub async fn create_thread(
    db: &Db,
    thread_id: &ThreadId,
    graph_id: &GraphId,
) -> Result<(), AppError> {
    on_db!(db, pool => sqlx::query(
        "INSERT INTO threads (id, graph_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
    )
    .bind(thread_id.as_str())
    .bind(graph_id.as_str())
    .execute(pool)
    .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// One day of a graph's runs, added up.
#[derive(sqlx::FromRow)]
struct DayRow {
    day: String,
    runs: i64,
    calls: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
    cached_tokens: i64,
    cost_nanos: i64,
    unpriced_calls: i64,
}

/// What a graph's runs used, in all and per day (the last `days` days
/// with runs, oldest first).
pub async fn usage(db: &Db, allowed: &Allowed, days: i64) -> Result<GraphUsage, AppError> {
    let rows: Vec<DayRow> = on_db!(db, pool => sqlx::query_as(
        "SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS runs,
                CAST(COALESCE(SUM(model_calls), 0) AS BIGINT) AS calls,
                CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT) AS prompt_tokens,
                CAST(COALESCE(SUM(completion_tokens), 0) AS BIGINT) AS completion_tokens,
                CAST(COALESCE(SUM(cached_tokens), 0) AS BIGINT) AS cached_tokens,
                CAST(COALESCE(SUM(cost_nanos), 0) AS BIGINT) AS cost_nanos,
                CAST(COALESCE(SUM(unpriced_calls), 0) AS BIGINT) AS unpriced_calls
         FROM runs WHERE graph_id = $1
         GROUP BY substr(created_at, 1, 10) ORDER BY day DESC LIMIT $2",
    )
    .bind(allowed.graph().as_str())
    .bind(days.clamp(1, 366))
    .fetch_all(pool)
    .await)?;
    let mut usage = GraphUsage::default();
    for row in rows.into_iter().rev() {
        let totals = UsageTotals {
            calls: count(row.calls),
            prompt_tokens: count(row.prompt_tokens),
            completion_tokens: count(row.completion_tokens),
            cached_tokens: count(row.cached_tokens),
            cost_usd: dollars(row.cost_nanos),
            unpriced_calls: count(row.unpriced_calls),
        };
        usage.total.add(&totals);
        usage.runs += count(row.runs);
        usage.days.push(DayUsage {
            day: row.day,
            runs: count(row.runs),
            usage: totals,
        });
    }
    Ok(usage)
}

/// A graph's threads, most recently active first (an experiment's left
/// out).
pub async fn threads(db: &Db, allowed: &Allowed) -> Result<Vec<ThreadInfo>, AppError> {
    // An experiment's threads are its runs' own, listed with it, never
    // among the conversations people hold.
    let rows: Vec<ThreadRow> = on_db!(db, pool => sqlx::query_as(select_threads!(
        "WHERE t.graph_id = $1 AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.id
           AND r.experiment_id IS NOT NULL) ORDER BY t.updated_at DESC"
    ))
    .bind(allowed.graph().as_str())
    .fetch_all(pool)
    .await)?;
    Ok(rows.into_iter().map(ThreadInfo::from).collect())
}

/// One thread's record.
pub async fn thread(db: &Db, thread_id: &ThreadId) -> Result<Option<ThreadInfo>, AppError> {
    let row: Option<ThreadRow> = on_db!(db, pool => sqlx::query_as(select_threads!("WHERE t.id = $1"))
            .bind(thread_id.as_str())
            .fetch_optional(pool)
            .await)?;
    Ok(row.map(ThreadInfo::from))
}

/// A thread's newest run: its id, graph and starter.
pub async fn newest_of_thread(
    db: &Db,
    thread_id: &ThreadId,
) -> Result<Option<(RunId, GraphId, Option<String>)>, AppError> {
    let newest: Option<(String, String, Option<String>)> = on_db!(db, pool => sqlx::query_as(
        "SELECT id, graph_id, user_id FROM runs WHERE thread_id = $1
         ORDER BY created_at DESC, rowid DESC LIMIT 1",
    )
    .bind(thread_id.as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(newest.map(|(run, graph, user)| (RunId::from(run), GraphId::from_stored(graph), user)))
}

/// The id of the user who started a run, if known.
pub async fn starter(db: &Db, run_id: &RunId) -> Result<Option<String>, AppError> {
    let found: Option<Option<String>> = on_db!(db, pool => sqlx::query_scalar("SELECT user_id FROM runs WHERE id = $1")
            .bind(run_id.as_str())
            .fetch_optional(pool)
            .await)?;
    Ok(found.flatten())
}

/// A saved graph a run embeds (a `subgraph` node's `graph_id`), and the
/// version it embeds: pinned in the run's record, so the run does what it
/// was started with whichever server takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedGraph {
    pub graph: GraphId,
    /// `None` in records from before versions were pinned.
    pub version: Option<i64>,
}

/// How `runs.embeds` holds one: `{"id", "version"}` (a bare id in older
/// records).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum StoredEmbed {
    Pinned { id: String, version: i64 },
    Id(String),
}

/// The saved graphs a run embeds, as recorded when it was queued.
pub async fn embeds_of(db: &Db, run_id: &RunId) -> Result<Vec<EmbeddedGraph>, AppError> {
    let json: Option<String> = on_db!(db, pool => sqlx::query_scalar("SELECT embeds FROM runs WHERE id = $1")
            .bind(run_id.as_str())
            .fetch_optional(pool)
            .await)?;
    let stored: Vec<StoredEmbed> = json
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default();
    Ok(stored
        .into_iter()
        .filter_map(|embed| {
            let (id, version) = match embed {
                StoredEmbed::Pinned { id, version } => (id, Some(version)),
                StoredEmbed::Id(id) => (id, None),
            };
            Some(EmbeddedGraph {
                graph: GraphId::parse(&id)?,
                version,
            })
        })
        .collect())
}

/// A run about to be queued.
pub struct NewRun<'a> {
    pub graph_id: &'a GraphId,
    pub graph_version: i64,
    pub thread_id: &'a ThreadId,
    /// What it starts with (a fork's edits).
    pub input: &'a Value,
    pub starter: &'a User,
    /// The saved graphs it embeds, with their versions.
    pub embeds: &'a [EmbeddedGraph],
    /// What it is asked to do, as JSON (the server's request type): kept
    /// so that whichever server takes the queued run does exactly that.
    pub request: &'a str,
    /// The server queueing it, which holds its lease from the start and
    /// executes it; `None` queues it for any server to take (it was
    /// asked of a server that does not execute runs).
    pub lease: Option<&'a Lease>,
    /// What it came through from outside the editor: the run is labelled
    /// with it (and an API key may read it).
    pub trigger: Option<&'a Trigger>,
    /// For a fork: the run and step it goes on from.
    pub fork: Option<(&'a RunId, u32)>,
    /// Its id, when the caller chose it (an experiment's item names its
    /// run before it is recorded); a new one otherwise. Recording a run
    /// whose id is taken is refused: it never runs twice.
    pub id: Option<&'a RunId>,
}

/// A server's hold on the runs it queues and executes: its name, and how
/// long a lease lasts unless renewed. A run whose lease lapsed (its server
/// died) is free for another server to take over.
#[derive(Clone, Debug)]
pub struct Lease {
    /// This server's name, unique per process.
    pub owner: String,
    /// How long a lease lasts from its last renewal.
    pub duration: std::time::Duration,
}

impl Lease {
    /// When a lease taken or renewed now lapses.
    fn until(&self) -> String {
        crate::db::from_now(self.duration)
    }
}

/// How many runs may be queued or running at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// Per person for their own runs from the app, and per trigger (an
    /// API key, a webhook, a schedule, a widget) for the runs it starts.
    pub per_starter: usize,
    /// Per account over every run it answers for, however started: its
    /// own and those of its keys and triggers (their budgets sit inside
    /// this one), so no number of keys lets one account flood the queue.
    pub per_owner: usize,
}

/// How long a refused start is told to wait before trying again, in
/// seconds: about a short run's time, after which a slot has usually
/// freed.
pub const RETRY_AFTER_SECS: u64 = 5;

/// Records a new run, queued, and returns its id. The starter's and the
/// owner's limits of runs queued or running (see [`RunLimits`]), and that
/// the thread has none, are checked in the same transaction as the
/// insert, under the owner's write lock, so concurrent starts through any
/// servers cannot race past a limit. A run queued without a lease is
/// announced (after the commit, so whoever hears of it finds it) for any
/// server to take.
pub async fn record_queued(db: &Db, run: NewRun<'_>, limits: RunLimits) -> Result<RunId, AppError> {
    let run_id = run
        .id
        .cloned()
        .unwrap_or_else(|| RunId::from(format!("run-{}", uuid::Uuid::new_v4())));
    let user = run.starter.id.as_str();
    let embeds: Vec<StoredEmbed> = run
        .embeds
        .iter()
        .map(|embed| match embed.version {
            Some(version) => StoredEmbed::Pinned {
                id: embed.graph.to_string(),
                version,
            },
            None => StoredEmbed::Id(embed.graph.to_string()),
        })
        .collect();
    let embeds = serde_json::to_string(&embeds).unwrap_or_else(|_| "[]".into());
    let limit = i64::try_from(limit_of(limits.per_starter)).unwrap_or(i64::MAX);
    let owner_limit = i64::try_from(limit_of(limits.per_owner)).unwrap_or(i64::MAX);
    let lock = format!("runs of {user}");
    on_db!(db, pool => {
        let mut tx = pool.begin_write(&lock).await?;
        // A person's own runs, and each trigger's (a key, a hook, a
        // schedule, a widget), are counted apart: strangers using a widget
        // never use up its maker's runs.
        let active: i64 = match run.trigger {
            None => sqlx::query_scalar(
                concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND origin = ", origin!(app), "
                   AND status IN ", status!(active)),
            )
            .bind(user)
            .fetch_one(&mut *tx)
            .await?,
            // A key by its id (two keys may share a name); a hook, a
            // schedule or a widget by its name on the graph.
            Some(trigger) if trigger.origin == RunOrigin::ApiKey => sqlx::query_scalar(
                concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND api_key_id = $2
                   AND status IN ", status!(active)),
            )
            .bind(user)
            .bind(&trigger.id)
            .fetch_one(&mut *tx)
            .await?,
            // An experiment by its id: its window is its own.
            Some(trigger) if trigger.origin == RunOrigin::Experiment => sqlx::query_scalar(
                concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND experiment_id = $2
                   AND status IN ", status!(active)),
            )
            .bind(user)
            .bind(&trigger.id)
            .fetch_one(&mut *tx)
            .await?,
            Some(trigger) => sqlx::query_scalar(
                concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND origin = $2 AND origin_label = $3
                   AND graph_id = $4 AND status IN ", status!(active)),
            )
            .bind(user)
            .bind(trigger.origin.as_str())
            .bind(&trigger.name)
            .bind(run.graph_id.as_str())
            .fetch_one(&mut *tx)
            .await?,
        };
        if active >= limit {
            return Err(AppError::TooManyRuns {
                message: match run.trigger {
                    None => format!(
                        "you have {active} runs queued or running; the limit is {limit} per user. \
                         Wait for one to end, or cancel one"
                    ),
                    Some(trigger) => format!(
                        "{} has {active} runs queued or running; the limit is {limit}. Try again \
                         when one has ended",
                        trigger.describe()
                    ),
                },
                retry_after: RETRY_AFTER_SECS,
            });
        }
        let owned: i64 = sqlx::query_scalar(
            concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND status IN ", status!(active)),
        )
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        if owned >= owner_limit {
            return Err(AppError::TooManyRuns {
                message: format!(
                    "{} {owned} runs queued or running in all, counting those of {} keys, \
                     webhooks, schedules and widgets; the limit is {owner_limit} per account. \
                     Try again when some have ended",
                    match run.trigger {
                        None => "you have",
                        Some(_) => "the account this answers to has",
                    },
                    match run.trigger {
                        None => "your",
                        Some(_) => "its",
                    },
                ),
                retry_after: RETRY_AFTER_SECS,
            });
        }
        let busy: i64 = sqlx::query_scalar(
            concat!("SELECT COUNT(*) FROM runs WHERE thread_id = $1 AND status IN ", status!(active)),
        )
        .bind(run.thread_id.as_str())
        .fetch_one(&mut *tx)
        .await?;
        if busy > 0 {
            return Err(thread_busy(run.thread_id.as_str()));
        }
        sqlx::query(
            concat!("INSERT INTO runs (id, graph_id, graph_version, thread_id, input, status, user_id, embeds,
                               request, lease_owner, lease_expires_at, origin, origin_label, api_key_id,
                               forked_from, forked_at_step, experiment_id)
             VALUES ($1, $2, $3, $4, $5, ", status!(queued), ", $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"),
        )
        .bind(run_id.as_str())
        .bind(run.graph_id.as_str())
        .bind(run.graph_version)
        .bind(run.thread_id.as_str())
        .bind(run.input.to_string())
        .bind(user)
        .bind(&embeds)
        .bind(run.request)
        .bind(run.lease.map(|lease| lease.owner.as_str()))
        .bind(run.lease.map(Lease::until))
        .bind(run.trigger.map_or(RunOrigin::App, |trigger| trigger.origin).as_str())
        .bind(run.trigger.map(|trigger| trigger.name.as_str()))
        .bind(
            run.trigger
                .filter(|trigger| trigger.origin == RunOrigin::ApiKey)
                .map(|trigger| trigger.id.as_str()),
        )
        .bind(run.fork.map(|(source, _)| source.as_str()))
        .bind(run.fork.map(|(_, step)| i64::from(step)))
        .bind(
            run.trigger
                .filter(|trigger| trigger.origin == RunOrigin::Experiment)
                .map(|trigger| trigger.id.as_str()),
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok::<_, AppError>(())
    })?;
    if run.lease.is_none() {
        announce_queued(db, &run_id).await?;
    }
    Ok(run_id)
}

/// How many runs account `user` has queued or running, however started.
pub async fn active_of_owner(db: &Db, user: &str) -> Result<u64, AppError> {
    let n: i64 = on_db!(db, pool => sqlx::query_scalar(
        concat!("SELECT COUNT(*) FROM runs WHERE user_id = $1 AND status IN ", status!(active)),
    )
    .bind(user)
    .fetch_one(pool)
    .await)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// A limit as counted: at least one.
fn limit_of(limit: usize) -> usize {
    limit.max(1)
}

/// The refusal of a second run on a thread.
fn thread_busy(thread: &str) -> AppError {
    AppError::ThreadBusy {
        thread: thread.to_owned(),
    }
}

/// Queues a paused run again (it is being resumed with what `request`
/// says), leased to the server that queues it, or (`None`) announced for
/// any server to take. Refused when the run is no longer paused (another
/// resume, through any server, came first).
pub async fn requeue(
    db: &Db,
    run_id: &RunId,
    request: &str,
    lease: Option<&Lease>,
) -> Result<(), AppError> {
    let changed = on_db!(db, pool => sqlx::query(
        concat!("UPDATE runs SET status = ", status!(queued), ", output = NULL, request = $1, lease_owner = $2,
                lease_expires_at = $3, cancel_requested = 0
         WHERE id = $4 AND status = ", status!(interrupted)),
    )
    .bind(request)
    .bind(lease.map(|lease| lease.owner.as_str()))
    .bind(lease.map(Lease::until))
    .bind(run_id.as_str())
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    if changed == 0 {
        return Err(AppError::InvalidInput(format!(
            "run `{run_id}` is not waiting to be resumed"
        )));
    }
    if lease.is_none() {
        announce_queued(db, run_id).await?;
    }
    Ok(())
}

/// The channel on which runs queued for any server are announced
/// (PostgreSQL `NOTIFY`; the payload is the run's id). Servers that
/// execute runs claim them at once, or at their next look if they missed it.
pub const QUEUE_CHANNEL: &str = "heddle_run_queue";

async fn announce_queued(db: &Db, run_id: &RunId) -> Result<(), AppError> {
    if let Db::Postgres(pool) = db {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(QUEUE_CHANNEL)
            .bind(run_id.as_str())
            .execute(pool)
            .await?;
    }
    Ok(())
}

/// Marks a run as executing (its first start time is kept); `false` when
/// another server holds its lease (this one lost it, and must stop).
pub async fn mark_running(db: &Db, run_id: &RunId, owner: &str) -> Result<bool, AppError> {
    let changed = on_db!(db, pool => sqlx::query(
        concat!("UPDATE runs SET status = ", status!(running), ", started_at = COALESCE(started_at, $1)
         WHERE id = $2 AND (lease_owner = $3 OR lease_owner IS NULL)"),
    )
    .bind(crate::db::now())
    .bind(run_id.as_str())
    .bind(owner)
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(changed == 1)
}

/// What a queued run was asked to do (JSON), if it says.
pub async fn request_of(db: &Db, run_id: &RunId) -> Result<Option<String>, AppError> {
    let request: Option<Option<String>> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT request FROM runs WHERE id = $1",
    )
    .bind(run_id.as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(request.flatten())
}

/// Renews this server's leases; the runs it still holds.
pub async fn renew_leases(db: &Db, lease: &Lease) -> Result<Vec<RunId>, AppError> {
    let renewed: Vec<String> = on_db!(db, pool => sqlx::query_scalar(
        concat!("UPDATE runs SET lease_expires_at = $1
         WHERE lease_owner = $2 AND status IN ", status!(active), "
         RETURNING id"),
    )
    .bind(lease.until())
    .bind(&lease.owner)
    .fetch_all(pool)
    .await)?;
    Ok(renewed.into_iter().map(RunId::from).collect())
}

/// Whether a run's record lets `owner` write the run's checkpoints and
/// events: only while `owner` holds its lease, or, with no lease, while
/// it is paused (a cancel closes a pause wherever it was asked). A server
/// whose lease was taken over, released or ended writes nothing more.
///
/// Locks the record until `tx` ends, so a server taking the run over
/// skips it until the write this guards is done, and then reads a log
/// that holds it. Should the writer stall with the lock held (a frozen
/// process), the database ends its session once it has been idle in the
/// transaction for `stall`: the lock never outlives a lease. A run without
/// a record (not this application's) is not fenced.
pub async fn may_write_run(
    tx: &mut sqlx::PgConnection,
    run_id: &RunId,
    owner: &str,
    stall: std::time::Duration,
) -> Result<bool, sqlx::Error> {
    let allowed: Option<(bool, String)> = sqlx::query_as(concat!(
        "SELECT COALESCE(lease_owner = $2, status = ",
        status!(interrupted),
        "),
                set_config('idle_in_transaction_session_timeout', $3, true)
         FROM runs WHERE id = $1 FOR SHARE"
    ))
    .bind(run_id.as_str())
    .bind(owner)
    .bind(format!("{}ms", stall.as_millis().max(1)))
    .fetch_optional(tx)
    .await?;
    Ok(allowed.is_none_or(|(allowed, _)| allowed))
}

/// Whether another server holds the run's lease now.
pub async fn leased_elsewhere(db: &Db, run_id: &RunId, owner: &str) -> Result<bool, AppError> {
    let holder: Option<Option<String>> = on_db!(db, pool => sqlx::query_scalar(
        "SELECT lease_owner FROM runs WHERE id = $1",
    )
    .bind(run_id.as_str())
    .fetch_optional(pool)
    .await)?;
    Ok(holder.flatten().is_some_and(|holder| holder != owner))
}

/// Asks the server executing a queued or running run to cancel it (the
/// run is leased to another server than the one asked): recorded on the
/// run, and on PostgreSQL announced on [`CONTROL_CHANNEL`] so that server
/// acts at once. `false` when the run is not queued or running.
pub async fn request_cancel(db: &Db, run_id: &RunId) -> Result<bool, AppError> {
    let changed = on_db!(db, pool => sqlx::query(
        concat!("UPDATE runs SET cancel_requested = 1 WHERE id = $1 AND status IN ", status!(active)),
    )
    .bind(run_id.as_str())
    .execute(pool)
    .await
    .map(|done| done.rows_affected()))?;
    if let Db::Postgres(pool) = db {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CONTROL_CHANNEL)
            .bind(run_id.as_str())
            .execute(pool)
            .await?;
    }
    Ok(changed == 1)
}

/// The channel on which cancels asked through one server are announced to
/// the others (PostgreSQL `NOTIFY`; the payload is the run's id).
pub const CONTROL_CHANNEL: &str = "heddle_run_control";

/// The runs this server holds that someone asked, through another server,
/// to cancel.
pub async fn cancels_for(db: &Db, owner: &str) -> Result<Vec<RunId>, AppError> {
    let asked: Vec<String> = on_db!(db, pool => sqlx::query_scalar(
        concat!("SELECT id FROM runs
         WHERE lease_owner = $1 AND cancel_requested = 1 AND status IN ", status!(active)),
    )
    .bind(owner)
    .fetch_all(pool)
    .await)?;
    Ok(asked.into_iter().map(RunId::from).collect())
}

/// Gives up this server's leases (it is shutting down after the current
/// steps), and announces the runs: other servers take them at once.
pub async fn release_leases(db: &Db, owner: &str) -> Result<u64, AppError> {
    let released: Vec<String> = on_db!(db, pool => sqlx::query_scalar(
        concat!("UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL
         WHERE lease_owner = $1 AND status IN ", status!(active), "
         RETURNING id"),
    )
    .bind(owner)
    .fetch_all(pool)
    .await)?;
    for run_id in released.iter().map(|id| RunId::from(id.as_str())) {
        announce_queued(db, &run_id).await?;
    }
    Ok(released.len() as u64)
}

/// A run [`claim_lapsed`] took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub run_id: RunId,
    /// Whether a server held it when it was taken: that server died (or
    /// stalled past its lease) with it, rather than giving it back.
    pub from_dead_server: bool,
    /// Where the run stood (`step N`) when it was last taken from a dead
    /// server (see [`mark_crash_checkpoint`]).
    pub crash_checkpoint: Option<String>,
}

/// Takes up to `limit` runs queued or running whose lease lapsed (or that
/// never had one), for `lease`'s server, fairly between owners: each
/// owner's runs in the order they came, and owners in turn, those with
/// fewer runs held by servers first (so an owner with a hundred runs
/// queued takes one place in each round, not the first hundred); with `all`, every
/// unfinished run whatever its lease (a SQLite file's only server, at
/// start). On PostgreSQL the rows are claimed with `FOR UPDATE SKIP
/// LOCKED`, so two servers taking over at once never take the same run.
pub async fn claim_lapsed(
    db: &Db,
    lease: &Lease,
    all: bool,
    limit: i64,
) -> Result<Vec<Claimed>, AppError> {
    let now = if all {
        // Later than any lease.
        "9999".to_string()
    } else {
        crate::db::now()
    };
    let rows: Vec<(String, bool, Option<String>)> = match db {
        Db::Postgres(pool) => {
            sqlx::query_as(
                concat!("WITH held AS (
                     SELECT user_id, COUNT(*) AS n FROM runs
                     WHERE status IN ", status!(active), " AND lease_owner IS NOT NULL
                       AND lease_expires_at >= $3
                     GROUP BY user_id),
                 waiting AS (
                     SELECT id, user_id, created_at, rowid,
                            ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY created_at, rowid) AS nth
                     FROM runs
                     WHERE status IN ", status!(active), "
                       AND (lease_expires_at IS NULL OR lease_expires_at < $3)),
                 picked AS (
                     SELECT runs.id, runs.lease_owner IS NOT NULL AS held FROM runs
                     JOIN waiting ON waiting.id = runs.id
                     LEFT JOIN held ON held.user_id IS NOT DISTINCT FROM waiting.user_id
                     -- Checked again on the row locked: one another claim
                     -- took (and committed) after this statement's snapshot
                     -- is seen here as it is now, and skipped.
                     WHERE runs.status IN ", status!(active), "
                       AND (runs.lease_expires_at IS NULL OR runs.lease_expires_at < $3)
                     ORDER BY COALESCE(held.n, 0) + waiting.nth, waiting.created_at, waiting.rowid
                     LIMIT $4
                     FOR UPDATE OF runs SKIP LOCKED)
                 UPDATE runs SET lease_owner = $1, lease_expires_at = $2
                 FROM picked WHERE runs.id = picked.id
                 RETURNING runs.id, picked.held, runs.crash_checkpoint"),
            )
            .bind(&lease.owner)
            .bind(lease.until())
            .bind(&now)
            .bind(limit)
            .fetch_all(pool)
            .await?
        }
        // One server per SQLite file: nobody to skip, and nothing changes
        // between the read and the write of one transaction.
        Db::Sqlite(pool) => {
            let mut tx = pool.begin().await?;
            let picked: Vec<(String, bool, Option<String>)> = sqlx::query_as(
                concat!("WITH held AS (
                     SELECT user_id, COUNT(*) AS n FROM runs
                     WHERE status IN ", status!(active), " AND lease_owner IS NOT NULL
                       AND lease_expires_at >= $1
                     GROUP BY user_id),
                 waiting AS (
                     SELECT id, user_id, created_at, rowid, lease_owner, crash_checkpoint,
                            ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY created_at, rowid) AS nth
                     FROM runs
                     WHERE status IN ", status!(active), "
                       AND (lease_expires_at IS NULL OR lease_expires_at < $1))
                 SELECT waiting.id, waiting.lease_owner IS NOT NULL, waiting.crash_checkpoint
                 FROM waiting LEFT JOIN held ON held.user_id IS waiting.user_id
                 ORDER BY COALESCE(held.n, 0) + waiting.nth, waiting.created_at, waiting.rowid
                 LIMIT $2"),
            )
            .bind(&now)
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
            for (id, _, _) in &picked {
                sqlx::query(
                    "UPDATE runs SET lease_owner = $1, lease_expires_at = $2 WHERE id = $3",
                )
                .bind(&lease.owner)
                .bind(lease.until())
                .bind(id)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            picked
        }
    };
    Ok(rows
        .into_iter()
        .map(|(run_id, from_dead_server, crash_checkpoint)| Claimed {
            run_id: RunId::from(run_id),
            from_dead_server,
            crash_checkpoint,
        })
        .collect())
}

/// Records `checkpoint` (where the run's newest checkpoint stands, `step
/// N`, or `""` for none) as where the run stood when it was taken from a
/// dead server.
pub async fn mark_crash_checkpoint(
    db: &Db,
    run_id: &RunId,
    checkpoint: &str,
) -> Result<(), AppError> {
    on_db!(db, pool => sqlx::query("UPDATE runs SET crash_checkpoint = $1 WHERE id = $2")
        .bind(checkpoint)
        .bind(run_id.as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// How long a run has been active over its executions so far.
pub async fn active_time(db: &Db, run_id: &RunId) -> Result<std::time::Duration, AppError> {
    let ms: Option<i64> = on_db!(db, pool => sqlx::query_scalar("SELECT active_ms FROM runs WHERE id = $1")
        .bind(run_id.as_str())
        .fetch_optional(pool)
        .await)?;
    Ok(std::time::Duration::from_millis(
        u64::try_from(ms.unwrap_or(0)).unwrap_or(0),
    ))
}

/// Adds `active` to how long a run has been active.
pub async fn add_active_time(
    db: &Db,
    run_id: &RunId,
    active: std::time::Duration,
) -> Result<(), AppError> {
    let ms = i64::try_from(active.as_millis()).unwrap_or(i64::MAX);
    on_db!(db, pool => sqlx::query("UPDATE runs SET active_ms = active_ms + $1 WHERE id = $2")
        .bind(ms)
        .bind(run_id.as_str())
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(())
}

/// Records where a run ended up (or paused), with what its model calls
/// used (kept as it was when `None`), and moves its thread to the top of
/// the graph's conversations.
pub async fn mark_ended(
    db: &Db,
    run_id: &RunId,
    owner: &str,
    status: RunStatus,
    output: Option<&Value>,
    error: Option<&str>,
    usage: Option<&UsageTotals>,
) -> Result<bool, AppError> {
    let signed =
        |n: fn(&UsageTotals) -> u64| usage.map(|u| i64::try_from(n(u)).unwrap_or(i64::MAX));
    let now = crate::db::now();
    let finished_at = (status != RunStatus::Interrupted).then_some(now.as_str());
    Ok(on_db!(db, pool => {
        let mut tx = pool.begin().await?;
        let changed = sqlx::query(
            "UPDATE runs SET status = $1, output = $2, error = $3, finished_at = $4,
                    lease_owner = NULL, lease_expires_at = NULL, cancel_requested = 0,
                    model_calls = COALESCE($7, model_calls),
                    prompt_tokens = COALESCE($8, prompt_tokens),
                    completion_tokens = COALESCE($9, completion_tokens),
                    cached_tokens = COALESCE($10, cached_tokens),
                    cost_nanos = COALESCE($11, cost_nanos),
                    unpriced_calls = COALESCE($12, unpriced_calls)
             WHERE id = $5 AND (lease_owner = $6 OR lease_owner IS NULL)",
        )
        .bind(status.as_str())
        .bind(output.map(Value::to_string))
        .bind(error)
        .bind(finished_at)
        .bind(run_id.as_str())
        .bind(owner)
        .bind(signed(|u| u.calls))
        .bind(signed(|u| u.prompt_tokens))
        .bind(signed(|u| u.completion_tokens))
        .bind(signed(|u| u.cached_tokens))
        .bind(usage.map(|u| nanos(u.cost_usd)))
        .bind(signed(|u| u.unpriced_calls))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            // Another server took the run over: its record is theirs.
            return Ok(false);
        }
        sqlx::query(
            "UPDATE threads SET updated_at = $1 WHERE id = (SELECT thread_id FROM runs WHERE id = $2)",
        )
        .bind(&now)
        .bind(run_id.as_str())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        true
    }))
}

#[cfg(test)]
mod sql_tests {
    use heddle_engine::run::RunStatus;
    use heddle_wire::runs::RunOrigin;

    #[test]
    fn the_sql_spells_each_status_and_origin_as_the_enums_do() {
        let quoted = |name: &str| format!("'{name}'");
        assert_eq!(status!(queued), quoted(RunStatus::Queued.as_str()));
        assert_eq!(status!(running), quoted(RunStatus::Running.as_str()));
        assert_eq!(
            status!(interrupted),
            quoted(RunStatus::Interrupted.as_str())
        );
        let active: Vec<String> = RunStatus::ALL
            .iter()
            .filter(|status| status.is_active())
            .map(|status| quoted(status.as_str()))
            .collect();
        assert_eq!(status!(active), format!("({})", active.join(", ")));
        assert_eq!(origin!(app), quoted(RunOrigin::App.as_str()));
        assert_eq!(origin!(experiment), quoted(RunOrigin::Experiment.as_str()));
    }
}
