//! A run's events as a client reads them: the stored ones, then those of
//! its running execution that are not stored yet, without a gap or a
//! duplicate where the two meet.

use std::sync::Arc;

use heddle_engine::RunId;
use heddle_engine::run::Event;
use heddle_store::access::OnRun;
use heddle_wire::error::AppError;
use serde_json::{Map, Value};

use super::manager::{Runs, internal};

impl Runs {
    /// A run's events from `from_seq` on: the stored ones, then those of
    /// its running execution that are not stored yet.
    pub async fn events(&self, run: &OnRun, from_seq: u64) -> Result<Vec<Arc<Event>>, AppError> {
        let run_id = run.run_id();
        self.record(run_id).await?;
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
                .events(&run_id.clone(), from_seq)
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

    /// A run's stored events, all of them, for one who decided access
    /// already (an experiment's driver, scoring the run it made).
    pub(crate) async fn stored_events(&self, run_id: &RunId) -> Result<Vec<Event>, AppError> {
        self.inner
            .store
            .events(run_id, 0)
            .await
            .map_err(internal("cannot read events"))
    }

    /// The state of checkpoint `checkpoint` of `run_id`'s thread: what a
    /// run's first event names when it holds the changes from it rather
    /// than the thread's whole state (`EventPayload::base_checkpoint`).
    /// Only a checkpoint of the run's own thread is found.
    pub async fn base_state(
        &self,
        run_id: &RunId,
        checkpoint: &str,
    ) -> Result<Option<Map<String, Value>>, AppError> {
        let thread = self.record(run_id).await?.thread_id;
        let found = self
            .inner
            .store
            .checkpoint(&thread, checkpoint)
            .await
            .map_err(internal("cannot read the run's first state"))?;
        Ok(found.and_then(|checkpoint| match checkpoint.state {
            Value::Object(state) => Some(state),
            _ => None,
        }))
    }
}
