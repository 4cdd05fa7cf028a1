//! Watching runs over the websocket: replay then live with no gap and no
//! duplicate, several viewers, reconnection, graph notices, shutdown; and
//! runs surviving a server restart.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::api_runs::counting_loop;
use crate::support::{TestServer, example};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(server: &TestServer) -> Socket {
    let (socket, _) = tokio_tungstenite::connect_async(server.owner.ws_request())
        .await
        .expect("websocket");
    socket
}

async fn send(socket: &mut Socket, value: Value) {
    socket
        .send(Message::text(value.to_string()))
        .await
        .expect("send");
}

/// Watches `graph` and waits until the server has taken the watch (a
/// ping answered after it).
async fn watch_graph(socket: &mut Socket, graph: &str) {
    send(socket, json!({"type": "watch_graph", "graph_id": graph})).await;
    send(socket, json!({"type": "ping"})).await;
    assert_eq!(next(socket).await["type"], "pong");
}

/// The next JSON message (skipping pings).
async fn next(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
            .await
            .expect("a message in time")
            .expect("the socket is open")
            .expect("a frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

/// Reads a subscription to its end: the events' seqs, and whether the
/// replay/live seam was announced.
async fn follow_to_end(socket: &mut Socket) -> (Vec<u64>, bool, Value) {
    let mut seqs = Vec::new();
    let mut caught_up = false;
    loop {
        let message = next(socket).await;
        match message["type"].as_str() {
            Some("event") => seqs.push(message["event"]["seq"].as_u64().unwrap()),
            Some("caught_up") => caught_up = true,
            Some("run_idle") => return (seqs, caught_up, message),
            _ => panic!("unexpected {message}"),
        }
    }
}

async fn start(server: &TestServer, graph: &str, target: u64) -> String {
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": target}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    run["id"].as_str().unwrap().to_string()
}

/// Starts a run of a chat graph with `said` and subscribes `socket` to it
/// from its first event; gives the run's id.
async fn say_and_follow(
    server: &TestServer,
    socket: &mut Socket,
    graph: &str,
    said: &str,
) -> String {
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"messages": [{"role": "user", "content": said}]}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run = run["id"].as_str().unwrap().to_string();
    send(
        socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
    )
    .await;
    run
}

fn gapless(seqs: &[u64]) {
    for (i, seq) in seqs.iter().enumerate() {
        assert_eq!(*seq, i as u64, "no gap, no duplicate");
    }
}

#[tokio::test]
async fn two_viewers_see_the_whole_run_live() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let mut alice = connect(&server).await;
    let mut bob = connect(&server).await;
    let run = start(&server, &graph, 400).await;
    send(
        &mut alice,
        json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
    )
    .await;
    send(&mut bob, json!({"type": "subscribe", "run_id": run})).await;
    let (a, a_caught_up, a_idle) = follow_to_end(&mut alice).await;
    let (b, _, _) = follow_to_end(&mut bob).await;
    gapless(&a);
    assert_eq!(a, b, "both viewers saw the same events");
    assert!(a_caught_up);
    assert_eq!(a_idle["status"], "finished");
    let (_, stored) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
        .await;
    assert_eq!(a.len(), stored.as_array().unwrap().len());
}

#[tokio::test]
async fn a_viewer_that_reconnects_gets_exactly_what_it_missed() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let run = start(&server, &graph, 2000).await;
    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
    )
    .await;
    let mut seqs = Vec::new();
    while seqs.len() < 300 {
        let message = next(&mut socket).await;
        if message["type"] == "event" {
            seqs.push(message["event"]["seq"].as_u64().unwrap());
        }
    }
    // The network drops; the client comes back and asks for the rest.
    drop(socket);
    let last = *seqs.last().unwrap();
    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": last + 1}),
    )
    .await;
    let (rest, _, idle) = follow_to_end(&mut socket).await;
    seqs.extend(rest);
    gapless(&seqs);
    assert_eq!(idle["status"], "finished");
    let (_, stored) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
        .await;
    assert_eq!(seqs.len(), stored.as_array().unwrap().len());
}

