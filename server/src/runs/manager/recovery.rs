//! Runs this server takes over: at start, the ones a previous process left
//! (on SQLite, its only server, all of them at once), and while it serves,
//! any whose lease lapsed because the server executing it died. A run
//! executing goes on from its newest checkpoint; a queued one does what
//! its stored request says (start, fork, resume). Each recovers on its
//! own: one that cannot is failed with the reason, and the others go on.
//!
//! This module also keeps the leases: renewed every third of their
//! duration, and released at a graceful shutdown; and acts on cancels asked
//! through other servers for the runs this one holds.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::run::{Checkpoint, Durable, DurableError, RunRecord, RunStatus};
use heddle_engine::{NodeId, RunId, ThreadId};
use heddle_store::access::require;
use heddle_store::accounts;
use heddle_store::db::Db;
use heddle_store::runs as records;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::protocol::RunNotice;
use heddle_wire::runs::RunInfo;

use super::admission::Admission;
use super::lifecycle::{Launch, stored_outcome};
use super::{Runs, internal};
use crate::runs::embed::Versions;
use crate::runs::requests::RunRequest;

/// How many runs one claim takes.
const CLAIM_BATCH: i64 = 32;

impl Runs {
    /// Takes over the runs a previous process left running or queued. On
    /// SQLite this server is the file's only one, so every such run is
    /// taken at once; on PostgreSQL only those whose lease lapsed (the
    /// rest belong to live servers, or are taken when theirs lapse).
    pub async fn recover(&self) -> Result<usize, AppError> {
        let all = matches!(self.db(), Db::Sqlite(_));
        self.take_over_lapsed(all).await
    }

    /// Claims runs queued for any server, or whose lease lapsed, as many as
    /// this server has free slots for (with `all`, every one), and goes on
    /// with each; how many.
    pub async fn take_over_lapsed(&self, all: bool) -> Result<usize, AppError> {
        let mut count = 0;
        loop {
            let limit = match all {
                true => CLAIM_BATCH,
                false => CLAIM_BATCH.min(self.free_slots() as i64),
            };
            if limit == 0 {
                break;
            }
            let claimed = records::claim_lapsed(self.db(), &self.lease(), all, limit).await?;
            if claimed.is_empty() {
                break;
            }
            let unfinished = self
                .inner
                .store
                .unfinished()
                .await
                .map_err(internal("cannot list unfinished runs"))?;
            let batch = claimed.len();
            for claim in claimed {
                let run_id = claim.run_id.clone();
                let record = match unfinished.iter().find(|record| record.run_id == run_id) {
                    Some(record) => Some(record.clone()),
                    // Never begun, or ended (or paused) by a server that
                    // died before recording it.
                    None => match self.inner.store.run(&run_id).await {
                        Ok(record) => record,
                        Err(error) => {
                            self.fail_recovery(
                                &run_id,
                                internal("cannot read a run's record")(error),
                            )
                            .await;
                            continue;
                        }
                    },
                };
                match self.quarantined(&claim, record.as_ref()).await {
                    Ok(false) => {}
                    Ok(true) => continue,
                    Err(error) => {
                        self.fail_recovery(&run_id, error).await;
                        continue;
                    }
                }
                match self.take_over(&run_id, record).await {
                    Ok(true) => count += 1,
                    Ok(false) => {}
                    Err(error) => self.fail_recovery(&run_id, error).await,
                }
            }
            if batch < limit as usize {
                break;
            }
        }
        if count > 0 {
            tracing::info!(runs = count, "took over runs");
        }
        Ok(count)
    }

