//! Child graphs (subgraphs, agents' sub-agents) run inside their run: their
//! events go into the run's log with the path they happened at, and their
//! model calls count in the run's usage and against its budget.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::model::OfflineModel;
use heddle_engine::run::{Event, EventPayload, Hop, Run, RunError, RunOptions};
use heddle_engine::{CompiledGraph, NodeId, Registry, RunId};
use serde_json::{Value, json};

fn registry() -> Registry {
    Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO))
}

fn compile(document: &Value) -> Arc<CompiledGraph> {
    Arc::new(
        CompiledGraph::from_json(&document.to_string(), &registry())
            .unwrap_or_else(|error| panic!("{error}")),
    )
}

async fn run(
    graph: Arc<CompiledGraph>,
    input: Value,
) -> (Result<Value, RunError>, Vec<Event>, u64) {
    let run = Run::new(graph, RunId::from("r"), input, RunOptions::default());
    let log = run.log().expect("log");
    let meter = run.meter();
    let result = run.execute().await.map(|output| output.state);
    let events = log.since(0).iter().map(|event| (**event).clone()).collect();
    (result, events, meter.total().calls)
}

/// A chat graph: start -> an agent answering.
fn answerer(name: &str) -> Value {
    json!({
        "format_version": 2, "name": name,
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "answer", "kind": "agent", "config": {"system": "Answer briefly."}}],
        "edges": [{"id": "e", "from": "start", "to": "answer"}]
    })
}

/// A graph whose one node runs `child` as a subgraph over `messages`.
fn around(child: Value, limits: Value) -> Value {
    json!({
        "format_version": 2, "name": "outer",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "inner", "kind": "subgraph", "config": {
                      "graph": child,
                      "inputs": {"messages": "messages"},
                      "outputs": {"messages": "messages"}}}],
        "edges": [{"id": "e", "from": "start", "to": "inner"}],
        "limits": limits
    })
}