#[tokio::test]
async fn a_finished_run_is_replayed_from_the_store() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let run = start(&server, &graph, 10).await;
    server.wait_for_run(&run).await;
    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": 5}),
    )
    .await;
    let (seqs, caught_up, idle) = follow_to_end(&mut socket).await;
    assert_eq!(seqs.first(), Some(&5));
    assert!(caught_up);
    assert_eq!(idle["status"], "finished");
    assert_eq!(idle["next_seq"], seqs.last().unwrap() + 1);

    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": "run-nope"}),
    )
    .await;
    assert_eq!(next(&mut socket).await["type"], "error");
    send(&mut socket, json!({"type": "dance"})).await;
    let error = next(&mut socket).await;
    assert!(
        error["message"].as_str().unwrap().contains("not a message"),
        "{error}"
    );
    send(&mut socket, json!({"type": "ping"})).await;
    assert_eq!(next(&mut socket).await["type"], "pong");
}

#[tokio::test]
async fn graph_watchers_hear_runs_start_and_end() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let mut socket = connect(&server).await;
    watch_graph(&mut socket, &graph).await;
    let run = start(&server, &graph, 20).await;
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("finished") {
        let notice = next(&mut socket).await;
        assert_eq!(notice["type"], "notice");
        assert_eq!(notice["run_id"], run.as_str());
        statuses.push(notice["status"].as_str().unwrap().to_string());
    }
    assert_eq!(statuses, ["running", "finished"]);
}

/// A page that opens while a run is already going (started from its chat
/// while the page was still loading) hears of that run as soon as it
/// watches the graph: it used to miss it and show nothing of it.
#[tokio::test]
async fn a_run_started_before_the_watch_is_announced_to_it() {
    // A model endpoint that takes calls and never answers: the run stays
    // running until it is cancelled.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let endpoint = format!("http://{}/v1", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((connection, _)) = listener.accept().await {
            held.push(connection);
        }
    });
    let config = heddle_engine::model::openai::OpenAiConfig::new(endpoint, "held-model");
    let registry = heddle_engine::Registry::new()
        .with_default_model(heddle_engine::model::openai::OpenAiModel::new(config));
    let server = TestServer::start_with_registry(registry).await;
    let graph = server.create_graph(crate::invoke::chat_graph()).await;
    let run = server
        .start_run(
            &graph,
            json!({"input": {"messages": [{"role": "user", "content": "hello"}]}}),
        )
        .await;
    // Running (its model call is out) before anyone watches.
    let mut status = String::new();
    for _ in 0..200 {
        let (_, info) = server
            .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
            .await;
        status = info["status"].as_str().unwrap_or_default().to_string();
        if status == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(status, "running");

    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "watch_graph", "graph_id": graph}),
    )
    .await;
    let notice = next(&mut socket).await;
    assert_eq!(notice["type"], "notice", "{notice}");
    assert_eq!(notice["run_id"], run.as_str());
    assert_eq!(notice["status"], "running");
    assert!(
        notice["thread_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );

    // Another graph's watcher hears nothing of it.
    let other = server.create_graph(crate::invoke::chat_graph()).await;
    let mut elsewhere = connect(&server).await;
    watch_graph(&mut elsewhere, &other).await;

    let (code, _) = server
        .api(Method::POST, &format!("/api/v1/runs/{run}/cancel"), None)
        .await;
    assert!(code < 300, "cancelled: {code}");
    let cancelled = next(&mut socket).await;
    assert_eq!(cancelled["run_id"], run.as_str());
    assert_eq!(cancelled["status"], "cancelled");
}

/// An experiment's runs are announced to the graph's watchers as an
/// experiment's (the page's Evaluations section moves on with them, and
/// the page does not follow them); a person's run stays the app's.
#[tokio::test]
async fn an_experiments_runs_are_announced_as_the_experiments() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    let dataset = crate::experiments::new_dataset(
        &server,
        &graph,
        "counts",
        vec![
            json!({"input": {"target": 2}}),
            json!({"input": {"target": 3}}),
        ],
    )
    .await;
    let mut socket = connect(&server).await;
    watch_graph(&mut socket, &graph).await;
    let experiment = crate::experiments::start(
        &server.owner,
        &graph,
        json!({"dataset_id": dataset,
               "scorers": [{"kind": "threshold", "metric": "tokens", "max": 10}]}),
    )
    .await;
    crate::experiments::ended(&server.owner, &graph, &experiment).await;
    // A person's run after it.
    let own = start(&server, &graph, 2).await;
    let mut heard: Vec<(String, String, String)> = Vec::new();
    while !heard
        .iter()
        .any(|(run, _, status)| *run == own && status == "finished")
    {
        let notice = next(&mut socket).await;
        assert_eq!(notice["type"], "notice", "{notice}");
        heard.push((
            notice["run_id"].as_str().unwrap().to_string(),
            notice["origin"].as_str().unwrap().to_string(),
            notice["status"].as_str().unwrap().to_string(),
        ));
    }
    let experiments: Vec<&(String, String, String)> = heard
        .iter()
        .filter(|(_, origin, _)| origin == "experiment")
        .collect();
    // Two examples, each started and ended.
    assert_eq!(experiments.len(), 4, "{heard:?}");
    assert!(
        heard
            .iter()
            .filter(|(run, _, _)| *run == own)
            .all(|(_, origin, _)| origin == "app"),
        "{heard:?}"
    );
}

