//! `POST /api/v1/graphs/{id}/invoke` over real HTTP: the result in one
//! call, the 202 when the wait runs out, the events as server-sent events,
//! a pause answered by invoking again, and what an unpublished graph or a
//! stranger's thread gets.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api_runs::{approval, counting_loop};
use crate::support::{KeyClient, TestServer, error_message};

fn path(graph: &str) -> String {
    format!("/api/v1/graphs/{graph}/invoke")
}

#[tokio::test]
async fn an_unpublished_graph_is_refused_with_how_to_publish_it() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    for (status, answer) in [
        key.api(Method::POST, &path(&graph), Some(json!({}))).await,
        server
            .api(Method::POST, &path(&graph), Some(json!({})))
            .await,
    ] {
        assert_eq!(status, 409, "{answer}");
        assert_eq!(answer["error"]["code"], "not_published");
        assert!(
            error_message(&answer).contains(&format!("PUT /api/v1/graphs/{graph}/published")),
            "{answer}"
        );
    }
    // Taken offline, it is refused again.
    server.publish(&graph, 1).await;
    assert_eq!(
        key.api(Method::POST, &path(&graph), Some(json!({})))
            .await
            .0,
        200
    );
    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/published"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        key.api(Method::POST, &path(&graph), Some(json!({})))
            .await
            .0,
        409
    );
}

#[tokio::test]
async fn a_run_longer_than_the_wait_answers_202_with_where_to_poll() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"input": {"target": 900_000}, "wait_seconds": 0})),
        )
        .await;
    assert_eq!(status, 202, "{answer}");
    assert!(
        matches!(answer["status"].as_str(), Some("queued" | "running")),
        "{answer}"
    );
    let run_url = answer["run_url"].as_str().unwrap();
    assert_eq!(
        run_url,
        format!("/api/v1/runs/{}", answer["run_id"].as_str().unwrap())
    );
    // The run goes on; the key may watch it and cancel it.
    let (status, run) = key.api(Method::GET, run_url, None).await;
    assert_eq!(status, 200, "{run}");
    let (status, cancelled) = key
        .api(Method::POST, &format!("{run_url}/cancel"), None)
        .await;
    assert_eq!(status, 200, "{cancelled}");
    let run = server
        .wait_for_run(answer["run_id"].as_str().unwrap())
        .await;
    assert_eq!(run["status"], "cancelled");

    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"wait_seconds": 301})),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_message(&answer), "`wait_seconds`: 0 to 300, not 301");
}

