//! The example graphs in engine/examples/graphs run end to end on the
//! offline model, as a user gets them.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::model::OfflineModel;
use heddle_engine::run::{Durable, EventPayload, MemoryStore, Run, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId, ThreadId};
use serde_json::{Value, json};

fn registry() -> Registry {
    Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO))
}

fn example(name: &str) -> Arc<CompiledGraph> {
    let path = format!("{}/examples/graphs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let graph =
        CompiledGraph::from_json(&text, &registry()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        graph.warnings().problems.is_empty(),
        "{name}: {}",
        graph.warnings()
    );
    Arc::new(graph)
}

fn say(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

/// The role of each message in the `messages` channel, in order.
fn roles(state: &Value) -> Vec<&str> {
    state["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

fn last_content(state: &Value) -> String {
    state["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn the_react_agent_calls_the_calculator_and_answers_from_it() {
    let run = Run::new(
        example("react_agent.json"),
        RunId::from("r"),
        say("What is 12 * (3 + 4)?"),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) calculator says 84."
    );
    assert_eq!(
        roles(&output.state),
        ["user", "assistant", "tool", "assistant"]
    );
    let events = log.since(0);
    let tokens: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Custom { name, data, .. } if name == "token" => {
                data["text"].as_str().map(str::to_string)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        tokens, "(offline model) calculator says 84.",
        "the answer streamed token by token"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, EventPayload::Custom { name, .. } if name == "usage"))
    );
}

#[tokio::test]
async fn the_react_agent_answers_directly_when_no_tool_fits() {
    let run = Run::new(
        example("react_agent.json"),
        RunId::from("r"),
        say("Tell me a joke"),
        RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    assert!(
        last_content(&output.state).starts_with("(offline model) You said: \"Tell me a joke\"")
    );
    assert_eq!(output.state["messages"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn the_router_sends_each_question_to_its_specialist() {
    for (question, specialist) in [
        ("I was charged twice, I want a refund", "billing"),
        ("The app crashes with an error on start", "technical"),
        ("Hello there", "general"),
    ] {
        let run = Run::new(
            example("router.json"),
            RunId::from("r"),
            say(question),
            RunOptions::default(),
        );
        let log = run.log().unwrap();
        run.execute().await.unwrap();
        let ran: Vec<String> = log
            .since(0)
            .iter()
            .filter_map(|e| match &e.payload {
                EventPayload::NodeSucceeded { node, .. } => Some(node.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(ran, ["start", "triage", specialist, "end"], "{question}");
    }
}

#[tokio::test]
async fn the_chat_remembers_earlier_turns_of_its_thread() {
    let durable = Durable::new(Arc::new(MemoryStore::new())).with_registry(registry());
    let thread = ThreadId::from("chat");
    let graph = example("chat_memory.json");
    durable
        .start(
            Arc::clone(&graph),
            thread.clone(),
            RunId::from("t1"),
            say("Hi, my name is Ada"),
        )
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    let output = durable
        .start(graph, thread, RunId::from("t2"), say("What is my name?"))
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) Your name is Ada."
    );
    assert_eq!(output.state["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn the_approval_gate_pauses_for_a_person() {
    let durable = Durable::new(Arc::new(MemoryStore::new())).with_registry(registry());
    let thread = ThreadId::from("approve");
    let output = durable
        .start(
            example("approval.json"),
            thread.clone(),
            RunId::from("a"),
            json!({"request": "order 1"}),
        )
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert!(output.is_interrupted());
    let output = durable
        .resume(&thread, json!(false))
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(output.state["decision"], "Refund declined: order 1");
}

#[tokio::test]
async fn the_approval_gate_reads_a_typed_answer_as_its_channels_type() {
    // As a person types it in a form or on a command line: "true" approves
    // (it used to arrive as the string "true" and decline).
    for (answer, decision) in [
        (json!("true"), "Refund approved: order 2"),
        (json!(" Yes "), "Refund approved: order 2"),
        (json!("false"), "Refund declined: order 2"),
        (json!(true), "Refund approved: order 2"),
    ] {
        let durable = Durable::new(Arc::new(MemoryStore::new())).with_registry(registry());
        let thread = ThreadId::from("typed");
        let paused = durable
            .start(
                example("approval.json"),
                thread.clone(),
                RunId::from("t"),
                json!({"request": "order 2"}),
            )
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert!(paused.is_interrupted());
        let output = durable
            .resume(&thread, answer.clone())
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["decision"], decision, "{answer}");
        assert!(output.state["approved"].is_boolean());
    }
}

#[tokio::test]
async fn the_one_node_agent_loops_through_its_tools() {
    let run = Run::new(
        example("agent.json"),
        RunId::from("a"),
        say("Compute 2 + 3 * 4 please"),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) calculator says 14."
    );
    assert_eq!(
        roles(&output.state),
        ["user", "assistant", "tool", "assistant"]
    );
    let steps = log
        .since(0)
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::StepStarted { .. }))
        .count();
    assert_eq!(steps, 3, "start, agent, end: the loop ran inside one node");
}

#[tokio::test]
async fn memory_keeps_a_long_chat_short_and_summarizes_what_it_drops() {
    let durable = Durable::new(Arc::new(MemoryStore::new())).with_registry(registry());
    let thread = ThreadId::from("long-chat");
    let graph = example("chat_memory.json");
    let mut output = None;
    for (i, text) in ["my name is Ada", "one", "two", "three", "what is my name?"]
        .into_iter()
        .enumerate()
    {
        let run = durable
            .start(
                Arc::clone(&graph),
                thread.clone(),
                RunId::from(format!("m{i}")),
                say(text),
            )
            .await
            .unwrap();
        output = Some(run.execute().await.unwrap());
    }
    let state = output.unwrap().state;
    let messages = state["messages"].as_array().unwrap();
    let others = messages.iter().filter(|m| m["role"] != "system").count();
    assert!(others <= 7, "at most six kept plus the reply, got {others}");
    assert!(messages.iter().any(|m| {
        m["role"] == "system"
            && m["content"]
                .as_str()
                .unwrap()
                .starts_with("Summary of earlier messages")
    }));
}

#[tokio::test]
async fn research_plans_with_a_model_fans_out_one_call_per_topic_then_summarizes() {
    let run = Run::new(
        example("research.json"),
        RunId::from("r"),
        say("How do heat pumps work?"),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    // The planner's structured output: a list the fan-out can spread.
    let topics = output.state["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 3, "{topics:?}");
    assert_eq!(topics[0], "offline topic 1: how do heat pumps work?");
    let notes = output.state["notes"].as_array().unwrap();
    let prompts: Vec<&str> = notes
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = topics
        .iter()
        .map(|topic| format!("Research: {}", topic.as_str().unwrap()))
        .collect();
    assert_eq!(prompts, expected, "in topic order, whatever finished first");
    assert!(
        output.state["summary"]
            .as_str()
            .unwrap()
            .contains("Findings: 3 topics researched.")
    );
    // The conversation holds the question, the summary's prompt and the
    // summary; the plan stays in the planner's own.
    assert_eq!(roles(&output.state), ["user", "user", "assistant"]);
    assert_eq!(output.state["planning"].as_array().map(Vec::len), Some(2));
    let parallel = log
        .since(0)
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::StepStarted { step: 3, tasks } => Some(tasks.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(parallel.len(), 3);
    // Each instance is named by its item: the topic it researches.
    let items: Vec<Option<&str>> = parallel.iter().map(|task| task.item.as_deref()).collect();
    let expected_items: Vec<Option<&str>> = topics.iter().map(|topic| topic.as_str()).collect();
    assert_eq!(items, expected_items);
    // Each instance's words are its own: its tokens, joined, are its reply
    // (in topic order), however the three streams interleaved.
    let mut streamed: std::collections::BTreeMap<u32, String> = Default::default();
    for event in log.since(0) {
        if let EventPayload::Custom {
            node,
            instance,
            name,
            data,
        } = &event.payload
            && name == "token"
            && node.as_str() == "research"
        {
            let instance = instance.expect("a fanned-out instance's token says which");
            streamed
                .entry(instance)
                .or_default()
                .push_str(data["text"].as_str().unwrap());
        }
    }
    let replies: Vec<&str> = notes
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(streamed.keys().copied().collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        streamed.values().map(String::as_str).collect::<Vec<_>>(),
        replies
    );
}

#[tokio::test]
async fn an_order_is_read_from_a_message_into_a_typed_record() {
    let output = Run::new(
        example("extract_order.json"),
        RunId::from("o"),
        say("Customer: Ada Lovelace. Two notebooks and a pen, total 9.50"),
        RunOptions::default(),
    )
    .execute()
    .await
    .unwrap();
    let order = &output.state["order"];
    assert_eq!(order["customer"], "Ada Lovelace");
    assert_eq!(order["total"], 9.5);
    assert!(
        order["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty())
    );
    assert_eq!(
        output.state["confirmation"],
        format!(
            "Order for Ada Lovelace: {} item(s), total 9.5.",
            order["items"].as_array().unwrap().len()
        )
    );
}

async fn paused_tool_run(thread: &ThreadId, durable: &Durable) -> Value {
    let output = durable
        .start(
            example("tool_approval.json"),
            thread.clone(),
            RunId::from(format!("{thread}-run")),
            say("What is 6 * 7?"),
        )
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert!(output.is_interrupted());
    output.interrupts[0].payload.clone()
}

#[tokio::test]
async fn a_person_approves_edits_or_rejects_tool_calls() {
    let durable = Durable::new(Arc::new(MemoryStore::new())).with_registry(registry());

    let approved = ThreadId::from("approved");
    let payload = paused_tool_run(&approved, &durable).await;
    assert_eq!(payload["kind"], "approval");
    assert_eq!(payload["tool_calls"][0]["name"], "calculator");
    let output = durable
        .resume(&approved, json!(true))
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) calculator says 42."
    );

    let edited = ThreadId::from("edited");
    let payload = paused_tool_run(&edited, &durable).await;
    let mut calls = payload["tool_calls"].clone();
    calls[0]["arguments"] = json!("{\"expression\": \"6 * 8\"}");
    let output = durable
        .resume(&edited, json!({"approved": true, "tool_calls": calls}))
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) calculator says 48."
    );

    let rejected = ThreadId::from("rejected");
    paused_tool_run(&rejected, &durable).await;
    let output = durable
        .resume(
            &rejected,
            json!({"approved": false, "reason": "no maths today"}),
        )
        .await
        .unwrap()
        .execute()
        .await
        .unwrap();
    assert_eq!(
        last_content(&output.state),
        "(offline model) calculator says rejected: no maths today."
    );
}

#[tokio::test]
async fn the_supervisor_delegates_to_its_sub_agents() {
    let question = "Ask the mathematician: what is 7 * 6?";
    let run = Run::new(
        example("supervisor.json"),
        RunId::from("s"),
        say(question),
        RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    let messages = output.state["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["name"], "mathematician");
    assert_eq!(tool["content"], "(offline model) calculator says 42.");
    assert_eq!(
        last_content(&output.state),
        "(offline model) mathematician says (offline model) calculator says 42.."
    );
}

#[tokio::test]
async fn generate_validate_fix_loops_until_valid_or_out_of_attempts() {
    let run = Run::new(
        example("generate_validate_fix.json"),
        RunId::from("g"),
        say("Give me an answer"),
        RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    // The offline model never writes an `answer` field: three attempts, then it stops.
    assert_eq!(output.state["attempts"], 3);
    assert_eq!(output.state["valid"], false);
    let feedback = output.state["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .unwrap_or_default()
                .starts_with("Your reply was not valid")
        })
        .count();
    assert_eq!(feedback, 2);
}

/// The "Chat agent" that "New graph" offers runs as it is, remembers the
/// conversation on its thread, and uses a tool once one is ticked.
#[tokio::test]
async fn the_chat_agent_template_answers_and_uses_a_tool_once_given_one() {
    let graph = example("chat_agent.json");
    let run = Run::new(graph, RunId::from("r"), say("hello"), RunOptions::default());
    let output = run.execute().await.unwrap();
    assert_eq!(roles(&output.state), ["user", "assistant"]);

    let path = format!(
        "{}/examples/graphs/chat_agent.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    document["nodes"][1]["config"]["tools"] = json!(["calculator"]);
    let graph = Arc::new(CompiledGraph::from_json(&document.to_string(), &registry()).unwrap());
    let run = Run::new(
        graph,
        RunId::from("r2"),
        say("What is 17 * 23?"),
        RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    assert_eq!(
        roles(&output.state),
        ["user", "assistant", "tool", "assistant"]
    );
    assert!(
        last_content(&output.state).contains("391"),
        "{}",
        last_content(&output.state)
    );
}

#[tokio::test]
async fn triage_hands_the_conversation_to_billing_who_reads_it_as_context() {
    let run = Run::new(
        example("triage.json"),
        RunId::from("t"),
        say("I was charged twice, billing please"),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    let taken: Vec<(String, String, Option<String>)> = log
        .since(0)
        .iter()
        .filter_map(|event| match &event.payload {
            EventPayload::EdgeTaken { from, to, why, .. } => Some((
                from.to_string(),
                to.to_string(),
                match why {
                    heddle_engine::run::EdgeReason::Route { route } => Some(route.clone()),
                    _ => None,
                },
            )),
            _ => None,
        })
        .collect();
    assert!(
        taken.contains(&("triage".into(), "billing".into(), Some("billing".into()))),
        "{taken:?}"
    );
    assert!(
        !taken
            .iter()
            .any(|(from, to, _)| from == "triage" && to == "end")
    );
    assert_eq!(
        roles(&output.state),
        ["user", "assistant", "tool", "assistant"]
    );
    let messages = output.state["messages"].as_array().unwrap();
    assert_eq!(messages[1]["name"], "triage");
    assert_eq!(messages[1]["tool_calls"][0]["name"], "transfer_to_billing");
    assert_eq!(
        messages[2]["content"],
        "Handed the conversation over to billing."
    );
    assert_eq!(
        messages[3]["name"], "billing",
        "billing answered on the thread"
    );
    assert!(
        last_content(&output.state).contains("I was charged twice"),
        "billing read the customer's message: {}",
        last_content(&output.state)
    );

    // A greeting is triage's own to answer: it ends on its `done` route.
    let run = Run::new(
        example("triage.json"),
        RunId::from("t2"),
        say("hello there"),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    assert_eq!(roles(&output.state), ["user", "assistant"]);
    assert!(log.since(0).iter().any(|event| matches!(
        &event.payload,
        EventPayload::EdgeTaken { from, to, .. } if from.as_str() == "triage" && to.as_str() == "end"
    )));
}

#[test]
fn handoffs_need_an_edge_per_route_and_routes_of_their_own() {
    let document = |handoffs: Value, edges: Value| {
        heddle_engine::GraphDocument::from_value(json!({
            "format_version": 2, "name": "h",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "a", "kind": "agent", "config": {"handoffs": handoffs}},
                {"id": "b", "kind": "agent"},
                {"id": "end", "kind": "end"}
            ],
            "edges": edges
        }))
        .unwrap()
    };
    let edges = json!([
        {"id": "e0", "from": "start", "to": "a"},
        {"id": "e1", "from": "a", "to": "b", "route": "b"},
        {"id": "e2", "from": "b", "to": "end"}
    ]);
    let report = heddle_engine::validate(
        &document(json!([{"route": "b"}]), edges.clone()),
        &registry(),
    );
    let text = report.to_string();
    assert!(
        text.contains("done"),
        "the agent's own answer needs its edge: {text}"
    );
    let report = heddle_engine::validate(
        &document(
            json!([{"route": "b"}, {"route": "b"}, {"route": "done"}, {"route": "no spaces"}]),
            edges,
        ),
        &registry(),
    );
    let text = report.to_string();
    assert!(
        text.contains("handoffs[1].route") && text.contains("is taken"),
        "{text}"
    );
    assert!(text.contains("handoffs[2].route"), "{text}");
    assert!(text.contains("handoffs[3].route"), "{text}");
}
