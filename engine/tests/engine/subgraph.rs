//! Subgraphs: a graph run as one node, embedded or from a file, with input
//! and output mappings, and the checks around them.

use std::sync::Arc;

use heddle_engine::run::{EventPayload, Run, RunOptions};
use heddle_engine::{CompiledGraph, FileAccess, Registry, RunId};
use serde_json::{Value, json};

fn greeter() -> Value {
    json!({
        "format_version": 2, "name": "greeter",
        "state": {"channels": {"who": {"type": "string"}, "greeting": {"type": "string"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{who}}!"}}}}],
        "edges": [{"id": "e", "from": "start", "to": "greet"}]
    })
}

fn parent(subgraph_config: Value) -> Value {
    json!({
        "format_version": 2, "name": "parent",
        "state": {"channels": {"name": {"type": "string"}, "result": {"type": "string"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "child", "kind": "subgraph", "config": subgraph_config}],
        "edges": [{"id": "e", "from": "start", "to": "child"}]
    })
}

#[tokio::test]
async fn an_embedded_subgraph_runs_with_its_mappings() {
    let document = parent(
        json!({"graph": greeter(), "inputs": {"who": "name"}, "outputs": {"result": "greeting"}}),
    );
    let graph = CompiledGraph::from_json(&document.to_string(), &Registry::new()).unwrap();
    let run = Run::new(
        Arc::new(graph),
        RunId::from("p"),
        json!({"name": "Ada"}),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    assert_eq!(output.state["result"], "Hello, Ada!");
    // The child's nodes are in the run's log, at the subgraph node.
    let reported: Vec<String> = log
        .since(0)
        .iter()
        .filter(|e| {
            e.path
                .first()
                .is_some_and(|hop| hop.node.as_str() == "child")
        })
        .filter_map(|e| match &e.payload {
            EventPayload::NodeSucceeded { node, .. } => Some(node.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(reported, ["start", "greet"]);
}

#[tokio::test]
async fn a_subgraph_from_a_file_runs_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("greeter.json");
    std::fs::write(&path, greeter().to_string()).unwrap();
    let document = parent(
        json!({"path": path.to_str().unwrap(), "inputs": {"who": "'file'"}, "outputs": {"result": "greeting"}}),
    );
    let files = Registry::new().with_file_access(FileAccess::Allowed);
    let graph = CompiledGraph::from_json(&document.to_string(), &files).unwrap();
    let output = Run::new(
        Arc::new(graph),
        RunId::from("p"),
        json!({}),
        RunOptions::default(),
    )
    .execute()
    .await
    .unwrap();
    assert_eq!(output.state["result"], "Hello, file!");
}

#[test]
fn without_file_access_a_path_is_a_problem_that_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("greeter.json");
    std::fs::write(&existing, greeter().to_string()).unwrap();
    let missing = dir.path().join("missing.json");
    // An existing file and a missing one answer alike: nothing is read.
    let messages: Vec<(String, String)> = [existing, missing]
        .iter()
        .map(|path| {
            let document = parent(json!({"path": path.to_str().unwrap()}));
            let report = heddle_engine::validate(
                &heddle_engine::GraphDocument::from_value(document).unwrap(),
                &Registry::new(),
            );
            let problem = report.errors().next().expect("a problem").clone();
            (problem.path, problem.message)
        })
        .collect();
    assert_eq!(messages[0], messages[1]);
    assert_eq!(messages[0].0, "nodes[1].config.path");
    assert!(messages[0].1.contains("not read here"), "{}", messages[0].1);
}

#[test]
fn a_graph_that_includes_itself_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loop.json");
    let document = parent(json!({"path": path.to_str().unwrap()}));
    std::fs::write(&path, document.to_string()).unwrap();
    let files = Registry::new().with_file_access(FileAccess::Allowed);
    let error = CompiledGraph::from_json(&document.to_string(), &files)
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("nest more than 8 deep"),
        "{error}"
    );
}

#[test]
fn bad_mappings_and_sources_are_located() {
    let report = heddle_engine::validate(
        &heddle_engine::GraphDocument::from_value(parent(json!({
            "graph": greeter(), "inputs": {"nope": "name"}, "outputs": {"result": "missing", "ghost": "greeting"}
        })))
        .unwrap(),
        &Registry::new(),
    );
    let paths: Vec<&str> = report.errors().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "nodes[1].config.inputs.nope",
            "nodes[1].config.outputs.ghost",
            "nodes[1].config.outputs.result"
        ]
    );
    let report = heddle_engine::validate(
        &heddle_engine::GraphDocument::from_value(parent(json!({}))).unwrap(),
        &Registry::new(),
    );
    assert!(report.errors().any(|p| {
        p.message
            .contains("set one of `graph` (embedded), `graph_id` (a saved graph) and `path`")
    }));
}
