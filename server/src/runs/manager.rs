//! The run manager: starting, resuming, forking and cancelling runs as
//! background tasks (at most a configured number at once, the rest
//! queued), and keeping the `runs` records (through the runs data module)
//! in step with them. Requests are in [`super::requests`], what a run
//! needs before it may start in [`super::admission`], recovery after a
//! restart in [`super::recovery`], and reading a run's events in
//! [`super::replay`].

mod admission;
mod recovery;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use heddle_engine::run::postgres::PostgresStore;
use heddle_engine::run::sqlite::SqliteStore;
use heddle_engine::run::{
    CancelHandle, CheckpointStore, Durable, DurableError, Run, RunError, RunOptions, RunOutput,
    RunStatus,
};
use heddle_engine::{CompiledGraph, GraphDocument, Registry, RunId, ThreadId};
use heddle_store::access::{Allowed, OnRun, OnThread};
use heddle_store::db::Db;
use heddle_store::graphs;
use heddle_store::runs as records;
use heddle_store::secrets;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::graphs::GraphId;
use heddle_wire::limits::MAX_INPUT_BYTES;
use heddle_wire::runs::{ForkRequest, RunInfo, RunOrigin, StartRequest, ThreadInfo, ThreadView};
use serde_json::Value;
use tokio::sync::{Semaphore, broadcast};
use tokio::task::AbortHandle;

use super::embed;
use super::fence::LeaseFenced;
use super::hub::RunHub;
use super::requests::{RunRequest, check_input, run_input};
use admission::Admission;
use heddle_wire::protocol::RunNotice;

/// Where the chat widgets' threads are named (`widget-<widget>-<conversation>`):
/// nobody else may start a thread there.
pub const WIDGET_THREADS: &str = "widget-";

/// How long a lease lasts unless renewed, by default: a server that dies
/// leaves its runs for this long before another takes them over.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// Runs on this server.
#[derive(Clone)]
pub struct Runs {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) db: Db,
    /// Opens users' secrets for their runs.
    pub(super) secret_key: secrets::SecretKey,
    pub(super) registry: Registry,
    pub(super) store: Arc<dyn CheckpointStore>,
    pub(super) durable: Durable,
    permits: Arc<Semaphore>,
    /// How many runs it executes at once.
    max_concurrent: usize,
    /// Whether it executes runs (else it queues them for other servers).
    executes: std::sync::atomic::AtomicBool,
    /// Told when a run ends here: a slot is free for a queued one.
    pub(super) slot_freed: tokio::sync::Notify,
    /// Set when the server shuts down: runs stop after their current step
    /// and queued ones do not start.
    handing_over: std::sync::atomic::AtomicBool,
    active: Mutex<HashMap<String, Active>>,
    notices: broadcast::Sender<RunNotice>,
    /// How many runs one user may have queued or running.
    max_per_user: AtomicUsize,
    /// This server's name in run leases, unique per process.
    replica: String,
    /// How long its leases last, in milliseconds.
    lease_ms: Arc<AtomicU64>,
    /// What other servers announce (PostgreSQL).
    pub(super) wakeups: super::wake::Wakeups,
    /// Traces and metrics, fed by every run's events.
    pub(super) telemetry: Arc<crate::telemetry::Telemetry>,
}

/// A run being executed (or waiting for its turn).
pub(super) struct Active {
    graph_id: String,
    pub(super) thread_id: String,
    pub(super) hub: Arc<RunHub>,
    cancel: Option<CancelHandle>,
    cancel_requested: bool,
    task: Option<AbortHandle>,
}

/// Logs a storage failure with its context and hides it from the client.
pub(super) fn internal<E: std::fmt::Display>(context: &str) -> impl Fn(E) -> AppError + '_ {
    move |error| {
        tracing::error!(%error, "{context}");
        AppError::Internal
    }
}

impl Runs {
    /// The run manager over the server's database, running at most
    /// `max_concurrent` runs at once.
    pub async fn new(
        db: Db,
        max_concurrent: usize,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        Self::with_registry(db, max_concurrent, Registry::new()).await
    }