#[tokio::test]
async fn sockets_close_cleanly_when_the_server_shuts_down() {
    let server = TestServer::start().await;
    let mut socket = connect(&server).await;
    send(&mut socket, json!({"type": "ping"})).await;
    assert_eq!(next(&mut socket).await["type"], "pong");
    server.stop.send(true).unwrap();
    let frame = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(frame))) => return frame,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    })
    .await
    .expect("closed in time");
    assert_eq!(u16::from(frame.unwrap().code), 1001);
}

#[tokio::test]
async fn a_restarted_server_finishes_the_runs_it_was_running() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(0)).await;
    // Far more steps than the 500 events it is stopped after (about three
    // an iteration), so it cannot end first.
    let target = 2000;
    let run = start(&server, &graph, target).await;
    // Let it get going, then stop the run tasks as a shutdown does.
    loop {
        let (_, events) = server
            .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
            .await;
        if events.as_array().unwrap().len() > 500 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.runs.shutdown();
    // As `heddle serve` does when it stops: the leases are given back, so
    // the next server (on PostgreSQL, any server) takes the run at once.
    assert_eq!(server.runs.release_leases().await.unwrap(), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (_, stopped) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}"), None)
        .await;
    assert_eq!(
        stopped["status"], "running",
        "stopped mid-run, not finished"
    );

    // A new process on the same database.
    let database = server.db().await;
    let runs = heddle_server::runs::Runs::new(database.clone(), 4)
        .await
        .unwrap();
    assert_eq!(runs.recover().await.unwrap(), 1);
    let info = loop {
        let info = runs.record(&run.as_str().into()).await.unwrap();
        if !info.status.is_active() {
            break info;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(info.status, heddle_engine::run::RunStatus::Finished);
    assert_eq!(info.output.unwrap()["count"], target);
    let owner = heddle_store::accounts::find_user(&database, "owner")
        .await
        .unwrap()
        .unwrap();
    let on_run = heddle_store::access::require_run(
        &database,
        Some(&owner),
        &run.as_str().into(),
        heddle_wire::access::Role::Viewer,
    )
    .await
    .unwrap();
    let events = runs.events(&on_run, 0).await.unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    gapless(&seqs);
    // The log holds what viewers saw before the stop (stored ahead of
    // its checkpoint), then `run_resumed` from the last committed step:
    // the one step in between was seen, not committed, and ran again.
    use heddle_engine::run::EventPayload;
    let resumed = events
        .iter()
        .position(|e| matches!(e.payload, EventPayload::RunResumed { .. }))
        .expect("a run_resumed event");
    let EventPayload::RunResumed { step: from, .. } = events[resumed].payload else {
        unreachable!()
    };
    let tick_steps = |events: &[std::sync::Arc<heddle_engine::run::Event>]| -> Vec<u32> {
        events
            .iter()
            .filter_map(|e| match &e.payload {
                EventPayload::NodeSucceeded { node, step, .. } if node.as_str() == "tick" => {
                    Some(*step)
                }
                _ => None,
            })
            .collect()
    };
    let before = tick_steps(&events[..resumed]);
    let after = tick_steps(&events[resumed..]);
    let committed = before.iter().filter(|step| **step < from).count();
    assert!(
        before.len() - committed <= 1,
        "at most one step was cut short"
    );
    assert!(after.iter().all(|step| *step >= from));
    assert_eq!(
        (committed + after.len()) as u64,
        target,
        "no committed step ran twice"
    );
}

#[tokio::test]
async fn streamed_tokens_arrive_batched_and_account_for_every_seq() {
    let server = TestServer::start().await;
    let graph = server
        .create_graph(json!({
            "format_version": 2, "name": "chat",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "chat", "kind": "llm", "config": {"system": "be brief"}}],
            "edges": [{"id": "e", "from": "start", "to": "chat"}]
        }))
        .await;
    let mut socket = connect(&server).await;
    let run = say_and_follow(
        &server,
        &mut socket,
        &graph,
        "Tell me about looms and heddles please",
    )
    .await;
    let mut covered: Vec<u64> = Vec::new();
    let mut streamed = String::new();
    let mut batches = 0;
    loop {
        let message = next(&mut socket).await;
        match message["type"].as_str() {
            Some("event") => covered.push(message["event"]["seq"].as_u64().unwrap()),
            Some("tokens") => {
                batches += 1;
                assert_eq!(message["node"], "chat");
                streamed.push_str(message["text"].as_str().unwrap());
                let (first, last) = (
                    message["first_seq"].as_u64().unwrap(),
                    message["last_seq"].as_u64().unwrap(),
                );
                covered.extend(first..=last);
            }
            Some("caught_up") => {}
            Some("run_idle") => break,
            other => panic!("unexpected {other:?}: {message}"),
        }
    }
    gapless(&covered);
    let finished = server.wait_for_run(&run).await;
    let reply = finished["output"]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(streamed, reply, "the batches carry the whole reply");
    let token_events = reply.split_inclusive(' ').count();
    assert!(
        batches < token_events,
        "{batches} batches for {token_events} tokens"
    );

    // Stored as they came, a batch a token; each step's batches are one
    // once it ended, and read back as every token sent live.
    let db = server.db().await;
    let stored: Vec<(i64, i64)> = heddle_store::on_db!(&db, pool => sqlx::query_as(
        "SELECT first_seq, last_seq FROM heddle_events WHERE run_id = $1 ORDER BY first_seq",
    )
    .bind(&run)
    .fetch_all(pool)
    .await)
    .unwrap();
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
        .await;
    let events = events.as_array().unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, covered, "the stored log holds what was sent live");
    let tokens: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "token")
        .map(|e| e["data"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(tokens.len(), token_events, "each token its own event");
    assert_eq!(tokens.concat(), reply);
    let steps = events
        .iter()
        .filter(|e| e["type"] == "step_finished")
        .count();
    assert!(
        stored.len() <= steps + 2,
        "{} batches for {steps} steps: {stored:?}",
        stored.len()
    );
}

/// A fan-out's instances stream side by side: each one's tokens come
/// apart, live and read back from the store.
#[tokio::test]
async fn a_fan_outs_instances_stream_apart_live_and_in_the_stored_log() {
    let server = TestServer::start().await;
    let graph = server.create_graph(example("research.json")).await;
    let mut socket = connect(&server).await;
    let run = say_and_follow(&server, &mut socket, &graph, "How do heat pumps work?").await;
    let mut live: std::collections::BTreeMap<u64, String> = Default::default();
    loop {
        let message = next(&mut socket).await;
        match message["type"].as_str() {
            Some("tokens") if message["node"] == "research" => {
                let instance = message["instance"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("an instance's tokens say which: {message}"));
                live.entry(instance)
                    .or_default()
                    .push_str(message["text"].as_str().unwrap());
            }
            Some("run_idle") => break,
            _ => {}
        }
    }
    let finished = server.wait_for_run(&run).await;
    let replies: Vec<String> = finished["output"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(replies.len(), 3);
    assert_eq!(live.values().cloned().collect::<Vec<_>>(), replies);

    // The stored log keeps each instance's tokens as it had them.
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
        .await;
    let mut stored: std::collections::BTreeMap<u64, String> = Default::default();
    for event in events.as_array().unwrap() {
        if event["name"] == "token" && event["node"] == "research" {
            stored
                .entry(event["instance"].as_u64().unwrap())
                .or_default()
                .push_str(event["data"]["text"].as_str().unwrap());
        }
    }
    assert_eq!(stored, live);
}

/// A thread's second run holds what changed, not the conversation: its
/// viewer is sent the state of the checkpoint the run went on from once,
/// before its first event, and rebuilds every step's state from it with
/// the engine's own code, to the state the run finished with.
#[tokio::test]
async fn a_threads_next_run_is_sent_its_base_once_and_rebuilds_from_changes() {
    let server = TestServer::start().await;
    let graph = server
        .create_graph(json!({
            "format_version": 2, "name": "chat",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "chat", "kind": "llm", "config": {"system": "be brief"}}],
            "edges": [{"id": "e", "from": "start", "to": "chat"}]
        }))
        .await;
    let say = |text: &str, thread: Option<&str>| json!({"input": {"messages": [{"role": "user", "content": text}]}, "thread_id": thread});
    let (_, first) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(say("Hello there", None)),
        )
        .await;
    let first = server.wait_for_run(first["id"].as_str().unwrap()).await;
    let thread = first["thread_id"].as_str().unwrap().to_string();
    let (_, second) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(say("And again", Some(&thread))),
        )
        .await;
    let run = second["id"].as_str().unwrap().to_string();
    let finished = server.wait_for_run(&run).await;

    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
    )
    .await;
    let mut base: Option<serde_json::Map<String, Value>> = None;
    let mut events: Vec<heddle_engine::run::Event> = Vec::new();
    loop {
        let message = next(&mut socket).await;
        match message["type"].as_str() {
            Some("base") => {
                assert!(
                    base.is_none() && events.is_empty(),
                    "the base once, first: {message}"
                );
                base = message["state"].as_object().cloned();
            }
            Some("event") => events.push(serde_json::from_value(message["event"].clone()).unwrap()),
            Some("tokens" | "caught_up") => {}
            Some("run_idle") => break,
            other => panic!("unexpected {other:?}: {message}"),
        }
    }
    let base = base.expect("a base before the first event");
    assert_eq!(
        base["messages"].as_array().map(Vec::len),
        Some(2),
        "the first turn"
    );
    let first_event = serde_json::to_string(&events[0]).unwrap();
    assert!(
        !first_event.contains("Hello there"),
        "the first event repeats no message: {first_event}"
    );
    let mut state = events[0].payload.start_state(Some(&base)).unwrap().unwrap();
    for event in &events {
        if let Some(changed) = event.payload.apply_step(&mut state) {
            changed.unwrap();
        }
    }
    assert_eq!(
        Value::Object(state),
        finished["output"],
        "rebuilt from the base and changes"
    );

    // The same base for a log read whole; a checkpoint is found only in
    // the run's own thread, never in another's.
    let base_id = events[0].payload.base_checkpoint().unwrap().to_string();
    let read = |run: String, checkpoint: String| {
        let owner = &server.owner;
        async move {
            let response = owner
                .call_json(
                    "run_base",
                    &json!({"run_id": run, "checkpoint": checkpoint}),
                )
                .await;
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };
    assert_eq!(
        read(run.clone(), base_id.clone()).await,
        Value::Object(base)
    );
    let (_, elsewhere) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(say("Another thread", None)),
        )
        .await;
    let elsewhere = elsewhere["id"].as_str().unwrap().to_string();
    server.wait_for_run(&elsewhere).await;
    assert_eq!(
        read(elsewhere, base_id).await,
        Value::Null,
        "not another thread's checkpoint"
    );
}

