//! A run's life on this server: launched when a slot is free, executed
//! under its lease with its steps stored, and its end recorded and
//! announced to the graph's watchers.

use heddle_engine::ids::RunId;
use heddle_engine::ids::ThreadId;
use heddle_wire::graphs::GraphId;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use heddle_engine::Registry;
use heddle_engine::run::{
    Checkpoint, Durable, DurableError, Run, RunError, RunOptions, RunOutput, RunStatus,
};
use heddle_store::db::Db;
use heddle_store::runs as records;
use heddle_wire::error::AppError;
use serde_json::Value;

use super::admission::Admission;
use crate::runs::embed;
use crate::runs::hub::RunHub;
use heddle_wire::protocol::RunNotice;
use heddle_wire::runs::RunOrigin;

use super::{Active, Runs};

/// Which run a launch starts, of which graph and thread, and how it began.
pub(in crate::runs) struct Launch<'a> {
    pub run_id: &'a RunId,
    pub graph_id: &'a GraphId,
    pub thread_id: &'a ThreadId,
    pub origin: RunOrigin,
}

impl Runs {
    /// Registers a run and starts its task; `prepare` makes the engine run
    /// once a slot is free.
    pub(in crate::runs) fn launch<F, Fut>(
        &self,
        Launch {
            run_id,
            graph_id,
            thread_id,
            origin,
        }: Launch<'_>,
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
                run_id.clone(),
                Active {
                    graph_id: graph_id.clone(),
                    origin,
                    thread_id: thread_id.clone(),
                    hub: Arc::clone(&hub),
                    cancel: None,
                    cancel_requested: false,
                    task: None,
                    ending: false,
                    gone: tokio::sync::watch::Sender::new(()),
                },
            );
        }
        let runs = self.clone();
        let run_id = run_id.clone();
        let graph_id = graph_id.clone();
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

    pub(super) async fn execute<F, Fut>(
        &self,
        run_id: RunId,
        graph_id: GraphId,
        hub: Arc<RunHub>,
        registry: Registry,
        admission: Option<Admission>,
        prepare: F,
    ) where
        F: FnOnce(Durable) -> Fut,
        Fut: Future<Output = Result<Run, DurableError>>,
    {
        // Whose turn it is, fairly between owners (see `runs::turns`).
        let account: crate::runs::turns::Owner = admission.as_ref().map_or_else(
            || "".into(),
            |admission| admission.starter.id.as_str().into(),
        );
        let turn = self.inner.turns.wait(Arc::clone(&account)).await;
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
        let stopped = cancelled_while_queued || turn.is_none();
        // Access may have changed while the run waited (a link revoked, a
        // member removed): the starter must still reach every graph it runs.
        let refused = match (&admission, stopped) {
            (Some(admission), false) => embed::recheck(
                &self.inner.db,
                &admission.starter,
                graph_id.as_str(),
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
                let max_active = match self.max_active() {
                    Some(total) => Some(heddle_engine::run::ActiveTime {
                        total,
                        used: records::active_time(&self.inner.db, &run_id)
                            .await
                            .unwrap_or_else(|error| {
                                tracing::error!(run = %run_id, %error, "cannot read a run's active time; counting from zero");
                                std::time::Duration::ZERO
                            }),
                    }),
                    None => None,
                };
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
                            graph_id.as_str(),
                        ))),
                        max_active,
                        ..RunOptions::default()
                    });
                Some(prepare(durable).await.map_err(|error| error.to_string()))
            }
        };
        if !matches!(prepared, Some(Ok(_))) {
            self.mark_ending(&run_id);
        }
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
                let began = tokio::time::Instant::now();
                // Its model calls take their turns at the server's gate
                // on behalf of its owner, fairly between owners.
                let result =
                    heddle_engine::model::on_behalf_of(Arc::clone(&account), run.execute()).await;
                if let Err(error) =
                    records::add_active_time(&self.inner.db, &run_id, began.elapsed()).await
                {
                    tracing::error!(run = %run_id, %error, "cannot record a run's active time");
                }
                Some((result, meter.total()))
            }
        };
        match result {
            Some((Err(RunError::HandedOver { step }), _)) => {
                // Not ended: another server goes on from its checkpoint.
                tracing::info!(run = %run_id, step, "handed the run over after its step");
            }
            Some((result, usage)) => {
                let (status, output, error) = outcome(&result);
                self.mark_ending(&run_id);
                self.record_end_using(&run_id, status, output, error, Some(&usage))
                    .await;
            }
            None => {}
        }
        hub.close().await;
        self.active().remove(&run_id);
        drop(turn);
        // Only PostgreSQL has runs queued for any server (a web server's,
        // a released lease's); on SQLite every run is this server's already.
        if matches!(self.inner.db, Db::Postgres(_)) {
            self.inner.slot_freed.notify_one();
        }
    }

    /// Marks a run as ending just before its end is recorded: from then
    /// on, a new turn on its thread waits for it to leave rather than
    /// being refused (see [`Runs::refuse_if_busy`]).
    fn mark_ending(&self, run_id: &RunId) {
        if let Some(active) = self.active().get_mut(run_id) {
            active.ending = true;
        }
    }

    pub(super) async fn record_start(&self, run_id: &RunId) {
        match records::mark_running(&self.inner.db, run_id, &self.inner.replica).await {
            Ok(true) => self.notify(run_id, RunStatus::Running),
            Ok(false) => tracing::warn!(run = %run_id, "another server holds this run's lease"),
            Err(error) => tracing::error!(run = %run_id, %error, "cannot record a run's start"),
        }
    }

    /// Records a run's end; what it used stays as recorded before.
    pub(in crate::runs) async fn record_end(
        &self,
        run_id: &RunId,
        status: RunStatus,
        output: Option<Value>,
        error: Option<String>,
    ) -> bool {
        self.record_end_using(run_id, status, output, error, None)
            .await
    }

    /// Records a run's end and what its model calls used.
    pub(super) async fn record_end_using(
        &self,
        run_id: &RunId,
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
                    run = %run_id,
                    status = status.as_str(),
                    trace_id = %crate::telemetry::traces::trace_id(run_id.as_str()),
                    "run ended"
                );
                self.notify(run_id, status);
                true
            }
            // Its record is the server's that took it over.
            Ok(false) => {
                tracing::warn!(run = %run_id, "another server holds this run's lease");
                false
            }
            Err(error) => {
                tracing::error!(run = %run_id, %error, "cannot record a run's end");
                false
            }
        }
    }

    pub(super) fn notify(&self, run_id: &RunId, status: RunStatus) {
        let notice = self.active().get(run_id).map(|active| RunNotice {
            graph_id: active.graph_id.clone(),
            run_id: run_id.clone(),
            thread_id: active.thread_id.clone(),
            status,
            origin: active.origin,
        });
        if let Some(notice) = notice {
            self.announce(notice);
        }
    }

    /// Tells this server's watchers, and the other servers', that a run's
    /// status changed.
    pub(super) fn announce(&self, notice: RunNotice) {
        self.inner
            .wakeups
            .announce_notice(&self.inner.db, &self.inner.replica, &notice);
        let _ = self.inner.notices.send(notice);
    }
}

/// Where a run stood at its last checkpoint, saved as it ended or paused:
/// the status, output and error [`outcome`] gives for the same run.
pub(super) fn stored_outcome(last: &Checkpoint) -> (RunStatus, Option<Value>, Option<String>) {
    match last.status {
        RunStatus::Interrupted => (
            RunStatus::Interrupted,
            Some(serde_json::json!({"state": last.state, "interrupts": last.interrupts})),
            None,
        ),
        RunStatus::Finished => (RunStatus::Finished, None, None),
        status => (status, None, last.error.clone()),
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
        // The final state is the run's last checkpoint's: not copied into
        // its record (see `Runs::record`).
        Ok(_) => (RunStatus::Finished, None, None),
        Err(error @ RunError::Cancelled { .. }) => {
            (RunStatus::Cancelled, None, Some(error.to_string()))
        }
        Err(error) => (RunStatus::Failed, None, Some(error.to_string())),
    }
}
