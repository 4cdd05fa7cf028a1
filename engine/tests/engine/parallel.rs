//! Super-steps: parallel branches, de-duplication, joins, fan-out, and
//! merges that never depend on which task finished first.

use heddle_engine::run::EventPayload;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::{channels, compile, run};

#[tokio::test]
async fn branches_of_a_step_run_together_and_a_shared_target_runs_once() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set", "config": {"values": {"log": {"value": "a"}}}},
            {"id": "b", "kind": "set", "config": {"values": {"log": {"value": "b"}}}},
            {"id": "after", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "start", "to": "b"},
            {"id": "e3", "from": "a", "to": "after"},
            {"id": "e4", "from": "b", "to": "after"}
        ]
    }));
    let (result, events) = run(&graph, json!({})).await;
    let output = result.unwrap();
    assert_eq!(output.state["log"], json!(["a", "b"]));
    assert_eq!(output.state["count"], 1, "`after` ran once");
    let steps: Vec<Vec<String>> = events
        .iter()
        .filter_map(|event| match &event.payload {
            EventPayload::StepStarted { tasks, .. } => {
                Some(tasks.iter().map(|t| t.node.to_string()).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(steps, [vec!["start"], vec!["a", "b"], vec!["after"]]);
}

#[tokio::test]
async fn a_join_waits_for_branches_of_different_lengths() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "short", "kind": "set", "config": {"values": {"log": {"value": "short"}}}},
            {"id": "long1", "kind": "set", "config": {"values": {"log": {"value": "long1"}}}},
            {"id": "long2", "kind": "set", "config": {"values": {"log": {"value": "long2"}}}},
            {"id": "join", "kind": "join"},
            {"id": "done", "kind": "set", "config": {"values": {"last": {"expr": "len(log)"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "short"},
            {"id": "e2", "from": "start", "to": "long1"},
            {"id": "e3", "from": "long1", "to": "long2"},
            {"id": "e4", "from": "short", "to": "join"},
            {"id": "e5", "from": "long2", "to": "join"},
            {"id": "e6", "from": "join", "to": "done"}
        ]
    }));
    let (result, events) = run(&graph, json!({})).await;
    let output = result.unwrap();
    assert_eq!(
        output.state["last"], 3,
        "the join ran after all three writes"
    );
    let joins = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::NodeSucceeded { node, .. } if node.as_str() == "join"))
        .count();
    assert_eq!(joins, 1);
}

#[tokio::test]
async fn fan_out_sends_each_item_and_the_join_sees_them_all_in_order() {
    let graph = compile(json!({
        "state": {"channels": {
            "numbers": {"type": "list"},
            "squares": {"type": "list", "reducer": "append"},
            "total": {"type": "integer"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "spread", "kind": "fan_out", "config": {"over": "numbers", "to": "square"}},
            {"id": "square", "kind": "set", "config": {"values": {"squares": {"expr": "item * item"}}}},
            {"id": "join", "kind": "join"},
            {"id": "sum", "kind": "set", "config": {"values": {"total": {"expr": "sum(squares)"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "spread"},
            {"id": "e2", "from": "square", "to": "join"},
            {"id": "e3", "from": "join", "to": "sum"}
        ]
    }));
    let (result, events) = run(&graph, json!({"numbers": [1, 2, 3, 4]})).await;
    let output = result.unwrap();
    assert_eq!(output.state["squares"], json!([1, 4, 9, 16]));
    assert_eq!(output.state["total"], 30);
    let instances: Vec<Option<u32>> = events
        .iter()
        .find_map(|event| match &event.payload {
            EventPayload::StepStarted { step: 2, tasks } => {
                Some(tasks.iter().map(|t| t.instance).collect())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(instances, [Some(0), Some(1), Some(2), Some(3)]);
}

#[tokio::test(start_paused = true)]
async fn updates_merge_in_task_order_not_finishing_order() {
    // `slow` finishes last but is first in task order; with a replace
    // reducer the later task (`fast`) must win, and the list keeps task order.
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "slow", "kind": "sleep", "config": {"ms": 50, "write": {"last": "slow", "log": "slow"}}},
            {"id": "fast", "kind": "sleep", "config": {"ms": 1, "write": {"last": "fast", "log": "fast"}}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "slow"}, {"id": "e2", "from": "start", "to": "fast"}]
    }));
    let (result, events) = run(&graph, json!({})).await;
    let output = result.unwrap();
    assert_eq!(output.state["last"], "fast");
    assert_eq!(output.state["log"], json!(["slow", "fast"]));
    let finished: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::NodeSucceeded { node, step: 1, .. } => Some(node.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        ["fast", "slow"],
        "events show the real finishing order"
    );
}

fn race_graph(delays: &[u64]) -> std::sync::Arc<heddle_engine::CompiledGraph> {
    let mut nodes = vec![json!({"id": "start", "kind": "start"})];
    let mut edges = Vec::new();
    for (i, ms) in delays.iter().enumerate() {
        let id = format!("n{i}");
        nodes.push(json!({"id": id, "kind": "sleep", "config": {
            "ms": ms, "write": {"last": id, "log": id, "count": i + 1}
        }}));
        edges.push(json!({"id": format!("e{i}"), "from": "start", "to": id}));
        edges.push(json!({"id": format!("j{i}"), "from": id, "to": "join"}));
    }
    nodes.push(json!({"id": "join", "kind": "join"}));
    nodes.push(
        json!({"id": "after", "kind": "set", "config": {"values": {"log": {"expr": "last"}}}}),
    );
    edges.push(json!({"id": "after", "from": "join", "to": "after"}));
    compile(json!({"state": {"channels": channels()}, "nodes": nodes, "edges": edges}))
}

fn final_state(delays: &[u64]) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let graph = race_graph(delays);
        let (result, _) = run(&graph, json!({})).await;
        result.unwrap().state
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any completion order of a step's tasks gives the same final state.
    #[test]
    fn any_completion_order_gives_the_same_state(delays in proptest::collection::vec(0u64..200, 2..8)) {
        let reference = final_state(&vec![0; delays.len()]);
        prop_assert_eq!(final_state(&delays), reference);
    }
}

#[test]
fn the_same_graph_and_input_give_the_same_state_every_time() {
    let delays = [30, 10, 20, 0, 5];
    let first = final_state(&delays);
    for _ in 0..5 {
        assert_eq!(final_state(&delays), first);
    }
    assert_eq!(first["count"], 15);
}
