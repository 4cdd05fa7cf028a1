//! Starting runs: from the app or the API (a version or the newest), of
//! the published version (keys and triggers), forks of a run at a step,
//! and resuming a paused thread. Each is recorded queued and then launched.

use heddle_wire::graphs::GraphId;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use heddle_engine::{CompiledGraph, GraphDocument, Registry, RunId, ThreadId};
use heddle_store::access::{Allowed, OnRun, OnThread};
use heddle_store::graphs;
use heddle_store::runs as records;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::limits::MAX_INPUT_BYTES;
use heddle_wire::runs::{ForkRequest, RunInfo, RunOrigin, StartRequest};
use serde_json::Value;

use super::admission::Admission;
use super::lifecycle::Launch;
use crate::runs::embed::Versions;
use crate::runs::requests::{RunRequest, check_input, run_input};
use heddle_store::runs::EmbeddedGraph;

use super::{Runs, WIDGET_THREADS, internal};

/// How long a new turn waits for its thread's last run to hand over its
/// last events (their storage is all that is left of it).
const LEAVING_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// A graph version compiled for runs, with the registry it compiled
/// with and the saved graphs it embeds; its graph shared, so the runs of
/// one experiment round share one compilation.
#[derive(Clone)]
pub struct Prepared {
    registry: Registry,
    graph: Arc<CompiledGraph>,
    embeds: Vec<EmbeddedGraph>,
}

impl From<(Registry, CompiledGraph, Vec<EmbeddedGraph>)> for Prepared {
    fn from((registry, graph, embeds): (Registry, CompiledGraph, Vec<EmbeddedGraph>)) -> Self {
        Prepared {
            registry,
            graph: Arc::new(graph),
            embeds,
        }
    }
}

