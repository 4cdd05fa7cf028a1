//! The OpenAI-compatible client over real HTTP: async-openai talking to a
//! fake chat-completions server started in the test (plain replies, SSE
//! streams with text and tool-call deltas, 429 and 500 errors, a reply
//! too slow for the timeout).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fake_http::{Fake, Reply, serve};

use heddle_engine::model::openai::{OpenAiConfig, OpenAiModel};
use heddle_engine::model::{
    ChatMessage, ChatModel, ChatRequest, Delta, ModelError, Role, ToolSpec,
};
use serde_json::{Value, json};

fn model(fake: &Fake, stream: bool) -> OpenAiModel {
    let mut config = OpenAiConfig::new(fake.base_url.clone(), "test-model");
    config.api_key = Some("sk-test".into());
    config.stream = stream;
    config.timeout = Duration::from_secs(5);
    config.initial_backoff = Duration::from_millis(10);
    config.max_retries = 2;
    OpenAiModel::new(config)
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, "be brief"),
            ChatMessage::new(Role::User, "hi"),
        ],
        tools: vec![ToolSpec {
            name: "calculator".into(),
            description: "math".into(),
            parameters: json!({"type": "object"}),
        }],
        temperature: Some(0.2),
        ..ChatRequest::default()
    }
}

fn completion(content: &str) -> Value {
    json!({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    })
}

fn chunk(delta: Value) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

#[tokio::test]
async fn a_plain_reply_and_the_request_it_answers() {
    let fake = serve(vec![Reply::Json(200, completion("Hello!"))]).await;
    let reply = model(&fake, false).chat(request(), &|_| {}).await.unwrap();
    assert_eq!(reply.content, "Hello!");
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (7, 2)
    );
    let sent = fake.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["model"], "test-model");
    assert_eq!(
        sent["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert_eq!(sent["tools"][0]["function"]["name"], "calculator");
    assert_eq!(sent["stream"], false);
}

#[tokio::test]
async fn a_streamed_reply_arrives_token_by_token() {
    let fake = serve(vec![Reply::Sse(vec![
        chunk(json!({"role": "assistant", "content": "Hel"})),
        chunk(json!({"content": "lo"})),
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": [],
               "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}),
    ])])
    .await;
    let seen = Mutex::new(Vec::new());
    let reply = model(&fake, true)
        .chat(request(), &|delta| {
            if let Delta::Text(text) = delta {
                seen.lock().unwrap().push(text);
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.content, "Hello");
    assert_eq!(*seen.lock().unwrap(), ["Hel", "lo"]);
    assert_eq!(reply.usage.completion_tokens, 2);
    assert_eq!(
        fake.requests.lock().unwrap()[0]["stream_options"]["include_usage"],
        true
    );
}

#[tokio::test]
async fn streamed_tool_call_deltas_are_assembled() {
    let fake = serve(vec![Reply::Sse(vec![
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_9", "type": "function", "function": {"name": "calculator", "arguments": ""}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expression\":"}}]})),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"2+2\"}"}}]})),
    ])])
    .await;
    let reply = model(&fake, true).chat(request(), &|_| {}).await.unwrap();
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].id, "call_9");
    assert_eq!(reply.tool_calls[0].name, "calculator");
    assert_eq!(reply.tool_calls[0].arguments, "{\"expression\": \"2+2\"}");
}

fn api_error(message: &str) -> Value {
    json!({"error": {"message": message, "type": "error", "param": null, "code": null}})
}

#[tokio::test]
async fn rate_limits_are_retried_with_backoff() {
    let fake = serve(vec![
        Reply::Json(429, api_error("slow down")),
        Reply::Json(200, completion("ok")),
    ])
    .await;
    let reply = model(&fake, false).chat(request(), &|_| {}).await.unwrap();
    assert_eq!(reply.content, "ok");
    assert_eq!(fake.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let fake = serve(vec![Reply::Json(500, api_error("boom"))]).await;
    let error = model(&fake, false)
        .chat(request(), &|_| {})
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Server(_)), "{error:?}");
    assert_eq!(
        fake.requests.lock().unwrap().len(),
        4,
        "the first attempt and async-openai's three retries"
    );

    let fake_stream = serve(vec![Reply::Json(503, api_error("down"))]).await;
    let error = model(&fake_stream, true)
        .chat(request(), &|_| {})
        .await
        .unwrap_err();
    assert!(error.is_transient(), "{error:?}");
}

