//! `threshold`: a run's tokens, cost or latency at most a ceiling.

use serde::{Deserialize, Serialize};

use super::problem::{ScorerError, problem};
use super::{Observed, Score};

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Prompt and completion tokens of every model call of the run.
    Tokens,
    /// US dollars, for models with a price.
    CostUsd,
    /// From the run's first event to its last.
    LatencyMs,
}

#[derive(Debug, Clone)]
pub(super) struct Threshold {
    metric: Metric,
    max: f64,
}

impl Threshold {
    pub(super) fn new(metric: Metric, max: f64) -> Result<Threshold, Vec<ScorerError>> {
        if !max.is_finite() || max < 0.0 {
            return Err(vec![problem("max", "must be a number of 0 or more")]);
        }
        Ok(Threshold { metric, max })
    }

    pub(super) fn score(&self, observed: &Observed) -> Score {
        let (value, unit) = match self.metric {
            Metric::Tokens => (observed.usage.tokens() as f64, "tokens"),
            Metric::CostUsd => (observed.usage.cost_usd, "USD"),
            Metric::LatencyMs => (observed.latency_ms as f64, "ms"),
        };
        let unpriced = match self.metric {
            Metric::CostUsd if observed.usage.unpriced_calls > 0 => format!(
                " ({} calls to models without a price not counted)",
                observed.usage.unpriced_calls
            ),
            _ => String::new(),
        };
        Score::of(
            value <= self.max,
            format!("{value} {unit}, within {}{unpriced}", self.max),
            format!("{value} {unit}, over {}{unpriced}", self.max),
        )
    }
}
