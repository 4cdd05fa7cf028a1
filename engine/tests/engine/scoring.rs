//! Scorers on real runs of the example graphs (offline model): what a run
//! did is read from its own event log (nodes, nested ones named by their
//! path, the tool calls its models made with their arguments, its usage),
//! and scored as a dataset's owner would ask.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::model::OfflineModel;
use heddle_engine::run::{Event, Run, RunOptions};
use heddle_engine::scoring::{Example, Observed, ScorerSpec};
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

fn registry() -> Registry {
    Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO))
}

fn compile(document: &str) -> Arc<CompiledGraph> {
    Arc::new(CompiledGraph::from_json(document, &registry()).unwrap_or_else(|e| panic!("{e}")))
}

fn example_graph(name: &str) -> Arc<CompiledGraph> {
    let path = format!("{}/examples/graphs/{name}", env!("CARGO_MANIFEST_DIR"));
    compile(&std::fs::read_to_string(path).unwrap())
}

/// Runs `graph` on `input` and gives what the run did, as scorers see it.
async fn observe(graph: Arc<CompiledGraph>, input: Value) -> Observed {
    let run = Run::new(graph, RunId::from("scored"), input, RunOptions::default());
    let log = run.log().expect("log");
    let meter = run.meter();
    let output = run.execute().await.expect("the run finishes").state;
    let events: Vec<Event> = log.since(0).iter().map(|event| (**event).clone()).collect();
    Observed::new(output, meter.total()).with_events(&events)
}

fn score(spec: Value, input: &Value, reference: Option<&Value>, observed: &Observed) -> f64 {
    let scorer = ScorerSpec::from_value(&spec)
        .unwrap()
        .compile()
        .unwrap_or_else(|errors| panic!("{errors:?}"));
    let score = scorer.score(&Example { input, reference }, observed);
    assert!((0.0..=1.0).contains(&score.value), "{score:?}");
    score.value
}

fn say(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

#[tokio::test]
async fn a_react_loop_is_scored_by_its_answer_its_tool_call_and_its_path() {
    let input = say("What is 12 * 7?");
    let observed = observe(example_graph("react_agent.json"), input.clone()).await;
    assert_eq!(observed.nodes, ["start", "agent", "tools", "agent", "end"]);
    assert_eq!(observed.tool_calls.len(), 1, "{:?}", observed.tool_calls);
    assert_eq!(observed.tool_calls[0].name, "calculator");
    assert_eq!(
        observed.tool_calls[0].arguments,
        json!({"expression": "12 * 7"})
    );
    assert_eq!(observed.tool_calls[0].by, "agent");
    assert_eq!(observed.usage.calls, 2);
    assert!(observed.usage.tokens() > 0);

    let answer = "last(output.messages).content";
    let reference = json!({"answer": "84"});
    let contains = json!({"kind": "contains", "of": answer, "expected": "reference.answer"});
    assert_eq!(score(contains, &input, Some(&reference), &observed), 1.0);
    let wrong = json!({"answer": "85"});
    let contains = json!({"kind": "contains", "of": answer, "expected": "reference.answer"});
    assert_eq!(score(contains, &input, Some(&wrong), &observed), 0.0);

    let path = json!({"kind": "trajectory", "nodes": ["agent", "tools", "agent"],
                      "tools": [{"name": "calculator", "arguments": {"expression": "12 * 7"}}]});
    assert_eq!(score(path, &input, None, &observed), 1.0);
    let other_arguments = json!({"kind": "trajectory",
                                 "tools": [{"name": "calculator", "arguments": {"expression": "12 * 8"}}]});
    assert_eq!(score(other_arguments, &input, None, &observed), 0.0);
    let cheap = json!({"kind": "threshold", "metric": "tokens", "max": observed.usage.tokens()});
    assert_eq!(score(cheap, &input, None, &observed), 1.0);
    let cheaper =
        json!({"kind": "threshold", "metric": "tokens", "max": observed.usage.tokens() - 1});
    assert_eq!(score(cheaper, &input, None, &observed), 0.0);
}

#[tokio::test]
async fn an_agent_nodes_own_loop_shows_its_tool_calls() {
    let input = say("Please work out 3 + 4");
    let observed = observe(example_graph("agent.json"), input.clone()).await;
    assert!(
        observed.nodes.contains(&"agent".to_string()),
        "{:?}",
        observed.nodes
    );
    let tools = json!({"kind": "trajectory", "tools": [{"name": "calculator"}]});
    assert_eq!(
        score(tools, &input, None, &observed),
        1.0,
        "{:?}",
        observed.tool_calls
    );
}

#[tokio::test]
async fn nodes_inside_a_subgraph_are_named_by_their_path() {
    let child = json!({
        "format_version": 3, "name": "inner",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "answer", "kind": "llm", "config": {"system": "Answer briefly."}}],
        "edges": [{"id": "e", "from": "start", "to": "answer"}]
    });
    let outer = json!({
        "format_version": 3, "name": "outer",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "research", "kind": "subgraph", "config": {
                      "graph": child, "inputs": {"messages": "messages"},
                      "outputs": {"messages": "messages"}}}],
        "edges": [{"id": "e", "from": "start", "to": "research"}]
    });
    let input = say("hello");
    let observed = observe(compile(&outer.to_string()), input.clone()).await;
    assert_eq!(
        observed.nodes,
        ["start", "research/start", "research/answer", "research"]
    );
    let exact = json!({"kind": "trajectory", "order": "exact",
                       "nodes": ["start", "research/start", "research/answer", "research"]});
    assert_eq!(score(exact, &input, None, &observed), 1.0);
    let nested = json!({"kind": "trajectory", "nodes": ["research/answer"]});
    assert_eq!(score(nested, &input, None, &observed), 1.0);
}