    /// The same, with the kinds, models and tools graphs may use (and a
    /// secret key that lives as long as the process).
    pub async fn with_registry(
        db: Db,
        max_concurrent: usize,
        registry: Registry,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        let key = secrets::SecretKey::ephemeral()
            .map_err(|error| heddle_engine::run::StoreError(error.to_string()))?;
        Self::with_key(db, max_concurrent, registry, key).await
    }

    /// The same, with the key users' secrets are encrypted under.
    pub async fn with_key(
        db: Db,
        max_concurrent: usize,
        registry: Registry,
        secret_key: secrets::SecretKey,
    ) -> Result<Self, heddle_engine::run::StoreError> {
        let replica = format!("server-{}", uuid::Uuid::new_v4());
        let lease_ms = Arc::new(AtomicU64::new(DEFAULT_LEASE.as_millis() as u64));
        let store: Arc<dyn CheckpointStore> = match &db {
            // One server per SQLite file: nobody to fence out.
            Db::Sqlite(pool) => SqliteStore::from_pool(pool.clone()).await?.shared(),
            Db::Postgres(pool) => Arc::new(LeaseFenced::new(
                PostgresStore::from_pool(pool.clone()).await?,
                replica.clone(),
                Arc::clone(&lease_ms),
            )),
        };
        let durable = Durable::new(Arc::clone(&store)).with_registry(registry.clone());
        Ok(Runs {
            inner: Arc::new(Inner {
                db,
                secret_key,
                registry,
                store,
                durable,
                permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
                max_concurrent: max_concurrent.max(1),
                executes: std::sync::atomic::AtomicBool::new(true),
                slot_freed: tokio::sync::Notify::new(),
                handing_over: std::sync::atomic::AtomicBool::new(false),
                active: Mutex::new(HashMap::new()),
                notices: broadcast::Sender::new(256),
                max_per_user: AtomicUsize::new(4),
                replica,
                lease_ms,
                wakeups: super::wake::Wakeups::default(),
                telemetry: Arc::default(),
            }),
        })
    }

    pub(super) fn active(&self) -> MutexGuard<'_, HashMap<String, Active>> {
        self.inner
            .active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The tools and models graphs run with here.
    pub fn catalog(&self) -> heddle_engine::Catalog {
        self.inner.registry.catalog()
    }

    /// The registry graphs are validated with before they are saved or
    /// run: the server's own tools and models (no one's secrets).
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The runs' traces and metrics.
    pub fn telemetry(&self) -> &Arc<crate::telemetry::Telemetry> {
        &self.inner.telemetry
    }

    /// Sets how many runs one user may have queued or running at once.
    pub fn set_max_per_user(&self, limit: usize) {
        self.inner
            .max_per_user
            .store(limit.max(1), Ordering::Relaxed);
    }

    /// Sets how long this server's run leases last unless renewed (they
    /// are renewed every third of it).
    pub fn set_lease_duration(&self, duration: Duration) {
        let ms = duration.as_millis().clamp(300, 3_600_000) as u64;
        self.inner.lease_ms.store(ms, Ordering::Relaxed);
    }

    /// Makes this server queue the runs it is asked for, for other
    /// servers to execute (`heddle serve --role web`), or execute them.
    pub fn set_executes(&self, executes: bool) {
        self.inner.executes.store(executes, Ordering::Relaxed);
    }

    fn executes(&self) -> bool {
        self.inner.executes.load(Ordering::Relaxed)
    }

    /// How many more runs this server could take now.
    pub(super) fn free_slots(&self) -> usize {
        if !self.executes() {
            return 0;
        }
        self.inner
            .max_concurrent
            .saturating_sub(self.active().len())
    }

    /// The lease a run asked of this server is queued with: this server's
    /// when it executes runs, else none (any server takes it).
    fn new_lease(&self) -> Option<records::Lease> {
        self.executes().then(|| self.lease())
    }

    /// This server's lease on the runs it queues and executes.
    pub(super) fn lease(&self) -> records::Lease {
        records::Lease {
            owner: self.inner.replica.clone(),
            duration: Duration::from_millis(self.inner.lease_ms.load(Ordering::Relaxed)),
        }
    }

    /// The key users' secrets are encrypted under.
    pub fn secret_key(&self) -> &secrets::SecretKey {
        &self.inner.secret_key
    }

    /// The checkpoint store (stored events, threads).
    pub fn store(&self) -> &Arc<dyn CheckpointStore> {
        &self.inner.store
    }

