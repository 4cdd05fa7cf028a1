//! How a tool is called, as a graph's `tools` and `agent` nodes and the
//! server's configuration set it: the time one attempt may take, retries,
//! a cap on calls in flight across every run, a circuit breaker, and
//! whether a call that fails for good fails the node. The server's policy
//! for a tool is a floor the graph cannot lower: a graph can be stricter
//! (a shorter timeout, a smaller cap, its own breaker), never looser.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::RetryPolicy;

/// The policy of one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolPolicy {
    /// The longest one attempt may take (the node's tool timeout when
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Try a failed call again: how often, how long to wait, and on which
    /// failures (`transient`: timeouts, 5xx and dropped connections; `all`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    /// At most this many calls of the tool in flight at once, counted
    /// across every run on the server; more wait their turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<u32>,
    /// Stop calling a tool that keeps failing, for a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaker: Option<BreakerPolicy>,
    /// A call that fails for good fails the node (and the run, unless the
    /// node retries). Off, the model reads the error and goes on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_node: bool,
}

/// A circuit breaker: after `failures` failed calls within `window_ms` it
/// opens and calls fail at once, without reaching the tool; after
/// `cool_down_ms` it lets one trial call through (half-open), and closes
/// when that succeeds or opens again when it fails. Its state is shared by
/// every run on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakerPolicy {
    /// Failures within the window that open it.
    pub failures: u32,
    /// The window failures are counted in.
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
    /// How long it stays open before a trial call.
    #[serde(default = "default_cool_down_ms")]
    pub cool_down_ms: u64,
}

/// Where a circuit breaker stands, as `tool_breaker` run events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    Closed,
    Open,
    /// One trial call is let through.
    HalfOpen,
}

fn default_window_ms() -> u64 {
    60_000
}

fn default_cool_down_ms() -> u64 {
    30_000
}

/// What one call of a tool obeys, once a node's policy and the server's
/// are put together.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectivePolicy {
    pub timeout_ms: u64,
    pub retry: Option<RetryPolicy>,
    pub max_concurrent: Option<u32>,
    /// The server's breaker first, then the graph's: either open refuses.
    pub breakers: Vec<BreakerPolicy>,
    pub fail_node: bool,
}

impl EffectivePolicy {
    /// The node's policy over the server's: the shorter timeout, the
    /// smaller cap, both breakers; the node's retries (the server's when
    /// the node sets none).
    pub fn combine(
        default_timeout_ms: u64,
        node: Option<&ToolPolicy>,
        server: Option<&ToolPolicy>,
    ) -> EffectivePolicy {
        let smallest = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let node_timeout = node.and_then(|p| p.timeout_ms);
        let server_timeout = server.and_then(|p| p.timeout_ms);
        let timeout_ms = match server_timeout {
            Some(ceiling) => node_timeout.unwrap_or(default_timeout_ms).min(ceiling),
            None => node_timeout.unwrap_or(default_timeout_ms),
        };
        let max_concurrent = smallest(
            node.and_then(|p| p.max_concurrent).map(u64::from),
            server.and_then(|p| p.max_concurrent).map(u64::from),
        )
        .map(|cap| u32::try_from(cap).unwrap_or(u32::MAX));
        let mut breakers: Vec<BreakerPolicy> = server.and_then(|p| p.breaker).into_iter().collect();
        if let Some(breaker) = node.and_then(|p| p.breaker)
            && !breakers.contains(&breaker)
        {
            breakers.push(breaker);
        }
        EffectivePolicy {
            timeout_ms,
            retry: node
                .and_then(|p| p.retry.clone())
                .or_else(|| server.and_then(|p| p.retry.clone())),
            max_concurrent,
            breakers,
            fail_node: node.is_some_and(|p| p.fail_node),
        }
    }

    /// What is wrong with a policy a graph sets, by field.
    pub fn problems(policy: &ToolPolicy) -> Vec<(&'static str, &'static str)> {
        let mut problems = Vec::new();
        if policy.timeout_ms == Some(0) {
            problems.push(("timeout_ms", "a call needs more than 0 ms"));
        }
        if policy.max_concurrent == Some(0) {
            problems.push(("max_concurrent", "at least one call must be allowed"));
        }
        if let Some(retry) = &policy.retry
            && retry.max_attempts == 0
        {
            problems.push((
                "retry.max_attempts",
                "at least one attempt (1 means no retry)",
            ));
        }
        if let Some(breaker) = &policy.breaker {
            if breaker.failures == 0 {
                problems.push(("breaker.failures", "at least one failure opens it"));
            }
            if breaker.window_ms == 0 {
                problems.push(("breaker.window_ms", "the window must be longer than 0 ms"));
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_can_be_stricter_than_the_server_never_looser() {
        let server = ToolPolicy {
            timeout_ms: Some(5_000),
            max_concurrent: Some(4),
            breaker: Some(BreakerPolicy {
                failures: 5,
                window_ms: 60_000,
                cool_down_ms: 30_000,
            }),
            ..ToolPolicy::default()
        };
        let looser = ToolPolicy {
            timeout_ms: Some(60_000),
            max_concurrent: Some(100),
            breaker: Some(BreakerPolicy {
                failures: 1_000,
                window_ms: 1,
                cool_down_ms: 0,
            }),
            fail_node: true,
            ..ToolPolicy::default()
        };
        let effective = EffectivePolicy::combine(30_000, Some(&looser), Some(&server));
        assert_eq!(effective.timeout_ms, 5_000);
        assert_eq!(effective.max_concurrent, Some(4));
        assert_eq!(effective.breakers.len(), 2);
        assert_eq!(effective.breakers[0], server.breaker.unwrap());
        assert!(effective.fail_node);

        let stricter = ToolPolicy {
            timeout_ms: Some(1_000),
            max_concurrent: Some(2),
            ..ToolPolicy::default()
        };
        let effective = EffectivePolicy::combine(30_000, Some(&stricter), Some(&server));
        assert_eq!(
            (effective.timeout_ms, effective.max_concurrent),
            (1_000, Some(2))
        );

        let plain = EffectivePolicy::combine(30_000, None, None);
        assert_eq!(plain.timeout_ms, 30_000);
        assert_eq!(plain.max_concurrent, None);
        assert!(plain.breakers.is_empty() && plain.retry.is_none() && !plain.fail_node);
    }
}
