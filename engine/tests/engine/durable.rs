//! Durable runs: checkpoints, interrupts and resume, threads, time travel,
//! durability modes and recovery, against every store (`stores`).

use std::sync::Arc;

use heddle_engine::run::{
    CheckpointStore, Durability, Durable, DurableError, EventPayload, Fork, InterruptWhen,
    RunOptions, RunStatus,
};
use heddle_engine::{CompiledGraph, NodeId, RunId, ThreadId};
use serde_json::{Map, Value, json};

use crate::stores::stores;
use crate::support::{compile, registry};

fn durable(store: &Arc<dyn CheckpointStore>) -> Durable {
    Durable::new(Arc::clone(store)).with_registry(registry())
}

fn thread(id: &str) -> ThreadId {
    ThreadId::from(id)
}

/// Every stored event of a run, checking they are numbered 0.. without gaps.
async fn stored_events(store: &Arc<dyn CheckpointStore>, run: &str) -> Vec<EventPayload> {
    let events = store.events(&RunId::from(run), 0).await.unwrap();
    for (i, event) in events.iter().enumerate() {
        assert_eq!(
            event.seq, i as u64,
            "stored events of {run} have a gap or a duplicate"
        );
    }
    events.into_iter().map(|event| event.payload).collect()
}

pub(crate) fn ask_graph() -> Arc<CompiledGraph> {
    compile(json!({
        "state": {"channels": {
            "name": {"type": "string"},
            "greeting": {"type": "string"},
            "count": {"type": "integer", "reducer": "sum"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ask", "kind": "ask", "config": {"prompt": "What is your name? (count {{count}})", "answer": "name"}},
            {"id": "tally", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "join", "kind": "join"},
            {"id": "greet", "kind": "set", "config": {"values": {"greeting": {"template": "Hello, {{name}}! ({{count}})"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ask"},
            {"id": "e2", "from": "start", "to": "tally"},
            {"id": "e3", "from": "ask", "to": "join"},
            {"id": "e4", "from": "tally", "to": "join"},
            {"id": "e5", "from": "join", "to": "greet"}
        ]
    }))
}

#[tokio::test]
async fn an_interrupt_pauses_and_a_resume_continues_only_the_interrupted_branch() {
    for store in stores().await {
        let durable = durable(&store);
        let t = thread("t1");
        let run = durable
            .start(ask_graph(), t.clone(), RunId::from("r1"), json!({}))
            .await
            .unwrap();
        let output = run.execute().await.unwrap();
        assert!(output.is_interrupted());
        assert_eq!(output.interrupts[0].node.as_str(), "ask");
        assert_eq!(output.interrupts[0].when, InterruptWhen::During);
        assert_eq!(
            output.interrupts[0].payload["prompt"],
            "What is your name? (count 0)"
        );
        let latest = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(latest.status, RunStatus::Interrupted);
        assert_eq!(latest.completed.len(), 1, "tally finished and is kept");

        let run = durable.resume(&t, json!("Ada")).await.unwrap();
        assert_eq!(run.id().as_str(), "r1", "a resume continues the same run");
        let output = run.execute().await.unwrap();
        assert_eq!(
            output.state["greeting"], "Hello, Ada! (1)",
            "tally ran once, not twice"
        );

        let events = stored_events(&store, "r1").await;
        let tally_runs = events
            .iter()
            .filter(
                |e| matches!(e, EventPayload::NodeStarted { node, .. } if node.as_str() == "tally"),
            )
            .count();
        assert_eq!(tally_runs, 1);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, EventPayload::RunInterrupted { .. }))
        );
        assert!(
            events.iter().any(
                |e| matches!(e, EventPayload::RunResumed { value: Some(v), .. } if v == "Ada")
            )
        );
        assert!(matches!(
            events.last().unwrap(),
            EventPayload::RunFinished { .. }
        ));
    }
}

#[tokio::test]
async fn resuming_what_is_not_paused_is_refused_and_changes_nothing() {
    for store in stores().await {
        let durable = durable(&store);
        let error = durable
            .resume(&thread("empty"), json!(1))
            .await
            .err()
            .unwrap();
        assert!(
            matches!(error, DurableError::NotInterrupted { status: None, .. }),
            "{error}"
        );

        let t = thread("t2");
        durable
            .start(ask_graph(), t.clone(), RunId::from("r2"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        durable
            .resume(&t, json!("Bo"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let before = store.history(&t).await.unwrap();
        let events_before = stored_events(&store, "r2").await.len();
        let error = durable.resume(&t, json!("again")).await.err().unwrap();
        assert!(
            error.to_string().contains("its last run is finished"),
            "{error}"
        );
        assert_eq!(store.history(&t).await.unwrap(), before);
        assert_eq!(stored_events(&store, "r2").await.len(), events_before);
    }
}

pub(crate) fn chain() -> Value {
    json!({
        "state": {"channels": {"log": {"type": "list", "reducer": "append"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set", "config": {"values": {"log": {"value": "a"}}}},
            {"id": "b", "kind": "set", "config": {"values": {"log": {"value": "b"}}}},
            {"id": "c", "kind": "set", "config": {"values": {"log": {"value": "c"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "a", "to": "b"},
            {"id": "e3", "from": "b", "to": "c"}
        ]
    })
}

#[tokio::test]
async fn breakpoints_pause_before_and_after_nodes() {
    for store in stores().await {
        let mut graph = chain();
        graph["nodes"][2]["interrupt_before"] = json!(true);
        let durable = durable(&store);
        let t = thread("bp");
        let output = durable
            .start(compile(graph), t.clone(), RunId::from("bp1"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.interrupts[0].when, InterruptWhen::Before);
        assert_eq!(output.interrupts[0].node.as_str(), "b");
        assert_eq!(output.state["log"], json!(["a"]), "b has not run");
        let output = durable
            .resume(&t, Value::Null)
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["log"], json!(["a", "b", "c"]));

        // A breakpoint set for one run, after a node.
        let options = RunOptions {
            interrupt_after: vec![NodeId::from("a")],
            ..RunOptions::default()
        };
        let durable = durable.with_options(options);
        let t = thread("bp-after");
        let output = durable
            .start(compile(chain()), t.clone(), RunId::from("bp2"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.interrupts[0].when, InterruptWhen::After);
        assert_eq!(output.state["log"], json!(["a"]), "a has run, b has not");
        let output = durable
            .resume(&t, Value::Null)
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["log"], json!(["a", "b", "c"]));
        stored_events(&store, "bp2").await;
    }
}

pub(crate) fn chat_graph() -> Arc<CompiledGraph> {
    compile(json!({
        "state": {"channels": {
            "messages": {"type": "messages", "reducer": "add_messages", "scope": "thread"},
            "turns": {"type": "integer", "reducer": "sum"}
        }},
        "nodes": [
            {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
            {"id": "reply", "kind": "set", "config": {"values": {
                "messages": {"expr": "[{'role': 'assistant', 'content': 'you said ' + last(messages).content}]"},
                "turns": {"value": 1}
            }}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "reply"}]
    }))
}

#[tokio::test]
async fn thread_scoped_channels_carry_over_to_the_next_run() {
    for store in stores().await {
        let durable = durable(&store);
        let t = thread("chat");
        let say = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
        durable
            .start(chat_graph(), t.clone(), RunId::from("c1"), say("hi"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let output = durable
            .start(chat_graph(), t.clone(), RunId::from("c2"), say("bye"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let contents: Vec<&str> = output.state["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(contents, ["hi", "you said hi", "bye", "you said bye"]);
        assert_eq!(output.state["turns"], 1, "run-scoped channels start afresh");
        let ids: std::collections::HashSet<&str> = output.state["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 4, "message ids never collide across runs");

        let other = durable
            .start(chat_graph(), thread("other"), RunId::from("c3"), say("new"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(other.state["messages"].as_array().unwrap().len(), 2);

        let threads = store.threads().await.unwrap();
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0].thread_id.as_str(), "other", "most recent first");
        assert_eq!(threads[1].runs, 2);
    }
}

#[tokio::test]
async fn a_thread_runs_one_run_at_a_time() {
    for store in stores().await {
        let durable = durable(&store);
        let t = thread("busy");
        let hanging = compile(json!({
            "state": {"channels": {}},
            "nodes": [{"id": "start", "kind": "start"}, {"id": "wait", "kind": "sleep", "config": {"ms": 60000}}],
            "edges": [{"id": "e", "from": "start", "to": "wait"}]
        }));
        let run = durable
            .start(
                Arc::clone(&hanging),
                t.clone(),
                RunId::from("h1"),
                json!({}),
            )
            .await
            .unwrap();
        let cancel = run.cancel_handle();
        let task = tokio::spawn(run.execute());
        let error = durable
            .start(
                Arc::clone(&hanging),
                t.clone(),
                RunId::from("h2"),
                json!({}),
            )
            .await
            .err()
            .unwrap();
        assert!(matches!(error, DurableError::ThreadBusy { .. }), "{error}");
        cancel.cancel();
        assert!(task.await.unwrap().is_err());
        assert_eq!(
            store.latest(&t).await.unwrap().unwrap().status,
            RunStatus::Cancelled
        );

        // A paused thread must be resumed or have its pause cancelled first.
        let p = thread("paused");
        durable
            .start(ask_graph(), p.clone(), RunId::from("p1"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let error = durable
            .start(ask_graph(), p.clone(), RunId::from("p2"), json!({}))
            .await
            .err()
            .unwrap();
        assert!(matches!(error, DurableError::Paused { .. }), "{error}");
        durable.cancel_pause(&p).await.unwrap();
        assert_eq!(
            store.latest(&p).await.unwrap().unwrap().status,
            RunStatus::Cancelled
        );
        assert!(matches!(
            stored_events(&store, "p1").await.last().unwrap(),
            EventPayload::RunCancelled { .. }
        ));
        durable
            .start(ask_graph(), p, RunId::from("p3"), json!({}))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn time_travel_reruns_and_forks_without_touching_history() {
    for store in stores().await {
        let durable = durable(&store);
        let t = thread("tt");
        durable
            .start(compile(chain()), t.clone(), RunId::from("orig"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let history = store.history(&t).await.unwrap();
        // The checkpoint before step 2 (`b`): log is ["a"].
        let before_b = history
            .iter()
            .find(|c| c.next.first().map(|n| n.as_str()) == Some("b"))
            .unwrap();
        let original: Vec<_> = history.clone();

        let rerun = durable
            .run_from(&t, before_b.id.as_str(), Map::new(), RunId::from("again"))
            .await
            .unwrap();
        assert_eq!(
            rerun.execute().await.unwrap().state["log"],
            json!(["a", "b", "c"])
        );

        let mut edits = Map::new();
        edits.insert("log".into(), json!(["edited"]));
        let fork = durable
            .run_from(&t, before_b.id.as_str(), edits, RunId::from("fork"))
            .await
            .unwrap();
        assert_eq!(
            fork.execute().await.unwrap().state["log"],
            json!(["edited", "b", "c"])
        );

        let after = store.history(&t).await.unwrap();
        assert_eq!(
            &after[..original.len()],
            &original[..],
            "old checkpoints are unchanged"
        );
        let fork_first = after.iter().find(|c| c.run_id.as_str() == "fork").unwrap();
        assert_eq!(
            fork_first.parent.as_ref(),
            Some(&before_b.id),
            "the branch hangs off the chosen checkpoint"
        );
        assert_eq!(
            store.latest(&t).await.unwrap().unwrap().run_id.as_str(),
            "fork"
        );

        let mut bad = Map::new();
        bad.insert("nope".into(), json!(1));
        let error = durable
            .run_from(&t, before_b.id.as_str(), bad, RunId::from("x"))
            .await
            .err()
            .unwrap();
        assert!(matches!(error, DurableError::BadEdit { .. }), "{error}");
        // Start at a chosen node with the checkpoint's state: `c` again.
        let at_c = Fork {
            edits: Map::new(),
            start_at: Some(NodeId::from("c")),
        };
        let again_c = durable
            .fork(&t, before_b.id.as_str(), at_c, RunId::from("at-c"))
            .await
            .unwrap();
        assert_eq!(
            again_c.execute().await.unwrap().state["log"],
            json!(["a", "c"]),
            "b skipped: the run went on from c with the state before b"
        );
        let nowhere = Fork {
            edits: Map::new(),
            start_at: Some(NodeId::from("ghost")),
        };
        let error = durable
            .fork(&t, before_b.id.as_str(), nowhere, RunId::from("z"))
            .await
            .err()
            .unwrap();
        assert!(matches!(error, DurableError::NoNode { .. }), "{error}");
        let error = durable
            .run_from(&t, "missing", Map::new(), RunId::from("y"))
            .await
            .err()
            .unwrap();
        assert!(
            matches!(error, DurableError::NoCheckpoint { .. }),
            "{error}"
        );
    }
}

#[tokio::test]
async fn every_durability_mode_ends_in_the_same_place() {
    for store in stores().await {
        for (i, mode) in [Durability::Sync, Durability::Async, Durability::Exit]
            .into_iter()
            .enumerate()
        {
            let durable = durable(&store).with_durability(mode);
            let t = thread(&format!("mode{i}"));
            let run_id = format!("m{i}");
            let output = durable
                .start(
                    compile(chain()),
                    t.clone(),
                    RunId::from(run_id.as_str()),
                    json!({}),
                )
                .await
                .unwrap()
                .execute()
                .await
                .unwrap();
            assert_eq!(output.state["log"], json!(["a", "b", "c"]));
            let history = store.history(&t).await.unwrap();
            assert_eq!(history.last().unwrap().status, RunStatus::Finished);
            let expected = if mode == Durability::Exit { 2 } else { 5 };
            assert_eq!(history.len(), expected, "{mode:?}");
            let events = stored_events(&store, &run_id).await;
            assert!(matches!(
                events.last().unwrap(),
                EventPayload::RunFinished { .. }
            ));
        }
    }
}

fn counting_loop(target: u64) -> Arc<CompiledGraph> {
    compile(json!({
        "state": {"channels": {"count": {"type": "integer", "reducer": "sum"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "tick", "kind": "sleep", "config": {"ms": 2, "write": {"count": 1}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "tick"},
            {"id": "again", "from": "tick", "to": "tick", "condition": format!("count < {target}")}
        ],
        "limits": {"max_steps": 10000}
    }))
}

#[tokio::test]
async fn a_crashed_run_is_recovered_from_its_last_checkpoint() {
    for store in stores().await {
        let t = thread("crash");
        let run = durable(&store)
            .start(
                counting_loop(40),
                t.clone(),
                RunId::from("victim"),
                json!({}),
            )
            .await
            .unwrap();
        let task = tokio::spawn(run.execute());
        // Let it commit a few steps, then kill it mid-flight.
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            if store.history(&t).await.unwrap().len() >= 5 {
                break;
            }
        }
        task.abort();
        let _ = task.await;
        assert_eq!(
            store
                .run(&RunId::from("victim"))
                .await
                .unwrap()
                .unwrap()
                .status,
            RunStatus::Running
        );

        // A new process (a fresh Durable) finds the run and finishes it.
        let runs = durable(&store).recover().await.unwrap();
        assert_eq!(runs.len(), 1);
        let output = runs.into_iter().next().unwrap().execute().await.unwrap();
        assert_eq!(output.state["count"], 40);

        let events = stored_events(&store, "victim").await;
        let ticks = events
            .iter()
            .filter(|e| matches!(e, EventPayload::NodeSucceeded { node, .. } if node.as_str() == "tick"))
            .count();
        assert_eq!(ticks, 40, "no committed step ran twice, none was lost");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, EventPayload::RunResumed { .. }))
        );
        assert!(durable(&store).recover().await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_run_handed_over_stops_after_its_step_and_goes_on_elsewhere() {
    for store in stores().await {
        let t = thread("hand-over");
        let run = durable(&store)
            .start(
                counting_loop(40),
                t.clone(),
                RunId::from("moving"),
                json!({}),
            )
            .await
            .unwrap();
        let handle = run.cancel_handle();
        let task = tokio::spawn(run.execute());
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            if store.history(&t).await.unwrap().len() >= 5 {
                break;
            }
        }
        handle.hand_over();
        let stopped = task.await.unwrap();
        let Err(heddle_engine::run::RunError::HandedOver { step }) = stopped else {
            panic!("expected a hand-over, got {stopped:?}");
        };
        // Not ended: still running, its newest checkpoint at that step,
        // and no end in its log.
        let record = store.run(&RunId::from("moving")).await.unwrap().unwrap();
        assert_eq!(record.status, RunStatus::Running);
        assert_eq!(store.latest(&t).await.unwrap().unwrap().step, step);
        let events = stored_events(&store, "moving").await;
        assert!(!events.iter().any(|e| matches!(
            e,
            EventPayload::RunCancelled { .. } | EventPayload::RunFailed { .. }
        )));

        // Another process goes on from there; every step ran once.
        let runs = durable(&store).recover().await.unwrap();
        assert_eq!(runs.len(), 1);
        let output = runs.into_iter().next().unwrap().execute().await.unwrap();
        assert_eq!(output.state["count"], 40);
        let events = stored_events(&store, "moving").await;
        let started: Vec<u32> = events
            .iter()
            .filter_map(|e| match e {
                EventPayload::NodeStarted { node, step, .. } if node.as_str() == "tick" => {
                    Some(*step)
                }
                _ => None,
            })
            .collect();
        assert_eq!(started.len(), 40, "{started:?}");
        assert!(started.windows(2).all(|pair| pair[0] < pair[1]));
    }
}

#[tokio::test]
async fn a_run_whose_process_died_before_its_first_checkpoint_begins_again_after_its_stored_events()
{
    for store in stores().await {
        let t = thread("unbegun");
        let output = durable(&store)
            .start(
                counting_loop(2),
                t.clone(),
                RunId::from("earlier"),
                json!({}),
            )
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["count"], 2);
        // Recorded, its first event stored ahead (as a write-ahead sink
        // does), and its process gone before the first checkpoint.
        let id = RunId::from("unbegun");
        drop(
            durable(&store)
                .start(counting_loop(3), t.clone(), id.clone(), json!({}))
                .await
                .unwrap(),
        );
        let seen = heddle_engine::run::Event {
            run_id: id.clone(),
            seq: 0,
            at_us: 1,
            path: Vec::new(),
            payload: EventPayload::RunStarted {
                graph: "counting".into(),
                input: json!({}),
                state: None,
                from: None,
                changes: Default::default(),
            },
        };
        store.append_events(&[Arc::new(seen)]).await.unwrap();
        assert!(store.last_of_run(&id).await.unwrap().is_none());
        assert_eq!(
            store.run(&id).await.unwrap().unwrap().status,
            RunStatus::Running
        );

        // Beginning it as any run is refused: the id is recorded.
        assert!(
            durable(&store)
                .start(counting_loop(3), t.clone(), id.clone(), json!({}))
                .await
                .is_err()
        );
        // Begun again, it runs whole, numbering after the event seen.
        let output = durable(&store)
            .beginning_again()
            .start(counting_loop(3), t.clone(), id.clone(), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["count"], 3);
        let events = stored_events(&store, "unbegun").await;
        assert!(matches!(
            events.last(),
            Some(EventPayload::RunFinished { .. })
        ));
        let ticks = events
            .iter()
            .filter(|e| matches!(e, EventPayload::NodeSucceeded { node, .. } if node.as_str() == "tick"))
            .count();
        assert_eq!(ticks, 3);

        // Once it has a checkpoint it is never begun twice.
        let again = durable(&store)
            .beginning_again()
            .start(counting_loop(3), t.clone(), id.clone(), json!({}))
            .await;
        assert!(
            matches!(again, Err(DurableError::Begun { ref run }) if run == &id),
            "{:?}",
            again.err()
        );
    }
}