    /// The database the run records are in.
    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    /// The hub of a run being executed, if it is.
    pub fn hub(&self, run_id: &str) -> Option<Arc<RunHub>> {
        self.active()
            .get(run_id)
            .map(|active| Arc::clone(&active.hub))
    }

    /// Hears the ids of runs whose events were stored by any server on this
    /// database (after [`Runs::listen_for_events`]).
    pub fn wakeups(&self) -> broadcast::Receiver<Arc<str>> {
        self.inner.wakeups.subscribe()
    }

    /// Hears the runs someone asked, through another server, to cancel.
    pub(super) fn cancels(&self) -> broadcast::Receiver<Arc<str>> {
        self.inner.wakeups.cancels()
    }

    /// Listens for what other servers announce (PostgreSQL only): stored
    /// events, cancels, queued runs, and access changes (passed on to
    /// `access`), until the server stops.
    pub fn listen_for_events(
        &self,
        access: heddle_store::access_events::AccessEvents,
    ) -> Option<tokio::task::JoinHandle<()>> {
        self.inner.wakeups.listen(
            &self.inner.db,
            super::wake::Relayed {
                access,
                notices: self.inner.notices.clone(),
                replica: self.inner.replica.clone(),
            },
        )
    }

    /// Notices of runs starting, pausing and ending, for graph watchers.
    pub fn notices(&self) -> broadcast::Receiver<RunNotice> {
        self.inner.notices.subscribe()
    }

    /// Starts a run of the version `request` names, or of the graph's
    /// newest (the draft, as the editor shows it), for the user `allowed`
    /// names; it waits for a free slot in the background. API keys never
    /// run drafts: see [`Runs::start_published`].
    pub async fn start(
        &self,
        allowed: &Allowed,
        request: StartRequest,
    ) -> Result<RunInfo, AppError> {
        allowed.at_least(Role::Editor)?;
        if let Some(trigger) = allowed.trigger() {
            return Err(AppError::Forbidden(format!(
                "{} runs only the published version: POST /api/v1/graphs/{}/invoke",
                trigger.describe(),
                allowed.graph()
            )));
        }
        if let Some(version) = request.graph_version {
            let prepared = self.prepare_version(allowed, version).await?;
            return self
                .start_compiled(allowed, request, version, prepared)
                .await;
        }
        let (detail, registry, graph, embeds) = self.prepare(allowed).await?;
        self.start_compiled(allowed, request, detail.version, (registry, graph, embeds))
            .await
    }

    /// Starts a run of the graph's published version: what calls from
    /// outside the editor run (409 when nothing is published).
    pub async fn start_published(
        &self,
        allowed: &Allowed,
        request: StartRequest,
    ) -> Result<RunInfo, AppError> {
        allowed.at_least(Role::Editor)?;
        let version = heddle_store::publishing::publication(&self.inner.db, allowed)
            .await?
            .ok_or_else(|| AppError::NotPublished {
                graph: allowed.graph().to_string(),
            })?
            .version;
        let prepared = self.prepare_version(allowed, version).await?;
        self.start_compiled(allowed, request, version, prepared)
            .await
    }

    /// Records and launches a start of `version`, compiled.
    async fn start_compiled(
        &self,
        allowed: &Allowed,
        request: StartRequest,
        version: i64,
        (registry, graph, embeds): (Registry, CompiledGraph, Vec<GraphId>),
    ) -> Result<RunInfo, AppError> {
        let user = allowed.user();
        let stored = RunRequest::Start {
            interrupt_before: request.interrupt_before.clone(),
            interrupt_after: request.interrupt_after.clone(),
        }
        .to_json();
        let input = run_input(request.input)?;
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
        let graph_id = allowed.graph().to_string();
        if let Some(thread) = &request.thread_id
            && thread.starts_with(WIDGET_THREADS)
            && allowed
                .trigger()
                .is_none_or(|trigger| trigger.origin != RunOrigin::Widget)
        {
            return Err(AppError::InvalidInput(format!(
                "`thread_id`: ids starting `{WIDGET_THREADS}` are the chat widgets' own"
            )));
        }
        let thread_id = match request.thread_id {
            Some(thread) => thread,
            None => format!("thread-{}", uuid::Uuid::new_v4()),
        };
        self.claim_thread(&thread_id, &graph_id).await?;
        // A new run on a paused thread would leave its pause unanswerable.
        let paused = self
            .inner
            .store
            .latest(&ThreadId::from(thread_id.as_str()))
            .await
            .map_err(internal("cannot read a thread"))?
            .is_some_and(|latest| latest.status == heddle_engine::run::RunStatus::Interrupted);
        if paused {
            return Err(AppError::ThreadPaused { thread: thread_id });
        }
        let run_id = self
            .record_queued(records::NewRun {
                graph_id: &graph_id,
                graph_version: version,
                thread_id: &thread_id,
                input: &input,
                starter: user,
                embeds: &embeds,
                request: &stored,
                lease: self.new_lease().as_ref(),
                trigger: allowed.trigger(),
                fork: None,
            })
            .await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
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
        self.record(&run_id).await
    }

