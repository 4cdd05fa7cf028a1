//! Saved subgraphs run the version their run calls for: a run of a
//! graph's published version (an API key's, a webhook's...) embeds each
//! saved subgraph's published version, so a draft edit of a subgraph
//! never changes production; a run from the editor embeds the drafts; and
//! the child's work and model calls are the run's own.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{KeyClient, TestServer, error_message};

/// A child graph that writes `word`.
fn child(word: &str) -> Value {
    json!({
        "format_version": 2, "name": "child",
        "state": {"channels": {"word": {"type": "string"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "say", "kind": "set", "config": {"values": {"word": {"value": word}}}}],
        "edges": [{"id": "e", "from": "start", "to": "say"}]
    })
}

/// A parent graph whose node runs the saved graph `child`.
fn parent(child: &str) -> Value {
    json!({
        "format_version": 2, "name": "parent",
        "state": {"channels": {"heard": {"type": "string"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "inner", "kind": "subgraph",
                   "config": {"graph_id": child, "outputs": {"heard": "word"}}}],
        "edges": [{"id": "e", "from": "start", "to": "inner"}]
    })
}

/// Runs the published version of `graph` through `key`, waiting for it.
async fn invoke(key: &KeyClient, graph: &str) -> (u16, Value) {
    key.api(
        Method::POST,
        &format!("/api/v1/graphs/{graph}/invoke"),
        Some(json!({"input": {}})),
    )
    .await
}

async fn publish(server: &TestServer, graph: &str, version: i64) -> (u16, Value) {
    server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/published"),
            Some(json!({"version": version})),
        )
        .await
}

#[tokio::test]
async fn a_published_run_embeds_published_subgraphs_and_the_editor_runs_drafts() {
    let server = TestServer::start().await;
    let child_id = server.create_graph(child("published")).await;
    let parent_id = server.create_graph(parent(&child_id)).await;
    let key = server.owner.key_client("run", &[parent_id.as_str()]).await;
    assert_eq!(publish(&server, &parent_id, 1).await.0, 200);

    // The child has nothing published: a production run does not start.
    let (status, body) = invoke(&key, &parent_id).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error_message(&body).contains("which has no published version"),
        "{body}"
    );

    // Published, then edited: production keeps the published version.
    assert_eq!(publish(&server, &child_id, 1).await.0, 200);
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{child_id}"),
            Some(json!({"base_version": 1, "document": child("draft")})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = invoke(&key, &parent_id).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"]["heard"], "published", "{body}");

    // From the editor, the drafts run.
    let run = server.start_run(&parent_id, json!({})).await;
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["output"]["heard"], "draft", "{info}");

    // The child's nodes are in the run's log, where they ran.
    let (status, events) = server
        .api(
            Method::GET,
            &format!("/api/v1/runs/{run}/events?from_seq=0"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{events}");
    let inside: Vec<&str> = events
        .as_array()
        .expect("events")
        .iter()
        .filter(|event| event["path"][0]["node"] == "inner" && event["type"] == "node_succeeded")
        .filter_map(|event| event["node"].as_str())
        .collect();
    assert_eq!(inside, ["start", "say"]);
}

/// A graph whose subgraph node runs an embedded chat agent, under
/// `limits`.
fn agent_inside(limits: Value) -> Value {
    json!({
        "format_version": 2, "name": "agent inside",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "inner", "kind": "subgraph", "config": {
                      "graph": {
                          "format_version": 2, "name": "helper",
                          "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
                          "nodes": [{"id": "start", "kind": "start"},
                                    {"id": "answer", "kind": "agent", "config": {"system": "Answer."}}],
                          "edges": [{"id": "e", "from": "start", "to": "answer"}]
                      },
                      "inputs": {"messages": "messages"},
                      "outputs": {"messages": "messages"}}}],
        "edges": [{"id": "e", "from": "start", "to": "inner"}],
        "limits": limits
    })
}

#[tokio::test]
async fn a_subgraphs_model_calls_are_in_the_runs_usage_and_budget() {
    let server = TestServer::start().await;
    let input =
        json!({"input": {"messages": [{"role": "user", "content": "tell me about looms"}]}});
    let free = server.create_graph(agent_inside(json!({}))).await;
    let run = server.start_run(&free, input.clone()).await;
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "finished", "{info}");
    assert_eq!(info["usage"]["calls"], 1, "{info}");
    assert!(
        info["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 0,
        "{info}"
    );

    let capped = server
        .create_graph(agent_inside(json!({"max_tokens": 5})))
        .await;
    let run = server.start_run(&capped, input).await;
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "failed", "{info}");
    assert!(
        info["error"]
            .as_str()
            .unwrap_or_default()
            .contains("`limits.max_tokens` is 5"),
        "{info}"
    );
}

