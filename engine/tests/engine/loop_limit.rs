//! Cycles: allowed, bounded by max_steps, and named when they run away.

use heddle_engine::run::{EventPayload, RunError};
use serde_json::json;

use crate::support::{channels, compile, run};

#[tokio::test]
async fn a_conditional_cycle_runs_until_its_condition_fails() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "think", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "act", "kind": "set", "config": {"values": {"log": {"template": "act {{count}}"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "think"},
            {"id": "e2", "from": "think", "to": "act"},
            {"id": "loop", "from": "act", "to": "think", "condition": "count < 3"},
            {"id": "out", "from": "act", "to": "end", "condition": "count >= 3"}
        ]
    }));
    let (result, _) = run(&graph, json!({})).await;
    let output = result.unwrap();
    assert_eq!(output.state["log"], json!(["act 1", "act 2", "act 3"]));
}

#[tokio::test]
async fn a_runaway_loop_stops_at_max_steps_naming_its_nodes() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ping", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "pong", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ping"},
            {"id": "e2", "from": "ping", "to": "pong"},
            {"id": "e3", "from": "pong", "to": "ping"}
        ],
        "limits": {"max_steps": 25}
    }));
    let (result, events) = run(&graph, json!({})).await;
    match result.unwrap_err() {
        RunError::StepLimit {
            limit, loop_nodes, ..
        } => {
            assert_eq!(limit, 25);
            let names: Vec<&str> = loop_nodes.iter().map(|n| n.as_str()).collect();
            assert_eq!(names, ["ping", "pong"]);
        }
        other => panic!("unexpected {other:?}"),
    }
    let steps = events
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::StepStarted { .. }))
        .count();
    assert_eq!(steps, 25);
    match &events.last().unwrap().payload {
        EventPayload::RunFailed { error, .. } => {
            assert!(error.contains("loops through `ping`, `pong`"), "{error}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// A chain longer than its limit does not loop: the run says it needs a
/// higher limit and what it had still to run, not that it loops through
/// every node it ran (a person read "it loops" of a graph with no cycle).
#[tokio::test]
async fn a_chain_longer_than_its_limit_is_not_said_to_loop() {
    let mut nodes = vec![json!({"id": "start", "kind": "start"})];
    let mut edges = Vec::new();
    let mut last = "start".to_string();
    for i in 0..12 {
        let id = format!("step{i}");
        nodes.push(json!({"id": id, "kind": "set", "config": {"values": {"count": {"value": 1}}}}));
        edges.push(json!({"id": format!("e{i}"), "from": last, "to": id}));
        last = id;
    }
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": nodes,
        "edges": edges,
        "limits": {"max_steps": 5}
    }));
    let (result, _) = run(&graph, json!({})).await;
    let error = result.unwrap_err();
    match &error {
        RunError::StepLimit {
            limit,
            loop_nodes,
            waiting,
        } => {
            assert_eq!(*limit, 5);
            assert!(loop_nodes.is_empty(), "{loop_nodes:?}");
            let waiting: Vec<&str> = waiting.iter().map(|n| n.as_str()).collect();
            assert_eq!(waiting, ["step4"]);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "the run passed its limit of 5 steps; it does not loop, but had `step4` still to run: \
         a graph this long needs a higher limit (its Steps)"
    );
}