    /// Forks run `source_id` (time travel): a new run on its thread goes on
    /// from the checkpoint before `request.step`, with `request.edits`
    /// applied to the state. The source run and its history stay as they
    /// were; the new run is a branch.
    pub async fn fork(&self, run: &OnRun, request: ForkRequest) -> Result<RunInfo, AppError> {
        run.allowed().at_least(Role::Editor)?;
        let (source_id, user) = (run.run_id(), run.allowed().user());
        let source = self.record(source_id).await?;
        let edits_size = Value::Object(request.edits.clone()).to_string().len();
        if edits_size > MAX_INPUT_BYTES {
            return Err(AppError::TooLarge(format!(
                "the fork's edits are {edits_size} bytes; the limit is {MAX_INPUT_BYTES}"
            )));
        }
        // Refuse here, synchronously, edits the engine would refuse.
        let stored =
            graphs::stored_version(&self.inner.db, &source.graph_id, source.graph_version).await?;
        for (channel, value) in &request.edits {
            self.inner
                .registry
                .value_limits()
                .check(value)
                .map_err(|error| AppError::InvalidInput(format!("`edits.{channel}`: {error}")))?;
        }
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
        let embeds = records::embeds_of(&self.inner.db, source_id).await?;
        let stored = RunRequest::Fork {
            checkpoint: checkpoint.to_string(),
            edits: request.edits.clone(),
            start_at: request.start_at.clone(),
        }
        .to_json();
        let run_id = self
            .record_queued(records::NewRun {
                graph_id: &source.graph_id,
                graph_version: source.graph_version,
                thread_id: &source.thread_id,
                input: &edits,
                starter: user,
                embeds: &embeds,
                request: &stored,
                lease: self.new_lease().as_ref(),
                trigger: run.allowed().trigger(),
                fork: Some((source_id, request.step)),
            })
            .await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
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
        self.record(&run_id).await
    }