impl Runs {
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
            // The version on screen, with its subgraphs as saved now.
            let prepared = self
                .prepare_version(allowed, version, &Versions::Newest)
                .await?;
            return self
                .start_compiled(allowed, request, version, prepared.into(), None)
                .await;
        }
        let (detail, registry, graph, embeds) = self.prepare(allowed).await?;
        self.start_compiled(
            allowed,
            request,
            detail.version,
            (registry, graph, embeds).into(),
            None,
        )
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
        // Production runs only what was published, subgraphs included.
        let prepared = self
            .prepare_version(allowed, version, &Versions::Published)
            .await?;
        self.start_compiled(allowed, request, version, prepared.into(), None)
            .await
    }

    /// Compiles version `version` of the graph `allowed` names for an
    /// experiment's runs: once a round, shared by the runs it starts; or,
    /// with a `recording` (an experiment that records or replays its
    /// replies), for the one run whose calls it answers and keeps.
    pub async fn prepare_for_experiment(
        &self,
        allowed: &Allowed,
        version: i64,
        recording: Option<&heddle_engine::recording::Recording>,
    ) -> Result<Prepared, AppError> {
        Ok(self
            .prepare_version_recorded(allowed, version, &Versions::Newest, recording)
            .await?
            .into())
    }

    /// Starts the run an experiment chose for one of its examples: of the
    /// version `prepared` holds, with the id the experiment's item names
    /// (so a second attempt after a crash finds it recorded), labelled
    /// with the experiment (`allowed`'s trigger, decided for its maker).
    pub async fn start_for_experiment(
        &self,
        allowed: &Allowed,
        version: i64,
        prepared: &Prepared,
        input: Value,
        run_id: &RunId,
    ) -> Result<RunInfo, AppError> {
        allowed.at_least(Role::Editor)?;
        if allowed
            .trigger()
            .is_none_or(|trigger| trigger.origin != RunOrigin::Experiment)
        {
            return Err(AppError::Forbidden(
                "only an experiment starts runs this way".into(),
            ));
        }
        let request = StartRequest {
            input,
            ..StartRequest::default()
        };
        self.start_compiled(allowed, request, version, prepared.clone(), Some(run_id))
            .await
    }

    /// The version of the graph `allowed` names that an experiment would
    /// run (`version`, or the newest), checked to exist and compile for
    /// its maker, as its runs will.
    pub async fn version_to_run(
        &self,
        allowed: &Allowed,
        version: Option<i64>,
    ) -> Result<i64, AppError> {
        let version = match version {
            Some(version) => version,
            None => graphs::get(&self.inner.db, allowed).await?.version,
        };
        self.prepare_version(allowed, version, &Versions::Newest)
            .await?;
        Ok(version)
    }

    /// Records and launches a start of `version`, compiled; with the id
    /// `run_id` when given.
    pub(super) async fn start_compiled(
        &self,
        allowed: &Allowed,
        request: StartRequest,
        version: i64,
        Prepared {
            registry,
            graph,
            embeds,
        }: Prepared,
        run_id: Option<&RunId>,
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
        let graph_id = allowed.graph().clone();
        if let Some(thread) = &request.thread_id
            && thread.as_str().starts_with(WIDGET_THREADS)
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
            None => ThreadId::from(format!("thread-{}", uuid::Uuid::new_v4())),
        };
        self.claim_thread(&thread_id, &graph_id).await?;
        // A new run on a paused thread would leave its pause unanswerable.
        let paused = self
            .inner
            .store
            .latest(&thread_id)
            .await
            .map_err(internal("cannot read a thread"))?
            .is_some_and(|latest| latest.status == heddle_engine::run::RunStatus::Interrupted);
        if paused {
            return Err(AppError::ThreadPaused {
                thread: thread_id.to_string(),
            });
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
                id: run_id,
            })
            .await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
        let thread = thread_id.clone();
        let id = run_id.clone();
        self.launch(
            Launch {
                run_id: &run_id,
                graph_id: &graph_id,
                thread_id: &thread_id,
                origin: allowed
                    .trigger()
                    .map_or(RunOrigin::App, |trigger| trigger.origin),
            },
            registry,
            Some(Admission {
                starter: user.clone(),
                embeds,
            }),
            move |durable| async move {
                durable
                    .with_breakpoints(before, after)
                    .start(graph, thread, id, input)
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
        let thread = source.thread_id.clone();
        let history = self
            .inner
            .store
            .history(&thread)
            .await
            .map_err(internal("cannot read a thread's history"))?;
        let checkpoint = history
            .iter()
            .find(|checkpoint| &checkpoint.run_id == source_id && checkpoint.step == request.step)
            .ok_or_else(|| {
                AppError::InvalidInput(format!(
                    "run `{source_id}` has no checkpoint before step {}; fork from a step it reached",
                    request.step
                ))
            })?
            .id
            .clone();
        self.refuse_if_busy(&source.thread_id).await?;
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
                id: None,
            })
            .await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
        let id = run_id.clone();
        let fork = heddle_engine::run::Fork {
            edits: request.edits,
            start_at: request
                .start_at
                .map(|node| heddle_engine::NodeId::from(node.as_str())),
        };
        self.launch(
            Launch {
                run_id: &run_id,
                graph_id: &source.graph_id,
                thread_id: &source.thread_id,
                origin: RunOrigin::App,
            },
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
    pub(super) async fn claim_thread(
        &self,
        thread: &ThreadId,
        graph_id: &GraphId,
    ) -> Result<(), AppError> {
        let text = thread.as_str();
        if text.is_empty() || text.len() > 200 {
            return Err(AppError::InvalidInput(
                "`thread_id` must be 1 to 200 characters".into(),
            ));
        }
        if text.chars().any(char::is_control) {
            return Err(AppError::InvalidInput(
                "`thread_id` must not hold control characters".into(),
            ));
        }
        match heddle_store::access::belongs::thread_graph(&self.inner.db, thread).await? {
            Some(owner) if owner != graph_id.as_str() => {
                return Err(AppError::InvalidInput(format!(
                    "thread `{thread}` belongs to another graph"
                )));
            }
            Some(_) => {}
            None => records::create_thread(&self.inner.db, thread, graph_id).await?,
        }
        self.refuse_if_busy(thread).await?;
        Ok(())
    }

    /// Refuses a second run on a thread that has one on this server (the
    /// ledger refuses one queued or running on any server when it records
    /// the run).
    ///
    /// A run whose end is already recorded, and which is only handing its
    /// last events to its watchers, is waited for (up to
    /// [`LEAVING_WITHIN`]): whoever read it as ended, or saw its last
    /// event, and asked the next turn at once was refused before.
    pub(super) async fn refuse_if_busy(&self, thread: &ThreadId) -> Result<(), AppError> {
        let busy = || AppError::ThreadBusy {
            thread: thread.to_string(),
        };
        let leaving = {
            let active = self.active();
            match active.values().find(|active| &active.thread_id == thread) {
                None => return Ok(()),
                Some(active) if active.ending => active.gone.subscribe(),
                Some(_) => return Err(busy()),
            }
        };
        let mut leaving = leaving;
        // `changed` errs once the entry, and its sender, are dropped.
        if tokio::time::timeout(LEAVING_WITHIN, leaving.changed())
            .await
            .is_err()
        {
            return Err(busy());
        }
        if self
            .active()
            .values()
            .any(|active| &active.thread_id == thread)
        {
            return Err(busy());
        }
        Ok(())
    }

    /// Records a new run, queued, within its starter's and its owner's
    /// limits.
    pub(super) async fn record_queued(&self, run: records::NewRun<'_>) -> Result<RunId, AppError> {
        records::record_queued(&self.inner.db, run, self.limits()).await
    }

    /// How many runs one starter, and one account, may have queued or
    /// running at once.
    pub fn limits(&self) -> records::RunLimits {
        records::RunLimits {
            per_starter: self.inner.max_per_user.load(Ordering::Relaxed),
            per_owner: self.inner.max_per_owner.load(Ordering::Relaxed),
        }
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
        self.refuse_if_busy(thread_id).await?;
        // Refuse here, synchronously, what the engine would refuse.
        let latest = self
            .inner
            .store
            .latest(thread_id)
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
        let value =
            crate::runs::requests::typed_answer(&paused, document.as_ref(), &limits, value)?;
        let stored = RunRequest::Resume {
            value: value.clone(),
            pause: Some(paused.id.as_str().to_string()),
        }
        .to_json();
        records::requeue(&self.inner.db, &run_id, &stored, self.new_lease().as_ref()).await?;
        if !self.executes() {
            return self.record(&run_id).await;
        }
        let thread = thread_id.clone();
        self.launch(
            Launch {
                run_id: &run_id,
                graph_id: &graph_id,
                thread_id,
                origin: run.origin,
            },
            registry,
            admission,
            move |durable| async move { durable.resume(&thread, value).await },
        )?;
        self.record(&run_id).await
    }
}
