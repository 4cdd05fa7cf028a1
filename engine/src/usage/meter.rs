//! A run's meter: every model call's tokens and cost added up, and the
//! run's budget checked. So that a run over budget fails the same way
//! however its concurrent tasks interleave, a node checks the total as it
//! stood when its step began plus its own calls, and the executor checks
//! the whole total when each step ends.
//!
//! A child graph's run (a subgraph's, a sub-agent's) has a meter of its
//! own under its enclosing run's: each of its calls also counts in the
//! enclosing totals and against the enclosing budget, whose whole total
//! is checked at the call (the enclosing run checks again when its step
//! ends).

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::{PriceTable, UsageTotals};
use crate::format::Limits;
use crate::model::Usage;

/// One run's totals and budget.
pub struct Meter {
    prices: Arc<PriceTable>,
    max_tokens: Option<u64>,
    max_cost: Option<f64>,
    total: Mutex<UsageTotals>,
    at_step_start: Mutex<UsageTotals>,
    /// The enclosing run's meter, for a child graph's run.
    parent: Option<Arc<Meter>>,
}

/// A run that went over one of its budgets.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the run went over its budget: it used {used}, and `{budget}` is {limit}")]
pub struct OverBudget {
    /// `limits.max_tokens` or `limits.max_cost`.
    pub budget: &'static str,
    pub used: String,
    pub limit: String,
}

impl Meter {
    /// A meter for a run under `limits`, pricing calls by `prices`.
    pub fn new(prices: Arc<PriceTable>, limits: &Limits) -> Meter {
        Meter {
            prices,
            max_tokens: limits.max_tokens,
            max_cost: limits.max_cost,
            total: Mutex::new(UsageTotals::default()),
            at_step_start: Mutex::new(UsageTotals::default()),
            parent: None,
        }
    }

    /// The same meter, inside the run `parent` meters: its calls count
    /// there too.
    pub fn under(mut self, parent: Arc<Meter>) -> Meter {
        self.parent = Some(parent);
        self
    }

    /// Adds a call made inside a child graph to this run's totals (and its
    /// enclosing runs').
    fn add_from_child(&self, call: &UsageTotals) {
        lock(&self.total).add(call);
        if let Some(parent) = &self.parent {
            parent.add_from_child(call);
        }
    }

    /// Whether this run and every run enclosing it are within budget.
    fn check_up(&self) -> Result<(), OverBudget> {
        self.check()?;
        match &self.parent {
            Some(parent) => parent.check_up(),
            None => Ok(()),
        }
    }

    /// Starts from what the run used before (a resumed run).
    pub fn seed(&self, used: UsageTotals) {
        *lock(&self.total) = used;
        *lock(&self.at_step_start) = used;
    }

    /// What the run used so far.
    pub fn total(&self) -> UsageTotals {
        *lock(&self.total)
    }

    /// Marks the start of a step: nodes check their calls against this.
    pub fn begin_step(&self) {
        *lock(&self.at_step_start) = self.total();
    }

    /// Records one call by a node that has used `own` so far this
    /// execution; returns the `usage` event's data and whether the node
    /// is now over budget.
    pub fn record(
        &self,
        model: &str,
        usage: &Usage,
        own: &mut UsageTotals,
    ) -> (Value, Result<(), OverBudget>) {
        let (data, call) = call_totals(&self.prices, model, usage);
        own.add(&call);
        lock(&self.total).add(&call);
        let mut seen = *lock(&self.at_step_start);
        seen.add(own);
        let mut verdict = self.within(&seen);
        if let Some(parent) = &self.parent {
            parent.add_from_child(&call);
            verdict = verdict.and_then(|()| parent.check_up());
        }
        (data, verdict)
    }

    /// Whether the whole total is within budget.
    pub fn check(&self) -> Result<(), OverBudget> {
        self.within(&self.total())
    }

    fn within(&self, used: &UsageTotals) -> Result<(), OverBudget> {
        if let Some(limit) = self.max_tokens
            && used.tokens() > limit
        {
            return Err(OverBudget {
                budget: "limits.max_tokens",
                used: format!("{} tokens", used.tokens()),
                limit: limit.to_string(),
            });
        }
        if let Some(limit) = self.max_cost
            && used.cost_usd > limit
        {
            return Err(OverBudget {
                budget: "limits.max_cost",
                used: format!("${:.4}", used.cost_usd),
                limit: format!("${limit}"),
            });
        }
        Ok(())
    }
}

/// One call's `usage` event data and its totals.
pub(crate) fn call_totals(prices: &PriceTable, model: &str, usage: &Usage) -> (Value, UsageTotals) {
    let cost = prices.cost(model, usage);
    let data = json!({
        "model": model,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "cost_usd": cost,
    });
    let mut totals = UsageTotals::default();
    totals.add_event(&data);
    (data, totals)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u32, completion: u32) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: 0,
        }
    }

    #[test]
    fn a_node_is_stopped_by_its_own_calls_over_the_budget_not_its_siblings() {
        let limits = Limits {
            max_tokens: Some(100),
            ..Limits::default()
        };
        let meter = Meter::new(Arc::new(PriceTable::default()), &limits);
        meter.seed(UsageTotals {
            calls: 1,
            prompt_tokens: 40,
            ..UsageTotals::default()
        });
        let (mut a, mut b) = (UsageTotals::default(), UsageTotals::default());
        assert!(meter.record("offline", &usage(30, 0), &mut a).1.is_ok());
        // b's check does not see a's concurrent call.
        assert!(meter.record("offline", &usage(30, 0), &mut b).1.is_ok());
        // The step's end sees both: 100 tokens is within, one more is not.
        assert!(meter.check().is_ok());
        let (data, over) = meter.record("offline", &usage(0, 31), &mut a);
        assert_eq!(data["cost_usd"], 0.0);
        let over = over.unwrap_err();
        assert_eq!(over.budget, "limits.max_tokens");
        assert_eq!(
            over.to_string(),
            "the run went over its budget: it used 101 tokens, and `limits.max_tokens` is 100"
        );
        assert_eq!(meter.total().tokens(), 131);
        assert!(meter.check().is_err());
    }

    #[test]
    fn cost_budgets_count_priced_models_only() {
        let limits = Limits {
            max_cost: Some(0.001),
            ..Limits::default()
        };
        let meter = Meter::new(Arc::new(PriceTable::default()), &limits);
        let mut own = UsageTotals::default();
        let (data, ok) = meter.record("my-local-model", &usage(1_000_000, 0), &mut own);
        assert!(data["cost_usd"].is_null() && ok.is_ok());
        assert_eq!(own.unpriced_calls, 1);
        let (_, over) = meter.record("gpt-4o-mini", &usage(10_000, 0), &mut own);
        assert_eq!(over.unwrap_err().budget, "limits.max_cost");
    }
}
