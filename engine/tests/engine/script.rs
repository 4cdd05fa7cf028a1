//! The `script` node: Rhai scripts transform the state, inside limits.

use heddle_engine::run::{EventPayload, RunError};
use serde_json::{Value, json};

use crate::support::{compile, run};

fn script_graph(source: &str, extra: Value) -> std::sync::Arc<heddle_engine::CompiledGraph> {
    let mut config = json!({"source": source});
    if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(extra.clone());
    }
    compile(json!({
        "state": {"channels": {
            "price": {"type": "number"}, "quantity": {"type": "integer"},
            "total": {"type": "number"}, "tags": {"type": "list"}
        }},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "calc", "kind": "script", "config": config}],
        "edges": [{"id": "e", "from": "start", "to": "calc"}]
    }))
}

#[tokio::test]
async fn a_script_reads_the_state_and_returns_an_update() {
    let graph = script_graph(
        r#"print("pricing " + state.quantity + " items");
           let tags = [];
           if state.quantity > 10 { tags.push("bulk"); }
           #{ total: state.price * state.quantity, tags: tags }"#,
        json!({}),
    );
    let (result, events) = run(&graph, json!({"price": 2.5, "quantity": 12})).await;
    let output = result.unwrap();
    assert_eq!(output.state["total"], 30.0);
    assert_eq!(output.state["tags"], json!(["bulk"]));
    assert!(events.iter().any(|e| matches!(&e.payload,
        EventPayload::Custom { name, data, .. } if name == "log" && data["text"] == "pricing 12 items")));
}

#[tokio::test]
async fn a_runaway_script_is_stopped() {
    let graph = script_graph("loop { }", json!({"max_operations": 10000}));
    let (result, _) = run(&graph, json!({})).await;
    match result.unwrap_err() {
        RunError::NodeFailed { error, .. } => assert!(
            error.to_string().contains("more than 10000 operations"),
            "{error}"
        ),
        other => panic!("unexpected {other:?}"),
    }
    let slow = script_graph(
        "let x = 0; loop { x += 1; }",
        json!({"max_operations": 100_000_000, "timeout_ms": 50}),
    );
    let (result, _) = run(&slow, json!({})).await;
    assert!(
        result
            .unwrap_err()
            .to_string()
            .contains("longer than 50 ms")
    );
}

#[tokio::test]
async fn a_script_must_return_a_map() {
    let graph = script_graph("42", json!({}));
    let (result, _) = run(&graph, json!({})).await;
    assert!(
        result
            .unwrap_err()
            .to_string()
            .contains("must return a map")
    );
}

#[test]
fn a_script_that_does_not_compile_is_a_located_problem() {
    let report = heddle_engine::validate(
        &crate::support::document(json!({
            "nodes": [{"id": "start", "kind": "start"}, {"id": "bad", "kind": "script", "config": {"source": "let = ;"}}],
            "edges": [{"id": "e", "from": "start", "to": "bad"}]
        })),
        &heddle_engine::Registry::new(),
    );
    let problem = report.errors().next().unwrap();
    assert_eq!(problem.path, "nodes[1].config.source");
    assert!(
        problem.message.contains("does not compile"),
        "{}",
        problem.message
    );
}

#[test]
fn unlimited_or_oversized_limits_are_located_problems() {
    for (field, value) in [
        ("max_operations", json!(0)),
        ("max_operations", json!(100_000_001u64)),
        ("timeout_ms", json!(0)),
        ("timeout_ms", json!(30_001)),
    ] {
        let report = heddle_engine::validate(
            &crate::support::document(json!({
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": "s", "kind": "script", "config": {"source": "#{}", field: value}}],
                "edges": [{"id": "e", "from": "start", "to": "s"}]
            })),
            &heddle_engine::Registry::new(),
        );
        let problem = report.errors().next().expect("a problem");
        assert_eq!(problem.path, format!("nodes[1].config.{field}"));
        assert!(
            problem.message.contains("always have a limit"),
            "{}",
            problem.message
        );
    }
}

