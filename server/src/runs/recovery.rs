//! Recovery after a restart: runs a previous process left executing go on
//! from their newest checkpoint, runs it left queued are queued again, and
//! each one recovers on its own (one that cannot is failed with the
//! reason, and the others go on).

use std::sync::Arc;

use heddle_app::access::Role;
use heddle_app::access::ssr::require;
use heddle_app::accounts::ssr as accounts;
use heddle_app::error::AppError;
use heddle_app::runs::RunInfo;
use heddle_app::runs::ssr as records;
use heddle_engine::run::{DurableError, RunStatus};
use heddle_engine::{RunId, ThreadId};

use super::admission::Admission;
use super::manager::{Runs, internal};

impl Runs {
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
        let queued = records::queued(&self.inner.db).await?;
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
        let Ok(info) = self.record(&run_id).await else {
            return Ok(false);
        };
        let user_id = records::starter(&self.inner.db, &run_id).await?;
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
        let user_id = records::starter(&self.inner.db, &run.id).await?;
        let starter = match &user_id {
            Some(id) => accounts::user_by_id(&self.inner.db, id).await?,
            None => None,
        }
        .ok_or_else(|| AppError::Forbidden("the user who started it no longer exists".into()))?;
        let allowed = require(&self.inner.db, Some(&starter), &run.graph_id, Role::Editor).await?;
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
            RunStatus::Failed,
            None,
            Some(format!("the run could not go on after a restart: {error}")),
        )
        .await;
    }
}
