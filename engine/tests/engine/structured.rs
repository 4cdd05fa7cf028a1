//! Structured output and channel schemas, through real runs: an `llm` or
//! `agent` node writing a typed or schema'd channel asks for that shape,
//! checks the reply, asks again with the reason, and gives up with an
//! error naming the channel and the path; every update of a schema'd
//! channel is checked; schemas outside the subset are refused where they
//! are.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use heddle_engine::model::{
    ChatModel, ChatReply, ChatRequest, Delta, ModelFuture, OfflineModel, ReplyFormat, Role,
};
use heddle_engine::run::{Event, EventPayload, Run, RunError, RunOptions, RunOutput};
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

/// A model that answers with the given texts in turn and keeps what it
/// was asked.
#[derive(Clone, Default)]
struct Scripted {
    replies: Arc<Mutex<Vec<String>>>,
    asked: Arc<Mutex<Vec<ChatRequest>>>,
}

impl Scripted {
    fn new(replies: &[&str]) -> Self {
        Scripted {
            replies: Arc::new(Mutex::new(
                replies.iter().rev().map(|r| r.to_string()).collect(),
            )),
            asked: Arc::default(),
        }
    }
}

impl ChatModel for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest,
        deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(request);
            let content = self.replies.lock().unwrap().pop().unwrap_or_default();
            deltas(Delta::Text(content.clone()));
            Ok(ChatReply {
                content,
                model: "scripted".into(),
                ..ChatReply::default()
            })
        })
    }
}

fn offline() -> Registry {
    Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO))
}

fn topics_channel() -> Value {
    json!({"type": "list", "schema": {
        "type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4
    }})
}

fn graph(
    registry: &Registry,
    channels: Value,
    kind: &str,
    config: Value,
) -> Result<Arc<CompiledGraph>, String> {
    let document = json!({
        "format_version": 3, "name": "structured",
        "state": {"channels": channels},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "planner", "kind": kind, "label": "Planner", "config": config},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "planner"},
            {"id": "e2", "from": "planner", "to": "end"}
        ]
    });
    CompiledGraph::from_json(&document.to_string(), registry)
        .map(Arc::new)
        .map_err(|error| error.to_string())
}

fn with_messages(mut channels: Value) -> Value {
    channels["messages"] = json!({"type": "messages", "reducer": "add_messages"});
    channels
}

async fn ask(graph: &Arc<CompiledGraph>, text: &str) -> (Result<RunOutput, RunError>, Vec<Event>) {
    let run = Run::new(
        Arc::clone(graph),
        RunId::from("structured"),
        json!({"messages": [{"role": "user", "content": text}]}),
        RunOptions::default(),
    );
    let log = run.log().unwrap();
    let result = run.execute().await;
    (result, log.since(0).iter().map(|e| (**e).clone()).collect())
}