    /// Whether a claimed run is one that takes its servers down: taken
    /// from a dead server twice at the same step (no step finished in
    /// between). Such a run is failed, saying what it was doing, and not
    /// retried: a graph that aborts its server would otherwise take down
    /// every server that recovers it, at every restart. A run given back
    /// at a graceful shutdown does not count.
    async fn quarantined(
        &self,
        claim: &records::Claimed,
        record: Option<&RunRecord>,
    ) -> Result<bool, AppError> {
        // A run whose end is stored took no server down. (A paused one may
        // have: a resume that kills its server leaves the pause newest.)
        let over = record.is_some_and(|record| record.status.is_final());
        if !claim.from_dead_server || over || self.active().contains_key(&claim.run_id) {
            return Ok(false);
        }
        let thread = match record {
            Some(record) => record.thread_id.clone(),
            None => self.record(&claim.run_id).await?.thread_id,
        };
        let newest = self
            .inner
            .store
            .latest(&thread)
            .await
            .map_err(internal("cannot read a thread"))?
            .filter(|checkpoint| checkpoint.run_id == claim.run_id);
        // Where the run stands, by step: a server that takes a run over
        // saves a checkpoint of the same step as it resumes, which is no
        // progress.
        let at = newest
            .as_ref()
            .map(|checkpoint| format!("step {}", checkpoint.step))
            .unwrap_or_default();
        if claim.crash_checkpoint.as_deref() != Some(at.as_str()) {
            records::mark_crash_checkpoint(self.db(), &claim.run_id, &at).await?;
            return Ok(false);
        }
        let doing = match &newest {
            Some(checkpoint) if !checkpoint.next.is_empty() => format!(
                " at step {} (running {})",
                checkpoint.step,
                checkpoint
                    .next
                    .iter()
                    .map(|task| format!("`{}`", task.node))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(checkpoint) => format!(" at step {}", checkpoint.step),
            None => " before its first step".to_string(),
        };
        let reason = format!(
            "quarantined: the server running it stopped twice{doing} with no progress in \
             between, so it is not tried again (a graph that takes its server down would take \
             down every server that recovers it)"
        );
        tracing::error!(run = %claim.run_id, %reason, "quarantined a run");
        let run_id = RunId::from(claim.run_id.as_str());
        if let Err(error) = self.inner.durable.fail_unfinished(&run_id, &reason).await {
            tracing::error!(run = %claim.run_id, %error, "cannot record a quarantined run's failure in its log");
        }
        self.record_end(&claim.run_id, RunStatus::Failed, None, Some(reason))
            .await;
        Ok(true)
    }

    /// Goes on with one claimed run; `false` when this server already has it.
    async fn take_over(&self, run_id: &RunId, record: Option<RunRecord>) -> Result<bool, AppError> {
        if self.active().contains_key(run_id) {
            return Ok(false);
        }
        let info = self.record(run_id).await?;
        // Claimed while queued, it may have run and ended here since (an
        // experiment starts its runs as this server recovers): starting it
        // again would find its log recorded and fail a run that finished.
        if !info.status.is_active() {
            return Ok(false);
        }
        let Some(record) = record else {
            self.recover_queued(info, Again::No).await?;
            return Ok(true);
        };
        let last = self
            .inner
            .store
            .last_of_run(run_id)
            .await
            .map_err(internal("cannot read a run's last checkpoint"))?;
        match last {
            // The engine stored its end, and its server died before
            // recording it: starting it again would fail a run that ended,
            // finding its record in the engine's store.
            Some(last) if record.status.is_final() => self.record_stored_end(&info, &last).await?,
            // Paused: a resume answering this very pause waits to be done;
            // otherwise the run paused (again) as its server died.
            Some(last) if record.status == RunStatus::Interrupted => {
                let request = records::request_of(self.db(), run_id).await?;
                match RunRequest::from_stored(request.as_deref()).answers(&last) {
                    true => self.recover_queued(info, Again::No).await?,
                    false => self.record_stored_end(&info, &last).await?,
                }
            }
            Some(_) => self.recover_running(&info, record).await?,
            // Recorded, but its server stopped before the run's first
            // checkpoint: there is nothing to go on from, so it begins
            // again as it was asked to.
            None => self.recover_queued(info, Again::Yes).await?,
        }
        Ok(true)
    }

    /// Records the end (or pause) the engine stored for run `info` as its
    /// server's record of it, with what it used, and announces it.
    async fn record_stored_end(&self, info: &RunInfo, last: &Checkpoint) -> Result<(), AppError> {
        let (status, output, error) = stored_outcome(last);
        tracing::info!(run = %info.id, status = status.as_str(), "recorded the end a stopped server left unrecorded");
        let recorded = records::mark_ended(
            self.db(),
            &info.id,
            &self.lease().owner,
            status,
            output.as_ref(),
            error.as_deref(),
            Some(&last.usage),
        )
        .await?;
        if recorded {
            self.announce(RunNotice {
                graph_id: info.graph_id.clone(),
                run_id: info.id.clone(),
                thread_id: info.thread_id.clone(),
                status,
                origin: info.origin,
            });
        }
        Ok(())
    }

    /// Renews this server's leases every third of their duration and takes
    /// over runs whose lease lapsed, until the server stops; claims runs
    /// queued for any server when one is announced or a slot frees up. A
    /// run this server executes whose lease another server took (this one
    /// could not renew in time) is dropped here, untouched: it is theirs.
    pub fn keep_leases(&self) -> tokio::task::JoinHandle<()> {
        let runs = self.clone();
        let mut cancels = self.cancels();
        let mut queued = self.inner.wakeups.queued();
        tokio::spawn(async move {
            loop {
                let period = runs.lease().duration / 3;
                let tick = tokio::time::sleep(period.max(Duration::from_millis(100)));
                tokio::pin!(tick);
                // A cancel asked through another server is acted on at once,
                // and a queued run claimed at once; what was missed, at the
                // next tick.
                loop {
                    tokio::select! {
                        () = &mut tick => break,
                        () = runs.inner.slot_freed.notified() => runs.claim_queued().await,
                        heard = queued.recv() => match heard {
                            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                                runs.claim_queued().await;
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                                (&mut tick).await;
                                break;
                            }
                        },
                        asked = cancels.recv() => match asked {
                            Ok(run_id) => {
                                runs.cancel_local(&RunId::from(&*run_id));
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                                (&mut tick).await;
                                break;
                            }
                        },
                    }
                }
                match records::cancels_for(runs.db(), &runs.lease().owner).await {
                    Ok(asked) => {
                        for run_id in asked {
                            runs.cancel_local(&run_id);
                        }
                    }
                    Err(error) => tracing::error!(%error, "cannot read cancel requests"),
                }
                if let Err(error) = runs.renew().await {
                    tracing::error!(%error, "cannot renew run leases");
                }
                runs.claim_queued().await;
            }
        })
    }