    /// Makes sure the thread exists, belongs to this graph, and is free.
    async fn claim_thread(&self, thread: &str, graph_id: &str) -> Result<(), AppError> {
        if thread.is_empty() || thread.len() > 200 {
            return Err(AppError::InvalidInput(
                "`thread_id` must be 1 to 200 characters".into(),
            ));
        }
        if thread.chars().any(char::is_control) {
            return Err(AppError::InvalidInput(
                "`thread_id` must not hold control characters".into(),
            ));
        }
        match heddle_store::access::belongs::thread_graph(&self.inner.db, thread).await? {
            Some(owner) if owner != graph_id => {
                return Err(AppError::InvalidInput(format!(
                    "thread `{thread}` belongs to another graph"
                )));
            }
            Some(_) => {}
            None => records::create_thread(&self.inner.db, thread, graph_id).await?,
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

    /// Records a new run, queued, within its starter's limit.
    async fn record_queued(&self, run: records::NewRun<'_>) -> Result<String, AppError> {
        let limit = self.inner.max_per_user.load(Ordering::Relaxed);
        records::record_queued(&self.inner.db, run, limit).await
    }

    /// Resumes a thread's paused run with `value`.
    pub async fn resume(&self, thread: &OnThread, value: Value) -> Result<RunInfo, AppError> {
        thread.allowed().at_least(Role::Editor)?;
        let thread_id = thread.thread_id();
        let (run_id, graph_id, user_id) = records::newest_of_thread(&self.inner.db, thread_id)
            .await?
            .ok_or_else(|| AppError::not_found(format!("thread {thread_id}")))?;
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
        let Some(paused) =
            latest.filter(|c| c.status == heddle_engine::run::RunStatus::Interrupted)
        else {
            return Err(AppError::InvalidInput(format!(
                "thread `{thread_id}` is not waiting to be resumed"
            )));
        };
        let run = self.record(&run_id).await?;
        let document = graphs::stored_version(&self.inner.db, &run.graph_id, run.graph_version)
            .await?
            .and_then(|json| GraphDocument::from_json(&json).ok());
        let limits = registry.value_limits();
        let value = super::requests::typed_answer(&paused, document.as_ref(), &limits, value)?;
        let stored = RunRequest::Resume {
            value: value.clone(),
        }
        .to_json();
        records::requeue(&self.inner.db, &run_id, &stored, self.new_lease().as_ref()).await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
        let thread = ThreadId::from(thread_id);
        self.launch(
            &run_id,
            &graph_id,
            thread_id,
            registry,
            admission,
            move |durable| async move { durable.resume(&thread, value).await },
        )?;
        self.record(&run_id).await
    }

    /// Registers a run and starts its task; `prepare` makes the engine run
    /// once a slot is free.
    pub(super) fn launch<F, Fut>(
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
        if self.inner.handing_over.load(Ordering::Acquire) {
            // The server is shutting down: the run stays queued, for the
            // server that takes it once this one's lease is released.
            hub.close_now();
            self.active().remove(&run_id);
            return;
        }
        let cancelled_while_queued = self
            .active()
            .get(&run_id)
            .is_some_and(|active| active.cancel_requested);
        // Another server took the run over while it waited here (this one
        // could not renew its lease): it is theirs; leave it untouched.
        let owner = self.inner.replica.clone();
        if let Ok(true) = records::leased_elsewhere(&self.inner.db, &run_id, &owner).await {
            tracing::info!(run = %run_id, "another server took this run over");
            hub.close_now();
            self.active().remove(&run_id);
            return;
        }
        let stopped = cancelled_while_queued || permit.is_err();
        // Access may have changed while the run waited (a link revoked, a
        // member removed): the starter must still reach every graph it runs.
        let refused = match (&admission, stopped) {
            (Some(admission), false) => embed::recheck(
                &self.inner.db,
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
                        sink: Some(Arc::new(crate::telemetry::Observed::new(
                            Arc::clone(&hub) as Arc<dyn heddle_engine::run::EventSink>,
                            Arc::clone(&self.inner.telemetry),
                            &graph_id,
                        ))),
                        ..RunOptions::default()
                    });
                Some(prepare(durable).await.map_err(|error| error.to_string()))
            }
        };
        let result = match prepared {
            None => {
                self.record_end(
                    &run_id,
                    RunStatus::Cancelled,
                    None,
                    Some("cancelled before it started".into()),
                )
                .await;
                None
            }
            Some(Err(error)) => {
                tracing::warn!(run = %run_id, %error, "a run could not start");
                self.record_end(&run_id, RunStatus::Failed, None, Some(error))
                    .await;
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
                let meter = run.meter();
                Some((run.execute().await, meter.total()))
            }
        };
        match result {
            Some((Err(RunError::HandedOver { step }), _)) => {
                // Not ended: another server goes on from its checkpoint.
                tracing::info!(run = %run_id, step, "handed the run over after its step");
            }
            Some((result, usage)) => {
                let (status, output, error) = outcome(&result);
                self.record_end_using(&run_id, status, output, error, Some(&usage))
                    .await;
            }
            None => {}
        }
        hub.close().await;
        self.active().remove(&run_id);
        drop(permit);
        // Only PostgreSQL has runs queued for any server (a web server's,
        // a released lease's); on SQLite every run is this server's already.
        if matches!(self.inner.db, Db::Postgres(_)) {
            self.inner.slot_freed.notify_one();
        }
    }

    async fn record_start(&self, run_id: &str) {
        match records::mark_running(&self.inner.db, run_id, &self.inner.replica).await {
            Ok(true) => self.notify(run_id, RunStatus::Running),
            Ok(false) => tracing::warn!(run = run_id, "another server holds this run's lease"),
            Err(error) => tracing::error!(run = run_id, %error, "cannot record a run's start"),
        }
    }

