//! Stopping runs: cancelling one (here or on the server that runs it),
//! stopping a graph's runs, and handing them over or dropping them when
//! this server shuts down.

use heddle_engine::ids::RunId;
use std::sync::atomic::Ordering;
use std::time::Duration;

use heddle_engine::ThreadId;
use heddle_engine::run::RunStatus;
use heddle_store::access::{Allowed, OnRun};
use heddle_store::runs as records;
use heddle_wire::access::Role;
use heddle_wire::error::AppError;
use heddle_wire::runs::RunInfo;

use super::{Runs, internal};

impl Runs {
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

    pub(super) async fn stop(&self, run_id: &RunId) -> Result<RunInfo, AppError> {
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
        // Queued runs are let go: they see the flag and leave.
        self.inner.turns.close();
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
    pub(in crate::runs) fn cancel_local(&self, run_id: &RunId) -> bool {
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
    pub(in crate::runs) fn drop_local(&self, run_id: &RunId) {
        if let Some(active) = self.active().remove(run_id) {
            if let Some(task) = &active.task {
                task.abort();
            }
            active.hub.close_now();
        }
    }
}
