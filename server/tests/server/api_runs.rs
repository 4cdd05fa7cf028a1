//! Runs over the API: start, watch the result, pause and resume, cancel,
//! threads, and the refusals.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestServer, error_message};

pub fn counting_loop(target: u64) -> Value {
    json!({
        "format_version": 2, "name": "loop",
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}, "target": {"type": "integer"}}},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["target"]}},
            {"id": "tick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "tick"},
            {"id": "again", "from": "tick", "to": "tick", "condition": "count < target"}
        ],
        "limits": {"max_steps": 1000000},
        "description": format!("counts to {target} by default"),
    })
}

pub fn approval() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/examples/graphs/approval.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_run_goes_from_queued_to_finished_with_its_events_stored() {
    let server = TestServer::start().await;
    let id = server.create_graph(counting_loop(0)).await;
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{id}/runs"),
            Some(json!({"input": {"target": 50}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run_id = run["id"].as_str().unwrap().to_string();
    assert_eq!(run["graph_version"], 1);
    let run = server.wait_for_run(&run_id).await;
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["output"]["count"], 50);
    assert!(run["started_at"].is_string() && run["finished_at"].is_string());

    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run_id}/events"), None)
        .await;
    let events = events.as_array().unwrap();
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["seq"], i as u64);
    }
    assert_eq!(events.last().unwrap()["type"], "run_finished");
    let (_, tail) = server
        .api(
            Method::GET,
            &format!("/api/v1/runs/{run_id}/events?from_seq=10"),
            None,
        )
        .await;
    assert_eq!(tail.as_array().unwrap().len(), events.len() - 10);

    let (_, runs) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}/runs"), None)
        .await;
    assert_eq!(runs[0]["id"], run_id.as_str());
    let (_, threads) = server
        .api(Method::GET, &format!("/api/v1/graphs/{id}/threads"), None)
        .await;
    assert_eq!(threads[0]["runs"], 1);
    assert_eq!(threads[0]["last_status"], "finished");
    assert_eq!(threads[0]["title"], Value::Null, "a number names nothing");
}

/// Whoever reads a run as ended, and asks the next turn at once, is
/// taken: the run is still handing its last events to its watchers then,
/// and was counted as busy (a resume was refused with `thread_busy` once
/// in CI). Read as a quick client would, many times over.
#[tokio::test]
async fn the_next_turn_asked_the_moment_a_run_reads_as_ended_is_taken() {
    let server = TestServer::start().await;
    let id = server.create_graph(approval()).await;
    // A large state makes the last events slower to store.
    let request = "order ".repeat(20_000);
    for turn in 0..12 {
        let thread = format!("at-once-{turn}");
        let run_id = server
            .start_run(
                &id,
                json!({"input": {"request": request}, "thread_id": thread}),
            )
            .await;
        let paused = read_until_ended(&server, &run_id).await;
        assert_eq!(paused["status"], "interrupted", "{thread}: {paused}");
        let (status, resumed) = server
            .api(
                Method::POST,
                &format!("/api/v1/threads/{thread}/resume"),
                Some(json!({"value": true})),
            )
            .await;
        assert_eq!(status, 202, "{thread}: {resumed}");
        let resumed = read_until_ended(&server, &run_id).await;
        assert_eq!(resumed["status"], "finished", "{thread}: {resumed}");
        let (status, next) = server
            .api(
                Method::POST,
                &format!("/api/v1/graphs/{id}/runs"),
                Some(json!({"input": {"request": "order 1"}, "thread_id": thread})),
            )
            .await;
        assert_eq!(status, 202, "{thread}: {next}");
        server
            .wait_for_run(next["id"].as_str().expect("a run's id"))
            .await;
    }
}