/// Reads a server-sent event stream to its end: (event name, data) pairs.
async fn read_events(response: reqwest::Response) -> Vec<(String, Value)> {
    let text = response.text().await.unwrap();
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let mut name = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event:") {
                    name = value.trim().to_string();
                } else if let Some(value) = line.strip_prefix("data:") {
                    data.push_str(value.trim_start());
                }
            }
            (!data.is_empty()).then(|| (name, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

#[tokio::test]
async fn events_stream_as_server_sent_events_with_the_outcome_last() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(3)).await;
    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let response = key
        .request(Method::POST, &path(&graph))
        .header("accept", "text/event-stream")
        .json(&json!({"input": {"target": 4}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let events = read_events(response).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"run_started"), "{names:?}");
    assert_eq!(names[names.len() - 2], "run_finished", "{names:?}");
    assert_eq!(names.last(), Some(&"outcome"), "{names:?}");
    // Every event once, in order, numbered from 0.
    let seqs: Vec<u64> = events[..events.len() - 1]
        .iter()
        .map(|(_, event)| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    let outcome = &events.last().unwrap().1;
    assert_eq!(outcome["status"], "finished");
    assert_eq!(outcome["output"]["count"], 4);
    // The stored log is what was streamed.
    let (_, stored) = key
        .api(
            Method::GET,
            &format!("{}/events", outcome["run_url"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(stored.as_array().unwrap().len(), seqs.len());

    // `"stream": true` in the body does the same.
    let response = key
        .request(Method::POST, &path(&graph))
        .json(&json!({"stream": true}))
        .send()
        .await
        .unwrap();
    let events = read_events(response).await;
    assert_eq!(events.last().unwrap().0, "outcome");
}

#[tokio::test]
async fn a_pause_comes_back_with_what_it_asks_and_is_answered_by_invoking_again() {
    let server = TestServer::start().await;
    let graph = server.create_graph(approval()).await;
    server.publish(&graph, 1).await;
    let key = server.owner.key_client("run", &[&graph]).await;
    let (status, paused) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"input": {"request": "order 7"}})),
        )
        .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "interrupted");
    let asks = &paused["paused"]["asks"][0];
    assert_eq!(asks["node"], "ask");
    assert_eq!(
        asks["payload"]["prompt"],
        "Approve this refund: order 7? Answer true or false."
    );
    let thread = paused["thread_id"].as_str().unwrap();
    assert_eq!(paused["paused"]["resume"]["path"], path(&graph));
    assert_eq!(paused["paused"]["resume"]["body"]["thread_id"], thread);

    // Bad answers (text that is no boolean, a value of another type) are
    // refused and the run stays paused; the widgets' threads are theirs.
    for bad in [json!({"a": 1}), json!([true]), json!(7)] {
        let (status, answer) = key
            .api(
                Method::POST,
                &path(&graph),
                Some(json!({"thread_id": thread, "resume": bad})),
            )
            .await;
        assert_eq!(status, 400, "{bad}: {answer}");
    }
    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"thread_id": "widget-mine", "input": {}})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        error_message(&answer).contains("are the chat widgets' own"),
        "{answer}"
    );
    // A bad answer is refused and the run stays paused.
    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"thread_id": thread, "resume": "maybe"})),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    // Somebody else's key cannot answer it, nor go on in the thread.
    let other = server.owner.key_client("run", &[&graph]).await;
    for body in [
        json!({"thread_id": thread, "resume": "true"}),
        json!({"thread_id": thread, "input": {"request": "mine"}}),
    ] {
        let (status, answer) = other.api(Method::POST, &path(&graph), Some(body)).await;
        assert_eq!(status, 403, "{answer}");
    }
    // A resume needs its thread.
    let (status, answer) = key
        .api(Method::POST, &path(&graph), Some(json!({"resume": true})))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        error_message(&answer),
        "`thread_id`: a resume names the paused thread"
    );

    let (status, done) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"thread_id": thread, "resume": "true"})),
        )
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "finished");
    assert_eq!(done["output"]["decision"], "Refund approved: order 7");
    assert!(done["paused"].is_null());
}

#[tokio::test]
async fn a_chat_graph_answers_with_its_last_assistant_message() {
    let server = TestServer::start().await;
    let graph = server.create_graph(chat_graph()).await;
    server.publish(&graph, 1).await;
    let key = KeyClient::new(
        server.addr,
        server
            .owner
            .make_key(json!({"name": "chat", "graphs": [graph]}))
            .await["secret"]
            .as_str()
            .unwrap(),
    );
    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"input": {"messages": "Hi, my name is Ada"}, "thread_id": "ada"})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["answer"],
        "(offline model) Nice to meet you, Ada. I will remember your name in this conversation."
    );
    let (status, answer) = key
        .api(
            Method::POST,
            &path(&graph),
            Some(json!({"input": {"messages": "What is my name?"}, "thread_id": "ada"})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["answer"], "(offline model) Your name is Ada.");
}

/// start → llm → end with a thread-scoped `messages` channel: the
/// smallest chat agent.
pub fn chat_graph() -> Value {
    json!({
        "format_version": 2, "name": "Support chat",
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "reply", "kind": "llm", "config": {"system": "You help customers."}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "reply"},
            {"id": "e2", "from": "reply", "to": "end"}
        ]
    })
}
