//! `script`: a score computed by a small Rhai script, for what the other
//! kinds cannot say. It reads `output`, `reference`, `input`, `tokens`,
//! `cost_usd` and `latency_ms` and returns a number from 0 to 1, `true` or
//! `false`, or `#{score: 0.5, reason: "..."}`. It runs in the `script`
//! node's sandbox (no files, no network, no modules; operations, sizes and
//! time limited), on the registry's script pool when scored with
//! [`super::Scorer::score_in`].

use serde_json::Value;

use super::problem::{ScorerError, problem};
use super::{Names, Score, quote};
use crate::kinds::ScriptConfig;
use crate::kinds::script::Compiled;

/// The longest reason a script's score keeps (characters).
const MAX_REASON: usize = 500;

#[derive(Debug, Clone)]
pub(super) struct Script {
    compiled: Compiled,
}

impl Script {
    pub(super) fn new(
        source: &str,
        max_operations: Option<u64>,
        timeout_ms: Option<u64>,
    ) -> Result<Script, Vec<ScorerError>> {
        let defaults: ScriptConfig = serde_json::from_value(serde_json::json!({"source": source}))
            .map_err(|error| vec![problem("source", error.to_string())])?;
        let config = ScriptConfig {
            max_operations: max_operations.unwrap_or(defaults.max_operations),
            timeout_ms: timeout_ms.unwrap_or(defaults.timeout_ms),
            ..defaults
        };
        Compiled::new(config)
            .map(|compiled| Script { compiled })
            .map_err(|issues| {
                issues
                    .into_iter()
                    .map(|issue| problem(issue.path, issue.message))
                    .collect()
            })
    }

    /// What the script reads: the names expressions read.
    fn inputs(names: &Names<'_>) -> Vec<(&'static str, Value)> {
        [
            "output",
            "reference",
            "input",
            "tokens",
            "cost_usd",
            "latency_ms",
        ]
        .into_iter()
        .filter_map(|name| names.lookup(name).map(|value| (name, value)))
        .collect()
    }

    /// Scores on the calling thread.
    pub(super) fn score(&self, names: &Names<'_>, limits: &crate::state::ValueLimits) -> Score {
        read(self.compiled.run_here(Self::inputs(names), limits))
    }

    /// Scores on `pool`, off the async runtime.
    #[cfg(feature = "runtime")]
    pub(super) async fn score_on(
        &self,
        names: &Names<'_>,
        pool: &crate::run::WorkerPool,
        limits: crate::state::ValueLimits,
    ) -> Score {
        read(
            self.compiled
                .run_on(pool, Self::inputs(names), limits)
                .await,
        )
    }
}

/// A script's result as a score: a failure or a result of the wrong shape
/// scores 0, saying why.
fn read(result: Result<Value, String>) -> Score {
    let value = match result {
        Ok(value) => value,
        Err(error) => return Score::fail(error),
    };
    let (score, reason) = match &value {
        Value::Object(fields) => (
            fields.get("score").cloned().unwrap_or(Value::Null),
            fields.get("reason").map(|reason| match reason {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            }),
        ),
        other => (other.clone(), None),
    };
    let (number, said) = match score {
        Value::Bool(passed) => (if passed { 1.0 } else { 0.0 }, format!("{passed}")),
        Value::Number(number) => match number.as_f64() {
            Some(number) if (0.0..=1.0).contains(&number) => (number, number.to_string()),
            _ => {
                return Score::fail(format!(
                    "the script gave {number}; a score is from 0 to 1, or true or false"
                ));
            }
        },
        _ => {
            return Score::fail(format!(
                "the script gave {}; it must give a number from 0 to 1, true or false, or #{{score, reason}}",
                quote(&value)
            ));
        }
    };
    let reason = match reason {
        Some(reason) if !reason.trim().is_empty() => {
            let kept: String = reason.chars().take(MAX_REASON).collect();
            kept
        }
        _ => format!("the script gave {said}"),
    };
    Score {
        value: number,
        reason,
    }
}
