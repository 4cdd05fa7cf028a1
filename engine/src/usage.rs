//! Tokens and cost: what each model call used (prompt, completion and
//! cached tokens), what it cost by the [`PriceTable`], a run's running
//! totals ([`Meter`]) and its budget (`limits.max_tokens`,
//! `limits.max_cost`).

pub(crate) mod meter;
mod prices;

pub use meter::{Meter, OverBudget};
pub use prices::{Price, PriceTable, PricesError};

use serde::{Deserialize, Serialize};

/// Tokens and cost added up over calls (a node's, a step's, a run's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageTotals {
    /// Model calls.
    #[serde(default)]
    pub calls: u64,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens the endpoint served from its cache (part of
    /// `prompt_tokens`).
    #[serde(default)]
    pub cached_tokens: u64,
    /// US dollars, for the calls whose model has a price.
    #[serde(default)]
    pub cost_usd: f64,
    /// Calls to models with no price (their cost is not in `cost_usd`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_calls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl UsageTotals {
    /// Prompt and completion tokens.
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Whether nothing was used.
    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// Adds another total.
    pub fn add(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cost_usd += other.cost_usd;
        self.unpriced_calls += other.unpriced_calls;
    }

    /// Adds one call, as a `usage` event reports it.
    pub fn add_event(&mut self, data: &serde_json::Value) {
        let count = |field: &str| data[field].as_u64().unwrap_or(0);
        self.calls += 1;
        self.prompt_tokens += count("prompt_tokens");
        self.completion_tokens += count("completion_tokens");
        self.cached_tokens += count("cached_tokens");
        match data["cost_usd"].as_f64() {
            Some(cost) => self.cost_usd += cost,
            None => self.unpriced_calls += 1,
        }
    }
}
