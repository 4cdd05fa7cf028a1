//! Turns at this server's run slots, fair between owners. A run waits for
//! a slot here after it is queued; a freed slot goes to the owner with the
//! fewest runs executing on this server, and between owners with as many,
//! to the one served longest ago (so owners take turns), the
//! longest-waiting run of theirs first. One
//! owner with a hundred queued runs therefore never makes another owner
//! wait more than one slot's turn: their next run goes before the rest of
//! the hundred.
//!
//! Between servers, the runs queued for any server are claimed in the same
//! order, in the database (`heddle_store::runs::claim_lapsed`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Whose a run is, for fairness: the account whose rights admit it.
pub(crate) type Owner = Arc<str>;

/// This server's slots and the runs waiting for one.
#[derive(Clone)]
pub(crate) struct Turns {
    state: Arc<Mutex<State>>,
}

struct State {
    /// Slots nobody holds.
    free: usize,
    /// Set at shutdown: waiting runs are let go without a slot.
    closed: bool,
    /// Runs holding a slot, per owner.
    holding: HashMap<Owner, usize>,
    /// Runs waiting, per owner, oldest first, each with the order it came.
    waiting: HashMap<Owner, VecDeque<(u64, oneshot::Sender<Turn>)>>,
    arrivals: u64,
    /// When each owner holding or awaiting a slot was last given one, by
    /// the count of turns given.
    served: HashMap<Owner, u64>,
    given: u64,
}

/// A slot held by one run; given back when dropped.
pub(crate) struct Turn {
    turns: Turns,
    /// `None` once given back (or never handed over).
    owner: Option<Owner>,
}

impl Turns {
    /// `slots` slots (at least one), all free.
    pub(crate) fn new(slots: usize) -> Self {
        Turns {
            state: Arc::new(Mutex::new(State {
                free: slots.max(1),
                closed: false,
                holding: HashMap::new(),
                waiting: HashMap::new(),
                arrivals: 0,
                served: HashMap::new(),
                given: 0,
            })),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a slot for a run of `owner`; `None` once the server shuts
    /// down (the run stays queued, for whichever server goes on).
    pub(crate) async fn wait(&self, owner: Owner) -> Option<Turn> {
        let waiting = {
            let mut state = self.state();
            if state.closed {
                return None;
            }
            // An owner's queue is dropped when it empties: none left
            // means nobody waits.
            if state.free > 0 && state.waiting.is_empty() {
                state.take(&owner);
                return Some(Turn {
                    turns: self.clone(),
                    owner: Some(owner),
                });
            }
            let (give, take) = oneshot::channel();
            state.arrivals += 1;
            let order = state.arrivals;
            state
                .waiting
                .entry(owner)
                .or_default()
                .push_back((order, give));
            take
        };
        self.hand_on();
        // A dropped sender: the server closed the turns.
        waiting.await.ok()
    }

    /// How many runs wait for a slot.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.state().waiting.values().map(VecDeque::len).sum()
    }

    /// Lets every waiting run go without a slot (the server shuts down),
    /// and refuses slots from now on.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closed = true;
        // Dropping the senders wakes every waiter with `None`.
        state.waiting.clear();
    }

    /// Gives free slots to waiting runs, fairly, while there are both.
    fn hand_on(&self) {
        loop {
            let (give, turn) = {
                let mut state = self.state();
                if state.free == 0 || state.closed {
                    return;
                }
                let Some(owner) = state.next_owner() else {
                    return;
                };
                let Some((_, give)) = state.waiting.get_mut(&owner).and_then(VecDeque::pop_front)
                else {
                    return;
                };
                if state.waiting.get(&owner).is_some_and(VecDeque::is_empty) {
                    state.waiting.remove(&owner);
                }
                state.take(&owner);
                (
                    give,
                    Turn {
                        turns: self.clone(),
                        owner: Some(owner),
                    },
                )
            };
            if let Err(mut unwanted) = give.send(turn) {
                // The run stopped waiting (it was cancelled): the slot is
                // free again, for the next.
                if let Some(owner) = unwanted.owner.take() {
                    self.state().release(&owner);
                }
            }
        }
    }
}