/// A graph whose subgraph node runs a child that asks a person's name.
fn asks_inside() -> Value {
    json!({
        "format_version": 2, "name": "asks inside",
        "state": {"channels": {"heard": {"type": "string"}, "who": {"type": "number"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "inner", "kind": "subgraph", "config": {
                      "graph": {
                          "format_version": 2, "name": "greeter",
                          "state": {"channels": {"who": {"type": "string"}, "greeting": {"type": "string"}}},
                          "nodes": [{"id": "start", "kind": "start"},
                                    {"id": "ask", "kind": "ask", "config": {"prompt": "Your name?", "answer": "who"}},
                                    {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{who}}!"}}}}],
                          "edges": [{"id": "a", "from": "start", "to": "ask"},
                                    {"id": "b", "from": "ask", "to": "greet"}]
                      },
                      "outputs": {"heard": "greeting"}}}],
        "edges": [{"id": "e", "from": "start", "to": "inner"}]
    })
}

#[tokio::test]
async fn a_pause_inside_a_subgraph_pauses_the_run_and_is_answered_through_the_api() {
    let server = TestServer::start().await;
    let graph = server.create_graph(asks_inside()).await;
    let run = server.start_run(&graph, json!({})).await;
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "interrupted", "{info}");
    let thread = info["thread_id"].as_str().expect("thread").to_string();
    let interrupt = &info["output"]["interrupts"][0];
    assert_eq!(interrupt["node"], "inner", "{info}");
    assert_eq!(interrupt["payload"]["prompt"], "Your name?", "{info}");
    // The answer is for the child's `who` (a string), not the parent's
    // `who` (a number): it is not read as the parent's.
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/threads/{thread}/resume"),
            Some(json!({"value": "Ada"})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "finished", "{info}");
    assert_eq!(info["output"]["heard"], "Hello, Ada!", "{info}");
}

/// A chat graph whose agent has a sub-agent, `clerk`, that asks who signs.
fn asks_in_sub_agent() -> Value {
    json!({
        "format_version": 2, "name": "lead",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "lead", "kind": "agent", "config": {"sub_agents": [{
                      "name": "clerk", "description": "Signs forms.",
                      "graph": {
                          "format_version": 2, "name": "clerk",
                          "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"},
                                                 "who": {"type": "string"}}},
                          "nodes": [{"id": "start", "kind": "start"},
                                    {"id": "ask", "kind": "ask", "config": {"prompt": "Who signs?", "answer": "who"}},
                                    {"id": "sign", "kind": "set", "config": {"values": {"messages": {
                                        "expr": "{\"role\": \"assistant\", \"content\": \"signed by \" + who}"}}}}],
                          "edges": [{"id": "a", "from": "start", "to": "ask"},
                                    {"id": "b", "from": "ask", "to": "sign"}]
                      }}]}}],
        "edges": [{"id": "e", "from": "start", "to": "lead"}]
    })
}

#[tokio::test]
async fn a_pause_inside_a_sub_agent_pauses_the_run_and_is_answered_through_the_api() {
    let server = TestServer::start().await;
    let graph = server.create_graph(asks_in_sub_agent()).await;
    let input =
        json!({"input": {"messages": [{"role": "user", "content": "Have the clerk sign."}]}});
    let run = server.start_run(&graph, input).await;
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "interrupted", "{info}");
    let thread = info["thread_id"].as_str().expect("thread").to_string();
    let interrupt = &info["output"]["interrupts"][0];
    assert_eq!(interrupt["node"], "lead", "{info}");
    assert_eq!(interrupt["payload"]["prompt"], "Who signs?", "{info}");
    assert_eq!(interrupt["payload"]["subgraph"]["child"], "clerk", "{info}");
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/threads/{thread}/resume"),
            Some(json!({"value": "Ada"})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let info = server.wait_for_run(&run).await;
    assert_eq!(info["status"], "finished", "{info}");
    let messages = info["output"]["messages"].as_array().expect("messages");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["content"] == "signed by Ada"),
        "{info}"
    );
    // The run's usage counts the agent's two model calls, before and after
    // the pause, and no more.
    assert_eq!(info["usage"]["calls"], 2, "{info}");
}

/// An agent's sub-agent may name a saved graph, as a `subgraph` node may:
/// the server embeds it for whoever starts the run (a stranger's graph is
/// refused as if it did not exist), and a graph may not include itself
/// through a sub-agent either.
#[tokio::test]
async fn an_agents_sub_agent_runs_a_saved_graph_named_by_id() {
    let server = TestServer::start().await;
    let mut supervisor = crate::support::example("supervisor.json");
    let sub = &mut supervisor["nodes"][1]["config"]["sub_agents"][0];
    assert_eq!(sub["name"], "mathematician");
    let mathematician = server.create_graph(sub["graph"].take()).await;
    sub.as_object_mut().unwrap().remove("graph");
    sub["graph_id"] = json!(mathematician);
    let parent = server.create_graph(supervisor.clone()).await;
    let question = "Ask the mathematician: what is 7 * 6?";
    let run = server
        .start_run(
            &parent,
            json!({"input": {"messages": [{"role": "user", "content": question}]}}),
        )
        .await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "finished", "{run}");
    let messages = run["output"]["messages"].as_array().unwrap();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["name"], "mathematician");
    assert_eq!(tool["content"], "(offline model) calculator says 42.");

    // Someone else's copy of it names a graph they cannot see.
    let stranger = server.user("stranger").await;
    let (status, body) = stranger
        .api(
            Method::POST,
            "/api/v1/graphs",
            Some(json!({"document": supervisor})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let theirs = body["id"].as_str().unwrap();
    let (status, body) = stranger
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{theirs}/runs"),
            Some(json!({"input": {"messages": [{"role": "user", "content": question}]}})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let message = error_message(&body);
    assert!(
        message.contains("sub-agent `mathematician`") && message.contains("cannot open"),
        "{body}"
    );

    // A sub-agent that is the graph it is in.
    let mut looped = crate::support::example("supervisor.json");
    let own = server.create_graph(looped.clone()).await;
    let sub = &mut looped["nodes"][1]["config"]["sub_agents"][0];
    sub.as_object_mut().unwrap().remove("graph");
    sub["graph_id"] = json!(own);
    let (status, body) = server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{own}"),
            Some(json!({"document": looped, "base_version": 1})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{own}/runs"),
            Some(json!({"input": {"messages": [{"role": "user", "content": question}]}})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error_message(&body).contains("may not include itself"),
        "{body}"
    );
}
