//! Reading runs and threads: one run, a graph's runs and threads, and a
//! thread with its history.

use heddle_engine::ids::RunId;
use heddle_store::access::{Allowed, OnRun, OnThread};
use heddle_store::runs as records;
use heddle_wire::error::AppError;
use heddle_wire::runs::{RunInfo, ThreadInfo, ThreadView};
use serde_json::Value;

use super::{Runs, internal};

impl Runs {
    /// One run, for a caller allowed to see it.
    pub async fn get(&self, run: &OnRun) -> Result<RunInfo, AppError> {
        self.record(run.run_id()).await
    }

    /// One run's record, with no access check: for the server's own
    /// work (recovery, the websocket after its own check) and tests.
    pub async fn record(&self, run_id: &RunId) -> Result<RunInfo, AppError> {
        let info = records::get(&self.inner.db, run_id)
            .await?
            .ok_or_else(|| AppError::not_found(format!("run {run_id}")))?;
        self.with_final_state(info).await
    }

    /// Where a run stands, without reading its final state: for checks
    /// that need only the status.
    pub async fn status(&self, run_id: &RunId) -> Result<heddle_engine::run::RunStatus, AppError> {
        records::get(&self.inner.db, run_id)
            .await?
            .map(|info| info.status)
            .ok_or_else(|| AppError::not_found(format!("run {run_id}")))
    }

    /// A graph's runs, newest first (at most `limit`).
    pub async fn list(&self, allowed: &Allowed, limit: i64) -> Result<Vec<RunInfo>, AppError> {
        let mut runs = Vec::new();
        for info in records::list(&self.inner.db, allowed, limit).await? {
            runs.push(self.with_final_state(info).await?);
        }
        Ok(runs)
    }

    /// A finished run's record does not repeat its final state (a
    /// conversation's would grow with the square of its turns): it is the
    /// state of the run's last checkpoint, filled in here. Runs recorded
    /// before keep their own copy.
    async fn with_final_state(&self, mut info: RunInfo) -> Result<RunInfo, AppError> {
        if info.output.is_none() && info.status == heddle_engine::run::RunStatus::Finished {
            info.output = self
                .inner
                .store
                .last_of_run(&heddle_engine::RunId::from(info.id.as_str()))
                .await
                .map_err(internal("cannot read the run's final state"))?
                .map(|checkpoint| checkpoint.state);
        }
        Ok(info)
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
            .latest(&thread_id.clone())
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
}
