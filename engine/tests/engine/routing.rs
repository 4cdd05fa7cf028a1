//! Edges: static, conditional, routes chosen by nodes, goto, the end.

use heddle_engine::NodeId;
use heddle_engine::run::{EdgeReason, EventPayload, RunError};
use serde_json::json;

use crate::support::{channels, compile, node_order, run};

#[tokio::test]
async fn static_edges_run_a_chain_in_order() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set", "config": {"values": {"log": {"value": "a"}}}},
            {"id": "b", "kind": "set", "config": {"values": {"log": {"value": "b"}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "a", "to": "b"},
            {"id": "e3", "from": "b", "to": "end"}
        ]
    }));
    let (result, events) = run(&graph, json!({})).await;
    let output = result.unwrap();
    assert_eq!(output.state["log"], json!(["a", "b"]));
    assert_eq!(output.steps, 4);
    assert_eq!(node_order(&events), ["start", "a", "b", "end"]);
}

fn branching_graph() -> std::sync::Arc<heddle_engine::CompiledGraph> {
    compile(json!({
        "state": {"channels": {"score": {"type": "number"}, "verdict": {"type": "string"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["score"]}},
            {"id": "pass", "kind": "set", "config": {"values": {"verdict": {"template": "passed with {{score}}"}}}},
            {"id": "fail", "kind": "set", "config": {"values": {"verdict": {"value": "failed"}}}}
        ],
        "edges": [
            {"id": "hi", "from": "start", "to": "pass", "condition": "score >= 50"},
            {"id": "lo", "from": "start", "to": "fail", "condition": "score < 50"}
        ]
    }))
}

#[tokio::test]
async fn conditional_edges_follow_the_state() {
    let graph = branching_graph();
    let (result, events) = run(&graph, json!({"score": 72})).await;
    assert_eq!(result.unwrap().state["verdict"], "passed with 72");
    let taken: Vec<_> = events
        .iter()
        .filter_map(|event| match &event.payload {
            EventPayload::EdgeTaken { edge, why, .. } => {
                Some((edge.clone().unwrap().to_string(), why.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(taken, [("hi".to_string(), EdgeReason::Condition)]);

    let (result, _) = run(&graph, json!({"score": 12})).await;
    assert_eq!(result.unwrap().state["verdict"], "failed");
}

#[tokio::test]
async fn a_condition_node_chooses_a_route_in_order_with_a_fallback() {
    let graph = compile(json!({
        "state": {"channels": {"n": {"type": "integer"}, "size": {"type": "string"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "route", "kind": "condition", "config": {
                "routes": [{"route": "big", "when": "n > 100"}, {"route": "medium", "when": "n > 10"}],
                "otherwise": "small"
            }},
            {"id": "big", "kind": "set", "config": {"values": {"size": {"value": "big"}}}},
            {"id": "medium", "kind": "set", "config": {"values": {"size": {"value": "medium"}}}},
            {"id": "small", "kind": "set", "config": {"values": {"size": {"value": "small"}}}}
        ],
        "edges": [
            {"id": "e0", "from": "start", "to": "route"},
            {"id": "e1", "from": "route", "to": "big", "route": "big"},
            {"id": "e2", "from": "route", "to": "medium", "route": "medium"},
            {"id": "e3", "from": "route", "to": "small", "route": "small"}
        ]
    }));
    for (n, size) in [(500, "big"), (50, "medium"), (5, "small")] {
        let (result, events) = run(&graph, json!({"n": n})).await;
        assert_eq!(result.unwrap().state["size"], size);
        assert!(events.iter().any(|event| matches!(
            &event.payload,
            EventPayload::EdgeTaken { why: EdgeReason::Route { route }, .. } if route == size
        )));
    }
}

#[tokio::test]
async fn a_condition_with_no_match_and_no_fallback_fails_at_its_node() {
    let graph = compile(json!({
        "state": {"channels": {"n": {"type": "integer"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "route", "kind": "condition", "config": {"routes": [{"route": "pos", "when": "n > 0"}]}},
            {"id": "pos", "kind": "end"}
        ],
        "edges": [
            {"id": "e0", "from": "start", "to": "route"},
            {"id": "e1", "from": "route", "to": "pos", "route": "pos"}
        ]
    }));
    let (result, _) = run(&graph, json!({"n": -1})).await;
    match result.unwrap_err() {
        RunError::NodeFailed { node, error, .. } => {
            assert_eq!(node.as_str(), "route");
            assert!(error.to_string().contains("no route's condition holds"));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn goto_overrides_the_edges() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "goto", "config": {"targets": ["b"]}},
            {"id": "a", "kind": "set", "config": {"values": {"log": {"value": "a"}}}},
            {"id": "b", "kind": "set", "config": {"values": {"log": {"value": "b"}}}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "a"}],
        "entry": "start"
    }));
    let (result, events) = run(&graph, json!({})).await;
    assert_eq!(result.unwrap().state["log"], json!(["b"]));
    assert!(events.iter().any(|event| matches!(
        &event.payload,
        EventPayload::EdgeTaken {
            why: EdgeReason::Goto,
            ..
        }
    )));
}

#[tokio::test]
async fn goto_to_a_missing_node_is_a_routing_error() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "goto", "config": {"targets": ["nowhere"]}}],
        "entry": "start"
    }));
    let (result, events) = run(&graph, json!({})).await;
    assert!(matches!(result, Err(RunError::BadRouting { .. })));
    assert!(matches!(
        events.last().unwrap().payload,
        EventPayload::RunFailed { .. }
    ));
}