#[tokio::test]
async fn an_endless_script_stops_at_the_node_timeout_and_frees_its_thread() {
    // One script thread: if the endless script kept it, the second run
    // could never start.
    let pool = std::sync::Arc::new(heddle_engine::run::WorkerPool::new(1));
    let registry = heddle_engine::Registry::new().with_script_pool(pool);
    let document = json!({
        "format_version": heddle_engine::FORMAT_VERSION, "name": "spin",
        "state": {"channels": {"n": {"type": "integer"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "spin", "kind": "script", "timeout_ms": 100,
                   "config": {"source": "loop { }", "max_operations": 100_000_000, "timeout_ms": 30_000}}],
        "edges": [{"id": "e", "from": "start", "to": "spin"}]
    });
    let graph = std::sync::Arc::new(
        heddle_engine::CompiledGraph::from_json(&document.to_string(), &registry).unwrap(),
    );
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let (result, _) = run(&graph, json!({})).await;
        let error = result.unwrap_err().to_string();
        assert!(
            error.contains("timed out") || error.contains("timeout"),
            "{error}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}

/// A script that builds a map nested 1,000 deep (any depth past a few
/// hundred used to overflow the worker thread's stack while its result was
/// converted, aborting the whole process): the node fails, saying where,
/// and the process lives on to run the next script.
#[tokio::test]
async fn a_result_nested_past_the_limit_fails_the_node_not_the_process() {
    let graph = script_graph(
        "let m = #{}; for i in 0..1000 { m = #{ a: m }; } #{ total: 1, tags: [m] }",
        json!({}),
    );
    let (result, events) = run(&graph, json!({})).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("node `calc` failed") && error.contains("nests deeper than 64 levels"),
        "{error}"
    );
    // Nothing past the limit reached the log.
    assert!(!events.iter().any(|e| matches!(&e.payload,
        EventPayload::NodeSucceeded { node, .. } if node.as_str() == "calc")));
    let fine = script_graph("#{ total: 2 }", json!({}));
    assert_eq!(run(&fine, json!({})).await.0.unwrap().state["total"], 2);
}

/// As deep as a script can build in its limits, kept in a variable
/// (dropped by the script engine itself, which recurses) and returned: the
/// worker thread's stack takes it, and the node fails on a limit.
#[tokio::test]
async fn the_deepest_value_a_script_can_build_does_not_overflow_its_thread() {
    let graph = script_graph(
        "let m = #{}; loop { m = #{ a: m }; } #{ tags: [m] }",
        json!({}),
    );
    let (result, _) = run(&graph, json!({})).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("more than 1000000 operations") || error.contains("longer than 1000 ms"),
        "{error}"
    );
}

/// A node's update past the limit (a `set` with a deep literal) is refused
/// before it is recorded; one within it that grows a channel past it (an
/// append of a value 64 deep to a list) fails at the merge, located.
#[tokio::test]
async fn an_update_past_the_limit_from_any_node_is_refused_before_it_is_recorded() {
    let nested = |depth: usize| {
        let mut deep = json!(1);
        for _ in 0..depth {
            deep = json!({"a": deep});
        }
        deep
    };
    let graph = |channel: &str, value: Value| {
        compile(json!({
            "state": {"channels": {"x": {"type": "any"}, "l": {"type": "list", "reducer": "append"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "put", "kind": "set", "config": {"values": {channel: {"value": value}}}}],
            "edges": [{"id": "e", "from": "start", "to": "put"}]
        }))
    };
    let (result, events) = run(&graph("x", nested(70)), json!({})).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("the update of `x`: the value nests deeper than 64 levels (at $.a.a"),
        "{error}"
    );
    assert!(!events.iter().any(|e| matches!(&e.payload,
        EventPayload::NodeSucceeded { node, .. } if node.as_str() == "put")));
    let (result, _) = run(&graph("l", nested(64)), json!({})).await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("channel `l`: the value nests deeper than 64 levels"),
        "{error}"
    );
}