    /// Records a run's end; what it used stays as recorded before.
    pub(super) async fn record_end(
        &self,
        run_id: &str,
        status: RunStatus,
        output: Option<Value>,
        error: Option<String>,
    ) -> bool {
        self.record_end_using(run_id, status, output, error, None)
            .await
    }

    /// Records a run's end and what its model calls used.
    async fn record_end_using(
        &self,
        run_id: &str,
        status: RunStatus,
        output: Option<Value>,
        error: Option<String>,
        usage: Option<&heddle_engine::usage::UsageTotals>,
    ) -> bool {
        let recorded = records::mark_ended(
            &self.inner.db,
            run_id,
            &self.inner.replica,
            status,
            output.as_ref(),
            error.as_deref(),
            usage,
        )
        .await;
        match recorded {
            Ok(true) => {
                tracing::info!(
                    run = run_id,
                    status = status.as_str(),
                    trace_id = %crate::telemetry::traces::trace_id(run_id),
                    "run ended"
                );
                self.notify(run_id, status);
                true
            }
            // Its record is the server's that took it over.
            Ok(false) => {
                tracing::warn!(run = run_id, "another server holds this run's lease");
                false
            }
            Err(error) => {
                tracing::error!(run = run_id, %error, "cannot record a run's end");
                false
            }
        }
    }

    fn notify(&self, run_id: &str, status: RunStatus) {
        let notice = self.active().get(run_id).map(|active| RunNotice {
            graph_id: active.graph_id.clone(),
            run_id: run_id.to_string(),
            thread_id: active.thread_id.clone(),
            status,
        });
        if let Some(notice) = notice {
            self.inner
                .wakeups
                .announce_notice(&self.inner.db, &self.inner.replica, &notice);
            let _ = self.inner.notices.send(notice);
        }
    }

    /// Cancels a run: a running one stops at once, a queued one never
    /// starts, a paused one is closed.
    pub async fn cancel(&self, run: &OnRun) -> Result<RunInfo, AppError> {
        run.allowed().at_least(Role::Editor)?;
        self.stop(run.run_id()).await
    }

    /// Stops every queued or running run of the graph `allowed` names: its
    /// owner is deleting it, and nothing may write to rows being deleted.
    pub async fn stop_all(&self, allowed: &Allowed) -> Result<(), AppError> {
        allowed.at_least(Role::Owner)?;
        for run in self.list(allowed, 1000).await? {
            if run.status.is_active() {
                // One that ends on its own meanwhile has nothing to stop.
                let _ = self.stop(&run.id).await;
            }
        }
        Ok(())
    }

    async fn stop(&self, run_id: &str) -> Result<RunInfo, AppError> {
        let info = self.record(run_id).await?;
        let handled = self.cancel_local(run_id);
        if !handled {
            if info.status.is_active()
                && records::leased_elsewhere(&self.inner.db, run_id, &self.inner.replica).await?
            {
                // Another server executes it: that server stops it (at once
                // on PostgreSQL's notification, or at its next renewal).
                records::request_cancel(&self.inner.db, run_id).await?;
                return self.record(run_id).await;
            }
            if info.status.is_active() {
                // Queued for any server and not taken yet, or no task of
                // this server has it (it could not be recovered): close it,
                // unless a server took it meanwhile: then ask that one.
                let closed = self
                    .record_end(
                        run_id,
                        RunStatus::Cancelled,
                        None,
                        Some("cancelled before it started".into()),
                    )
                    .await;
                if !closed {
                    records::request_cancel(&self.inner.db, run_id).await?;
                }
                return self.record(run_id).await;
            }
            if info.status != RunStatus::Interrupted {
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
                RunStatus::Cancelled,
                None,
                Some("cancelled while paused".into()),
            )
            .await;
        }
        self.record(run_id).await
    }

    /// One run, for a caller allowed to see it.
    pub async fn get(&self, run: &OnRun) -> Result<RunInfo, AppError> {
        self.record(run.run_id()).await
    }

    /// One run's record, with no access check: for the server's own
    /// work (recovery, the websocket after its own check) and tests.
    pub async fn record(&self, run_id: &str) -> Result<RunInfo, AppError> {
        records::get(&self.inner.db, run_id)
            .await?
            .ok_or_else(|| AppError::not_found(format!("run {run_id}")))
    }