#[tokio::test]
async fn a_refused_request_is_not_retried() {
    let fake = serve(vec![Reply::Json(401, api_error("bad key"))]).await;
    let error = model(&fake, false)
        .chat(request(), &|_| {})
        .await
        .unwrap_err();
    assert_eq!(error, ModelError::Refused("bad key".into()));
    assert_eq!(fake.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_slow_reply_times_out_and_is_tried_again() {
    let fake = serve(vec![
        Reply::Slow(Duration::from_secs(30)),
        Reply::Json(200, completion("late but fine")),
    ])
    .await;
    let mut config = OpenAiConfig::new(fake.base_url.clone(), "test-model");
    config.timeout = Duration::from_millis(200);
    config.initial_backoff = Duration::from_millis(10);
    config.stream = false;
    let reply = OpenAiModel::new(config)
        .chat(request(), &|_| {})
        .await
        .unwrap();
    assert_eq!(reply.content, "late but fine");
}

#[tokio::test]
async fn a_slow_reply_times_out() {
    let fake = serve(vec![Reply::Slow(Duration::from_secs(30))]).await;
    let mut config = OpenAiConfig::new(fake.base_url.clone(), "test-model");
    config.timeout = Duration::from_millis(200);
    config.max_retries = 0;
    config.stream = false;
    let error = OpenAiModel::new(config)
        .chat(request(), &|_| {})
        .await
        .unwrap_err();
    assert_eq!(error, ModelError::Timeout(200));
}

#[tokio::test]
async fn an_llm_node_streams_an_endpoints_reply_into_the_run() {
    let fake = serve(vec![Reply::Sse(vec![
        chunk(json!({"content": "Hi "})),
        chunk(json!({"content": "there"})),
    ])])
    .await;
    let registry = heddle_engine::Registry::new().with_model("remote", model(&fake, true));
    let graph = heddle_engine::CompiledGraph::from_json(
        &json!({
            "format_version": 2, "name": "remote chat",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "chat", "kind": "llm", "config": {"model": "remote", "system": "be kind"}}],
            "edges": [{"id": "e", "from": "start", "to": "chat"}]
        })
        .to_string(),
        &registry,
    )
    .unwrap();
    let run = heddle_engine::run::Run::new(
        Arc::new(graph),
        heddle_engine::RunId::from("remote"),
        json!({"messages": [{"role": "user", "content": "hello"}]}),
        heddle_engine::run::RunOptions::default(),
    );
    let log = run.log().unwrap();
    let output = run.execute().await.unwrap();
    assert_eq!(output.state["messages"][1]["content"], "Hi there");
    let tokens = log
        .since(0)
        .iter()
        .filter(|e| matches!(&e.payload, heddle_engine::run::EventPayload::Custom { name, .. } if name == "token"))
        .count();
    assert_eq!(tokens, 2);
}

fn tool_call_completion(name: &str, arguments: &str) -> Value {
    json!({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call-1", "type": "function",
                            "function": {"name": name, "arguments": arguments}}]
        }}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    })
}

/// Providers cache the start of a request: an agent's requests each start
/// with the one before, even the last one, out of tool rounds, which keeps
/// the tools listed and asks for no call (`tool_choice: none`).
#[tokio::test]
async fn an_agents_requests_each_start_with_the_one_before() {
    let fake = serve(vec![
        Reply::Json(
            200,
            tool_call_completion("calculator", r#"{"expression": "6 * 7"}"#),
        ),
        Reply::Json(200, completion("It is 42.")),
    ])
    .await;
    let registry = heddle_engine::Registry::new().with_model("remote", model(&fake, false));
    let graph = heddle_engine::CompiledGraph::from_json(
        &json!({
            "format_version": 2, "name": "agent",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "agent", "kind": "agent", "config": {
                          "model": "remote", "system": "Use the calculator.",
                          "tools": ["calculator"], "max_tool_rounds": 1}}],
            "edges": [{"id": "e", "from": "start", "to": "agent"}]
        })
        .to_string(),
        &registry,
    )
    .unwrap();
    let run = heddle_engine::run::Run::new(
        Arc::new(graph),
        heddle_engine::RunId::from("cached"),
        json!({"messages": [{"role": "user", "content": "What is 6 * 7?"}]}),
        heddle_engine::run::RunOptions::default(),
    );
    let output = run.execute().await.unwrap();
    assert_eq!(
        output.state["messages"].as_array().unwrap().last().unwrap()["content"],
        "It is 42."
    );
    let sent = fake.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    let (first, last) = (&sent[0], &sent[1]);
    assert_eq!(first["tools"], last["tools"], "the tools stay listed");
    assert!(first.get("tool_choice").is_none());
    assert_eq!(last["tool_choice"], "none");
    let (before, after) = (
        first["messages"].as_array().unwrap(),
        last["messages"].as_array().unwrap(),
    );
    assert!(after.len() > before.len());
    assert_eq!(&after[..before.len()], &before[..]);
}