/// Reads a run every millisecond until it is neither queued nor running
/// (the tests' `wait_for_run` reads every 10 ms).
async fn read_until_ended(server: &TestServer, run_id: &str) -> Value {
    loop {
        let (_, run) = server
            .api(Method::GET, &format!("/api/v1/runs/{run_id}"), None)
            .await;
        if !matches!(run["status"].as_str(), Some("queued" | "running")) {
            return run;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn a_paused_run_is_resumed_over_the_api() {
    let server = TestServer::start().await;
    let id = server.create_graph(approval()).await;
    let run_id = server
        .start_run(
            &id,
            json!({"input": {"request": "order 9"}, "thread_id": "support-1"}),
        )
        .await;
    let run = server.wait_for_run(&run_id).await;
    assert_eq!(run["status"], "interrupted");
    assert_eq!(
        run["output"]["interrupts"][0]["payload"]["prompt"],
        "Approve this refund: order 9? Answer true or false."
    );

    // An answer that is not true or false is refused, and the run stays
    // paused; "true" typed as text (a form, a command line) is `true`.
    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/threads/support-1/resume",
            Some(json!({"value": "maybe"})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        error_message(&body),
        "`value`: `maybe` is not true or false (the answer for `approved`)"
    );
    assert_eq!(server.wait_for_run(&run_id).await["status"], "interrupted");
    let (status, resumed) = server
        .api(
            Method::POST,
            "/api/v1/threads/support-1/resume",
            Some(json!({"value": "true"})),
        )
        .await;
    assert_eq!(status, 202, "{resumed}");
    assert_eq!(resumed["id"], run_id.as_str());
    let run = server.wait_for_run(&run_id).await;
    assert_eq!(run["status"], "finished");
    assert_eq!(run["output"]["decision"], "Refund approved: order 9");

    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/threads/support-1/resume",
            Some(json!({"value": true})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("not waiting"), "{body}");
    let (status, _) = server
        .api(
            Method::POST,
            "/api/v1/threads/nobody/resume",
            Some(json!({"value": 1})),
        )
        .await;
    assert_eq!(status, 404);

    let (status, thread) = server
        .api(Method::GET, "/api/v1/threads/support-1", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(thread["state"]["decision"], "Refund approved: order 9");
    assert_eq!(thread["thread"]["runs"], 1);
    assert_eq!(
        thread["thread"]["title"], "order 9",
        "a thread is named by its first input"
    );

    // The events of both executions form one gapless log.
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run_id}/events"), None)
        .await;
    for (i, event) in events.as_array().unwrap().iter().enumerate() {
        assert_eq!(event["seq"], i as u64);
    }
}

#[tokio::test]
async fn runs_are_cancelled_running_queued_or_paused() {
    let server = TestServer::start_with(1).await;
    let id = server.create_graph(counting_loop(0)).await;
    let start = |target: u64| {
        let server = &server;
        let id = id.clone();
        async move {
            server
                .start_run(&id, json!({"input": {"target": target}}))
                .await
        }
    };
    let long = start(1_000_000).await;
    let queued = start(5).await;
    // Only one slot: the second waits.
    let (_, waiting) = server
        .api(Method::GET, &format!("/api/v1/runs/{queued}"), None)
        .await;
    assert_eq!(waiting["status"], "queued");

    let (status, _) = server
        .api(Method::POST, &format!("/api/v1/runs/{queued}/cancel"), None)
        .await;
    assert_eq!(status, 200);
    let (status, _) = server
        .api(Method::POST, &format!("/api/v1/runs/{long}/cancel"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(server.wait_for_run(&long).await["status"], "cancelled");
    let queued_run = server.wait_for_run(&queued).await;
    assert_eq!(queued_run["status"], "cancelled");
    assert!(queued_run["started_at"].is_null(), "it never started");

    let (status, body) = server
        .api(Method::POST, &format!("/api/v1/runs/{long}/cancel"), None)
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("nothing to cancel"));

    let approval_id = server.create_graph(approval()).await;
    let (_, paused) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{approval_id}/runs"),
            Some(json!({"input": {"request": "x"}, "thread_id": "p"})),
        )
        .await;
    let paused = paused["id"].as_str().unwrap().to_string();
    assert_eq!(server.wait_for_run(&paused).await["status"], "interrupted");
    let (status, run) = server
        .api(Method::POST, &format!("/api/v1/runs/{paused}/cancel"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(run["status"], "cancelled");
}

#[tokio::test]
async fn runs_that_cannot_start_are_refused_with_reasons() {
    let server = TestServer::start().await;
    let mut broken = counting_loop(0);
    broken["edges"][0]["to"] = json!("ghost");
    let broken_id = server.create_graph(broken).await;
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{broken_id}/runs"),
            Some(json!({"input": {}})),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["problems"][0]["path"], "edges[0].to");

    let id = server.create_graph(counting_loop(0)).await;
    let runs = format!("/api/v1/graphs/{id}/runs");
    let (status, _) = server
        .api(Method::POST, &runs, Some(json!({"input": [1]})))
        .await;
    assert_eq!(status, 400);
    let (status, body) = server
        .api(
            Method::POST,
            &runs,
            Some(json!({"input": {"blob": "x".repeat(300 * 1024)}})),
        )
        .await;
    assert_eq!(status, 413);
    assert!(error_message(&body).contains("limit is 262144"));
    let (status, _) = server
        .api(
            Method::POST,
            "/api/v1/graphs/00000000-0000-4000-8000-000000000000/runs",
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 404);

    // Input that does not fit the graph is refused before any run is
    // queued, naming every channel at fault.
    let (status, body) = server
        .api(
            Method::POST,
            &runs,
            Some(json!({"input": {"target": "many", "targte": 3, "extra": true}})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let message = error_message(&body);
    assert!(
        message.contains("`input.target`: expected a whole number"),
        "{message}"
    );
    assert!(
        message.contains("`input.targte`: it is not a channel"),
        "{message}"
    );
    assert!(message.contains("`input.extra`"), "{message}");

    // One run at a time per thread.
    let (_, first) = server
        .api(
            Method::POST,
            &runs,
            Some(json!({"input": {"target": 1_000_000}, "thread_id": "busy"})),
        )
        .await;
    let (status, body) = server
        .api(
            Method::POST,
            &runs,
            Some(json!({"input": {"target": 1}, "thread_id": "busy"})),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "thread_busy", "{body}");
    assert!(
        error_message(&body).contains("has a run in progress"),
        "{body}"
    );
    server
        .api(
            Method::POST,
            &format!("/api/v1/runs/{}/cancel", first["id"].as_str().unwrap()),
            None,
        )
        .await;
}

#[tokio::test]
async fn a_chat_thread_carries_its_messages_from_run_to_run() {
    let server = TestServer::start().await;
    let id = server
        .create_graph(json!({
            "format_version": 2, "name": "echo chat",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"}}},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
                {"id": "echo", "kind": "set", "config": {"values": {
                    "messages": {"expr": "{role: 'assistant', content: 'echo: ' + last(messages).content}"}
                }}}
            ],
            "edges": [{"id": "e", "from": "start", "to": "echo"}]
        }))
        .await;
    for text in ["hello", "again"] {
        let run_id = server
            .start_run(
                &id,
                json!({"thread_id": "chat-1", "input": {"messages": [{"role": "user", "content": text}]}}),
            )
            .await;
        assert_eq!(server.wait_for_run(&run_id).await["status"], "finished");
    }
    let (_, thread) = server
        .api(Method::GET, "/api/v1/threads/chat-1", None)
        .await;
    let contents: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["hello", "echo: hello", "again", "echo: again"]);
    assert_eq!(thread["thread"]["runs"], 2);
}

/// The example graphs give the same result through the server as with
/// `heddle run` and the engine library.
#[tokio::test]
async fn the_example_graphs_run_through_the_api() {
    let server = TestServer::start().await;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/examples/graphs");
    let cases = [
        (
            "react_agent.json",
            "What is 6 * 7?",
            "(offline model) calculator says 42.",
        ),
        (
            "agent.json",
            "Compute 2 + 3 * 4",
            "(offline model) calculator says 14.",
        ),
        (
            "supervisor.json",
            "Ask the mathematician: 7 * 6?",
            "(offline model) mathematician says (offline model) calculator says 42..",
        ),
    ];
    for (file, question, answer) in cases {
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap())
                .unwrap();
        let (status, imported) = server
            .api(Method::POST, "/api/v1/graphs/import", Some(document))
            .await;
        assert_eq!(status, 201, "{file}: {imported}");
        assert_eq!(imported["problems"], json!([]), "{file}");
        let id = imported["id"].as_str().unwrap();
        let run_id = server
            .start_run(
                id,
                json!({"input": {"messages": [{"role": "user", "content": question}]}}),
            )
            .await;
        let run = server.wait_for_run(&run_id).await;
        assert_eq!(run["status"], "finished", "{file}: {run}");
        let last = run["output"]["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["content"], answer, "{file}");
    }
}

#[tokio::test]
async fn a_subgraph_node_runs_a_saved_graph_by_id() {
    let server = TestServer::start().await;
    let greeter = server
        .create_graph(json!({
            "format_version": 2, "name": "greeter",
            "state": {"channels": {"who": {"type": "string"}, "greeting": {"type": "string"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{who}}!"}}}}],
            "edges": [{"id": "e", "from": "start", "to": "greet"}]
        }))
        .await;
    let parent = server
        .create_graph(json!({
            "format_version": 2, "name": "parent",
            "state": {"channels": {"name": {"type": "string"}, "result": {"type": "string"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "child", "kind": "subgraph",
                       "config": {"graph_id": greeter, "inputs": {"who": "name"}, "outputs": {"result": "greeting"}}}],
            "edges": [{"id": "e", "from": "start", "to": "child"}]
        }))
        .await;
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{parent}/runs"),
            Some(json!({"input": {"name": "Ada"}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run = server.wait_for_run(run["id"].as_str().unwrap()).await;
    assert_eq!(run["output"]["result"], "Hello, Ada!");

    let orphan = server
        .create_graph(json!({
            "format_version": 2, "name": "orphan",
            "state": {"channels": {}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "child", "kind": "subgraph", "config": {"graph_id": "00000000-0000-4000-8000-000000000000"}}],
            "edges": [{"id": "e", "from": "start", "to": "child"}]
        }))
        .await;
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{orphan}/runs"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("does not exist"), "{body}");
}

#[tokio::test]
async fn a_run_forks_from_a_step_with_edited_state_leaving_the_original_as_it_was() {
    let server = TestServer::start().await;
    let id = server.create_graph(counting_loop(0)).await;
    let source = server.start_run(&id, json!({"input": {"target": 5}})).await;
    let finished = server.wait_for_run(&source).await;
    assert_eq!(finished["output"]["count"], 5);

    // Before step 3 the count is 2; fork there with a higher target.
    let (status, fork) = server
        .api(
            Method::POST,
            &format!("/api/v1/runs/{source}/fork"),
            Some(json!({"step": 3, "edits": {"target": 8}})),
        )
        .await;
    assert_eq!(status, 202, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_string();
    assert_ne!(fork_id, source);
    assert_eq!(
        fork["thread_id"], finished["thread_id"],
        "a branch of the same thread"
    );
    let forked = server.wait_for_run(&fork_id).await;
    assert_eq!(forked["status"], "finished", "{forked}");
    assert_eq!(
        forked["output"]["count"], 8,
        "went on from 2 up to the edited target"
    );

    let original = server
        .api(Method::GET, &format!("/api/v1/runs/{source}"), None)
        .await
        .1;
    assert_eq!(original["output"]["count"], 5, "the original is untouched");
    assert_eq!(
        forked["forked_from"],
        json!({"run_id": source, "step": 3}),
        "a fork says what it went on from"
    );
    assert_eq!(original["forked_from"], Value::Null);
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{fork_id}/events"), None)
        .await;
    let first_step = events
        .as_array()
        .unwrap()
        .iter()
        .find_map(|event| event["step"].as_u64())
        .unwrap();
    assert_eq!(
        first_step, 3,
        "the fork starts at the step it was asked for"
    );

    // Start at a chosen node with the state before step 3: `tick` once
    // more with the count at 2 and a target of 3.
    let (status, again) = server
        .api(
            Method::POST,
            &format!("/api/v1/runs/{source}/fork"),
            Some(json!({"step": 3, "edits": {"target": 3}, "start_at": "tick"})),
        )
        .await;
    assert_eq!(status, 202, "{again}");
    let again = server.wait_for_run(again["id"].as_str().unwrap()).await;
    assert_eq!(again["output"]["count"], 3, "{again}");

    // Edits that do not fit, nodes that do not exist, and steps the run
    // never reached, are refused with what and where.
    for (body, expected) in [
        (
            json!({"step": 3, "edits": {"target": "eight"}}),
            "cannot set `target`",
        ),
        (json!({"step": 3, "edits": {"nope": 1}}), "not a channel"),
        (json!({"step": 99}), "no checkpoint before step 99"),
        (json!({"step": 3, "start_at": "ghost"}), "node `ghost`"),
    ] {
        let (status, error) = server
            .api(
                Method::POST,
                &format!("/api/v1/runs/{source}/fork"),
                Some(body),
            )
            .await;
        assert_eq!(status, 400, "{error}");
        assert!(error_message(&error).contains(expected), "{error}");
    }
}

#[tokio::test]
async fn a_run_can_stop_before_a_chosen_node() {
    let server = TestServer::start().await;
    let id = server.create_graph(counting_loop(0)).await;
    let run_id = server
        .start_run(
            &id,
            json!({"input": {"target": 3}, "interrupt_before": ["tick"]}),
        )
        .await;
    let paused = server.wait_for_run(&run_id).await;
    assert_eq!(paused["status"], "interrupted", "{paused}");
    assert_eq!(paused["output"]["interrupts"][0]["node"], "tick");
    assert_eq!(paused["output"]["interrupts"][0]["when"], "before");

    // Resuming goes on to the end: the breakpoint was this run's, once.
    let thread = paused["thread_id"].as_str().unwrap();
    let (status, _) = server
        .api(
            Method::POST,
            &format!("/api/v1/threads/{thread}/resume"),
            Some(json!({"value": null})),
        )
        .await;
    assert_eq!(status, 202);
    let finished = server.wait_for_run(&run_id).await;
    assert_eq!(finished["status"], "finished", "{finished}");
    assert_eq!(finished["output"]["count"], 3);

    let (status, error) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{id}/runs"),
            Some(json!({"input": {}, "interrupt_before": ["ghost"]})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&error).contains("node `ghost`"), "{error}");
}

#[tokio::test]
async fn the_triage_example_hands_a_conversation_to_billing_over_the_api() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/examples/graphs/triage.json"
    ))
    .unwrap();
    let server = TestServer::start().await;
    let graph = server
        .create_graph(serde_json::from_str(&text).unwrap())
        .await;
    let run = server
        .start_run(
            &graph,
            json!({"input": {"messages": "I was charged twice, billing please"}}),
        )
        .await;
    let run = server.wait_for_run(&run).await;
    assert_eq!(run["status"], "finished", "{run}");
    let (_, events) = server
        .api(
            Method::GET,
            &format!("/api/v1/runs/{}/events", run["id"].as_str().unwrap()),
            None,
        )
        .await;
    let handoff = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "edge_taken" && e["from"] == "triage")
        .expect("triage hands off");
    assert_eq!(
        (
            handoff["to"].clone(),
            handoff["route"].clone(),
            handoff["edge"].clone()
        ),
        (json!("billing"), json!("billing"), json!("to_billing"))
    );
    // The next message on the thread starts at triage again and is
    // answered there when it is triage's own.
    let thread = run["thread_id"].as_str().unwrap();
    let (_, view) = server
        .api(Method::GET, &format!("/api/v1/threads/{thread}"), None)
        .await;
    let messages = view["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["name"], "billing", "{view}");
    let next = server
        .start_run(
            &graph,
            json!({"input": {"messages": "thanks, hello"}, "thread_id": thread}),
        )
        .await;
    let next = server.wait_for_run(&next).await;
    let answered: Vec<&Value> = next["output"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(answered.last().unwrap()["name"], "triage", "{next}");
}
