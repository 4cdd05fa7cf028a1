//! Starting, resuming, cancelling and recovering runs, and keeping the
//! `runs` and `threads` tables in step with them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use heddle_app::access::Role;
use heddle_app::access::ssr::{Allowed, require};
use heddle_app::accounts::User;
use heddle_app::accounts::ssr as accounts;
use heddle_app::error::AppError;
use heddle_app::graphs::ssr as graphs;
use heddle_app::graphs::{GraphDetail, GraphId};
use heddle_app::limits::MAX_INPUT_BYTES;
use heddle_app::secrets::ssr as secrets;
use heddle_engine::run::sqlite::SqliteStore;
use heddle_engine::run::{
    CancelHandle, CheckpointStore, Durable, DurableError, Event, Run, RunError, RunOptions,
    RunOutput,
};
use heddle_engine::{CompiledGraph, GraphDocument, Registry, RunId, ThreadId};
use serde::Serialize;
use serde_json::Value;
use sqlx::SqlitePool;
use tokio::sync::{Semaphore, broadcast};
use tokio::task::AbortHandle;

use super::embed;
use super::hub::RunHub;

/// Runs on this server.
#[derive(Clone)]
pub struct Runs {
    inner: Arc<Inner>,
}

struct Inner {
    pool: SqlitePool,
    /// Opens users' secrets for their runs.
    secret_key: secrets::SecretKey,
    registry: Registry,
    store: Arc<SqliteStore>,
    durable: Durable,
    permits: Arc<Semaphore>,
    active: Mutex<HashMap<String, Active>>,
    notices: broadcast::Sender<Notice>,
    /// How many runs one user may have queued or running.
    max_per_user: AtomicUsize,
}

/// A run being executed (or waiting for its turn).
struct Active {
    graph_id: String,
    thread_id: String,
    hub: Arc<RunHub>,
    cancel: Option<CancelHandle>,
    cancel_requested: bool,
    task: Option<AbortHandle>,
}

/// A change a graph's watchers hear about.
#[derive(Debug, Clone, Serialize)]
pub struct Notice {
    pub graph_id: String,
    pub run_id: String,
    pub thread_id: String,
    pub status: &'static str,
}

/// A request to start a run.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    /// The run's input: channel values.
    #[serde(default)]
    pub input: Value,
    /// The thread to run on; a new one when absent.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// This run also pauses before these nodes ("run to here"), beside the
    /// breakpoints the graph marks.
    #[serde(default)]
    pub interrupt_before: Vec<String>,
    /// This run also pauses after these nodes' steps.
    #[serde(default)]
    pub interrupt_after: Vec<String>,
}

/// A request to fork a run: continue from one of its checkpoints, with
/// some channels edited, as a new run on the same thread.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkRun {
    /// The step the new run goes on with: the checkpoint holding the state
    /// before that step (so `step: 3` continues after step 2).
    pub step: u32,
    /// Channel values to replace first.
    #[serde(default)]
    pub edits: serde_json::Map<String, Value>,
    /// The node to run first, instead of the checkpoint's own next step.
    #[serde(default)]
    pub start_at: Option<String>,
}

/// A run as the API shows it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct RunInfo {
    pub id: String,
    pub graph_id: String,
    pub graph_version: i64,
    pub thread_id: String,
    pub status: String,
    #[sqlx(json)]
    pub input: Value,
    #[sqlx(json(nullable))]
    pub output: Option<Value>,
    pub error: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Who started it (`None` for runs from before accounts).
    pub started_by: Option<String>,
}

/// A thread as the API shows it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct ThreadInfo {
    pub id: String,
    pub graph_id: String,
    pub created_at: String,
    pub updated_at: String,
    pub runs: i64,
    pub last_status: Option<String>,
}

/// `SELECT <the run columns> FROM runs <rest>`, as one literal.
macro_rules! select_runs {
    ($rest:literal) => {
        concat!(
            "SELECT id, graph_id, graph_version, thread_id, status, input, output, error, ",
            "created_at, started_at, finished_at, ",
            "(SELECT username FROM users WHERE users.id = runs.user_id) AS started_by FROM runs ",
            $rest
        )
    };
}

/// Logs a storage failure with its context and hides it from the client.
fn internal<E: std::fmt::Display>(context: &str) -> impl Fn(E) -> AppError + '_ {
    move |error| {
        tracing::error!(%error, "{context}");
        AppError::Internal
    }
}

impl Runs {
    /// The run manager over the server's database, running at most
    /// `max_concurrent` runs at once.
    pub async fn new(
        pool: SqlitePool,
        max_concurrent: usize,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        Self::with_registry(pool, max_concurrent, Registry::new()).await
    }