impl State {
    /// The owner whose run goes next: fewest runs holding a slot, then
    /// served longest ago, then the longest-waiting run.
    fn next_owner(&self) -> Option<Owner> {
        self.waiting
            .iter()
            .filter_map(|(owner, queue)| {
                let (order, _) = queue.front()?;
                let holding = self.holding.get(owner).copied().unwrap_or(0);
                let served = self.served.get(owner).copied().unwrap_or(0);
                Some(((holding, served, *order), owner))
            })
            .min_by_key(|(rank, _)| *rank)
            .map(|(_, owner)| Arc::clone(owner))
    }

    /// `owner` takes a free slot.
    fn take(&mut self, owner: &Owner) {
        self.free -= 1;
        *self.holding.entry(Arc::clone(owner)).or_default() += 1;
        self.given += 1;
        self.served.insert(Arc::clone(owner), self.given);
    }

    /// `owner` gives a slot back. An owner with nothing held or awaited is
    /// forgotten: coming back, it is served before those who were served.
    fn release(&mut self, owner: &Owner) {
        self.free += 1;
        if let Some(holding) = self.holding.get_mut(owner) {
            *holding -= 1;
            if *holding == 0 {
                self.holding.remove(owner);
                if !self.waiting.contains_key(owner) {
                    self.served.remove(owner);
                }
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            self.turns.state().release(&owner);
            self.turns.hand_on();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(name: &str) -> Owner {
        Arc::from(name)
    }

    /// Starts a waiter for `who` and lets it queue.
    async fn queue(turns: &Turns, who: &str) -> tokio::task::JoinHandle<Option<Turn>> {
        let turns = turns.clone();
        let who = owner(who);
        let waiter = tokio::spawn(async move { turns.wait(who).await });
        tokio::task::yield_now().await;
        waiter
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_owner_with_fewest_runs_not_the_first_in_line() {
        let turns = Turns::new(2);
        let a1 = turns.wait(owner("a")).await.expect("slot");
        let a2 = turns.wait(owner("a")).await.expect("slot");
        let mut a_waiting = Vec::new();
        for _ in 0..5 {
            a_waiting.push(queue(&turns, "a").await);
        }
        let b = queue(&turns, "b").await;
        assert_eq!(turns.waiting(), 6);
        drop(a1);
        let b_turn = b.await.expect("task").expect("b's turn");
        assert_eq!(turns.waiting(), 5, "b went before a's five");
        // Next, a's oldest.
        drop(a2);
        let first = a_waiting.remove(0).await.expect("task").expect("a's turn");
        assert_eq!(turns.waiting(), 4);
        drop((b_turn, first));
        for waiter in a_waiting {
            drop(waiter.await.expect("task").expect("a's turn"));
        }
        assert_eq!(turns.waiting(), 0);
        assert_eq!(turns.state().free, 2);
    }

    #[tokio::test]
    async fn owners_take_turns_round_robin_when_both_have_many() {
        let turns = Turns::new(1);
        let held = turns.wait(owner("x")).await.expect("slot");
        let mut waiters = Vec::new();
        for who in ["a", "a", "a", "b", "b", "b"] {
            waiters.push((who, queue(&turns, who).await));
        }
        let mut order = Vec::new();
        drop(held);
        let mut pending = waiters;
        while !pending.is_empty() {
            // Whichever was handed the slot is the one that finished waiting.
            let index = loop {
                if let Some(index) = pending.iter().position(|(_, w)| w.is_finished()) {
                    break index;
                }
                tokio::task::yield_now().await;
            };
            let (who, waiter) = pending.remove(index);
            order.push(who);
            drop(waiter.await.expect("task").expect("turn"));
        }
        assert_eq!(order, ["a", "b", "a", "b", "a", "b"]);
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_does_not_keep_a_slot() {
        let turns = Turns::new(1);
        let held = turns.wait(owner("a")).await.expect("slot");
        let quitter = queue(&turns, "b").await;
        quitter.abort();
        let _ = quitter.await;
        let c = queue(&turns, "c").await;
        drop(held);
        assert!(c.await.expect("task").is_some());
        assert_eq!(turns.state().free, 1);
    }

    #[tokio::test]
    async fn closing_lets_every_waiter_go_without_a_slot() {
        let turns = Turns::new(1);
        let _held = turns.wait(owner("a")).await.expect("slot");
        let waiter = queue(&turns, "b").await;
        turns.close();
        assert!(waiter.await.expect("task").is_none());
        assert!(turns.wait(owner("c")).await.is_none());
    }
}
