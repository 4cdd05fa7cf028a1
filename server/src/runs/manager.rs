//! The run manager: runs as background tasks on this server (at most a
//! configured number at once, the rest queued), kept in step with the runs
//! ledger (`heddle_store::runs`). This file holds [`Runs`] and its
//! settings; each concern is a file of its own:
//! - [`commands`]: starting, forking and resuming runs;
//! - [`admission`]: what a run needs before it may start;
//! - [`lifecycle`]: launching, executing and recording a run's end;
//! - [`stopping`]: cancelling, hand-over and shutdown;
//! - [`queries`]: reading runs and threads;
//! - [`recovery`]: runs left by a server that stopped;
//! - [`control`]: the port the app's server functions call.
//!
//! Requests are in [`super::requests`], and reading a run's events in
//! [`super::replay`].

mod admission;
mod commands;
pub use commands::Prepared;
mod control;
mod lifecycle;
mod queries;
mod recovery;
mod stopping;

use heddle_engine::ids::RunId;
use heddle_engine::ids::ThreadId;
use heddle_wire::graphs::GraphId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use heddle_engine::Registry;
use heddle_engine::run::postgres::PostgresStore;
use heddle_engine::run::sqlite::SqliteStore;
use heddle_engine::run::{CancelHandle, CheckpointStore, Durable};
use heddle_store::db::Db;
use heddle_store::runs as records;
use heddle_store::secrets;
use heddle_wire::error::AppError;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

use super::fence::LeaseFenced;
use super::hub::RunHub;
use heddle_wire::protocol::RunNotice;

/// Where the chat widgets' threads are named (`widget-<widget>-<conversation>`):
/// nobody else may start a thread there.
pub const WIDGET_THREADS: &str = "widget-";

/// How many runs one account may have queued or running at once, by
/// default.
pub const DEFAULT_MAX_PER_OWNER: usize = 100;

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
    /// This server's slots, taken in turn fairly between owners.
    pub(super) turns: crate::runs::turns::Turns,
    /// How many runs it executes at once.
    max_concurrent: usize,
    /// Whether it executes runs (else it queues them for other servers).
    executes: std::sync::atomic::AtomicBool,
    /// Told when a run ends here: a slot is free for a queued one.
    pub(super) slot_freed: tokio::sync::Notify,
    /// Set when the server shuts down: runs stop after their current step
    /// and queued ones do not start.
    handing_over: std::sync::atomic::AtomicBool,
    active: Mutex<HashMap<RunId, Active>>,
    notices: broadcast::Sender<RunNotice>,
    /// How many runs one user (or one trigger) may have queued or running.
    max_per_user: AtomicUsize,
    /// How many runs one account may have queued or running, however
    /// started.
    max_per_owner: AtomicUsize,
    /// How long a run may be active (pauses and queueing excluded).
    max_active: Mutex<Option<Duration>>,
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
    graph_id: GraphId,
    /// How it started: an experiment's runs are announced as such, and
    /// pages do not follow them.
    origin: heddle_wire::runs::RunOrigin,
    pub(super) thread_id: ThreadId,
    pub(super) hub: Arc<RunHub>,
    cancel: Option<CancelHandle>,
    cancel_requested: bool,
    task: Option<AbortHandle>,
    /// Its end is being recorded: the thread reads as free, and the run
    /// is only handing its last events to its watchers.
    pub(super) ending: bool,
    /// Dropped with the entry: whoever waits for the run to leave
    /// (a turn asked as the last one ended) holds a receiver.
    pub(super) gone: tokio::sync::watch::Sender<()>,
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
            .map_err(|error| heddle_engine::run::StoreError::Backend(error.to_string()))?;
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
                turns: crate::runs::turns::Turns::new(max_concurrent),
                max_concurrent: max_concurrent.max(1),
                executes: std::sync::atomic::AtomicBool::new(true),
                slot_freed: tokio::sync::Notify::new(),
                handing_over: std::sync::atomic::AtomicBool::new(false),
                active: Mutex::new(HashMap::new()),
                notices: broadcast::Sender::new(256),
                max_per_user: AtomicUsize::new(4),
                max_per_owner: AtomicUsize::new(DEFAULT_MAX_PER_OWNER),
                max_active: Mutex::new(None),
                replica,
                lease_ms,
                wakeups: super::wake::Wakeups::default(),
                telemetry: Arc::default(),
            }),
        })
    }

    pub(super) fn active(&self) -> MutexGuard<'_, HashMap<RunId, Active>> {
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

    /// Sets how many runs one account may have queued or running at once,
    /// however they started (its keys' and triggers' runs included).
    pub fn set_max_per_owner(&self, limit: usize) {
        self.inner
            .max_per_owner
            .store(limit.max(1), Ordering::Relaxed);
    }

    /// Sets how long a run may be active, pauses and queueing excluded
    /// (`None`: no limit); past it, it fails naming the ceiling.
    pub fn set_max_active(&self, limit: Option<Duration>) {
        *self
            .inner
            .max_active
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = limit;
    }

    /// How long a run may be active.
    pub(super) fn max_active(&self) -> Option<Duration> {
        *self
            .inner
            .max_active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
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
    pub(crate) fn lease(&self) -> records::Lease {
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
    pub fn hub(&self, run_id: &RunId) -> Option<Arc<RunHub>> {
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

    /// How many runs are executing or queued.
    pub fn active_count(&self) -> usize {
        self.active().len()
    }
}
