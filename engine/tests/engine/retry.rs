//! Retries with backoff, and per-node timeouts.

use heddle_engine::run::{EventPayload, RunError};
use serde_json::{Value, json};

use crate::support::{channels, compile, run};

fn graph(node: Value) -> std::sync::Arc<heddle_engine::CompiledGraph> {
    compile(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, node],
        "edges": [{"id": "e", "from": "start", "to": "work"}]
    }))
}

#[tokio::test(start_paused = true)]
async fn transient_failures_are_retried_with_backoff() {
    let graph = graph(json!({
        "id": "work", "kind": "flaky", "config": {"failures": 2},
        "retry": {"max_attempts": 3, "initial_interval_ms": 100, "backoff_factor": 2.0, "jitter": false}
    }));
    let started = tokio::time::Instant::now();
    let (result, events) = run(&graph, json!({})).await;
    assert_eq!(result.unwrap().state["count"], 1);
    let retries: Vec<(u32, u64)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::NodeRetrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, 100), (2, 200)]);
    assert!(started.elapsed().as_millis() >= 300);
    let attempts: Vec<u32> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::NodeStarted { node, attempt, .. } if node.as_str() == "work" => {
                Some(*attempt)
            }
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn retries_run_out() {
    let graph = graph(json!({
        "id": "work", "kind": "flaky", "config": {"failures": 5},
        "retry": {"max_attempts": 2, "initial_interval_ms": 10}
    }));
    let (result, events) = run(&graph, json!({})).await;
    match result.unwrap_err() {
        RunError::NodeFailed { node, error, .. } => {
            assert_eq!(node.as_str(), "work");
            assert_eq!(error.to_string(), "failure 2");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, EventPayload::NodeFailed { attempt: 2, .. }))
    );
}

#[tokio::test]
async fn permanent_failures_are_not_retried_unless_asked() {
    let graph_default = graph(json!({
        "id": "work", "kind": "flaky", "config": {"failures": 1, "transient": false},
        "retry": {"max_attempts": 3, "initial_interval_ms": 1}
    }));
    let (result, _) = run(&graph_default, json!({})).await;
    assert!(matches!(result, Err(RunError::NodeFailed { .. })));

    let graph_all = graph(json!({
        "id": "work", "kind": "flaky", "config": {"failures": 1, "transient": false},
        "retry": {"max_attempts": 3, "initial_interval_ms": 1, "retry_on": "all"}
    }));
    let (result, _) = run(&graph_all, json!({})).await;
    assert_eq!(result.unwrap().state["count"], 1);
}

#[tokio::test(start_paused = true)]
async fn a_slow_node_times_out() {
    let graph =
        graph(json!({"id": "work", "kind": "sleep", "config": {"ms": 5000}, "timeout_ms": 100}));
    let (result, _) = run(&graph, json!({})).await;
    match result.unwrap_err() {
        RunError::NodeFailed { error, .. } => {
            assert_eq!(error.to_string(), "timed out after 100 ms")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_transient_and_retried() {
    // Each attempt times out; with retries the run fails after all of them.
    let graph = graph(json!({
        "id": "work", "kind": "sleep", "config": {"ms": 5000}, "timeout_ms": 50,
        "retry": {"max_attempts": 3, "initial_interval_ms": 10, "jitter": false}
    }));
    let (result, events) = run(&graph, json!({})).await;
    assert!(matches!(result, Err(RunError::NodeFailed { .. })));
    let retrying = events
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::NodeRetrying { .. }))
        .count();
    assert_eq!(retrying, 2);
}
