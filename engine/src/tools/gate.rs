//! What every run on a server shares about a tool: how many of its calls
//! are in flight (for `max_concurrent`) and the state of its circuit
//! breakers. One [`ToolGates`] lives in the registry's toolbox, so clones of
//! the registry (one per run) share it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::policy::{BreakerPolicy, BreakerState};

/// The gates of every tool, by name.
#[derive(Clone, Default)]
pub struct ToolGates {
    gates: Arc<Mutex<HashMap<String, Arc<ToolGate>>>>,
}

impl ToolGates {
    /// The gate of `tool`, made on first use.
    pub fn gate(&self, tool: &str) -> Arc<ToolGate> {
        let mut gates = lock(&self.gates);
        Arc::clone(gates.entry(tool.to_string()).or_default())
    }
}

/// One tool's shared state.
#[derive(Default)]
pub struct ToolGate {
    in_flight: Mutex<u32>,
    freed: Notify,
    breakers: Mutex<HashMap<BreakerPolicy, Breaker>>,
}

/// A breaker that changed state, for the run's events.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub breaker: BreakerPolicy,
    pub state: BreakerState,
}

enum Breaker {
    Closed { failures: VecDeque<Instant> },
    Open { until: Instant },
    HalfOpen,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker::Closed {
            failures: VecDeque::new(),
        }
    }
}

/// A call in flight: counted against `max_concurrent` until dropped.
pub struct Slot<'a> {
    gate: &'a ToolGate,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut in_flight = lock(&self.gate.in_flight);
        *in_flight = in_flight.saturating_sub(1);
        drop(in_flight);
        // Waiters may hold different caps: each checks again.
        self.gate.freed.notify_waiters();
    }
}

/// A call the breakers let through. Record how it went with
/// [`Admission::finish`]; dropped unfinished (the run was cancelled), a
/// trial call gives its turn to the next caller.
pub struct Admission<'a> {
    gate: &'a ToolGate,
    breakers: &'a [BreakerPolicy],
    trials: Vec<BreakerPolicy>,
    finished: bool,
}

impl ToolGate {
    /// Waits until fewer than `cap` calls are in flight (any number when
    /// `None`), then counts this one.
    pub async fn slot(&self, cap: Option<u32>) -> Slot<'_> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut in_flight = lock(&self.in_flight);
                if cap.is_none_or(|cap| *in_flight < cap) {
                    *in_flight += 1;
                    return Slot { gate: self };
                }
            }
            freed.await;
        }
    }

    /// Asks `breakers` whether a call may go through now. Refused, the
    /// error says until when; a breaker whose cool-down is over lets this
    /// call through as its trial (the transition to half-open is returned).
    pub fn admit<'a>(
        &'a self,
        breakers: &'a [BreakerPolicy],
    ) -> Result<(Admission<'a>, Vec<Transition>), String> {
        let now = Instant::now();
        let mut states = lock(&self.breakers);
        let mut trials = Vec::new();
        for policy in breakers {
            match states.get(policy) {
                Some(Breaker::Open { until }) if *until > now => {
                    let left = until.duration_since(now);
                    return Err(format!(
                        "its circuit breaker is open after {} failures within {}; it is tried again in {}",
                        policy.failures,
                        seconds(Duration::from_millis(policy.window_ms)),
                        seconds(left)
                    ));
                }
                Some(Breaker::Open { .. }) => trials.push(*policy),
                Some(Breaker::HalfOpen) => {
                    return Err(
                        "its circuit breaker is half-open and a trial call is under way".into(),
                    );
                }
                Some(Breaker::Closed { .. }) | None => {}
            }
        }
        let transitions = trials
            .iter()
            .map(|policy| {
                states.insert(*policy, Breaker::HalfOpen);
                Transition {
                    breaker: *policy,
                    state: BreakerState::HalfOpen,
                }
            })
            .collect();
        Ok((
            Admission {
                gate: self,
                breakers,
                trials,
                finished: false,
            },
            transitions,
        ))
    }
}

impl Admission<'_> {
    /// Records how the call went; returns the breakers that changed state.
    pub fn finish(mut self, ok: bool) -> Vec<Transition> {
        self.finished = true;
        let now = Instant::now();
        let mut states = lock(&self.gate.breakers);
        let mut transitions = Vec::new();
        for policy in self.breakers {
            let breaker = states.entry(*policy).or_default();
            let next = match breaker {
                Breaker::HalfOpen if ok => Some(Breaker::default()),
                Breaker::HalfOpen => Some(Breaker::Open {
                    until: now + Duration::from_millis(policy.cool_down_ms),
                }),
                Breaker::Closed { failures } if !ok => {
                    let window = Duration::from_millis(policy.window_ms);
                    while failures
                        .front()
                        .is_some_and(|at| now.duration_since(*at) >= window)
                    {
                        failures.pop_front();
                    }
                    failures.push_back(now);
                    (failures.len() >= policy.failures as usize).then(|| Breaker::Open {
                        until: now + Duration::from_millis(policy.cool_down_ms),
                    })
                }
                // Closed and fine; or a call admitted before it opened.
                Breaker::Closed { .. } | Breaker::Open { .. } => None,
            };
            if let Some(next) = next {
                let state = match next {
                    Breaker::Closed { .. } => BreakerState::Closed,
                    Breaker::Open { .. } => BreakerState::Open,
                    Breaker::HalfOpen => BreakerState::HalfOpen,
                };
                *breaker = next;
                transitions.push(Transition {
                    breaker: *policy,
                    state,
                });
            }
        }
        transitions
    }
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        if self.finished || self.trials.is_empty() {
            return;
        }
        let now = Instant::now();
        let mut states = lock(&self.gate.breakers);
        for policy in &self.trials {
            if matches!(states.get(policy), Some(Breaker::HalfOpen)) {
                states.insert(*policy, Breaker::Open { until: now });
            }
        }
    }
}

fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms < 1_000 {
        format!("{ms} ms")
    } else {
        format!("{} s", ms.div_ceil(1_000))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