    /// The same, with the kinds, models and tools graphs may use (and a
    /// secret key that lives as long as the process).
    pub async fn with_registry(
        pool: SqlitePool,
        max_concurrent: usize,
        registry: Registry,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        let key = secrets::SecretKey::ephemeral()
            .map_err(|error| heddle_engine::run::StoreError(error.to_string()))?;
        Self::with_key(pool, max_concurrent, registry, key).await
    }

    /// The same, with the key users' secrets are encrypted under.
    pub async fn with_key(
        pool: SqlitePool,
        max_concurrent: usize,
        registry: Registry,
        secret_key: secrets::SecretKey,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        let store = Arc::new(SqliteStore::from_pool(pool.clone()).await?);
        let durable = Durable::new(Arc::clone(&store) as Arc<dyn CheckpointStore>)
            .with_registry(registry.clone());
        Ok(Runs {
            inner: Arc::new(Inner {
                pool,
                secret_key,
                registry,
                store,
                durable,
                permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
                active: Mutex::new(HashMap::new()),
                notices: broadcast::Sender::new(256),
                max_per_user: AtomicUsize::new(4),
            }),
        })
    }

    fn active(&self) -> MutexGuard<'_, HashMap<String, Active>> {
        self.inner
            .active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The tools and models graphs run with here, by name.
    pub fn catalog(&self) -> heddle_app::catalog::Catalog {
        heddle_app::catalog::Catalog {
            tools: self.inner.registry.tools().names(),
            models: self.inner.registry.model_names(),
        }
    }

    /// Sets how many runs one user may have queued or running at once.
    pub fn set_max_per_user(&self, limit: usize) {
        self.inner
            .max_per_user
            .store(limit.max(1), Ordering::Relaxed);
    }

    /// The registry a run of `user_id` compiles with: the server's, with
    /// that user's secrets as the credentials its nodes may name.
    async fn registry_for(&self, user_id: Option<&str>) -> Result<Registry, AppError> {
        let secrets = match user_id {
            Some(user) => secrets::values(&self.inner.pool, &self.inner.secret_key, user).await?,
            None => Default::default(),
        };
        Ok(self
            .inner
            .registry
            .clone()
            .with_credentials(secrets.into_iter().collect()))
    }

    /// The key users' secrets are encrypted under.
    pub fn secret_key(&self) -> &secrets::SecretKey {
        &self.inner.secret_key
    }

    /// The checkpoint store (stored events, threads).
    pub fn store(&self) -> &SqliteStore {
        &self.inner.store
    }

    /// The hub of a run being executed, if it is.
    pub fn hub(&self, run_id: &str) -> Option<Arc<RunHub>> {
        self.active()
            .get(run_id)
            .map(|active| Arc::clone(&active.hub))
    }

    /// Notices of runs starting, pausing and ending, for graph watchers.
    pub fn notices(&self) -> broadcast::Receiver<Notice> {
        self.inner.notices.subscribe()
    }