fn misfits(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Custom { name, data, .. } if name == "output_misfit" => {
                data["reason"].as_str().map(str::to_string)
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_reply_that_does_not_fit_is_asked_again_with_the_reason() {
    let model = Scripted::new(&[
        "Sure! Here are topics",
        "[\"history\", 2]",
        "```json\n[\"history\", \"physics\"]\n```",
    ]);
    let registry = Registry::new().with_default_model(model.clone());
    let graph = graph(
        &registry,
        with_messages(json!({"topics": topics_channel()})),
        "llm",
        json!({"output": "topics"}),
    )
    .unwrap();
    let (result, events) = ask(&graph, "plan a report on heat pumps").await;
    let output = result.unwrap();
    assert_eq!(output.state["topics"], json!(["history", "physics"]));
    assert_eq!(
        misfits(&events),
        [
            "the reply is not JSON (expected value at line 1 column 1)",
            "at $[1]: expected a string, got a number"
        ]
    );

    let asked = model.asked.lock().unwrap();
    assert_eq!(asked.len(), 3);
    let ReplyFormat::Schema(wanted) = &asked[0].format else {
        panic!("asked for {:?}", asked[0].format);
    };
    assert_eq!(wanted.name, "topics");
    assert_eq!(wanted.schema, topics_channel()["schema"]);
    // The second request reads the first reply and why it was refused.
    let second = &asked[1].messages;
    assert_eq!(second[second.len() - 2].role, Role::Assistant);
    assert_eq!(second[second.len() - 2].content, "Sure! Here are topics");
    assert!(second[second.len() - 1].content.contains("is not JSON"));
    assert!(
        asked[2]
            .messages
            .last()
            .unwrap()
            .content
            .contains("at $[1]: expected a string")
    );
    // The conversation keeps only the accepted reply.
    let messages = output.state["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert!(messages[1]["content"].as_str().unwrap().contains("physics"));
}

#[tokio::test]
async fn retries_are_bounded_and_the_error_names_the_channel_and_the_path() {
    let model = Scripted::new(&["[1, 2]", "[\"a\"]", "never asked"]);
    let registry = Registry::new().with_default_model(model.clone());
    let graph = graph(
        &registry,
        with_messages(json!({"topics": topics_channel()})),
        "llm",
        json!({"output": "topics", "output_retries": 1}),
    )
    .unwrap();
    let (result, _) = ask(&graph, "plan").await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains(
            "the model's reply does not fit channel `topics` after 2 attempts: at $: expected at least 2 items, got 1"
        ),
        "{error}"
    );
    assert_eq!(model.asked.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn too_many_retries_are_refused_where_they_are_asked_for() {
    let error = graph(
        &offline(),
        with_messages(json!({"topics": topics_channel()})),
        "llm",
        json!({"output": "topics", "output_retries": 50}),
    )
    .err()
    .unwrap();
    assert!(error.contains("output_retries"), "{error}");
    assert!(error.contains("at most 5 retries"), "{error}");
}

#[tokio::test]
async fn typed_channels_without_a_schema_ask_for_their_type() {
    let model = Scripted::new(&["7"]);
    let registry = Registry::new().with_default_model(model.clone());
    let graph = graph(
        &registry,
        with_messages(json!({"count": {"type": "integer"}})),
        "llm",
        json!({"output": "count"}),
    )
    .unwrap();
    let (result, _) = ask(&graph, "how many?").await;
    assert_eq!(result.unwrap().state["count"], 7);
    let asked = model.asked.lock().unwrap();
    let ReplyFormat::Schema(wanted) = &asked[0].format else {
        panic!("asked for {:?}", asked[0].format);
    };
    assert_eq!(wanted.schema, json!({"type": "integer"}));
}

#[tokio::test]
async fn text_channels_keep_the_text_and_an_enum_takes_a_bare_word() {
    let model = Scripted::new(&["Plain words.", "urgent"]);
    let registry = Registry::new().with_default_model(model.clone());
    let text = graph(
        &registry,
        with_messages(json!({"answer": {"type": "string"}})),
        "llm",
        json!({"output": "answer"}),
    )
    .unwrap();
    let (result, _) = ask(&text, "hi").await;
    assert_eq!(result.unwrap().state["answer"], "Plain words.");
    assert_eq!(model.asked.lock().unwrap()[0].format, ReplyFormat::Text);

    let priority = graph(
        &registry,
        with_messages(
            json!({"priority": {"type": "string", "schema": {"enum": ["low", "urgent"]}}}),
        ),
        "llm",
        json!({"output": "priority"}),
    )
    .unwrap();
    let (result, _) = ask(&priority, "the roof leaks").await;
    assert_eq!(result.unwrap().state["priority"], "urgent");
}

#[tokio::test]
async fn the_offline_model_answers_every_shape_with_no_key() {
    let order = json!({"type": "object", "schema": {
        "type": "object",
        "properties": {
            "customer": {"type": "string"},
            "items": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}},
                "required": ["name", "quantity"]
            }},
            "total": {"type": "number", "minimum": 0}
        },
        "required": ["customer", "items", "total"]
    }});
    for kind in ["llm", "agent"] {
        let graph = graph(
            &offline(),
            with_messages(json!({"order": order.clone()})),
            kind,
            json!({"output": "order"}),
        )
        .unwrap();
        let (result, events) =
            ask(&graph, "Customer: Ada Lovelace, two notebooks, total 7.50").await;
        let state = result.unwrap().state;
        assert_eq!(state["order"]["customer"], "Ada Lovelace", "{kind}");
        assert_eq!(state["order"]["total"], 7.5, "{kind}");
        assert!(misfits(&events).is_empty(), "{kind}");
    }
}