/// An `llm` node writing a list channel with a schema, on `model`.
fn planner(model: OpenAiModel) -> std::sync::Arc<heddle_engine::CompiledGraph> {
    let registry = heddle_engine::Registry::new().with_default_model(model);
    let document = json!({
        "format_version": 3, "name": "planner",
        "state": {"channels": {
            "messages": {"type": "messages", "reducer": "add_messages"},
            "topics": {"type": "list", "schema": {"type": "array", "items": {"type": "string"}, "minItems": 2}}
        }},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "plan", "kind": "llm", "config": {"output": "topics"}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "plan"}, {"id": "e2", "from": "plan", "to": "end"}]
    });
    std::sync::Arc::new(
        heddle_engine::CompiledGraph::from_json(&document.to_string(), &registry).unwrap(),
    )
}

async fn plan(graph: &std::sync::Arc<heddle_engine::CompiledGraph>) -> Result<Value, String> {
    let run = heddle_engine::run::Run::new(
        std::sync::Arc::clone(graph),
        heddle_engine::RunId::from("plan"),
        json!({"messages": "plan a report on heat pumps"}),
        heddle_engine::run::RunOptions::default(),
    );
    run.execute()
        .await
        .map(|output| output.state["topics"].clone())
        .map_err(|error| error.to_string())
}

#[tokio::test]
async fn structured_output_sends_its_schema_and_asks_again_when_a_reply_does_not_fit() {
    let fake = serve(vec![
        Reply::Json(200, completion(r#"{"value": ["history", 2]}"#)),
        Reply::Json(200, completion(r#"{"value": ["history", "physics"]}"#)),
    ])
    .await;
    let graph = planner(model(&fake, false));
    assert_eq!(plan(&graph).await.unwrap(), json!(["history", "physics"]));

    let sent = fake.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0]["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "topics", "strict": true,
            "schema": {
                "type": "object",
                "properties": {"value": {"type": "array", "items": {"type": "string"}, "minItems": 2}},
                "required": ["value"], "additionalProperties": false
            }
        }})
    );
    // The malformed reply (the value, out of its wrapper) and why it was
    // refused go back to the model.
    let messages = sent[1]["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["content"], r#"["history",2]"#);
    let note = messages[n - 1]["content"].as_str().unwrap();
    assert!(
        note.contains("at $[1]: expected a string, got a number"),
        "{note}"
    );
}

#[tokio::test]
async fn a_reply_that_never_fits_fails_the_run_with_the_channel_and_the_path() {
    let fake = serve(vec![Reply::Json(
        200,
        completion(r#"{"value": "history"}"#),
    )])
    .await;
    let error = plan(&planner(model(&fake, false))).await.unwrap_err();
    assert!(
        error.contains(
            "does not fit channel `topics` after 3 attempts: at $: expected a list, got a string"
        ),
        "{error}"
    );
    assert_eq!(fake.requests.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn an_endpoint_that_refuses_json_schema_gets_the_schema_as_an_instruction() {
    let fake = serve(vec![
        Reply::Json(
            400,
            api_error("Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."),
        ),
        Reply::Json(200, completion("[\"history\", \"physics\"]")),
        Reply::Json(200, completion("```json\n[\"costs\", \"comfort\"]\n```")),
    ])
    .await;
    let graph = planner(model(&fake, false));
    assert_eq!(plan(&graph).await.unwrap(), json!(["history", "physics"]));
    // The next run goes straight to the instruction.
    assert_eq!(plan(&graph).await.unwrap(), json!(["costs", "comfort"]));

    let sent = fake.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].get("response_format").is_some());
    for request in &sent[1..] {
        assert!(request.get("response_format").is_none(), "{request}");
        let last = request["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["role"], "system");
        assert!(
            last["content"]
                .as_str()
                .unwrap()
                .starts_with("Answer with only a JSON value that fits this JSON Schema"),
            "{last}"
        );
    }
}

#[tokio::test]
async fn an_endpoint_configured_without_json_schema_is_never_sent_one() {
    let fake = serve(vec![Reply::Json(
        200,
        completion("[\"history\", \"physics\"]"),
    )])
    .await;
    let mut config = OpenAiConfig::new(fake.base_url.clone(), "test-model");
    config.stream = false;
    config.json_schema = false;
    assert_eq!(
        plan(&planner(OpenAiModel::new(config))).await.unwrap(),
        json!(["history", "physics"])
    );
    let sent = fake.requests.lock().unwrap()[0].clone();
    assert!(sent.get("response_format").is_none(), "{sent}");
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["content"].as_str().unwrap().contains("\"minItems\":2"),
        "{last}"
    );
}
