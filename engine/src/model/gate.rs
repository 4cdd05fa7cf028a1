//! A cap on model calls in flight at once, shared by every run a registry
//! compiles: a runner's ceiling (`ModelGate`), so a flood of runs, agents
//! and sub-agents waits its turn instead of opening unbounded requests to
//! the endpoint. A call holds its place until its whole reply (streamed
//! or not) is in.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::{ChatModel, ChatRequest, Delta, ModelFuture, SharedModel};

/// How many model calls may be in flight at once, over every run of the
/// registries that share it.
#[derive(Clone, Debug)]
pub struct ModelGate {
    permits: Arc<Semaphore>,
    size: usize,
}

impl ModelGate {
    /// A gate letting `at_once` calls through together (at least one).
    pub fn new(at_once: usize) -> Self {
        let size = at_once.max(1);
        ModelGate {
            permits: Arc::new(Semaphore::new(size)),
            size,
        }
    }

    /// How many calls may be in flight at once.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many calls are in flight now.
    pub fn in_flight(&self) -> usize {
        self.size - self.permits.available_permits()
    }

    /// `model`, its calls taking turns at this gate.
    pub fn wrap(&self, model: SharedModel) -> SharedModel {
        Arc::new(Gated {
            inner: model,
            gate: self.clone(),
        })
    }
}

/// A model whose calls wait for a place at a [`ModelGate`].
struct Gated {
    inner: SharedModel,
    gate: ModelGate,
}

impl ChatModel for Gated {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            // The semaphore is never closed; if it were, calling would
            // still be better than failing the run.
            let _place = self.gate.permits.acquire().await.ok();
            self.inner.chat(request, deltas).await
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::model::{ChatReply, ModelError};

    /// A model that notes how many of its calls overlap.
    struct Counting {
        now: AtomicUsize,
        most: AtomicUsize,
    }

    impl ChatModel for Counting {
        fn name(&self) -> &str {
            "counting"
        }

        fn chat<'a>(
            &'a self,
            _: ChatRequest,
            _: &'a (dyn Fn(Delta) + Send + Sync),
        ) -> ModelFuture<'a> {
            Box::pin(async move {
                let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
                self.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.now.fetch_sub(1, Ordering::SeqCst);
                Err::<ChatReply, _>(ModelError::Server("done".into()))
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn no_more_calls_are_in_flight_than_the_gate_lets_through() {
        let counting = Arc::new(Counting {
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        });
        let gate = ModelGate::new(3);
        let model = gate.wrap(Arc::clone(&counting) as SharedModel);
        let calls = (0..10).map(|_| {
            let model = Arc::clone(&model);
            tokio::spawn(async move {
                let _ = model.chat(ChatRequest::default(), &|_| {}).await;
            })
        });
        for call in calls.collect::<Vec<_>>() {
            call.await.expect("call");
        }
        assert_eq!(counting.most.load(Ordering::SeqCst), 3);
        assert_eq!(gate.in_flight(), 0);
        assert_eq!(model.name(), "counting");
    }
}