    /// Claims what is queued for any server or whose lease lapsed, as
    /// slots allow.
    async fn claim_queued(&self) {
        if let Err(error) = self.take_over_lapsed(false).await {
            tracing::error!(%error, "cannot claim queued runs");
        }
    }

    async fn renew(&self) -> Result<(), AppError> {
        let held = records::renew_leases(self.db(), &self.lease()).await?;
        let local: Vec<RunId> = self.active().keys().cloned().collect();
        for run_id in local.into_iter().filter(|id| !held.contains(id)) {
            // Not renewed: it ended meanwhile (fine), or it is someone else's.
            if records::leased_elsewhere(self.db(), &run_id, &self.lease().owner).await? {
                tracing::warn!(run = %run_id, "lost this run's lease to another server; dropping it");
                self.drop_local(&run_id);
            }
        }
        Ok(())
    }

    /// Gives this server's runs back (after [`Runs::shutdown`] stopped them
    /// at their last checkpoint), so other servers take them over at once.
    pub async fn release_leases(&self) -> Result<u64, AppError> {
        records::release_leases(self.db(), &self.lease().owner).await
    }

    /// Goes on with a run that was executing, from its newest checkpoint.
    async fn recover_running(&self, info: &RunInfo, record: RunRecord) -> Result<(), AppError> {
        let run_id = info.id.clone();
        let user_id = records::starter(self.db(), &run_id).await?;
        let registry = self.registry_for(user_id.as_deref()).await?;
        let admission = self.admission_of(&run_id, user_id.as_deref()).await?;
        self.launch(
            Launch {
                run_id: &run_id,
                graph_id: &info.graph_id,
                thread_id: &info.thread_id,
                origin: info.origin,
            },
            registry,
            admission,
            move |durable| async move {
                durable.recover_run(&record).await?.ok_or_else(|| {
                    DurableError::Store(heddle_engine::run::StoreError::Backend(
                        "the thread has moved on".into(),
                    ))
                })
            },
        )
    }