#[tokio::test]
async fn an_agent_asks_again_and_keeps_the_misfits_out_of_the_conversation() {
    let model = Scripted::new(&["{\"score\": 2}", "{\"score\": 0.5, \"reason\": \"fine\"}"]);
    let registry = Registry::new().with_default_model(model.clone());
    let graph = graph(
        &registry,
        with_messages(json!({"grade": {"type": "object", "schema": {
            "type": "object",
            "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}, "reason": {"type": "string"}},
            "required": ["score", "reason"]
        }}})),
        "agent",
        json!({"output": "grade"}),
    )
    .unwrap();
    let (result, events) = ask(&graph, "grade this").await;
    let state = result.unwrap().state;
    assert_eq!(state["grade"], json!({"score": 0.5, "reason": "fine"}));
    assert_eq!(
        misfits(&events),
        ["at $: the required property `reason` is missing"]
    );
    let messages = state["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
}

#[tokio::test]
async fn every_update_of_a_schema_d_channel_is_checked() {
    let registry = offline();
    let document = json!({
        "format_version": 3, "name": "updates",
        "state": {"channels": {"topics": topics_channel()}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["topics"]}},
            {"id": "bad", "kind": "set", "label": "Bad write", "config": {"values": {"topics": {"value": ["one", 2]}}}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "bad"},
            {"id": "e2", "from": "bad", "to": "end"}
        ]
    });
    let graph = Arc::new(CompiledGraph::from_json(&document.to_string(), &registry).unwrap());
    let run = Run::new(
        Arc::clone(&graph),
        RunId::from("updates"),
        json!({"topics": ["a", "b"]}),
        RunOptions::default(),
    );
    let error = run.execute().await.unwrap_err().to_string();
    assert!(
        error.contains(
            "the value does not fit the channel's schema: at $[1]: expected a string, got a number"
        ),
        "{error}"
    );
    assert!(error.contains("bad"), "names the node: {error}");

    // A run's input is checked the same way.
    let run = Run::new(
        graph,
        RunId::from("input"),
        json!({"topics": ["a"]}),
        RunOptions::default(),
    );
    let error = run.execute().await.unwrap_err().to_string();
    assert!(
        error.contains("expected at least 2 items, got 1"),
        "{error}"
    );
}

#[tokio::test]
async fn text_that_reads_as_json_is_still_text_for_a_text_channel() {
    let model = Scripted::new(&["1984"]);
    let registry = Registry::new().with_default_model(model.clone());
    let graph = graph(
        &registry,
        with_messages(json!({"year": {"type": "string", "schema": {"enum": ["1984", "2001"]}}})),
        "llm",
        json!({"output": "year"}),
    )
    .unwrap();
    let (result, events) = ask(&graph, "which book?").await;
    assert_eq!(result.unwrap().state["year"], "1984");
    assert!(misfits(&events).is_empty());
}

#[test]
fn schemas_outside_the_subset_are_refused_at_their_path() {
    let document = json!({
        "format_version": 3, "name": "bad schemas",
        "state": {"channels": {
            "a": {"type": "list", "schema": {"type": "array", "items": {"type": "string", "pattern": "x"}}},
            "b": {"type": "object", "schema": {"type": "array"}},
            "c": {"type": "integer", "default": 9, "schema": {"type": "integer", "maximum": 5}},
            "m": {"type": "messages", "reducer": "add_messages", "schema": {}},
            "e": {"type": "string", "schema": {"enum": ["a", 1]}}
        }},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e1", "from": "start", "to": "end"}]
    });
    let document = heddle_engine::GraphDocument::from_value(document).unwrap();
    let report = heddle_engine::validate(&document, &offline());
    let found: Vec<(String, String)> = report
        .errors()
        .map(|problem| (problem.path.clone(), problem.message.clone()))
        .collect();
    let at = |path: &str| {
        found
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, message)| message.clone())
            .unwrap_or_else(|| panic!("no problem at {path}: {found:?}"))
    };
    assert!(
        at("state.channels.a.schema.items.pattern")
            .contains("`pattern` is not a keyword Heddle checks")
    );
    assert!(at("state.channels.b.schema.type").contains("a channel of type `object` cannot hold"));
    assert!(
        at("state.channels.c.default")
            .contains("the default does not fit it: at $: expected at most 5, got 9")
    );
    assert!(at("state.channels.m.schema").contains("takes no schema"));
    assert!(
        at("state.channels.e.schema.enum[1]").contains("a channel of type `string` cannot hold")
    );
}
