//! A cap on model calls in flight at once, shared by every run a registry
//! compiles: a runner's ceiling (`ModelGate`), so a flood of runs, agents
//! and sub-agents waits its turn instead of opening unbounded requests to
//! the endpoint. A call holds its place until its whole reply (streamed
//! or not) is in.
//!
//! Places are shared fairly between parties (a server names each run's
//! owner with [`on_behalf_of`]): a freed place goes to the waiting party
//! with the fewest calls in flight, then to the one served longest ago,
//! then to the oldest call. One owner's fan-out of a thousand agents
//! holds up another owner's single call by one call's turn, not a
//! thousand. Calls made outside any party share one.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::{ChatModel, ChatRequest, Delta, ModelFuture, SharedModel};

tokio::task_local! {
    /// Whose behalf the model calls of this task are made on.
    static PARTY: Arc<str>;
}

/// Runs `work` (a run's execution) with its model calls made on behalf of
/// `party` (its owner), for the gate's fair share.
pub async fn on_behalf_of<F: Future>(party: Arc<str>, work: F) -> F::Output {
    PARTY.scope(party, work).await
}

/// How many model calls may be in flight at once, over every run of the
/// registries that share it, shared fairly between parties.
#[derive(Clone, Debug)]
pub struct ModelGate {
    places: Arc<Places>,
}

#[derive(Debug)]
struct Places {
    size: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    in_flight: usize,
    /// Calls in flight, by party (parties with none are left out).
    holding: HashMap<Arc<str>, usize>,
    /// When each party holding or waiting was last given a place.
    served: HashMap<Arc<str>, u64>,
    clock: u64,
    waiting: Vec<Waiter>,
    next: u64,
}

#[derive(Debug)]
struct Waiter {
    party: Arc<str>,
    number: u64,
    wake: oneshot::Sender<()>,
}

impl ModelGate {
    /// A gate letting `at_once` calls through together (at least one).
    pub fn new(at_once: usize) -> Self {
        ModelGate {
            places: Arc::new(Places {
                size: at_once.max(1),
                state: Mutex::default(),
            }),
        }
    }

    /// How many calls may be in flight at once.
    pub fn size(&self) -> usize {
        self.places.size
    }

    /// How many calls are in flight now.
    pub fn in_flight(&self) -> usize {
        self.places.lock().in_flight
    }

    /// `model`, its calls taking turns at this gate.
    pub fn wrap(&self, model: SharedModel) -> SharedModel {
        Arc::new(Gated {
            inner: model,
            gate: self.clone(),
        })
    }

    /// A place for a call on behalf of the current task's party.
    async fn place(&self) -> Place {
        let party = PARTY.try_with(Arc::clone).unwrap_or_else(|_| Arc::from(""));
        let places = Arc::clone(&self.places);
        let queued = {
            let mut state = places.lock();
            if state.in_flight < places.size {
                state.take(&party);
                None
            } else {
                let (wake, woken) = oneshot::channel();
                let number = state.next;
                state.next += 1;
                state.waiting.push(Waiter {
                    party: Arc::clone(&party),
                    number,
                    wake,
                });
                Some((number, woken))
            }
        };
        let Some((number, woken)) = queued else {
            return Place { places, party };
        };
        let mut waiting = Waiting {
            places: Some(Arc::clone(&places)),
            party: Arc::clone(&party),
            number,
            woken,
        };
        // Handed over by the call that freed it, already counted as ours.
        let _ = (&mut waiting.woken).await;
        waiting.places = None;
        Place { places, party }
    }
}

impl Places {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn take(&mut self, party: &Arc<str>) {
        self.in_flight += 1;
        *self.holding.entry(Arc::clone(party)).or_default() += 1;
        self.clock += 1;
        self.served.insert(Arc::clone(party), self.clock);
    }

    /// `party`'s call ended: its place goes to the fairest waiter.
    fn give_back(&mut self, party: &Arc<str>) {
        self.forget(party);
        while let Some(next) = self.fairest() {
            let waiter = self.waiting.swap_remove(next);
            self.take(&waiter.party);
            if waiter.wake.send(()).is_ok() {
                break;
            }
            // It stopped waiting just now: the place is free again.
            self.forget(&waiter.party);
        }
        self.tidy();
    }

    /// The waiter to serve next: fewest calls in flight for its party,
    /// then served longest ago, then the oldest.
    fn fairest(&self) -> Option<usize> {
        self.waiting
            .iter()
            .enumerate()
            .min_by_key(|(_, waiter)| {
                (
                    self.holding.get(&waiter.party).copied().unwrap_or(0),
                    self.served.get(&waiter.party).copied().unwrap_or(0),
                    waiter.number,
                )
            })
            .map(|(index, _)| index)
    }

    /// One of `party`'s calls no longer holds a place.
    fn forget(&mut self, party: &Arc<str>) {
        self.in_flight -= 1;
        if let Some(held) = self.holding.get_mut(party) {
            *held -= 1;
            if *held == 0 {
                self.holding.remove(party);
            }
        }
    }

    /// Keeps `served` to the parties holding or waiting.
    fn tidy(&mut self) {
        if self.served.len() > 2 * (self.holding.len() + self.waiting.len()) + 16 {
            let (holding, waiting) = (&self.holding, &self.waiting);
            self.served.retain(|party, _| {
                holding.contains_key(party) || waiting.iter().any(|w| &w.party == party)
            });
        }
    }
}

/// A call's place at the gate, given back when the call ends.
struct Place {
    places: Arc<Places>,
    party: Arc<str>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places.lock().give_back(&self.party);
    }
}

/// A call waiting for a place; if it stops waiting (its run was
/// cancelled), it leaves the queue, and a place handed to it just then is
/// given back.
struct Waiting {
    places: Option<Arc<Places>>,
    party: Arc<str>,
    number: u64,
    woken: oneshot::Receiver<()>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(places) = self.places.take() else {
            return;
        };
        let mut state = places.lock();
        if self.woken.try_recv().is_ok() {
            state.give_back(&self.party);
        } else {
            let number = self.number;
            state.waiting.retain(|waiter| waiter.number != number);
        }
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
            let _place = self.gate.place().await;
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