    /// Does what a queued run was asked to: its graph is embedded and
    /// compiled anew, for its starter, through the access check. `again`
    /// when the run was recorded by a server that died before its first
    /// checkpoint.
    async fn recover_queued(&self, run: RunInfo, again: Again) -> Result<(), AppError> {
        let user_id = records::starter(self.db(), &run.id).await?;
        let starter = match &user_id {
            Some(id) => accounts::user_by_id(self.db(), id).await?,
            None => None,
        }
        .ok_or_else(|| AppError::Forbidden("the user who started it no longer exists".into()))?;
        let request =
            RunRequest::from_stored(records::request_of(self.db(), &run.id).await?.as_deref());
        let (thread, id) = (
            ThreadId::from(run.thread_id.as_str()),
            RunId::from(run.id.as_str()),
        );
        if let RunRequest::Start {
            interrupt_before,
            interrupt_after,
        } = request
        {
            let allowed = require(
                self.db(),
                Some(&starter),
                run.graph_id.as_str(),
                Role::Editor,
            )
            .await?;
            // The subgraph versions it was queued with.
            let pinned = Versions::pinned(&records::embeds_of(self.db(), &run.id).await?);
            let (registry, graph, embeds) = self
                .prepare_version(&allowed, run.graph_version, &pinned)
                .await?;
            let input = run.input.clone();
            let nodes = |ids: Vec<String>| -> Vec<NodeId> {
                ids.iter().map(|id| NodeId::from(id.as_str())).collect()
            };
            let (before, after) = (nodes(interrupt_before), nodes(interrupt_after));
            return self.launch(
                Launch {
                    run_id: &run.id,
                    graph_id: &run.graph_id,
                    thread_id: &run.thread_id,
                    origin: run.origin,
                },
                registry,
                Some(Admission { starter, embeds }),
                move |durable| async move {
                    again
                        .apply(durable)
                        .with_breakpoints(before, after)
                        .start(Arc::new(graph), thread, id, input)
                        .await
                },
            );
        }
        let registry = self.registry_for(Some(starter.id.as_str())).await?;
        let admission = self
            .admission_of(&run.id, Some(starter.id.as_str()))
            .await?;
        match request {
            RunRequest::Fork {
                checkpoint,
                edits,
                start_at,
            } => {
                let fork = heddle_engine::run::Fork {
                    edits,
                    start_at: start_at.map(|node| NodeId::from(node.as_str())),
                };
                self.launch(
                    Launch {
                        run_id: &run.id,
                        graph_id: &run.graph_id,
                        thread_id: &run.thread_id,
                        origin: run.origin,
                    },
                    registry,
                    admission,
                    move |durable| async move {
                        again
                            .apply(durable)
                            .fork(&thread, &checkpoint, fork, id)
                            .await
                    },
                )
            }
            RunRequest::Resume { value, .. } => self.launch(
                Launch {
                    run_id: &run.id,
                    graph_id: &run.graph_id,
                    thread_id: &run.thread_id,
                    origin: run.origin,
                },
                registry,
                admission,
                move |durable| async move { durable.resume(&thread, value).await },
            ),
            RunRequest::Start { .. } => Ok(()),
        }
    }

    /// Marks a run that could not be recovered as failed, saying why.
    async fn fail_recovery(&self, run_id: &RunId, error: AppError) {
        tracing::warn!(run = %run_id, %error, "a run could not be recovered");
        self.record_end(
            run_id,
            RunStatus::Failed,
            None,
            Some(format!(
                "the run could not go on after its server stopped: {error}"
            )),
        )
        .await;
    }
}

/// Whether a run recovered as asked begins again: recorded by a server
/// that died before the run's first checkpoint.
#[derive(Clone, Copy)]
enum Again {
    Yes,
    No,
}

impl Again {
    fn apply(self, durable: Durable) -> Durable {
        match self {
            Again::Yes => durable.beginning_again(),
            Again::No => durable,
        }
    }
}