    /// A graph's runs, newest first (at most `limit`).
    pub async fn list(&self, allowed: &Allowed, limit: i64) -> Result<Vec<RunInfo>, AppError> {
        records::list(&self.inner.db, allowed, limit).await
    }

    /// A graph's threads, most recently active first.
    pub async fn threads(&self, allowed: &Allowed) -> Result<Vec<ThreadInfo>, AppError> {
        records::threads(&self.inner.db, allowed).await
    }

    /// A thread: its record, its newest state, and the messages in it (the
    /// values of its `messages`-typed channels).
    pub async fn thread(&self, thread: &OnThread) -> Result<ThreadView, AppError> {
        let thread_id = thread.thread_id();
        let info = records::thread(&self.inner.db, thread_id)
            .await?
            .ok_or_else(|| AppError::not_found(format!("thread {thread_id}")))?;
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
        Ok(ThreadView {
            thread: info,
            state,
            messages,
        })
    }

    /// Hands this server's runs over (a graceful shutdown): each stops
    /// after the step in flight, once that step's checkpoint is stored, and
    /// queued ones do not start. Those still in a step after `grace` are
    /// stopped at once (their step runs again where they are taken over).
    pub async fn hand_over(&self, grace: Duration) {
        self.inner.handing_over.store(true, Ordering::Release);
        for active in self.active().values() {
            match &active.cancel {
                Some(cancel) => cancel.hand_over(),
                None => {
                    if let Some(task) = &active.task {
                        task.abort();
                    }
                }
            }
        }
        // A permit for a queued run: it sees the flag and leaves.
        self.inner.permits.add_permits(self.active().len());
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline {
            let busy = self
                .active()
                .values()
                .any(|active| active.task.as_ref().is_some_and(|task| !task.is_finished()));
            if !busy {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.shutdown();
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

    /// Cancels a run this server executes or queues: a running one stops
    /// at once, a queued one never starts. `false` when it has no such run.
    pub(super) fn cancel_local(&self, run_id: &str) -> bool {
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
    }

    /// Stops a run here without recording anything: another server holds
    /// its lease, and its record and log are theirs.
    pub(super) fn drop_local(&self, run_id: &str) {
        if let Some(active) = self.active().remove(run_id) {
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

/// Where a run's execution left it: its status, output and error.
fn outcome(result: &Result<RunOutput, RunError>) -> (RunStatus, Option<Value>, Option<String>) {
    match result {
        Ok(output) if output.is_interrupted() => (
            RunStatus::Interrupted,
            Some(serde_json::json!({"state": output.state, "interrupts": output.interrupts})),
            None,
        ),
        Ok(output) => (RunStatus::Finished, Some(output.state.clone()), None),
        Err(error @ RunError::Cancelled { .. }) => {
            (RunStatus::Cancelled, None, Some(error.to_string()))
        }
        Err(error) => (RunStatus::Failed, None, Some(error.to_string())),
    }
}

/// The run manager as the app's server functions reach it.
impl records::RunControl for Runs {
    fn start<'a>(
        &'a self,
        allowed: &'a Allowed,
        request: StartRequest,
    ) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::start(self, allowed, request))
    }

    fn get<'a>(&'a self, run: &'a OnRun) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::get(self, run))
    }

    fn cancel<'a>(&'a self, run: &'a OnRun) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::cancel(self, run))
    }

    fn fork<'a>(&'a self, run: &'a OnRun, request: ForkRequest) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::fork(self, run, request))
    }

    fn events<'a>(
        &'a self,
        run: &'a OnRun,
        from_seq: u64,
    ) -> records::RunFuture<'a, Vec<Arc<heddle_engine::run::Event>>> {
        Box::pin(Runs::events(self, run, from_seq))
    }

    fn thread<'a>(&'a self, thread: &'a OnThread) -> records::RunFuture<'a, ThreadView> {
        Box::pin(Runs::thread(self, thread))
    }

    fn resume<'a>(&'a self, thread: &'a OnThread, value: Value) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::resume(self, thread, value))
    }

    fn stop_all<'a>(&'a self, allowed: &'a Allowed) -> records::RunFuture<'a, ()> {
        Box::pin(Runs::stop_all(self, allowed))
    }
}
