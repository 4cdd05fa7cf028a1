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

/// A sub-agent named `name` that asks a person's name, then signs with it.
fn signer(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Signs forms.",
        "graph": {
            "format_version": 2, "name": name,
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"},
                                   "who": {"type": "string"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "ask", "kind": "ask", "config": {"prompt": format!("Who signs for the {name}?"), "answer": "who"}},
                      {"id": "sign", "kind": "set", "config": {"values": {"messages": {
                          "expr": format!("{{\"role\": \"assistant\", \"content\": \"{name} signed by \" + who}}")}}}}],
            "edges": [{"id": "a", "from": "start", "to": "ask"},
                      {"id": "b", "from": "ask", "to": "sign"}]
        }
    })
}

/// An agent with the sub-agents `names`, each a [`signer`].
fn delegating(names: &[&str]) -> Value {
    json!({
        "format_version": 2, "name": "lead",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "lead", "kind": "agent", "config": {
                      "sub_agents": names.iter().map(|name| signer(name)).collect::<Vec<_>>()}}],
        "edges": [{"id": "e", "from": "start", "to": "lead"}]
    })
}

/// Answers the thread's pause with `text` and runs on to the next pause or
/// the end.
async fn answer(
    durable: &heddle_engine::run::Durable,
    thread: &heddle_engine::ThreadId,
    text: &str,
) -> Result<heddle_engine::run::RunOutput, RunError> {
    let run = durable
        .resume(thread, json!(text))
        .await
        .unwrap_or_else(|error| panic!("resumes: {error}"));
    run.execute().await
}

/// The run's own model calls (not its children's), from its log.
fn own_model_calls(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|event| !event.is_nested())
        .filter(
            |event| matches!(&event.payload, EventPayload::Custom { name, .. } if name == "usage"),
        )
        .count()
}

