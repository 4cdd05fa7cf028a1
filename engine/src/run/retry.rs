//! When to try a failed node again, and how long to wait first:
//! exponential backoff, capped, with optional jitter. The jitter comes
//! from a small generator seeded by the run, node and attempt, so a replay
//! waits the same; it changes timing only, never results.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use crate::format::{RetryOn, RetryPolicy};
use crate::node::NodeError;

/// Whether `error` on attempt `attempt` (from 1) should be retried.
pub(crate) fn should_retry(policy: &RetryPolicy, attempt: u32, error: &NodeError) -> bool {
    !matches!(error, NodeError::Interrupt { .. })
        && attempt < policy.max_attempts
        && match policy.retry_on {
            RetryOn::All => true,
            RetryOn::Transient => error.is_transient(),
        }
}

/// The wait before attempt `attempt + 1`.
pub(crate) fn delay(policy: &RetryPolicy, attempt: u32, seed: impl Hash) -> Duration {
    let exponent = attempt.saturating_sub(1).min(64) as i32;
    let base = policy.initial_interval_ms as f64 * policy.backoff_factor.powi(exponent);
    let capped = base.min(policy.max_interval_ms as f64).max(0.0);
    let millis = if policy.jitter {
        let mut hasher = DefaultHasher::new();
        (seed, attempt).hash(&mut hasher);
        let unit = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
        capped * (0.5 + 0.5 * unit)
    } else {
        capped
    };
    Duration::from_micros((millis * 1000.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(jitter: bool) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            initial_interval_ms: 100,
            backoff_factor: 2.0,
            max_interval_ms: 500,
            jitter,
            retry_on: RetryOn::Transient,
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let delays: Vec<u128> = (1..=5)
            .map(|a| delay(&policy(false), a, "n").as_millis())
            .collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_stays_between_half_and_all_and_is_repeatable() {
        for attempt in 1..=4 {
            let full = delay(&policy(false), attempt, "n");
            let jittered = delay(&policy(true), attempt, "n");
            assert!(
                jittered <= full && jittered >= full / 2,
                "{jittered:?} vs {full:?}"
            );
            assert_eq!(jittered, delay(&policy(true), attempt, "n"));
        }
    }

    #[test]
    fn only_transient_failures_retry_by_default() {
        let p = policy(false);
        assert!(should_retry(&p, 1, &NodeError::transient("429")));
        assert!(!should_retry(&p, 1, &NodeError::permanent("bad config")));
        assert!(!should_retry(&p, 5, &NodeError::transient("429")));
        let all = RetryPolicy {
            retry_on: RetryOn::All,
            ..p
        };
        assert!(should_retry(&all, 1, &NodeError::permanent("flaky")));
    }
}