fn say(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

fn hop(node: &str, step: u32, child: Option<&str>) -> Hop {
    Hop {
        node: NodeId::from(node),
        step,
        instance: None,
        child: child.map(str::to_string),
    }
}

/// The nodes that succeeded at `path`, in order.
fn succeeded_at(events: &[Event], path: &[Hop]) -> Vec<String> {
    events
        .iter()
        .filter(|event| event.path == path)
        .filter_map(|event| match &event.payload {
            EventPayload::NodeSucceeded { node, .. } => Some(node.to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_subgraphs_work_is_in_the_runs_log_at_its_path_two_levels_deep() {
    let graph = compile(&around(around(answerer("deepest"), json!({})), json!({})));
    let (result, events, calls) = run(graph, say("hello")).await;
    result.expect("runs");
    let outer = [hop("inner", 1, None)];
    let deeper = [hop("inner", 1, None), hop("inner", 1, None)];
    assert_eq!(succeeded_at(&events, &[]), ["start", "inner"]);
    assert_eq!(succeeded_at(&events, &outer), ["start", "inner"]);
    assert_eq!(succeeded_at(&events, &deeper), ["start", "answer"]);
    // Its tokens streamed and its model call was metered, in the run's log.
    let nested_custom = |name: &str| {
        events
            .iter()
            .filter(|event| event.path == deeper)
            .filter(
                |event| matches!(&event.payload, EventPayload::Custom { name: n, .. } if n == name),
            )
            .count()
    };
    assert!(nested_custom("token") > 0);
    assert_eq!(nested_custom("usage"), 1);
    assert_eq!(calls, 1, "the run's usage counts the child's call");
    // The child's own start and end stay out: the log is the run's.
    assert_eq!(
        events
            .iter()
            .filter(|event| matches!(event.payload, EventPayload::RunStarted { .. }))
            .count(),
        1
    );
    // Numbered as one log.
    let seqs: Vec<u64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn the_runs_budget_covers_its_subgraphs_model_calls() {
    let graph = compile(&around(answerer("child"), json!({"max_tokens": 5})));
    let (result, _, calls) = run(graph, say("tell me a long story about looms")).await;
    let error = result.expect_err("over budget").to_string();
    assert!(error.contains("`limits.max_tokens` is 5"), "{error}");
    assert_eq!(calls, 1);
    // Without the budget, the same graph runs.
    let graph = compile(&around(answerer("child"), json!({})));
    let (result, _, _) = run(graph, say("tell me a long story about looms")).await;
    result.expect("runs");
}

fn supervisor() -> Arc<CompiledGraph> {
    let path = format!(
        "{}/examples/graphs/supervisor.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("example");
    Arc::new(CompiledGraph::from_json(&text, &registry()).expect("compiles"))
}

#[tokio::test]
async fn a_sub_agents_work_and_calls_are_the_runs_own() {
    let (result, events, calls) =
        run(supervisor(), say("Ask the mathematician: what is 7 * 6?")).await;
    result.expect("runs");
    let inside = [hop("supervisor", 1, Some("mathematician"))];
    assert_eq!(succeeded_at(&events, &inside), ["start", "work"]);
    // The sub-agent's own tool call is in the log, where it happened.
    let tool_calls: Vec<&Value> = events
        .iter()
        .filter(|event| event.path == inside)
        .filter_map(|event| match &event.payload {
            EventPayload::Custom { name, data, .. } if name == "tool_result" => Some(data),
            _ => None,
        })
        .collect();
    assert!(
        tool_calls.iter().any(|call| call["name"] == "calculator"),
        "{tool_calls:?}"
    );
    // Every model call in the log, the sub-agent's too, is in the usage.
    let usage_events = events
        .iter()
        .filter(
            |event| matches!(&event.payload, EventPayload::Custom { name, .. } if name == "usage"),
        )
        .count() as u64;
    let nested_usage = events
        .iter()
        .filter(|event| event.is_nested())
        .filter(
            |event| matches!(&event.payload, EventPayload::Custom { name, .. } if name == "usage"),
        )
        .count();
    assert!(nested_usage >= 2, "the mathematician asked its model");
    assert_eq!(calls, usage_events);
}

#[test]
fn a_log_stored_before_paths_reads_with_none() {
    let stored = r#"{"run_id":"r","seq":3,"at_us":1,"type":"node_started","step":1,"node":"a","task":0,"attempt":1}"#;
    let event: Event = serde_json::from_str(stored).expect("reads");
    assert!(event.path.is_empty());
    // And a top-level event is written as before, with no `path`.
    assert_eq!(serde_json::to_string(&event).expect("writes"), stored);
}

/// A parent whose subgraph node runs a child that asks a person's name,
/// then greets them; a step before it counts, to show it runs once.
fn asks_inside() -> Value {
    json!({
        "format_version": 2, "name": "asks inside",
        "state": {"channels": {"heard": {"type": "string"}, "count": {"type": "number", "reducer": "sum"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "inner", "kind": "subgraph", "config": {
                      "graph": {
                          "format_version": 2, "name": "greeter",
                          "state": {"channels": {"who": {"type": "string"}, "greeting": {"type": "string"},
                                                 "count": {"type": "number", "reducer": "sum"}}},
                          "nodes": [{"id": "start", "kind": "start"},
                                    {"id": "tally", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
                                    {"id": "ask", "kind": "ask", "config": {"prompt": "Your name?", "answer": "who"}},
                                    {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{who}}! ({{count}})"}}}}],
                          "edges": [{"id": "a", "from": "start", "to": "tally"},
                                    {"id": "b", "from": "tally", "to": "ask"},
                                    {"id": "c", "from": "ask", "to": "greet"}]
                      },
                      "outputs": {"heard": "greeting"}}}],
        "edges": [{"id": "e", "from": "start", "to": "inner"}]
    })
}

#[tokio::test]
async fn a_child_that_asks_pauses_the_run_and_the_answer_goes_on_inside_it() {
    use heddle_engine::run::{Durable, RunStatus};
    for store in crate::stores::stores().await {
        let durable = Durable::new(Arc::clone(&store)).with_registry(registry());
        let thread = heddle_engine::ThreadId::from("t");
        let run = durable
            .start(
                compile(&asks_inside()),
                thread.clone(),
                RunId::from("p"),
                json!({}),
            )
            .await
            .expect("starts");
        let paused = run.execute().await.expect("pauses");
        // The run pauses at the subgraph node, asking what the child asks.
        assert_eq!(paused.interrupts.len(), 1);
        let interrupt = &paused.interrupts[0];
        assert_eq!(interrupt.node.as_str(), "inner");
        assert_eq!(interrupt.payload["prompt"], "Your name?");
        assert_eq!(interrupt.payload["subgraph"]["node"], "ask");
        let latest = store.latest(&thread).await.expect("reads").expect("saved");
        assert_eq!(latest.status, RunStatus::Interrupted);

        // Answered, the child goes on from its pause: `tally` ran once.
        let output = durable
            .resume(&thread, json!("Ada"))
            .await
            .expect("resumes")
            .execute()
            .await
            .expect("finishes");
        assert!(!output.is_interrupted());
        assert_eq!(output.state["heard"], "Hello, Ada! (1)");
        let events = store.events(&RunId::from("p"), 0).await.expect("events");
        let tallies = events
            .iter()
            .filter(|event| event.is_nested())
            .filter(|event| matches!(&event.payload, EventPayload::NodeStarted { node, .. } if node.as_str() == "tally"))
            .count();
        assert_eq!(tallies, 1, "the child did not start over");
        let greeted = events
            .iter()
            .filter(|event| event.path.first().is_some_and(|hop| hop.node.as_str() == "inner"))
            .any(|event| matches!(&event.payload, EventPayload::NodeSucceeded { node, .. } if node.as_str() == "greet"));
        assert!(greeted);
    }
}
