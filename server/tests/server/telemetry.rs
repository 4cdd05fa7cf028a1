//! Telemetry from outside: a ReAct run's trace received by a real
//! OTLP/HTTP endpoint in the test and decoded with the OpenTelemetry proto
//! types, and `/metrics` scraped as Prometheus would.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use heddle_server::state::Settings;
use heddle_server::telemetry::Traces;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use reqwest::Method;
use serde_json::json;

use crate::support::TestServer;

/// An OTLP/HTTP collector on a free port: every span it is sent.
async fn collector() -> (String, Arc<Mutex<Vec<Span>>>) {
    let received: Arc<Mutex<Vec<Span>>> = Arc::default();
    let store = Arc::clone(&received);
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: Bytes| {
            let store = Arc::clone(&store);
            async move {
                let request =
                    ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
                let mut spans = store.lock().unwrap();
                for resource in request.resource_spans {
                    for scope in resource.scope_spans {
                        spans.extend(scope.spans);
                    }
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1/traces"), received)
}

/// A server exporting its runs' traces to a collector in the test, and
/// the spans that collector receives.
async fn traced_server() -> (TestServer, Arc<Mutex<Vec<Span>>>) {
    let (endpoint, received) = collector().await;
    let server = TestServer::start().await;
    server
        .runs
        .telemetry()
        .export_traces(Traces::to_endpoint(&endpoint, false).unwrap());
    (server, received)
}

fn attribute(span: &Span, key: &str) -> Option<AnyValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone())
        .and_then(|value| value.value)
}

/// An example graph of the engine's, by file name.
fn example(file: &str) -> serde_json::Value {
    let path = format!(
        "{}/../engine/examples/graphs/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn react_agent() -> serde_json::Value {
    example("react_agent.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_react_runs_trace_arrives_over_otlp_as_a_tree_with_the_genai_attributes() {
    let (server, received) = traced_server().await;
    let graph = server.create_graph(react_agent()).await;
    let run = server
        .start_run(&graph, json!({"input": {"messages": "What is 6 * 7?"}}))
        .await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "finished", "{run}");
    let run_id = run["id"].as_str().unwrap().to_string();
    server.runs.telemetry().flush_traces().await;

    let spans = received.lock().unwrap().clone();
    let by_id: HashMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let parent = |span: &Span| by_id.get(span.parent_span_id.as_slice()).copied();
    let named = |prefix: &str| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .collect()
    };

    // One trace, its id the run's, with the run at its root.
    let expected = heddle_server::telemetry::traces::trace_id(&run_id);
    assert!(
        spans.iter().all(|s| s.trace_id == expected.to_bytes()),
        "one trace per run"
    );
    let roots = named("run ");
    assert_eq!(
        roots.len(),
        1,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let root = roots[0];
    assert!(root.parent_span_id.is_empty());
    assert_eq!(
        attribute(root, "heddle.run.id"),
        Some(AnyValue::StringValue(run_id.clone()))
    );
    // Steps under the run, nodes under their steps.
    let steps = named("step ");
    assert!(steps.len() >= 5, "start, model, tools, model, end");
    assert!(steps.iter().all(|s| parent(s) == Some(root)));
    let nodes = named("node ");
    assert_eq!(nodes.len(), steps.len());
    assert!(
        nodes
            .iter()
            .all(|n| parent(n).is_some_and(|p| p.name.starts_with("step ")))
    );

    // Each model call: a `chat offline` span under its node, with tokens and
    // the finish reason; the tool call under the tools node.
    let chats = named("chat ");
    assert_eq!(chats.len(), 2, "the tool round and the answer");
    for chat in &chats {
        assert_eq!(chat.name, "chat offline");
        assert!(parent(chat).is_some_and(|p| p.name.starts_with("node ")));
        assert_eq!(
            attribute(chat, "gen_ai.operation.name"),
            Some(AnyValue::StringValue("chat".into()))
        );
        assert_eq!(
            attribute(chat, "gen_ai.request.model"),
            Some(AnyValue::StringValue("offline".into()))
        );
        assert!(
            matches!(attribute(chat, "gen_ai.usage.input_tokens"), Some(AnyValue::IntValue(n)) if n > 0)
        );
        assert!(
            matches!(attribute(chat, "gen_ai.usage.output_tokens"), Some(AnyValue::IntValue(n)) if n > 0)
        );
        assert!(attribute(chat, "gen_ai.response.finish_reasons").is_some());
        assert!(chat.start_time_unix_nano <= chat.end_time_unix_nano);
    }
    let tools = named("execute_tool ");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "execute_tool calculator");
    assert_eq!(
        parent(tools[0]).map(|p| p.name.as_str()),
        Some("node tools")
    );
    assert_eq!(
        attribute(tools[0], "gen_ai.tool.name"),
        Some(AnyValue::StringValue("calculator".into()))
    );
    // Content is not exported unless asked for.
    assert!(
        spans
            .iter()
            .all(|s| attribute(s, "heddle.node.update").is_none())
    );
    assert!(root.end_time_unix_nano >= nodes.iter().map(|n| n.end_time_unix_nano).max().unwrap());
}

#[tokio::test]
async fn metrics_are_scraped_with_the_token_and_count_what_runs_did() {
    let mut settings = Settings::default();
    settings.metrics_token = Some("scrape-me".into());
    let server = TestServer::start_with_settings(settings).await;
    let graph = server.create_graph(react_agent()).await;
    let run = server
        .start_run(&graph, json!({"input": {"messages": "What is 6 * 7?"}}))
        .await;
    server.wait_for_run(&run).await;

    let scrape = |token: Option<&'static str>| {
        let mut request = reqwest::Client::new().get(server.url("/metrics"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(scrape(None).await.unwrap().status(), 401);
    assert_eq!(scrape(Some("guess")).await.unwrap().status(), 401);
    let response = scrape(Some("scrape-me")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    let text = response.text().await.unwrap();
    for line in [
        format!("heddle_runs_started_total{{graph=\"{graph}\"}} 1"),
        format!("heddle_runs_ended_total{{graph=\"{graph}\",status=\"finished\"}} 1"),
        format!("heddle_run_duration_seconds_count{{graph=\"{graph}\"}} 1"),
        "heddle_tool_calls_total{tool=\"calculator\",outcome=\"ok\"} 1".to_string(),
        "heddle_model_latency_seconds_count{model=\"offline\"} 2".to_string(),
        "heddle_runs_queued 0".to_string(),
        "heddle_viewers 0".to_string(),
    ] {
        assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
    }
    assert!(
        text.lines().any(|l| l
            .starts_with("heddle_model_tokens_total{model=\"offline\",kind=\"prompt\"} ")
            && !l.ends_with(" 0")),
        "{text}"
    );
    // Metrics never name a graph, only its id.
    assert!(!text.contains("ReAct"), "{text}");

    // With no token configured there is no /metrics at all.
    let plain = TestServer::start().await;
    let (status, _) = plain.api(Method::GET, "/metrics", None).await;
    assert_eq!(status, 404);
}

/// A loop of plain steps long enough to pass the allowance of plain spans,
/// then a model call.
fn long_loop_then_a_model() -> serde_json::Value {
    json!({
        "format_version": 2, "name": "long loop",
        "state": {"channels": {
            "count": {"type": "integer", "reducer": "sum"},
            "target": {"type": "integer"},
            "messages": {"type": "messages", "reducer": "add_messages"}
        }},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["target", "messages"]}},
            {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "answer", "kind": "llm", "config": {"system": "Say you are done."}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "tick"},
            {"id": "again", "from": "tick", "to": "tick", "condition": "count < target"},
            {"id": "done", "from": "tick", "to": "answer", "condition": "count >= target"},
            {"id": "e2", "from": "answer", "to": "end"}
        ],
        "limits": {"max_steps": 100000},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_loop_exports_its_first_plain_spans_and_every_model_call() {
    let (server, received) = traced_server().await;
    let graph = server.create_graph(long_loop_then_a_model()).await;
    let run = server
        .start_run(
            &graph,
            json!({"input": {"target": 800, "messages": "count, then answer"}}),
        )
        .await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "finished", "{run}");
    server.runs.telemetry().flush_traces().await;

    let spans = received.lock().unwrap().clone();
    let by_id: HashMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let structure = spans
        .iter()
        .filter(|s| s.name.starts_with("step ") || s.name.starts_with("node "))
        .count();
    // Some 800 steps of one node each: the allowance of step and node
    // spans is exported, plus the step and node holding the model call;
    // the run span counts the others.
    let run_id = run["id"].as_str().unwrap();
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run_id}/events"), None)
        .await;
    let executions = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "step_started" || e["type"] == "node_started")
        .count();
    assert!(executions > 1600, "{executions}");
    let limit = heddle_server::telemetry::traces::MAX_PLAIN_SPANS;
    assert_eq!(structure, limit + 2, "{} spans", spans.len());
    let root = spans.iter().find(|s| s.name.starts_with("run ")).unwrap();
    assert_eq!(
        attribute(root, "heddle.spans.omitted"),
        Some(AnyValue::IntValue((executions - structure) as i64))
    );
    // The model call, far past the allowance, keeps its node and step.
    let chat = spans.iter().find(|s| s.name == "chat offline").unwrap();
    let node = by_id[chat.parent_span_id.as_slice()];
    assert_eq!(node.name, "node answer");
    let step = by_id[node.parent_span_id.as_slice()];
    assert!(step.name.starts_with("step "));
    assert_eq!(
        attribute(step, "heddle.step"),
        attribute(node, "heddle.step")
    );
    assert_eq!(step.parent_span_id, root.span_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_model_and_tool_calls_are_spans_under_its_agent() {
    let (server, received) = traced_server().await;
    let graph = server.create_graph(example("supervisor.json")).await;
    let run = server
        .start_run(
            &graph,
            json!({"input": {"messages": "Ask the mathematician: what is 7 * 6?"}}),
        )
        .await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "finished", "{run}");
    server.runs.telemetry().flush_traces().await;

    let spans = received.lock().unwrap().clone();
    let by_id: HashMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let parent = |span: &Span| by_id.get(span.parent_span_id.as_slice()).copied();
    let inside = |span: &&Span| {
        attribute(span, "heddle.path") == Some(AnyValue::StringValue("mathematician › work".into()))
    };
    // The mathematician's model calls and its calculator call, each under
    // the supervisor's node span, saying where inside it they happened.
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .filter(inside)
        .collect();
    assert!(chats.len() >= 2, "the tool round and the answer");
    let tools: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "execute_tool calculator")
        .collect();
    assert_eq!(tools.len(), 1);
    assert!(inside(&tools[0]));
    for span in chats.iter().chain(&tools) {
        assert_eq!(
            parent(span).map(|p| p.name.as_str()),
            Some("node supervisor")
        );
    }
    // The supervisor's own calls say nothing of a path; its call of the
    // mathematician is a tool span of its own.
    assert!(
        spans
            .iter()
            .filter(|s| s.name.starts_with("chat "))
            .any(|s| attribute(s, "heddle.path").is_none())
    );
    assert_eq!(
        spans
            .iter()
            .filter(|s| s.name == "execute_tool mathematician")
            .count(),
        1
    );
    // Every model call of the run is a span: its usage counts them all.
    let calls = spans.iter().filter(|s| s.name.starts_with("chat ")).count();
    assert_eq!(run["usage"]["calls"], calls as u64, "{run}");
}
