//! Model hooks around `agent` and `llm` calls: `before` rewrites what is
//! sent, `after` accepts a reply or rejects it with a reason, through
//! real runs on the offline model.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::model::OfflineModel;
use heddle_engine::run::{Event, EventPayload, Run, RunError, RunOptions, RunOutput};
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

fn registry() -> Registry {
    Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO))
}

fn graph(kind: &str, config: Value) -> Result<Arc<CompiledGraph>, String> {
    let document = json!({
        "format_version": 2, "name": "hooks",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "model", "kind": kind, "config": config},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "model"},
            {"id": "e2", "from": "model", "to": "end"}
        ]
    });
    CompiledGraph::from_json(&document.to_string(), &registry())
        .map(Arc::new)
        .map_err(|error| error.to_string())
}

async fn ask(graph: &Arc<CompiledGraph>, text: &str) -> (Result<RunOutput, RunError>, Vec<Event>) {
    let run = Run::new(
        Arc::clone(graph),
        RunId::from("hooked"),
        json!({"messages": [{"role": "user", "content": text}]}),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let result = run.execute().await;
    (result, log.since(0).iter().map(|e| (**e).clone()).collect())
}

fn count(events: &[Event], wanted: &str) -> usize {
    events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::Custom { name, .. } if name == wanted))
        .count()
}

fn contents(output: &RunOutput) -> Vec<String> {
    output.state["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_before_script_rewrites_what_the_model_is_sent() {
    let before = r#"
        let out = [];
        for m in messages {
            if m.role == "user" { m.content = m.content.to_upper(); }
            out.push(m);
        }
        out
    "#;
    for kind in ["agent", "llm"] {
        let graph = graph(
            kind,
            json!({"hooks": {"before": {"script": {"source": before}}}}),
        )
        .unwrap();
        let (result, events) = ask(&graph, "quiet please").await;
        let output = result.unwrap();
        let said = contents(&output);
        assert_eq!(
            said[0], "quiet please",
            "{kind}: the conversation keeps what was said"
        );
        assert!(
            said.last().unwrap().contains("QUIET PLEASE"),
            "{kind}: {said:?}"
        );
        assert_eq!(count(&events, "hook"), 1, "{kind}");
    }
}

#[tokio::test]
async fn an_after_hook_rejects_a_reply_and_the_model_answers_again_with_the_reason() {
    // Rejects the first reply; the retry sees the rejected reply and the
    // note, so the conversation it is sent is longer.
    let after = r#"if messages.len() > 2 { true } else { "be brief" }"#;
    let graph = graph(
        "agent",
        json!({"hooks": {"after": {"script": {"source": after}}}}),
    )
    .unwrap();
    let (result, events) = ask(&graph, "hello").await;
    let output = result.unwrap();
    assert_eq!(count(&events, "usage"), 2, "asked twice");
    assert_eq!(count(&events, "hook"), 2);
    let said = contents(&output);
    assert_eq!(said.len(), 2, "only the accepted reply is kept: {said:?}");
    assert!(
        said[1].contains("Your reply was not accepted: be brief"),
        "the retry read the reason: {said:?}"
    );

    let strict = graph_with_expr("len(reply) < 5");
    let (result, events) = ask(&strict, "hello").await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("hooks.after rejected the model's reply 3 times")
            && error.contains("does not satisfy `len(reply) < 5`"),
        "{error}"
    );
    assert_eq!(
        count(&events, "usage"),
        3,
        "the first try and max_rejections (2) more"
    );
}

fn graph_with_expr(expr: &str) -> Arc<CompiledGraph> {
    graph("llm", json!({"hooks": {"after": {"expr": expr}}})).unwrap()
}

#[test]
fn broken_hooks_are_refused_where_they_are() {
    let error = graph(
        "agent",
        json!({"hooks": {"before": {"script": {"source": "let x = ;"}}, "after": {"expr": "len(("}}}),
    )
    .err()
    .unwrap();
    assert!(error.contains("hooks.before.script.source"), "{error}");
    assert!(error.contains("hooks.after.expr"), "{error}");
    let error = graph(
        "llm",
        json!({"hooks": {"after": {"script": {"source": "true", "max_operations": 0}}, "max_rejections": 50}}),
    )
    .err()
    .unwrap();
    assert!(
        error.contains("hooks.after.script.max_operations"),
        "{error}"
    );
    assert!(error.contains("hooks.max_rejections"), "{error}");
}
