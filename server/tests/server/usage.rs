//! Tokens and cost over HTTP: each run's usage recorded when it ends, a
//! thread's and a graph's totals, budgets that stop a run, who may read a
//! graph's usage, and the operator's price and tool-policy files.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestServer, error_message, heddle};

fn agent(limits: Value) -> Value {
    json!({
        "format_version": 2, "name": "metered agent",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"}}},
        "limits": limits,
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "agent", "kind": "agent", "config": {"model": "offline", "tools": ["calculator"]}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "agent"},
            {"id": "e2", "from": "agent", "to": "end"}
        ]
    })
}

fn say(text: &str) -> Value {
    json!({"input": {"messages": text}})
}

#[tokio::test]
async fn runs_threads_and_the_graph_add_up_what_their_model_calls_used() {
    let server = TestServer::start().await;
    let graph = server.create_graph(agent(json!({}))).await;
    let first = server.start_run(&graph, say("what is 6 * 7")).await;
    let first = server.wait_for_run(&first).await;
    assert_eq!(first["status"], "finished", "{first}");
    let usage = &first["usage"];
    assert_eq!(usage["calls"], 2, "a tool round and the answer: {usage}");
    let first_tokens =
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap();
    assert!(first_tokens > 0, "{usage}");
    assert_eq!(usage["cost_usd"], 0.0, "the offline model is free");

    let thread = first["thread_id"].as_str().unwrap();
    let second = server
        .start_run(
            &graph,
            json!({"input": {"messages": "and 2 + 2"}, "thread_id": thread}),
        )
        .await;
    let second = server.wait_for_run(&second).await;
    let second_tokens = second["usage"]["prompt_tokens"].as_u64().unwrap()
        + second["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(
        second["usage"]["prompt_tokens"].as_u64() > first["usage"]["prompt_tokens"].as_u64(),
        "the second run reads the whole conversation"
    );

    let (_, threads) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/threads"),
            None,
        )
        .await;
    assert_eq!(
        threads[0]["tokens"],
        first_tokens + second_tokens,
        "{threads}"
    );

    let (status, usage) = server
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/usage"), None)
        .await;
    assert_eq!(status, 200, "{usage}");
    assert_eq!(usage["runs"], 2);
    assert_eq!(usage["total"]["calls"], 4);
    let total = usage["total"]["prompt_tokens"].as_u64().unwrap()
        + usage["total"]["completion_tokens"].as_u64().unwrap();
    assert_eq!(total, first_tokens + second_tokens);
    let days = usage["days"].as_array().unwrap();
    assert_eq!(days.len(), 1);
    assert_eq!(
        days[0]["day"].as_str().unwrap(),
        &first["created_at"].as_str().unwrap()[..10]
    );

    // A viewer reads it; a stranger learns nothing, not even that it exists.
    let (_, token) = server.share_link(&graph, "viewer").await;
    let viewer = server.user("viola").await;
    let opened = viewer
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert!(opened.0 < 300, "{:?}", opened.1);
    let (status, seen) = viewer
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/usage"), None)
        .await;
    assert_eq!((status, seen["runs"].clone()), (200, json!(2)));
    let stranger = server.user("mallory").await;
    let (status, _) = stranger
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/usage"), None)
        .await;
    assert_eq!(status, 404);
    let (status, _) = server
        .anonymous()
        .api(Method::GET, &format!("/api/v1/graphs/{graph}/usage"), None)
        .await;
    assert!(status == 401 || status == 404, "{status}");
}

#[tokio::test]
async fn a_budget_stops_the_run_naming_itself_and_what_was_used_is_kept() {
    let server = TestServer::start().await;
    let graph = server.create_graph(agent(json!({"max_tokens": 3}))).await;
    let run = server.start_run(&graph, say("what is 6 * 7")).await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("`limits.max_tokens` is 3"), "{error}");
    assert_eq!(run["usage"]["calls"], 1, "stopped at the first call over");

    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": agent(json!({"max_cost": "lots"}))})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(error_message(&body).contains("limits.max_cost"), "{body}");
    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": agent(json!({"max_cost": -1}))})),
        )
        .await;
    assert_eq!(status, 201, "a graph is saved with its problems: {body}");
    let graph = body["id"].as_str().unwrap();
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(say("hi")),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("limits.max_cost"), "{body}");
}

/// `heddle validate graph` with `env` set: whether it passed, and stderr.
fn validate_with(graph: &std::path::Path, env: &[(&str, &std::path::Path)]) -> (bool, String) {
    let mut command = heddle();
    command.arg("validate").arg(graph);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_operators_files_are_checked_and_refused_with_where_they_are_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("graph.json");
    std::fs::write(&graph, agent(json!({})).to_string()).unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(&prices, r#"{"my-model": {"input": "cheap", "output": 1}}"#).unwrap();
    let (ok, stderr) = validate_with(&graph, &[("HEDDLE_PRICES", &prices)]);
    assert!(!ok);
    assert!(
        stderr.contains("HEDDLE_PRICES") && stderr.contains("my-model"),
        "{stderr}"
    );

    let policies = dir.path().join("policies.json");
    std::fs::write(&policies, r#"{"no_such_tool": {"max_concurrent": 2}}"#).unwrap();
    let (ok, stderr) = validate_with(&graph, &[("HEDDLE_TOOL_POLICIES", &policies)]);
    assert!(!ok);
    assert!(stderr.contains("no tool `no_such_tool`"), "{stderr}");

    std::fs::write(
        &policies,
        r#"{"calculator": {"max_concurrent": 2, "breaker": {"failures": 0}}}"#,
    )
    .unwrap();
    let (_, stderr) = validate_with(&graph, &[("HEDDLE_TOOL_POLICIES", &policies)]);
    assert!(stderr.contains("calculator.breaker.failures"), "{stderr}");

    std::fs::write(&policies, r#"{"calculator": {"timeout_ms": 500}}"#).unwrap();
    std::fs::write(&prices, r#"{"my-model": {"input": 0.1, "output": 0.2}}"#).unwrap();
    let (ok, stderr) = validate_with(
        &graph,
        &[
            ("HEDDLE_TOOL_POLICIES", &policies),
            ("HEDDLE_PRICES", &prices),
        ],
    );
    assert!(ok, "{stderr}");
}