#[tokio::test]
async fn input_must_fit_the_state() {
    let graph = branching_graph();
    let (result, _) = run(&graph, json!({"scroe": 3})).await;
    let error = result.unwrap_err();
    assert!(
        error.to_string().contains("`scroe` is not a channel"),
        "{error}"
    );
    let (result, _) = run(&graph, json!({"score": "high"})).await;
    assert!(matches!(result, Err(RunError::BadInput { .. })));
    let (result, _) = run(&graph, json!([1, 2])).await;
    assert!(matches!(result, Err(RunError::BadInput { .. })));
}

#[tokio::test]
async fn an_update_to_a_missing_channel_fails_the_step_not_the_process() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "sleep", "config": {"write": {"nope": 1}}}],
        "entry": "start"
    }));
    let (result, _) = run(&graph, json!({})).await;
    let error = result.unwrap_err();
    assert!(matches!(error, RunError::BadUpdate { .. }));
    assert!(error.to_string().contains("`nope` is not a channel"));
}

/// A join after a condition waits for both of its branches, and the
/// condition takes one: the run ends without an answer, and says so at
/// the join, naming the branch that never came, not at the branch that
/// did (which passed its work on, to the join).
#[tokio::test]
async fn a_join_left_waiting_by_a_route_not_taken_is_named_as_where_the_run_stopped() {
    let graph = compile(json!({
        "state": {"channels": {"n": {"type": "integer"}, "size": {"type": "string"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "route", "kind": "condition", "config": {
                "routes": [{"route": "big", "when": "n > 100"}], "otherwise": "small"
            }},
            {"id": "big", "kind": "set", "config": {"values": {"size": {"value": "big"}}}},
            {"id": "small", "kind": "set", "config": {"values": {"size": {"value": "small"}}}},
            {"id": "merge", "kind": "join"},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e0", "from": "start", "to": "route"},
            {"id": "e1", "from": "route", "to": "big", "route": "big"},
            {"id": "e2", "from": "route", "to": "small", "route": "small"},
            {"id": "e3", "from": "big", "to": "merge"},
            {"id": "e4", "from": "small", "to": "merge"},
            {"id": "e5", "from": "merge", "to": "end"}
        ]
    }));
    let (result, _) = run(&graph, json!({"n": 5})).await;
    let error = result.unwrap_err();
    match &error {
        RunError::NoAnswer { waiting, .. } => assert_eq!(
            waiting,
            &vec![(NodeId::from("merge"), vec![NodeId::from("big")])]
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        error.to_string(),
        "the run ended without an answer: `merge` waited for `big`, which never reached it \
         (a join runs once every node that leads into it has; step 2 ran `small`)"
    );
}

/// A graph with an `end` whose every branch stops before it (a fan-out
/// over no items, a condition nothing meets) ended without an answer: the
/// run fails saying so, naming where it stopped. The same graph with items
/// reaches its end; a graph with no `end` node ends wherever it stops.
#[tokio::test]
async fn a_run_whose_branches_all_stop_before_end_has_no_answer() {
    let graph = compile(json!({
        "state": {"channels": {"topics": {"type": "list"}, "notes": {"type": "list", "reducer": "append"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "each", "kind": "fan_out", "config": {"over": "topics", "to": "note"}},
                  {"id": "note", "kind": "set", "config": {"values": {"notes": {"expr": "item"}}}},
                  {"id": "end", "kind": "end"}],
        "edges": [{"id": "e1", "from": "start", "to": "each"}, {"id": "e2", "from": "note", "to": "end"}]
    }));
    let (result, events) = run(&graph, json!({"topics": []})).await;
    let error = result.unwrap_err();
    assert!(matches!(error, RunError::NoAnswer { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the run ended without an answer: no branch reached end (step 1 ran `each`, which passed nothing on)"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::RunFinished { .. }))
    );
    let (result, _) = run(&graph, json!({"topics": ["a"]})).await;
    assert_eq!(result.unwrap().state["notes"], json!(["a"]));

    let conditional = compile(json!({
        "state": {"channels": {"n": {"type": "integer"}}},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end", "condition": "n > 0"}]
    }));
    let (result, _) = run(&conditional, json!({"n": 0})).await;
    assert!(
        matches!(result, Err(RunError::NoAnswer { step: 0, .. })),
        "{result:?}"
    );
    assert!(run(&conditional, json!({"n": 1})).await.0.is_ok());

    let without_end = compile(json!({
        "state": {"channels": {"n": {"type": "integer"}}},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "set", "kind": "set", "config": {"values": {"n": {"value": 1}}}}],
        "edges": [{"id": "e", "from": "start", "to": "set", "condition": "n > 5"}]
    }));
    assert!(run(&without_end, json!({})).await.0.is_ok());
}

#[tokio::test]
async fn a_router_tells_whether_its_route_was_named_by_the_model_or_its_otherwise() {
    let graph = compile(json!({
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "triage", "kind": "router", "config": {
                "routes": [{"route": "billing", "description": "refunds, invoices, charges"}],
                "otherwise": "other"
            }},
            {"id": "billing", "kind": "end"},
            {"id": "other", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "triage"},
            {"id": "e2", "from": "triage", "to": "billing", "route": "billing"},
            {"id": "e3", "from": "triage", "to": "other", "route": "other"}
        ]
    }));
    let taken = |events: &[heddle_engine::run::Event]| {
        events
            .iter()
            .find_map(|event| match &event.payload {
                EventPayload::Custom { name, data, .. }
                    if name == heddle_engine::kinds::ROUTE_EVENT =>
                {
                    serde_json::from_value::<heddle_engine::kinds::RouteTaken>(data.clone()).ok()
                }
                _ => None,
            })
            .expect("the router told its route")
    };
    let said = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
    let (result, events) = run(&graph, said("I was charged twice, I want a refund")).await;
    result.unwrap();
    let named = taken(&events);
    assert_eq!(named.route.as_deref(), Some("billing"));
    assert!(!named.otherwise);
    let (result, events) = run(&graph, said("hello")).await;
    result.unwrap();
    let fallback = taken(&events);
    assert_eq!(fallback.route.as_deref(), Some("other"));
    assert!(fallback.otherwise, "{fallback:?}");
    assert!(fallback.reply.contains("no route matches"));
}
