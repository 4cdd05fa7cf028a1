//! A cap on model calls in flight at once, shared by every run a registry
//! compiles: a runner's ceiling (`ModelGate`), so a flood of runs, agents
//! and sub-agents waits its turn instead of opening unbounded requests to
//! the endpoint. A call holds its place until its whole reply (streamed
//! or not) is in.
//!
//! Places are shared fairly between parties ([`crate::fair_share`]): one
//! owner's fan-out of a thousand agents holds up another owner's single
//! call by one call's turn, not a thousand.

use std::sync::Arc;

use super::{ChatModel, ChatRequest, Delta, ModelFuture, SharedModel};
use crate::fair_share::FairPlaces;

/// How many model calls may be in flight at once, over every run of the
/// registries that share it, shared fairly between parties.
#[derive(Clone, Debug)]
pub struct ModelGate {
    places: FairPlaces,
}

impl ModelGate {
    /// A gate letting `at_once` calls through together (at least one).
    pub fn new(at_once: usize) -> Self {
        ModelGate {
            places: FairPlaces::new(at_once),
        }
    }

    /// How many calls may be in flight at once.
    pub fn size(&self) -> usize {
        self.places.size()
    }

    /// How many calls are in flight now.
    pub fn in_flight(&self) -> usize {
        self.places.in_flight()
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
            let _place = self.gate.places.place().await;
            self.inner.chat(request, deltas).await
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, PoisonError};
    use std::time::Duration;

    use super::*;
    use crate::fair_share::on_behalf_of;
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

    /// A model that notes which party's call starts when (the request's
    /// one message names it).
    #[derive(Default)]
    struct Recording {
        started: Mutex<Vec<String>>,
    }

    impl ChatModel for Recording {
        fn name(&self) -> &str {
            "recording"
        }

        fn chat<'a>(
            &'a self,
            request: ChatRequest,
            _: &'a (dyn Fn(Delta) + Send + Sync),
        ) -> ModelFuture<'a> {
            Box::pin(async move {
                let who = request.messages[0].content.clone();
                self.started
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(who);
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err::<ChatReply, _>(ModelError::Server("done".into()))
            })
        }
    }

    fn call_as(model: &SharedModel, party: &str) -> tokio::task::JoinHandle<()> {
        let model = Arc::clone(model);
        let party: Arc<str> = Arc::from(party);
        tokio::spawn(on_behalf_of(Arc::clone(&party), async move {
            let request = ChatRequest {
                messages: vec![crate::model::ChatMessage::new(
                    crate::model::Role::User,
                    party.to_string(),
                )],
                ..ChatRequest::default()
            };
            let _ = model.chat(request, &|_| {}).await;
        }))
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_of_one_partys_calls_holds_up_anothers_by_one_turn() {
        let recording = Arc::new(Recording::default());
        let gate = ModelGate::new(2);
        let model = gate.wrap(Arc::clone(&recording) as SharedModel);
        let mut calls: Vec<_> = (0..20).map(|_| call_as(&model, "flood")).collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        calls.push(call_as(&model, "one"));
        for call in calls {
            call.await.expect("call");
        }
        let started = recording
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        assert_eq!(started.len(), 21);
        // Two of the flood's were in flight; the first place freed was the
        // other party's.
        assert_eq!(
            started.iter().position(|who| who == "one"),
            Some(2),
            "{started:?}"
        );
        assert_eq!(gate.in_flight(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_stops_waiting_leaves_no_place_taken() {
        let recording = Arc::new(Recording::default());
        let gate = ModelGate::new(1);
        let model = gate.wrap(Arc::clone(&recording) as SharedModel);
        let first = call_as(&model, "a");
        tokio::time::sleep(Duration::from_millis(1)).await;
        let given_up = call_as(&model, "b");
        let last = call_as(&model, "c");
        tokio::time::sleep(Duration::from_millis(1)).await;
        given_up.abort();
        let _ = given_up.await;
        first.await.expect("first");
        last.await.expect("last");
        let started = recording
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        assert_eq!(started, ["a", "c"]);
        assert_eq!(gate.in_flight(), 0);
        // The gate still lets calls through.
        call_as(&model, "d").await.expect("d");
        assert_eq!(gate.in_flight(), 0);
    }
}
