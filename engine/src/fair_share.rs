//! Places (model calls in flight, script threads) shared fairly between
//! parties. A server names each run's owner with [`on_behalf_of`]; a place
//! freed goes to the waiting party with the fewest places held, then to
//! the one served longest ago, then to the oldest wait. One owner's flood
//! (a fan-out of a thousand agents, a thousand scripts) holds up another
//! owner's single call by one turn, not a thousand. Work done outside any
//! party shares one.
//!
//! [`crate::model::ModelGate`] and [`crate::run::WorkerPool`] both wait
//! here, so the rule is written once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

tokio::task_local! {
    /// Whose behalf the work of this task is done on.
    static PARTY: Arc<str>;
}

/// Runs `work` (a run's execution) with its model calls and scripts made
/// on behalf of `party` (its owner), for their fair share.
pub async fn on_behalf_of<F: Future>(party: Arc<str>, work: F) -> F::Output {
    PARTY.scope(party, work).await
}

/// The party the current task works for ("" outside any).
fn current_party() -> Arc<str> {
    PARTY.try_with(Arc::clone).unwrap_or_else(|_| Arc::from(""))
}

/// A fixed number of places, taken in fair turns between parties.
#[derive(Clone, Debug)]
pub struct FairPlaces {
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
    /// Places held, by party (parties with none are left out).
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

impl FairPlaces {
    /// `size` places (at least one).
    pub fn new(size: usize) -> Self {
        FairPlaces {
            places: Arc::new(Places {
                size: size.max(1),
                state: Mutex::default(),
            }),
        }
    }

    /// How many places there are.
    pub fn size(&self) -> usize {
        self.places.size
    }

    /// How many places are held now.
    pub fn in_flight(&self) -> usize {
        self.places.lock().in_flight
    }

    /// How many tasks wait for a place now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.places.lock().waiting.len()
    }

    /// A place for the current task's party, once it is its turn. Dropping
    /// the future while it waits leaves the queue.
    pub async fn place(&self) -> Place {
        let party = current_party();
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
        // Handed over by the holder that freed it, already counted as ours.
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

    /// `party` gave a place back: it goes to the fairest waiter.
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

    /// The waiter to serve next: fewest places held by its party, then
    /// served longest ago, then the oldest.
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

    /// One of `party`'s places is no longer held.
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

/// A place held, given back when dropped (on any thread).
#[derive(Debug)]
pub struct Place {
    places: Arc<Places>,
    party: Arc<str>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.places.lock().give_back(&self.party);
    }
}

/// A task waiting for a place; if it stops waiting (its run was
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