#[tokio::test]
async fn a_sub_agent_that_asks_pauses_its_agent_and_the_answer_goes_on_inside_it() {
    use heddle_engine::run::Durable;
    for store in crate::stores::stores().await {
        let durable = Durable::new(Arc::clone(&store)).with_registry(registry());
        let thread = heddle_engine::ThreadId::from("sub");
        let run = durable
            .start(
                compile(&delegating(&["clerk"])),
                thread.clone(),
                RunId::from("s"),
                say("Please have the clerk sign the form."),
            )
            .await
            .expect("starts");
        let paused = run.execute().await.expect("pauses");
        assert_eq!(paused.interrupts.len(), 1, "the run pauses at the agent");
        let asked = &paused.interrupts[0];
        assert_eq!(asked.node.as_str(), "lead");
        assert_eq!(asked.payload["prompt"], "Who signs for the clerk?");
        assert_eq!(asked.payload["subgraph"]["child"], "clerk");
        assert_eq!(asked.payload["subgraph"]["node"], "ask");

        let output = answer(&durable, &thread, "Ada").await.expect("finishes");
        assert!(!output.is_interrupted());
        let messages = heddle_engine::model::ChatMessage::list_from(&output.state["messages"]);
        let reply = messages
            .iter()
            .find(|m| m.tool_call_id.is_some())
            .expect("the call has its reply");
        assert_eq!(reply.content, "clerk signed by Ada");
        let last = messages.last().expect("an answer");
        assert!(last.content.contains("clerk signed by Ada"), "{last:?}");
        // The agent asked its model once before the pause and once after:
        // the call it made before was not made again.
        let events = store.events(&RunId::from("s"), 0).await.expect("events");
        assert_eq!(own_model_calls(&events), 2);
        let asks = events
            .iter()
            .filter(|event| event.path.first().is_some_and(|hop| hop.child.as_deref() == Some("clerk")))
            .filter(|event| matches!(&event.payload, EventPayload::NodeStarted { node, .. } if node.as_str() == "ask"))
            .count();
        assert_eq!(
            asks, 2,
            "the ask ran once to ask and once to take the answer, not from the start"
        );
        let results: Vec<&Value> = events
            .iter()
            .filter(|event| !event.is_nested())
            .filter_map(|event| match &event.payload {
                EventPayload::Custom { name, data, .. } if name == "tool_result" => Some(data),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(results[0]["ok"], true);
    }
}

#[tokio::test]
async fn sub_agents_that_ask_at_once_are_asked_in_turn_and_answered_in_order() {
    use heddle_engine::run::Durable;
    let store = crate::stores::stores()
        .await
        .next()
        .expect("the memory store");
    let durable = Durable::new(Arc::clone(&store)).with_registry(registry());
    let thread = heddle_engine::ThreadId::from("two");
    let run = durable
        .start(
            compile(&delegating(&["clerk", "notary"])),
            thread.clone(),
            RunId::from("two"),
            say("Have the clerk and the notary sign."),
        )
        .await
        .expect("starts");
    let first = run.execute().await.expect("pauses");
    assert_eq!(
        first.interrupts[0].payload["prompt"],
        "Who signs for the clerk?"
    );
    let second = answer(&durable, &thread, "Ada")
        .await
        .expect("pauses again");
    assert_eq!(second.interrupts.len(), 1);
    assert_eq!(
        second.interrupts[0].payload["prompt"],
        "Who signs for the notary?"
    );
    let output = answer(&durable, &thread, "Grace").await.expect("finishes");
    assert!(!output.is_interrupted());
    let replies: Vec<String> =
        heddle_engine::model::ChatMessage::list_from(&output.state["messages"])
            .into_iter()
            .filter(|m| m.tool_call_id.is_some())
            .map(|m| m.content)
            .collect();
    assert_eq!(replies, ["clerk signed by Ada", "notary signed by Grace"]);
    let events = store.events(&RunId::from("two"), 0).await.expect("events");
    assert_eq!(own_model_calls(&events), 2);
}

#[tokio::test]
async fn a_sub_agents_question_inside_a_subgraph_is_answered_through_both() {
    use heddle_engine::run::Durable;
    let store = crate::stores::stores()
        .await
        .next()
        .expect("the memory store");
    let durable = Durable::new(Arc::clone(&store)).with_registry(registry());
    let thread = heddle_engine::ThreadId::from("deep");
    let run = durable
        .start(
            compile(&around(delegating(&["clerk"]), json!({}))),
            thread.clone(),
            RunId::from("deep"),
            say("Have the clerk sign."),
        )
        .await
        .expect("starts");
    let paused = run.execute().await.expect("pauses");
    let asked = &paused.interrupts[0];
    assert_eq!(asked.node.as_str(), "inner");
    assert_eq!(asked.payload["prompt"], "Who signs for the clerk?");
    // The subgraph's child paused at its agent, which waits for the clerk;
    // the agent's own place is in the child's checkpoint, not copied out.
    assert_eq!(asked.payload["subgraph"]["node"], "lead");
    assert!(asked.payload.get("agent").is_none(), "{}", asked.payload);
    let inner = &asked.payload["subgraph"]["checkpoint"]["interrupts"][0]["payload"];
    assert_eq!(inner["subgraph"]["child"], "clerk");
    assert!(inner.get("agent").is_some());
    let output = answer(&durable, &thread, "Ada").await.expect("finishes");
    assert!(!output.is_interrupted());
    let messages = heddle_engine::model::ChatMessage::list_from(&output.state["messages"]);
    assert!(
        messages
            .iter()
            .any(|m| m.tool_call_id.is_some() && m.content == "clerk signed by Ada"),
        "{messages:?}"
    );
    let events = store.events(&RunId::from("deep"), 0).await.expect("events");
    let inner_calls = events
        .iter()
        .filter(|event| event.path.len() == 1)
        .filter(
            |event| matches!(&event.payload, EventPayload::Custom { name, .. } if name == "usage"),
        )
        .count();
    assert_eq!(
        inner_calls, 2,
        "the lead asked its model once before and once after"
    );
}
