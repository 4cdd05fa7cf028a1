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