/// A run of a thousand steps, replayed from the events its viewer is sent
/// as the run panel replays it (its `RunLog` applies each step's changes
/// with the engine's `EventPayload::apply_step`, compiled to wasm; the
/// e2e test `runs.spec.ts` checks the page itself): the state after every
/// step equals the checkpoint the server stored after that step.
#[tokio::test]
async fn a_thousand_step_run_replays_to_the_servers_state_at_every_step() {
    let server = TestServer::start().await;
    let graph = server
        .create_graph(json!({
            "format_version": 2, "name": "long",
            "state": {"channels": {
                "count": {"type": "integer", "reducer": "sum"},
                "target": {"type": "integer"},
                "log": {"type": "list", "reducer": "append"},
                "notes": {"type": "object", "reducer": "merge"},
                "last": {"type": "string"}}},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["target"]}},
                {"id": "tick", "kind": "set", "config": {"values": {
                    "count": {"value": 1},
                    "log": {"template": "tick {{ count }}"},
                    "notes": {"expr": "{\"seen\": count}"},
                    "last": {"template": "at {{ count }} of {{ target }}"}}}}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "tick"},
                {"id": "again", "from": "tick", "to": "tick", "condition": "count < target"}
            ],
            "limits": {"max_steps": 5000}
        }))
        .await;
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": 1000}})),
        )
        .await;
    assert_eq!(status, 202, "{run}");
    let run = run["id"].as_str().unwrap().to_string();
    let finished = server.wait_for_run(&run).await;
    assert_eq!(finished["status"], "finished", "{finished}");

    let mut socket = connect(&server).await;
    send(
        &mut socket,
        json!({"type": "subscribe", "run_id": run, "from_seq": 0}),
    )
    .await;
    let mut events: Vec<heddle_engine::run::Event> = Vec::new();
    loop {
        let message = next(&mut socket).await;
        match message["type"].as_str() {
            Some("event") => events.push(serde_json::from_value(message["event"].clone()).unwrap()),
            Some("caught_up") => {}
            Some("run_idle") => break,
            other => panic!("unexpected {other:?}: {message}"),
        }
    }
    // The run's first event holds its start whole (a new thread).
    let mut state = events[0].payload.start_state(None).unwrap().unwrap();
    let mut replayed = Vec::new();
    for event in &events {
        if let heddle_engine::run::EventPayload::StepFinished { step, .. } = &event.payload {
            event.payload.apply_step(&mut state).unwrap().unwrap();
            replayed.push((*step, state.clone()));
        }
    }
    assert_eq!(replayed.len(), 1001, "start and a thousand ticks");

    let store = server.runs.store();
    let thread = heddle_engine::ThreadId::from(finished["thread_id"].as_str().unwrap());
    let mut compared = 0;
    for summary in store.history(&thread).await.unwrap() {
        // A checkpoint goes on with step `step`: it holds the state after
        // the one before.
        let Some(after) = summary.step.checked_sub(1) else {
            continue;
        };
        let checkpoint = store
            .checkpoint(&thread, summary.id.as_str())
            .await
            .unwrap()
            .unwrap();
        let (step, state) = &replayed[after as usize];
        assert_eq!(*step, after);
        assert_eq!(
            &Value::Object(state.clone()),
            &checkpoint.state,
            "the state after step {after}"
        );
        compared += 1;
    }
    assert_eq!(compared, 1001, "every step has its checkpoint");
    let last = &replayed[1000].1;
    assert_eq!(last["count"], 1000);
    assert_eq!(last["log"].as_array().map(Vec::len), Some(1000));
    assert_eq!(last["notes"], json!({"seen": 999}));
}