    /// Starts a run of a graph's newest version for the user `allowed`
    /// names; it waits for a free slot in the background.
    pub async fn start(&self, allowed: &Allowed, request: StartRun) -> Result<RunInfo, AppError> {
        allowed.at_least(Role::Editor)?;
        let user = allowed.user();
        let input = run_input(request.input)?;
        let (detail, registry, graph, embeds) = self.prepare(allowed).await?;
        check_input(&graph, &input)?;
        let breakpoints = |field: &str, ids: Vec<String>| {
            ids.into_iter()
                .map(|id| {
                    match graph
                        .document()
                        .nodes
                        .iter()
                        .any(|node| node.id.as_str() == id)
                    {
                        true => Ok(heddle_engine::NodeId::from(id.as_str())),
                        false => Err(AppError::InvalidInput(format!(
                            "`{field}` names node `{id}`, which is not in the graph"
                        ))),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let before = breakpoints("interrupt_before", request.interrupt_before)?;
        let after = breakpoints("interrupt_after", request.interrupt_after)?;
        let graph_id = detail.id.to_string();
        let thread_id = match request.thread_id {
            Some(thread) => thread,
            None => format!("thread-{}", uuid::Uuid::new_v4()),
        };
        self.claim_thread(&thread_id, &graph_id).await?;
        let run_id = self
            .record_queued(&graph_id, detail.version, &thread_id, &input, user, &embeds)
            .await?;
        let thread = ThreadId::from(thread_id.as_str());
        let id = RunId::from(run_id.as_str());
        self.launch(
            &run_id,
            &graph_id,
            &thread_id,
            registry,
            Some(Admission {
                starter: user.clone(),
                embeds,
            }),
            move |durable| async move {
                durable
                    .with_breakpoints(before, after)
                    .start(Arc::new(graph), thread, id, input)
                    .await
            },
        )?;
        self.get(&run_id).await
    }

    /// What a run of the graph `allowed` names needs, for its user: the
    /// graph's newest version, the registry with the user's secrets, and
    /// the graph compiled with its saved subgraphs embedded (through their
    /// access checks), with the ids of those it embeds.
    async fn prepare(
        &self,
        allowed: &Allowed,
    ) -> Result<(GraphDetail, Registry, CompiledGraph, Vec<GraphId>), AppError> {
        let user = allowed.user();
        let detail = graphs::get(&self.inner.pool, allowed).await?;
        let registry = self.registry_for(Some(user.id.as_str())).await?;
        let embedded =
            embed::embed(&self.inner.pool, user, allowed.graph(), &detail.document).await?;
        let graph = compile_value(embedded.document, &registry)?;
        Ok((detail, registry, graph, embedded.graphs))
    }

    /// Forks run `source_id` (time travel): a new run on its thread goes on
    /// from the checkpoint before `request.step`, with `request.edits`
    /// applied to the state. The source run and its history stay as they
    /// were; the new run is a branch.
    pub async fn fork(
        &self,
        source_id: &str,
        user: &User,
        request: ForkRun,
    ) -> Result<RunInfo, AppError> {
        let source = self.get(source_id).await?;
        let edits_size = Value::Object(request.edits.clone()).to_string().len();
        if edits_size > MAX_INPUT_BYTES {
            return Err(AppError::TooLarge(format!(
                "the fork's edits are {edits_size} bytes; the limit is {MAX_INPUT_BYTES}"
            )));
        }
        // Refuse here, synchronously, edits the engine would refuse.
        let stored: Option<String> = sqlx::query_scalar(
            "SELECT graph_json FROM graph_versions WHERE graph_id = ? AND version = ?",
        )
        .bind(&source.graph_id)
        .bind(source.graph_version)
        .fetch_optional(&self.inner.pool)
        .await?;
        if let Some(document) = stored.and_then(|json| GraphDocument::from_json(&json).ok()) {
            heddle_engine::state::check_edits(&document.state.channels, &request.edits)
                .map_err(|error| AppError::InvalidInput(format!("`edits`: {error}")))?;
            if let Some(node) = &request.start_at
                && !document.nodes.iter().any(|spec| spec.id.as_str() == node)
            {
                return Err(AppError::InvalidInput(format!(
                    "`start_at` names node `{node}`, which is not in the graph"
                )));
            }
        }
        let thread = ThreadId::from(source.thread_id.as_str());
        let history = self
            .inner
            .store
            .history(&thread)
            .await
            .map_err(internal("cannot read a thread's history"))?;
        let checkpoint = history
            .iter()
            .find(|checkpoint| checkpoint.run_id.as_str() == source_id && checkpoint.step == request.step)
            .ok_or_else(|| {
                AppError::InvalidInput(format!(
                    "run `{source_id}` has no checkpoint before step {}; fork from a step it reached",
                    request.step
                ))
            })?
            .id
            .clone();
        if self
            .active()
            .values()
            .any(|active| active.thread_id == source.thread_id)
        {
            return Err(AppError::InvalidInput(format!(
                "thread `{}` has a run in progress; wait for it to end or cancel it",
                source.thread_id
            )));
        }
        let registry = self.registry_for(Some(user.id.as_str())).await?;
        let edits = Value::Object(request.edits.clone());
        let embeds = self.embeds_of(source_id).await?;
        let run_id = self
            .record_queued(
                &source.graph_id,
                source.graph_version,
                &source.thread_id,
                &edits,
                user,
                &embeds,
            )
            .await?;
        let id = RunId::from(run_id.as_str());
        let fork = heddle_engine::run::Fork {
            edits: request.edits,
            start_at: request
                .start_at
                .map(|node| heddle_engine::NodeId::from(node.as_str())),
        };
        self.launch(
            &run_id,
            &source.graph_id,
            &source.thread_id,
            registry,
            Some(Admission {
                starter: user.clone(),
                embeds,
            }),
            move |durable| async move {
                durable
                    .fork(&thread, checkpoint.as_str(), fork, id)
                    .await
            },
        )?;
        self.get(&run_id).await
    }

    /// Records a new run, queued, and returns its id. `input` is what it
    /// was started with (a fork's edits). The user's limit of runs queued
    /// or running is checked in the same transaction as the insert, so
    /// concurrent starts cannot race past it.
    async fn record_queued(
        &self,
        graph_id: &str,
        version: i64,
        thread_id: &str,
        input: &Value,
        user: &User,
        embeds: &[GraphId],
    ) -> Result<String, AppError> {
        let run_id = format!("run-{}", uuid::Uuid::new_v4());
        let limit = self.inner.max_per_user.load(Ordering::Relaxed);
        let mut tx = self.inner.pool.begin_with("BEGIN IMMEDIATE").await?;
        let active: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM runs WHERE user_id = ? AND status IN ('queued', 'running')",
        )
        .bind(user.id.as_str())
        .fetch_one(&mut *tx)
        .await?;
        if active >= limit as i64 {
            return Err(AppError::TooManyRequests(format!(
                "you have {active} runs queued or running; the limit is {limit} per user. \
                 Wait for one to end, or cancel one"
            )));
        }
        let embeds: Vec<&str> = embeds.iter().map(GraphId::as_str).collect();
        sqlx::query(
            "INSERT INTO runs (id, graph_id, graph_version, thread_id, input, status, user_id, embeds)
             VALUES (?, ?, ?, ?, ?, 'queued', ?, ?)",
        )
        .bind(&run_id)
        .bind(graph_id)
        .bind(version)
        .bind(thread_id)
        .bind(input.to_string())
        .bind(user.id.as_str())
        .bind(serde_json::json!(embeds).to_string())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(run_id)
    }

    /// The saved graphs a run embeds, as recorded when it was queued.
    async fn embeds_of(&self, run_id: &str) -> Result<Vec<GraphId>, AppError> {
        let json: Option<String> = sqlx::query_scalar("SELECT embeds FROM runs WHERE id = ?")
            .bind(run_id)
            .fetch_optional(&self.inner.pool)
            .await?;
        let ids: Vec<String> = json
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        Ok(ids.iter().filter_map(|id| GraphId::parse(id)).collect())
    }

    /// Makes sure the thread exists, belongs to this graph, and is free.
    async fn claim_thread(&self, thread: &str, graph_id: &str) -> Result<(), AppError> {
        if thread.is_empty() || thread.len() > 200 {
            return Err(AppError::InvalidInput(
                "`thread_id` must be 1 to 200 characters".into(),
            ));
        }
        let owner: Option<String> = sqlx::query_scalar("SELECT graph_id FROM threads WHERE id = ?")
            .bind(thread)
            .fetch_optional(&self.inner.pool)
            .await?;
        match owner {
            Some(owner) if owner != graph_id => {
                return Err(AppError::InvalidInput(format!(
                    "thread `{thread}` belongs to another graph"
                )));
            }
            Some(_) => {}
            None => {
                sqlx::query("INSERT OR IGNORE INTO threads (id, graph_id) VALUES (?, ?)")
                    .bind(thread)
                    .bind(graph_id)
                    .execute(&self.inner.pool)
                    .await?;
            }
        }
        if self
            .active()
            .values()
            .any(|active| active.thread_id == thread)
        {
            return Err(AppError::InvalidInput(format!(
                "thread `{thread}` has a run in progress; wait for it to end or cancel it"
            )));
        }
        Ok(())
    }

    /// Resumes a thread's paused run with `value`.
    pub async fn resume(&self, thread_id: &str, value: Value) -> Result<RunInfo, AppError> {
        let row: Option<(String, String, Option<String>)> = sqlx::query_as(
            "SELECT id, graph_id, user_id FROM runs WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )
        .bind(thread_id)
        .fetch_optional(&self.inner.pool)
        .await?;
        let (run_id, graph_id, user_id) =
            row.ok_or_else(|| AppError::not_found(format!("thread {thread_id}")))?;
        // The run keeps the credentials, and needs the access, of whoever
        // started it.
        let registry = self.registry_for(user_id.as_deref()).await?;
        let admission = self.admission_of(&run_id, user_id.as_deref()).await?;
        if self
            .active()
            .values()
            .any(|active| active.thread_id == thread_id)
        {
            return Err(AppError::InvalidInput(format!(
                "thread `{thread_id}` has a run in progress"
            )));
        }
        // Refuse here, synchronously, what the engine would refuse.
        let latest = self
            .inner
            .store
            .latest(&ThreadId::from(thread_id))
            .await
            .map_err(internal("cannot read a thread"))?;
        if latest.as_ref().map(|c| c.status) != Some(heddle_engine::run::RunStatus::Interrupted) {
            return Err(AppError::InvalidInput(format!(
                "thread `{thread_id}` is not waiting to be resumed"
            )));
        }
        sqlx::query("UPDATE runs SET status = 'queued', output = NULL WHERE id = ?")
            .bind(&run_id)
            .execute(&self.inner.pool)
            .await?;
        let thread = ThreadId::from(thread_id);
        self.launch(
            &run_id,
            &graph_id,
            thread_id,
            registry,
            admission,
            move |durable| async move { durable.resume(&thread, value).await },
        )?;
        self.get(&run_id).await
    }

    /// Registers a run and starts its task; `prepare` makes the engine run
    /// once a slot is free.
    fn launch<F, Fut>(
        &self,
        run_id: &str,
        graph_id: &str,
        thread_id: &str,
        registry: Registry,
        admission: Option<Admission>,
        prepare: F,
    ) -> Result<(), AppError>
    where
        F: FnOnce(Durable) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Run, DurableError>> + Send,
    {
        let hub = Arc::new(RunHub::new(Arc::clone(&self.inner.store)));
        {
            let mut active = self.active();
            if active.contains_key(run_id) {
                return Err(AppError::InvalidInput(format!(
                    "run `{run_id}` is already running"
                )));
            }
            active.insert(
                run_id.to_string(),
                Active {
                    graph_id: graph_id.to_string(),
                    thread_id: thread_id.to_string(),
                    hub: Arc::clone(&hub),
                    cancel: None,
                    cancel_requested: false,
                    task: None,
                },
            );
        }
        let runs = self.clone();
        let run_id = run_id.to_string();
        let graph_id = graph_id.to_string();
        let task = tokio::spawn({
            let run_id = run_id.clone();
            async move {
                runs.execute(run_id, graph_id, hub, registry, admission, prepare)
                    .await
            }
        });
        if let Some(active) = self.active().get_mut(&run_id) {
            active.task = Some(task.abort_handle());
        }
        Ok(())
    }

    async fn execute<F, Fut>(
        &self,
        run_id: String,
        graph_id: String,
        hub: Arc<RunHub>,
        registry: Registry,
        admission: Option<Admission>,
        prepare: F,
    ) where
        F: FnOnce(Durable) -> Fut,
        Fut: Future<Output = Result<Run, DurableError>>,
    {
        let permit = Arc::clone(&self.inner.permits).acquire_owned().await;
        let cancelled_while_queued = self
            .active()
            .get(&run_id)
            .is_some_and(|active| active.cancel_requested);
        let stopped = cancelled_while_queued || permit.is_err();
        // Access may have changed while the run waited (a link revoked, a
        // member removed): the starter must still reach every graph it runs.
        let refused = match (&admission, stopped) {
            (Some(admission), false) => embed::recheck(
                &self.inner.pool,
                &admission.starter,
                &graph_id,
                &admission.embeds,
            )
            .await
            .err(),
            _ => None,
        };
        let prepared = match (stopped, refused) {
            (true, _) => None,
            (false, Some(refused)) => Some(Err(format!(
                "the run may not start: whoever started it ({}) no longer has the access it needs: \
                 {refused}",
                admission
                    .as_ref()
                    .map_or("unknown", |admission| admission.starter.username.as_str())
            ))),
            (false, None) => {
                let durable = self
                    .inner
                    .durable
                    .clone()
                    .with_registry(registry)
                    .with_options(RunOptions {
                        keep_log: false,
                        sink: Some(Arc::clone(&hub) as Arc<dyn heddle_engine::run::EventSink>),
                        ..RunOptions::default()
                    });
                Some(prepare(durable).await.map_err(|error| error.to_string()))
            }
        };
        let result = match prepared {
            None => {
                self.record_end(
                    &run_id,
                    "cancelled",
                    None,
                    Some("cancelled before it started".into()),
                )
                .await;
                None
            }
            Some(Err(error)) => {
                tracing::warn!(run = %run_id, %error, "a run could not start");
                self.record_end(&run_id, "failed", None, Some(error)).await;
                None
            }
            Some(Ok(run)) => {
                if let Some(active) = self.active().get_mut(&run_id) {
                    let cancel = run.cancel_handle();
                    if active.cancel_requested {
                        cancel.cancel();
                    }
                    active.cancel = Some(cancel);
                }
                self.record_start(&run_id).await;
                Some(run.execute().await)
            }
        };
        if let Some(result) = result {
            let (status, output, error) = outcome(&result);
            self.record_end(&run_id, status, output, error).await;
        }
        hub.close().await;
        self.active().remove(&run_id);
        drop(permit);
    }

    async fn record_start(&self, run_id: &str) {
        let result = sqlx::query(
            "UPDATE runs SET status = 'running',
                    started_at = COALESCE(started_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
             WHERE id = ?",
        )
        .bind(run_id)
        .execute(&self.inner.pool)
        .await;
        if let Err(error) = result {
            tracing::error!(run = run_id, %error, "cannot record a run's start");
        }
        self.notify(run_id, "running");
    }

    async fn record_end(
        &self,
        run_id: &str,
        status: &'static str,
        output: Option<Value>,
        error: Option<String>,
    ) {
        let finished = status != "interrupted";
        let result = sqlx::query(
            "UPDATE runs SET status = ?, output = ?, error = ?,
                    finished_at = CASE WHEN ? THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END
             WHERE id = ?",
        )
        .bind(status)
        .bind(output.map(|output| output.to_string()))
        .bind(error)
        .bind(finished)
        .bind(run_id)
        .execute(&self.inner.pool)
        .await;
        if let Err(error) = result {
            tracing::error!(run = run_id, %error, "cannot record a run's end");
        }
        let _ = sqlx::query(
            "UPDATE threads SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE id = (SELECT thread_id FROM runs WHERE id = ?)",
        )
        .bind(run_id)
        .execute(&self.inner.pool)
        .await;
        self.notify(run_id, status);
    }

    fn notify(&self, run_id: &str, status: &'static str) {
        let notice = self.active().get(run_id).map(|active| Notice {
            graph_id: active.graph_id.clone(),
            run_id: run_id.to_string(),
            thread_id: active.thread_id.clone(),
            status,
        });
        if let Some(notice) = notice {
            let _ = self.inner.notices.send(notice);
        }
    }

    /// Cancels a run: a running one stops at once, a queued one never
    /// starts, a paused one is closed.
    pub async fn cancel(&self, run_id: &str) -> Result<RunInfo, AppError> {
        let info = self.get(run_id).await?;
        let handled = {
            let mut active = self.active();
            match active.get_mut(run_id) {
                Some(run) => {
                    run.cancel_requested = true;
                    if let Some(cancel) = &run.cancel {
                        cancel.cancel();
                    }
                    true
                }
                None => false,
            }
        };
        if !handled {
            if matches!(info.status.as_str(), "queued" | "running") {
                // Recorded as waiting or executing, but no task of this
                // server has it (it could not be recovered): close it.
                self.record_end(
                    run_id,
                    "cancelled",
                    None,
                    Some("cancelled before it started".into()),
                )
                .await;
                return self.get(run_id).await;
            }
            if info.status != "interrupted" {
                return Err(AppError::InvalidInput(format!(
                    "run `{run_id}` is {}; there is nothing to cancel",
                    info.status
                )));
            }
            self.inner
                .durable
                .cancel_pause(&ThreadId::from(info.thread_id.as_str()))
                .await
                .map_err(internal("cannot cancel a paused run"))?;
            self.record_end(
                run_id,
                "cancelled",
                None,
                Some("cancelled while paused".into()),
            )
            .await;
        }
        self.get(run_id).await
    }

    /// One run.
    pub async fn get(&self, run_id: &str) -> Result<RunInfo, AppError> {
        let run: Option<RunInfo> = sqlx::query_as(select_runs!("WHERE id = ?"))
            .bind(run_id)
            .fetch_optional(&self.inner.pool)
            .await?;
        run.ok_or_else(|| AppError::not_found(format!("run {run_id}")))
    }

    /// A graph's runs, newest first (at most `limit`).
    pub async fn list(&self, allowed: &Allowed, limit: i64) -> Result<Vec<RunInfo>, AppError> {
        let graph = allowed.graph();
        let runs = sqlx::query_as(select_runs!(
            "WHERE graph_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?"
        ))
        .bind(graph.as_str())
        .bind(limit.clamp(1, 1000))
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(runs)
    }

    /// A graph's threads, most recently active first.
    pub async fn threads(&self, allowed: &Allowed) -> Result<Vec<ThreadInfo>, AppError> {
        let graph = allowed.graph();
        let threads = sqlx::query_as(
            "SELECT t.id, t.graph_id, t.created_at, t.updated_at,
                    (SELECT COUNT(*) FROM runs r WHERE r.thread_id = t.id) AS runs,
                    (SELECT status FROM runs r WHERE r.thread_id = t.id
                     ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1) AS last_status
             FROM threads t WHERE t.graph_id = ? ORDER BY t.updated_at DESC",
        )
        .bind(graph.as_str())
        .fetch_all(&self.inner.pool)
        .await?;
        Ok(threads)
    }

    /// A thread: its record, its newest state, and the messages in it (the
    /// values of its `messages`-typed channels).
    pub async fn thread(&self, thread_id: &str) -> Result<Value, AppError> {
        let info: Option<ThreadInfo> = sqlx::query_as(
            "SELECT t.id, t.graph_id, t.created_at, t.updated_at,
                    (SELECT COUNT(*) FROM runs r WHERE r.thread_id = t.id) AS runs,
                    (SELECT status FROM runs r WHERE r.thread_id = t.id
                     ORDER BY r.created_at DESC, r.rowid DESC LIMIT 1) AS last_status
             FROM threads t WHERE t.id = ?",
        )
        .bind(thread_id)
        .fetch_optional(&self.inner.pool)
        .await?;
        let info = info.ok_or_else(|| AppError::not_found(format!("thread {thread_id}")))?;
        let latest = self
            .inner
            .store
            .latest(&ThreadId::from(thread_id))
            .await
            .map_err(internal("cannot read a thread"))?;
        let state = latest
            .map(|checkpoint| checkpoint.state)
            .unwrap_or(Value::Null);
        let messages: Vec<Value> = state
            .as_object()
            .into_iter()
            .flat_map(|channels| channels.values())
            .filter_map(Value::as_array)
            .filter(|items| {
                !items.is_empty()
                    && items
                        .iter()
                        .all(|m| m.get("role").is_some_and(Value::is_string))
            })
            .flatten()
            .cloned()
            .collect();
        Ok(serde_json::json!({"thread": info, "state": state, "messages": messages}))
    }

    /// A run's events from `from_seq` on: the stored ones, then those of
    /// its running execution that are not stored yet.
    pub async fn events(&self, run_id: &str, from_seq: u64) -> Result<Vec<Arc<Event>>, AppError> {
        self.get(run_id).await?;
        let hub = self.hub(run_id);
        let in_memory = hub.map(|hub| hub.watch(from_seq));
        let first_live = in_memory
            .as_ref()
            .and_then(|replay| replay.first_seq)
            .unwrap_or(u64::MAX);
        let mut events: Vec<Arc<Event>> = Vec::new();
        if from_seq < first_live {
            let stored = self
                .inner
                .store
                .events(&RunId::from(run_id), from_seq)
                .await
                .map_err(internal("cannot read events"))?;
            events.extend(
                stored
                    .into_iter()
                    .filter(|event| event.seq < first_live)
                    .map(Arc::new),
            );
        }
        if let Some(replay) = in_memory {
            let next = events.last().map_or(from_seq, |event| event.seq + 1);
            events.extend(
                replay
                    .backlog
                    .into_iter()
                    .filter(|frame| frame.seq() >= next)
                    .map(|frame| frame.event),
            );
        }
        Ok(events)
    }

    /// Finishes the runs a previous process left running or queued. Each
    /// run recovers on its own: one that cannot (its graph gone, its
    /// starter no longer allowed, its document broken) is marked failed
    /// with the reason, and the others go on.
    pub async fn recover(&self) -> Result<usize, AppError> {
        let mut count = 0;
        let unfinished = self
            .inner
            .store
            .unfinished()
            .await
            .map_err(internal("cannot list unfinished runs"))?;
        for record in unfinished {
            let run_id = record.run_id.to_string();
            match self.recover_running(record).await {
                Ok(true) => count += 1,
                Ok(false) => {}
                Err(error) => self.fail_recovery(&run_id, error).await,
            }
        }
        // Runs that were still queued never reached the engine: queue them again.
        let queued: Vec<RunInfo> = sqlx::query_as(select_runs!(
            "WHERE status = 'queued' ORDER BY created_at, rowid"
        ))
        .fetch_all(&self.inner.pool)
        .await?;
        for run in queued {
            let run_id = run.id.clone();
            match self.recover_queued(run).await {
                Ok(()) => count += 1,
                Err(error) => self.fail_recovery(&run_id, error).await,
            }
        }
        if count > 0 {
            tracing::info!(runs = count, "recovered runs from the last start");
        }
        Ok(count)
    }

    /// Goes on with a run that was executing; `false` when it is not one
    /// of the app's runs.
    async fn recover_running(
        &self,
        record: heddle_engine::run::RunRecord,
    ) -> Result<bool, AppError> {
        let run_id = record.run_id.to_string();
        let Ok(info) = self.get(&run_id).await else {
            return Ok(false);
        };
        let user_id = run_user(&self.inner.pool, &run_id).await?;
        let registry = self.registry_for(user_id.as_deref()).await?;
        let admission = self.admission_of(&run_id, user_id.as_deref()).await?;
        self.launch(
            &run_id,
            &info.graph_id,
            &info.thread_id,
            registry,
            admission,
            move |durable| async move {
                durable.recover_run(&record).await?.ok_or_else(|| {
                    DurableError::Store(heddle_engine::run::StoreError(
                        "the thread has moved on".into(),
                    ))
                })
            },
        )?;
        Ok(true)
    }

    /// Starts again a run that was queued: its graph is embedded and
    /// compiled anew, for its starter, through the access check.
    async fn recover_queued(&self, run: RunInfo) -> Result<(), AppError> {
        let user_id = run_user(&self.inner.pool, &run.id).await?;
        let starter = match &user_id {
            Some(id) => accounts::user_by_id(&self.inner.pool, id).await?,
            None => None,
        }
        .ok_or_else(|| AppError::Forbidden("the user who started it no longer exists".into()))?;
        let allowed = require(
            &self.inner.pool,
            Some(&starter),
            &run.graph_id,
            Role::Editor,
        )
        .await?;
        let (_, registry, graph, embeds) = self.prepare(&allowed).await?;
        let (thread, id, input) = (
            ThreadId::from(run.thread_id.as_str()),
            RunId::from(run.id.as_str()),
            run.input.clone(),
        );
        self.launch(
            &run.id,
            &run.graph_id,
            &run.thread_id,
            registry,
            Some(Admission { starter, embeds }),
            move |durable| async move { durable.start(Arc::new(graph), thread, id, input).await },
        )
    }

    /// Marks a run that could not be recovered as failed, saying why.
    async fn fail_recovery(&self, run_id: &str, error: AppError) {
        tracing::warn!(run = run_id, %error, "a run could not be recovered");
        self.record_end(
            run_id,
            "failed",
            None,
            Some(format!("the run could not go on after a restart: {error}")),
        )
        .await;
    }

    /// Who a run needs access for when it goes on: its starter, and the
    /// graphs it embeds (`None` for runs from before accounts).
    async fn admission_of(
        &self,
        run_id: &str,
        user_id: Option<&str>,
    ) -> Result<Option<Admission>, AppError> {
        let Some(user_id) = user_id else {
            return Ok(None);
        };
        let starter = accounts::user_by_id(&self.inner.pool, user_id)
            .await?
            .ok_or_else(|| {
                AppError::Forbidden("the user who started it no longer exists".into())
            })?;
        Ok(Some(Admission {
            starter,
            embeds: self.embeds_of(run_id).await?,
        }))
    }

    /// Stops every run task at once (on shutdown). Their last checkpoints
    /// are stored; [`Runs::recover`] finishes them on the next start.
    pub fn shutdown(&self) {
        for active in self.active().values() {
            if let Some(task) = &active.task {
                task.abort();
            }
            active.hub.close_now();
        }
    }

    /// How many runs are executing or queued.
    pub fn active_count(&self) -> usize {
        self.active().len()
    }
}

/// The id of the user who started a run, if known.
async fn run_user(pool: &SqlitePool, run_id: &str) -> Result<Option<String>, AppError> {
    Ok(
        sqlx::query_scalar::<_, Option<String>>("SELECT user_id FROM runs WHERE id = ?")
            .bind(run_id)
            .fetch_optional(pool)
            .await?
            .flatten(),
    )
}

/// Who must still have access when a run starts or goes on.
struct Admission {
    starter: User,
    /// The saved graphs it embeds.
    embeds: Vec<GraphId>,
}

/// A run's input: a JSON object (absent means empty), within the size limit.
fn run_input(input: Value) -> Result<Value, AppError> {
    let input = match input {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(fields) => Value::Object(fields),
        _ => {
            return Err(AppError::InvalidInput(
                "`input` must be a JSON object of channel values".into(),
            ));
        }
    };
    let input_size = input.to_string().len();
    if input_size > MAX_INPUT_BYTES {
        return Err(AppError::TooLarge(format!(
            "the run's input is {input_size} bytes; the limit is {MAX_INPUT_BYTES}"
        )));
    }
    Ok(input)
}

/// Refuses, before the run is queued, input for channels the graph does
/// not have or values their channels would refuse, naming every one.
fn check_input(graph: &CompiledGraph, input: &Value) -> Result<(), AppError> {
    let Value::Object(fields) = input else {
        return Ok(());
    };
    let problems = heddle_engine::state::check_input(&graph.document().state.channels, fields);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = problems
        .iter()
        .map(|problem| format!("`input.{}`: {}", problem.channel, problem.message))
        .collect();
    Err(AppError::InvalidInput(format!(
        "the input does not fit the graph's state: {}",
        listed.join("; ")
    )))
}

/// Reads and compiles a document with its subgraphs embedded, or says what
/// stops it from running.
fn compile_value(document: Value, registry: &Registry) -> Result<CompiledGraph, AppError> {
    let document = GraphDocument::from_value(document).map_err(|error| AppError::InvalidGraph {
        message: error.to_string(),
        problems: Vec::new(),
    })?;
    compile_document(document, registry)
}

/// Compiles a document, or says what stops it from running.
fn compile_document(
    document: GraphDocument,
    registry: &Registry,
) -> Result<CompiledGraph, AppError> {
    heddle_engine::compile(&document, registry).map_err(|report| AppError::InvalidGraph {
        message: format!(
            "the graph has {} problem(s) that stop it from running",
            report.errors().count()
        ),
        problems: report.problems,
    })
}

fn outcome(result: &Result<RunOutput, RunError>) -> (&'static str, Option<Value>, Option<String>) {
    match result {
        Ok(output) if output.is_interrupted() => (
            "interrupted",
            Some(serde_json::json!({"state": output.state, "interrupts": output.interrupts})),
            None,
        ),
        Ok(output) => ("finished", Some(output.state.clone()), None),
        Err(error @ RunError::Cancelled { .. }) => ("cancelled", None, Some(error.to_string())),
        Err(error) => ("failed", None, Some(error.to_string())),
    }
}