/// A server that dies between recording a run and saving its first
/// checkpoint (a moment, but an experiment starts runs by the dozen)
/// leaves a run with nothing to go on from. The server that takes it over
/// begins it again as it was asked, numbering after what viewers saw; it
/// was failed with "the thread has moved on".
#[tokio::test]
async fn a_run_whose_server_died_before_its_first_checkpoint_begins_again() {
    use heddle_engine::run::{Durable, Event, EventPayload};
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(3)).await;
    let (_, me) = server.api(Method::GET, "/api/v1/auth/me", None).await;
    let owner = me["user"]["id"].as_str().unwrap().to_string();
    let db = server.db().await;
    let (run, thread) = ("run-unbegun", "thread-unbegun");
    // The engine's record of it, and its first event stored ahead (a
    // viewer saw it), but no checkpoint: the server died there. (Written
    // before the run's row names its dead server, whose lease fences it.)
    let store = std::sync::Arc::clone(server.runs.store());
    let compiled = heddle_engine::CompiledGraph::from_json(
        &counting_loop(3).to_string(),
        server.runs.registry(),
    )
    .unwrap();
    drop(
        Durable::new(std::sync::Arc::clone(&store))
            .start(
                std::sync::Arc::new(compiled),
                thread.into(),
                run.into(),
                json!({"target": 3}),
            )
            .await
            .unwrap(),
    );
    let seen = Event {
        run_id: run.into(),
        seq: 0,
        at_us: 1,
        path: Vec::new(),
        payload: EventPayload::RunStarted {
            graph: "counting".into(),
            input: json!({"target": 3}),
            state: None,
            from: None,
            changes: Default::default(),
        },
    };
    store
        .append_events(&[std::sync::Arc::new(seen)])
        .await
        .unwrap();
    heddle_store::on_db!(&db, pool => sqlx::query("INSERT INTO threads (id, graph_id) VALUES ($1, $2)")
        .bind(thread)
        .bind(&graph)
        .execute(pool)
        .await
        .map(|_| ()))
    .unwrap();
    heddle_store::on_db!(&db, pool => sqlx::query(
        "INSERT INTO runs (id, graph_id, graph_version, thread_id, input, status, user_id,
                           lease_owner, lease_expires_at)
         VALUES ($1, $2, 1, $3, $4, 'running', $5, 'a-dead-server', '2000-01-01T00:00:00.000Z')",
    )
    .bind(run)
    .bind(&graph)
    .bind(thread)
    .bind(json!({"target": 3}).to_string())
    .bind(&owner)
    .execute(pool)
    .await
    .map(|_| ()))
    .unwrap();

    assert_eq!(server.runs.recover().await.unwrap(), 1);
    let ended = server.wait_for_run(run).await;
    assert_eq!(ended["status"], "finished", "{ended}");
    assert_eq!(ended["output"]["count"], 3, "{ended}");
    let (_, events) = server
        .api(Method::GET, &format!("/api/v1/runs/{run}/events"), None)
        .await;
    let events = events.as_array().unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    gapless(&seqs);
    assert_eq!(events[0]["at_us"], 1, "what was seen is kept");
    assert_eq!(events[1]["type"], "run_started", "then it began again");
    let ticks = events
        .iter()
        .filter(|e| e["type"] == "node_succeeded" && e["node"] == "tick")
        .count();
    assert_eq!(ticks, 3);
}
