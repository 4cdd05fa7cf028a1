//! The checkpoint-store conformance suite (after LangGraph's checkpointer
//! conformance kit): what every [`CheckpointStore`] must do, run against
//! each store `stores` gives (memory, SQLite, PostgreSQL). A new store
//! passes these before it is used; durable.rs runs the durable-run
//! behaviours over the same stores.
//!
//! Covered: checkpoints by id and latest; history as a tree; forks, pauses
//! and thread-scoped channels through `Durable` (with events written
//! ahead, as the server writes them); events numbered without gaps across
//! saves and appends, a gap or duplicate refused with nothing stored; run
//! records; the thread list; concurrent writers.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use heddle_engine::node::NodeOutput;
use heddle_engine::run::{
    Checkpoint, CheckpointStore, CheckpointSummary, CompletedTask, Durable, Event, EventPayload,
    EventSink, Hop, Interrupt, InterruptWhen, PendingTask, RunOptions, RunRecord, RunStatus,
    StoreFuture,
};
use heddle_engine::{CheckpointId, NodeId, RunId, ThreadId};
use serde_json::{Map, json};
use tokio::task::JoinSet;

use crate::durable::{ask_graph, chain, chat_graph};
use crate::stores::{TestStore, stores};
use crate::support::{compile, registry};

// ---- Building records ----

fn record(run: &str, thread: &str) -> RunRecord {
    RunRecord {
        run_id: RunId::from(run),
        thread_id: ThreadId::from(thread),
        graph: json!({"format_version": 2, "name": run}).to_string(),
        status: RunStatus::Running,
    }
}

/// Checkpoint `n` of `run` on `thread`, a child of `parent`, saying the
/// run's next event is `next_seq`.
fn checkpoint(
    thread: &str,
    run: &str,
    n: u32,
    parent: Option<&Checkpoint>,
    status: RunStatus,
    next_seq: u64,
) -> Checkpoint {
    Checkpoint {
        id: CheckpointId::from(format!("{run}/{n}")),
        thread_id: ThreadId::from(thread),
        run_id: RunId::from(run),
        parent: parent.map(|p| p.id.clone()),
        step: n,
        state: json!({"n": n, "run": run}),
        next: vec![PendingTask {
            node: NodeId::from(format!("node{n}").as_str()),
            arg: None,
            instance: None,
        }],
        arrivals: BTreeMap::new(),
        status,
        interrupts: Vec::new(),
        completed: Vec::new(),
        next_seq,
        error: None,
        created_at_us: 1_700_000_000_000_000 + u64::from(n),
        usage: Default::default(),
        reached_end: None,
    }
}

/// Events `seqs` of `run`.
fn events(run: &str, seqs: Range<u64>) -> Vec<Arc<Event>> {
    seqs.map(|seq| {
        Arc::new(Event {
            run_id: RunId::from(run),
            seq,
            at_us: 1_700_000_000_000_000 + seq,
            // Some happened inside a child graph: where is kept too.
            path: match seq % 3 {
                1 => vec![Hop {
                    node: NodeId::from("research"),
                    step: 2,
                    instance: Some(1),
                    child: Some("writer".into()),
                }],
                _ => Vec::new(),
            },
            payload: EventPayload::Custom {
                node: NodeId::from("n"),
                instance: None,
                name: "tick".into(),
                data: json!({"seq": seq, "text": format!("event {seq} of {run}")}),
            },
        })
    })
    .collect()
}

/// The `seq`s of a run's stored events.
async fn seqs(store: &TestStore, run: &str) -> Vec<u64> {
    let stored = store.events(&RunId::from(run), 0).await.unwrap();
    stored.iter().map(|event| event.seq).collect()
}

fn upto(n: u64) -> Vec<u64> {
    (0..n).collect()
}

/// A run's stored events, checked to be numbered 0.. without gaps.
async fn continuous_events(store: &TestStore, run: &str) -> Vec<Event> {
    let stored = store.events(&RunId::from(run), 0).await.unwrap();
    let numbers: Vec<u64> = stored.iter().map(|event| event.seq).collect();
    assert_eq!(
        numbers,
        upto(stored.len() as u64),
        "{}: events of {run} have a gap or a duplicate",
        store.name
    );
    stored
}

// ---- Save and load ----

#[tokio::test]
async fn a_checkpoint_reads_back_as_saved_by_id_and_as_the_latest() {
    for store in stores().await {
        let name = store.name;
        store.create_run(&record("r1", "t1")).await.unwrap();
        let first = checkpoint("t1", "r1", 0, None, RunStatus::Running, 0);
        // Every field a checkpoint has, so none is lost on the way.
        let mut second = checkpoint("t1", "r1", 1, Some(&first), RunStatus::Interrupted, 7);
        second.arrivals = BTreeMap::from([(
            NodeId::from("join"),
            vec![NodeId::from("a"), NodeId::from("b")],
        )]);
        second.next.push(PendingTask {
            node: NodeId::from("fan"),
            arg: Some(json!({"item": [1, 2.5, "three", null]})),
            instance: Some(3),
        });
        second.interrupts = vec![Interrupt {
            node: NodeId::from("ask"),
            task: 1,
            when: InterruptWhen::During,
            payload: json!({"prompt": "Name? \u{1F600} \"quoted\" \\ back"}),
        }];
        second.completed = vec![CompletedTask {
            task: 0,
            output: NodeOutput::update("count", json!(1)),
        }];
        second.error = Some("not really".into());
        store.save(&first, &[]).await.unwrap();
        store.save(&second, &[]).await.unwrap();

        let t1 = ThreadId::from("t1");
        assert_eq!(
            store.checkpoint(&t1, "r1/0").await.unwrap(),
            Some(first.clone()),
            "{name}"
        );
        assert_eq!(
            store.checkpoint(&t1, "r1/1").await.unwrap(),
            Some(second.clone()),
            "{name}"
        );
        assert_eq!(
            store.latest(&t1).await.unwrap(),
            Some(second.clone()),
            "{name}"
        );
        assert_eq!(store.checkpoint(&t1, "r1/9").await.unwrap(), None, "{name}");
        // A checkpoint is found in its own thread only.
        let t2 = ThreadId::from("t2");
        assert_eq!(store.checkpoint(&t2, "r1/0").await.unwrap(), None, "{name}");
        assert_eq!(store.latest(&t2).await.unwrap(), None, "{name}");
        assert!(store.history(&t2).await.unwrap().is_empty(), "{name}");
    }
}

#[tokio::test]
async fn the_history_is_a_tree_and_a_branch_leaves_the_old_one_alone() {
    for store in stores().await {
        let name = store.name;
        let t = ThreadId::from("tree");
        store.create_run(&record("main", "tree")).await.unwrap();
        let c0 = checkpoint("tree", "main", 0, None, RunStatus::Running, 0);
        let c1 = checkpoint("tree", "main", 1, Some(&c0), RunStatus::Running, 0);
        let c2 = checkpoint("tree", "main", 2, Some(&c1), RunStatus::Finished, 0);
        for c in [&c0, &c1, &c2] {
            store.save(c, &[]).await.unwrap();
        }
        let before = store.history(&t).await.unwrap();
        assert_eq!(
            before,
            [&c0, &c1, &c2].map(CheckpointSummary::from).to_vec(),
            "{name}"
        );

        // A branch from c1, as a fork makes.
        store.create_run(&record("branch", "tree")).await.unwrap();
        let b0 = checkpoint("tree", "branch", 0, Some(&c1), RunStatus::Running, 0);
        let b1 = checkpoint("tree", "branch", 1, Some(&b0), RunStatus::Finished, 0);
        store.save(&b0, &[]).await.unwrap();
        store.save(&b1, &[]).await.unwrap();

        let after = store.history(&t).await.unwrap();
        assert_eq!(after.len(), 5, "{name}");
        assert_eq!(
            after[..3],
            before[..],
            "{name}: the old branch is untouched"
        );
        assert_eq!(after[3].parent, Some(c1.id.clone()), "{name}");
        assert_eq!(after[4].parent, Some(b0.id.clone()), "{name}");
        assert_eq!(
            store.checkpoint(&t, c2.id.as_str()).await.unwrap(),
            Some(c2.clone()),
            "{name}: the old leaf reads back as it was"
        );
        assert_eq!(store.latest(&t).await.unwrap(), Some(b1), "{name}");
        assert_eq!(
            ancestry(&after, &after[4].id),
            ["branch/1", "branch/0", "main/1", "main/0"],
            "{name}"
        );
    }
}

/// The ids from `leaf` up to the root, through `parent`, checking the
/// history is a tree: every parent is in it, saved before its child.
fn ancestry(history: &[CheckpointSummary], leaf: &CheckpointId) -> Vec<String> {
    let position: HashMap<&CheckpointId, usize> = history
        .iter()
        .enumerate()
        .map(|(i, c)| (&c.id, i))
        .collect();
    let mut chain = Vec::new();
    let mut at = position.get(leaf).copied();
    while let Some(i) = at {
        chain.push(history[i].id.to_string());
        at = history[i].parent.as_ref().map(|parent| {
            let p = *position
                .get(parent)
                .unwrap_or_else(|| panic!("parent {parent} is not in the history"));
            assert!(p < i, "parent {parent} is saved after its child");
            p
        });
    }
    chain
}

// ---- Through `Durable`, with events written ahead ----

/// A write-ahead event sink as a server has: events are stored with
/// `append_events` before each checkpoint, which is then saved without
/// events.
struct WriteAhead {
    store: Arc<dyn CheckpointStore>,
    pending: Mutex<Vec<Arc<Event>>>,
}

impl WriteAhead {
    fn new(store: &Arc<dyn CheckpointStore>) -> Arc<WriteAhead> {
        Arc::new(WriteAhead {
            store: Arc::clone(store),
            pending: Mutex::new(Vec::new()),
        })
    }
}

impl EventSink for WriteAhead {
    fn event(&self, event: &Arc<Event>) {
        self.pending.lock().unwrap().push(Arc::clone(event));
    }

    fn writes_ahead(&self) -> bool {
        true
    }

    fn flush(&self) -> StoreFuture<'_, ()> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap());
        Box::pin(async move {
            for batch in pending.chunk_by(|a, b| a.run_id == b.run_id) {
                self.store.append_events(batch).await?;
            }
            Ok(())
        })
    }
}

fn durable_ahead(store: &Arc<dyn CheckpointStore>) -> (Durable, Arc<WriteAhead>) {
    let sink = WriteAhead::new(store);
    let options = RunOptions {
        sink: Some(Arc::clone(&sink) as Arc<dyn EventSink>),
        ..RunOptions::default()
    };
    let durable = Durable::new(Arc::clone(store))
        .with_registry(registry())
        .with_options(options);
    (durable, sink)
}

#[tokio::test]
async fn a_pause_is_stored_as_interrupted_and_a_resume_goes_on_from_it() {
    for store in stores().await {
        let name = store.name;
        let (durable, sink) = durable_ahead(&store);
        let t = ThreadId::from("pause");
        let output = durable
            .start(ask_graph(), t.clone(), RunId::from("p1"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert!(output.is_interrupted(), "{name}");
        sink.flush().await.unwrap();

        let paused = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(paused.status, RunStatus::Interrupted, "{name}");
        assert_eq!(paused.interrupts[0].node.as_str(), "ask", "{name}");
        assert_eq!(paused.completed.len(), 1, "{name}: tally's output is kept");
        let p1 = RunId::from("p1");
        assert_eq!(
            store.run(&p1).await.unwrap().unwrap().status,
            RunStatus::Interrupted,
            "{name}: the run's status follows its checkpoint"
        );
        assert!(
            !store
                .unfinished()
                .await
                .unwrap()
                .iter()
                .any(|r| r.run_id == p1),
            "{name}: a paused run is not one to recover"
        );
        let stored = continuous_events(&store, "p1").await;
        assert_eq!(
            paused.next_seq,
            stored.len() as u64,
            "{name}: the events end where the checkpoint says the run goes on"
        );
        assert!(
            matches!(
                stored.last().unwrap().payload,
                EventPayload::RunInterrupted { .. }
            ),
            "{name}"
        );

        let output = durable
            .resume(&t, json!("Ada"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["greeting"], "Hello, Ada! (1)", "{name}");
        sink.flush().await.unwrap();
        let stored = continuous_events(&store, "p1").await;
        assert!(
            matches!(
                &stored[paused.next_seq as usize].payload,
                EventPayload::RunResumed { value: Some(v), .. } if v == "Ada"
            ),
            "{name}: the resume's events follow the pause's"
        );
        let finished = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(finished.status, RunStatus::Finished, "{name}");
        assert_eq!(finished.next_seq, stored.len() as u64, "{name}");
        assert_eq!(
            store.run(&p1).await.unwrap().unwrap().status,
            RunStatus::Finished,
            "{name}"
        );
        let history = store.history(&t).await.unwrap();
        let at = history.iter().position(|c| c.id == paused.id).unwrap();
        assert_eq!(
            history[at + 1].parent.as_ref(),
            Some(&paused.id),
            "{name}: the resume continues from the pause"
        );
        assert_eq!(
            ancestry(&history, &finished.id).len(),
            history.len(),
            "{name}: one run, one chain"
        );
    }
}

#[tokio::test]
async fn thread_scoped_channels_go_from_run_to_run_through_the_store() {
    for store in stores().await {
        let name = store.name;
        let (durable, sink) = durable_ahead(&store);
        let t = ThreadId::from("chat");
        let say = |text: &str| json!({"messages": [{"role": "user", "content": text}]});
        for (run, text) in [("c1", "hi"), ("c2", "bye")] {
            durable
                .start(chat_graph(), t.clone(), RunId::from(run), say(text))
                .await
                .unwrap()
                .execute()
                .await
                .unwrap();
        }
        sink.flush().await.unwrap();

        let latest = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(latest.run_id.as_str(), "c2", "{name}");
        let contents: Vec<&str> = latest.state["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap())
            .collect();
        assert_eq!(
            contents,
            ["hi", "you said hi", "bye", "you said bye"],
            "{name}"
        );
        assert_eq!(latest.state["turns"], 1, "{name}: run-scoped starts afresh");

        let history = store.history(&t).await.unwrap();
        let c2_first = history.iter().position(|c| c.run_id.as_str() == "c2");
        let c2_first = c2_first.unwrap();
        assert_eq!(
            history[c2_first].parent.as_ref(),
            Some(&history[c2_first - 1].id),
            "{name}: the second run goes on from the first run's last checkpoint"
        );
        assert_eq!(history[c2_first - 1].run_id.as_str(), "c1", "{name}");
        // Each run numbers its own events from 0.
        for run in ["c1", "c2"] {
            let stored = continuous_events(&store, run).await;
            assert!(!stored.is_empty(), "{name}: {run} has events");
            assert!(
                stored.iter().all(|e| e.run_id.as_str() == run),
                "{name}: only {run}'s events"
            );
        }
        // The second run's log holds what changed, not the conversation:
        // its first event names the first run's last checkpoint, and that
        // state with the log's changes is every step's state, to the end.
        let c2 = continuous_events(&store, "c2").await;
        let EventPayload::RunStarted { state, from, .. } = &c2[0].payload else {
            panic!("{name}: c2 starts with {:?}", c2[0].payload);
        };
        assert_eq!(
            (state, from),
            (&None, &Some(history[c2_first - 1].id.clone())),
            "{name}"
        );
        let base = store
            .checkpoint(&t, from.as_ref().unwrap().as_str())
            .await
            .unwrap()
            .unwrap();
        let mut rebuilt = c2[0]
            .payload
            .start_state(base.state.as_object())
            .unwrap()
            .unwrap();
        let mut steps = 0;
        for event in &c2 {
            if let Some(changed) = event.payload.apply_step(&mut rebuilt) {
                changed.unwrap();
                steps += 1;
            }
            if let EventPayload::RunFinished { output, .. } = &event.payload {
                assert_eq!(output, &None, "{name}: the end does not repeat the state");
            }
        }
        assert!(steps > 0, "{name}");
        assert_eq!(
            Some(&rebuilt),
            latest.state.as_object(),
            "{name}: rebuilt from changes"
        );
        let first_run = continuous_events(&store, "c1").await;
        assert!(
            matches!(
                &first_run[0].payload,
                EventPayload::RunStarted {
                    state: Some(_),
                    from: None,
                    ..
                }
            ),
            "{name}: a new thread's first run holds its (small) start state whole"
        );
        let threads = store.threads().await.unwrap();
        assert_eq!(threads.len(), 1, "{name}");
        assert_eq!(threads[0].runs, 2, "{name}");
        assert_eq!(
            threads[0].latest,
            CheckpointSummary::from(&latest),
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_fork_through_durable_branches_off_and_keeps_the_old_history() {
    for store in stores().await {
        let name = store.name;
        let (durable, sink) = durable_ahead(&store);
        let t = ThreadId::from("fork");
        durable
            .start(compile(chain()), t.clone(), RunId::from("orig"), json!({}))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        let original = store.history(&t).await.unwrap();
        let orig_last = store.latest(&t).await.unwrap().unwrap();
        let before_b = original
            .iter()
            .find(|c| c.next.first().map(NodeId::as_str) == Some("b"))
            .unwrap()
            .clone();

        let mut edits = Map::new();
        edits.insert("log".into(), json!(["edited"]));
        let output = durable
            .run_from(&t, before_b.id.as_str(), edits, RunId::from("branch"))
            .await
            .unwrap()
            .execute()
            .await
            .unwrap();
        assert_eq!(output.state["log"], json!(["edited", "b", "c"]), "{name}");
        sink.flush().await.unwrap();

        let after = store.history(&t).await.unwrap();
        assert_eq!(after[..original.len()], original[..], "{name}");
        assert!(after.len() > original.len(), "{name}");
        assert_eq!(
            store.checkpoint(&t, orig_last.id.as_str()).await.unwrap(),
            Some(orig_last.clone()),
            "{name}: the old branch's end is as it was"
        );
        let latest = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(latest.run_id.as_str(), "branch", "{name}");
        let line = ancestry(&after, &latest.id);
        let chosen = line.iter().position(|id| *id == before_b.id.as_str());
        let chosen = chosen.unwrap_or_else(|| panic!("{name}: the branch hangs off {line:?}"));
        assert!(
            line[..chosen].iter().all(|id| id.starts_with("branch/")),
            "{name}: {line:?}"
        );
        assert!(
            line[chosen..].iter().all(|id| id.starts_with("orig/")),
            "{name}: {line:?}"
        );
        // The branch's log names the checkpoint it went on from and carries
        // the edit: with that checkpoint's state it rebuilds the branch.
        let branch = continuous_events(&store, "branch").await;
        let base = branch[0].payload.base_checkpoint().cloned();
        assert_eq!(base.as_ref(), Some(&before_b.id), "{name}");
        let base = store
            .checkpoint(&t, before_b.id.as_str())
            .await
            .unwrap()
            .unwrap();
        let mut rebuilt = branch[0]
            .payload
            .start_state(base.state.as_object())
            .unwrap()
            .unwrap();
        assert_eq!(rebuilt["log"], json!(["edited"]), "{name}: the edit");
        for event in &branch {
            if let Some(changed) = event.payload.apply_step(&mut rebuilt) {
                changed.unwrap();
            }
        }
        assert_eq!(Some(&rebuilt), latest.state.as_object(), "{name}");
        for run in ["orig", "branch"] {
            let run_id = RunId::from(run);
            let record = store.run(&run_id).await.unwrap().unwrap();
            assert_eq!(record.status, RunStatus::Finished, "{name}: {run}");
            assert_eq!(record.thread_id, t, "{name}: {run}");
            continuous_events(&store, run).await;
        }
    }
}

// ---- Events ----

#[tokio::test]
async fn events_run_on_without_gaps_through_saves_and_appends() {
    for store in stores().await {
        let name = store.name;
        let r = RunId::from("ev");
        store.create_run(&record("ev", "t")).await.unwrap();
        let c0 = checkpoint("t", "ev", 0, None, RunStatus::Running, 3);
        store.save(&c0, &events("ev", 0..3)).await.unwrap();
        store.append_events(&events("ev", 3..5)).await.unwrap();
        store.append_events(&events("ev", 5..6)).await.unwrap();
        store.append_events(&[]).await.unwrap();
        let c1 = checkpoint("t", "ev", 1, Some(&c0), RunStatus::Running, 6);
        store.save(&c1, &[]).await.unwrap();
        let c2 = checkpoint("t", "ev", 2, Some(&c1), RunStatus::Running, 8);
        store.save(&c2, &events("ev", 6..8)).await.unwrap();
        store.append_events(&events("ev", 8..9)).await.unwrap();
        let c3 = checkpoint("t", "ev", 3, Some(&c2), RunStatus::Finished, 10);
        store.save(&c3, &events("ev", 9..10)).await.unwrap();

        let all = store.events(&r, 0).await.unwrap();
        let expected: Vec<Event> = events("ev", 0..10).iter().map(|e| (**e).clone()).collect();
        assert_eq!(all, expected, "{name}: every event reads back as stored");
        assert_eq!(
            store.events(&r, 5).await.unwrap(),
            expected[5..],
            "{name}: from the middle of a batch"
        );
        assert!(store.events(&r, 10).await.unwrap().is_empty(), "{name}");
        assert!(
            store
                .events(&RunId::from("nobody"), 0)
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
        assert_eq!(store.history(&ThreadId::from("t")).await.unwrap().len(), 4);
    }
}

#[tokio::test]
async fn a_gap_or_a_duplicate_is_refused_and_stores_nothing() {
    for store in stores().await {
        let name = store.name;
        let t = ThreadId::from("t");
        store.create_run(&record("g", "t")).await.unwrap();
        store.create_run(&record("fresh", "t")).await.unwrap();
        let c0 = checkpoint("t", "g", 0, None, RunStatus::Running, 3);
        store.save(&c0, &events("g", 0..3)).await.unwrap();

        let refused: [(&str, Vec<Arc<Event>>); 5] = [
            ("a gap", events("g", 4..6)),
            ("a repeat of the last event", events("g", 2..4)),
            ("a repeat of the whole log", events("g", 0..3)),
            ("a repeat of the first event", events("g", 0..1)),
            (
                "a gap inside the batch",
                [events("g", 3..4), events("g", 5..6)].concat(),
            ),
        ];
        for (what, batch) in &refused {
            assert!(
                store.append_events(batch).await.is_err(),
                "{name}: appending {what} must be refused"
            );
            // A save with such events stores neither them nor the
            // checkpoint, and leaves the run's status as it was.
            let bad = checkpoint("t", "g", 9, Some(&c0), RunStatus::Finished, 9);
            assert!(
                store.save(&bad, batch).await.is_err(),
                "{name}: saving with {what} must be refused"
            );
            assert_eq!(seqs(&store, "g").await, upto(3), "{name}: after {what}");
            assert_eq!(
                store.latest(&t).await.unwrap(),
                Some(c0.clone()),
                "{name}: after {what}"
            );
            assert_eq!(store.checkpoint(&t, "g/9").await.unwrap(), None, "{name}");
            assert_eq!(
                store.run(&RunId::from("g")).await.unwrap().unwrap().status,
                RunStatus::Running,
                "{name}: after {what}"
            );
        }
        // A run's first event is 0.
        assert!(
            store.append_events(&events("fresh", 1..2)).await.is_err(),
            "{name}"
        );
        assert!(seqs(&store, "fresh").await.is_empty(), "{name}");

        // What follows is still taken.
        store.append_events(&events("g", 3..4)).await.unwrap();
        let c1 = checkpoint("t", "g", 1, Some(&c0), RunStatus::Running, 5);
        store.save(&c1, &events("g", 4..5)).await.unwrap();
        assert_eq!(seqs(&store, "g").await, upto(5), "{name}");
        assert_eq!(store.history(&t).await.unwrap().len(), 2, "{name}");
    }
}

#[tokio::test]
async fn a_batch_holds_one_runs_events_and_only_for_a_recorded_run() {
    for store in stores().await {
        let name = store.name;
        store.create_run(&record("a", "t")).await.unwrap();
        store.create_run(&record("b", "t")).await.unwrap();
        let mixed = [events("a", 0..1), events("b", 1..2)].concat();
        assert!(store.append_events(&mixed).await.is_err(), "{name}");
        // A checkpoint's events are its own run's.
        let ca = checkpoint("t", "a", 0, None, RunStatus::Running, 0);
        assert!(store.save(&ca, &events("b", 0..1)).await.is_err(), "{name}");
        assert!(seqs(&store, "a").await.is_empty(), "{name}");
        assert!(seqs(&store, "b").await.is_empty(), "{name}");
        assert_eq!(store.latest(&ThreadId::from("t")).await.unwrap(), None);

        // Nothing is stored for a run that was never recorded.
        assert!(
            store.append_events(&events("ghost", 0..2)).await.is_err(),
            "{name}"
        );
        let ghost = checkpoint("g", "ghost", 0, None, RunStatus::Running, 0);
        assert!(store.save(&ghost, &[]).await.is_err(), "{name}");
        assert!(seqs(&store, "ghost").await.is_empty(), "{name}");
        assert_eq!(store.latest(&ThreadId::from("g")).await.unwrap(), None);
        assert!(store.threads().await.unwrap().is_empty(), "{name}");
    }
}

// ---- Runs and threads ----

#[tokio::test]
async fn run_records_follow_their_checkpoints_and_list_the_unfinished() {
    for store in stores().await {
        let name = store.name;
        // Created in the order of their ids, so creation order and id
        // order (a store's tie-break) agree.
        for run in ["run-a", "run-b", "run-c"] {
            store.create_run(&record(run, "t")).await.unwrap();
        }
        let b = RunId::from("run-b");
        let record_b = record("run-b", "t");
        assert_eq!(
            store.run(&b).await.unwrap(),
            Some(record_b.clone()),
            "{name}: the record reads back, graph and all"
        );
        assert_eq!(store.run(&RunId::from("none")).await.unwrap(), None);
        assert!(
            store.create_run(&record("run-b", "other")).await.is_err(),
            "{name}: a run id is recorded once"
        );
        assert_eq!(
            store.run(&b).await.unwrap(),
            Some(record_b.clone()),
            "{name}: the refused record changed nothing"
        );
        let unfinished = |store: &TestStore| {
            let store = Arc::clone(&store.store);
            async move {
                let runs = store.unfinished().await.unwrap();
                runs.iter()
                    .map(|r| r.run_id.to_string())
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(
            unfinished(&store).await,
            ["run-a", "run-b", "run-c"],
            "{name}"
        );

        let paused = checkpoint("t", "run-b", 0, None, RunStatus::Interrupted, 0);
        store.save(&paused, &[]).await.unwrap();
        assert_eq!(
            store.run(&b).await.unwrap().unwrap().status,
            RunStatus::Interrupted
        );
        assert_eq!(unfinished(&store).await, ["run-a", "run-c"], "{name}");
        let resumed = checkpoint("t", "run-b", 1, Some(&paused), RunStatus::Running, 0);
        store.save(&resumed, &[]).await.unwrap();
        assert_eq!(
            unfinished(&store).await,
            ["run-a", "run-b", "run-c"],
            "{name}"
        );
        for (run, status) in [("run-a", RunStatus::Finished), ("run-c", RunStatus::Failed)] {
            let end = checkpoint("t", run, 0, None, status, 0);
            store.save(&end, &[]).await.unwrap();
            assert_eq!(
                store.run(&RunId::from(run)).await.unwrap().unwrap().status,
                status,
                "{name}"
            );
        }
        assert_eq!(unfinished(&store).await, ["run-b"], "{name}");
        let cancelled = checkpoint("t", "run-b", 2, Some(&resumed), RunStatus::Cancelled, 0);
        store.save(&cancelled, &[]).await.unwrap();
        assert!(unfinished(&store).await.is_empty(), "{name}");
        let record = store.run(&b).await.unwrap().unwrap();
        assert_eq!(record.status, RunStatus::Cancelled, "{name}");
        assert_eq!(record.graph, record_b.graph, "{name}: the graph is kept");
    }
}

#[tokio::test]
async fn threads_are_listed_most_recently_active_first() {
    for store in stores().await {
        let name = store.name;
        assert!(store.threads().await.unwrap().is_empty(), "{name}");
        store.create_run(&record("x1", "x")).await.unwrap();
        store.create_run(&record("y1", "y")).await.unwrap();
        store.create_run(&record("x2", "x")).await.unwrap();
        // A thread with a run but no checkpoint yet is not listed.
        store.create_run(&record("z1", "z")).await.unwrap();
        let x1 = checkpoint("x", "x1", 0, None, RunStatus::Finished, 0);
        let y1 = checkpoint("y", "y1", 0, None, RunStatus::Finished, 0);
        store.save(&x1, &[]).await.unwrap();
        store.save(&y1, &[]).await.unwrap();
        let threads = store.threads().await.unwrap();
        let order: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
        assert_eq!(order, ["y", "x"], "{name}");

        let x2 = checkpoint("x", "x2", 0, Some(&x1), RunStatus::Interrupted, 0);
        store.save(&x2, &[]).await.unwrap();
        let threads = store.threads().await.unwrap();
        let order: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
        assert_eq!(order, ["x", "y"], "{name}");
        assert_eq!(threads[0].latest, CheckpointSummary::from(&x2), "{name}");
        assert_eq!(threads[0].runs, 2, "{name}");
        assert_eq!(threads[1].latest, CheckpointSummary::from(&y1), "{name}");
        assert_eq!(threads[1].runs, 1, "{name}");
    }
}

// ---- Concurrent writers ----

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_two_writers_of_the_same_events_exactly_one_succeeds() {
    for store in stores().await {
        let name = store.name;
        let t = ThreadId::from("race");
        store.create_run(&record("race", "race")).await.unwrap();
        let c0 = checkpoint("race", "race", 0, None, RunStatus::Running, 3);
        store.save(&c0, &events("race", 0..3)).await.unwrap();

        let mut appends = JoinSet::new();
        for _ in 0..8 {
            let store = Arc::clone(&store.store);
            appends.spawn(async move { store.append_events(&events("race", 3..5)).await });
        }
        let results = appends.join_all().await;
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{name}: {results:?}"
        );
        assert_eq!(seqs(&store, "race").await, upto(5), "{name}");

        // Saves of different checkpoints with the same events: one wins,
        // and only its checkpoint is stored.
        let mut saves = JoinSet::new();
        for writer in 0..8u32 {
            let store = Arc::clone(&store.store);
            let mine = checkpoint(
                "race",
                "race",
                10 + writer,
                Some(&c0),
                RunStatus::Running,
                7,
            );
            saves.spawn(async move {
                let result = store.save(&mine, &events("race", 5..7)).await;
                (mine.id, result)
            });
        }
        let results = saves.join_all().await;
        let winners: Vec<&CheckpointId> = results
            .iter()
            .filter(|(_, result)| result.is_ok())
            .map(|(id, _)| id)
            .collect();
        assert_eq!(winners.len(), 1, "{name}: {results:?}");
        let history = store.history(&t).await.unwrap();
        let ids: Vec<&CheckpointId> = history.iter().map(|c| &c.id).collect();
        assert_eq!(ids, [&c0.id, winners[0]], "{name}");
        assert_eq!(seqs(&store, "race").await, upto(7), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_appenders_leave_no_gap_and_no_duplicate() {
    const WRITERS: u64 = 4;
    const EACH: u64 = 8;
    for store in stores().await {
        let name = store.name;
        store.create_run(&record("crowd", "t")).await.unwrap();
        let mut writers = JoinSet::new();
        for _ in 0..WRITERS {
            let store = Arc::clone(&store.store);
            writers.spawn(async move {
                let run = RunId::from("crowd");
                let (mut stored, mut tries) = (0, 0);
                while stored < EACH {
                    tries += 1;
                    assert!(tries < 10_000, "a writer never got its turn");
                    // The next number as this writer sees it; another
                    // writer may take it first.
                    let next = store.events(&run, 0).await.unwrap().len() as u64;
                    if store
                        .append_events(&events("crowd", next..next + 1))
                        .await
                        .is_ok()
                    {
                        stored += 1;
                    }
                }
            });
        }
        writers.join_all().await;
        assert_eq!(seqs(&store, "crowd").await, upto(WRITERS * EACH), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_saves_without_events_are_all_kept() {
    for store in stores().await {
        let name = store.name;
        let mut writers = JoinSet::new();
        for writer in 0..4u32 {
            let run = format!("w{writer}");
            store.create_run(&record(&run, "busy")).await.unwrap();
            let store = Arc::clone(&store.store);
            writers.spawn(async move {
                let mut parent: Option<Checkpoint> = None;
                for n in 0..5 {
                    let c = checkpoint("busy", &run, n, parent.as_ref(), RunStatus::Running, 0);
                    store.save(&c, &[]).await.unwrap();
                    parent = Some(c);
                }
            });
        }
        writers.join_all().await;
        let t = ThreadId::from("busy");
        let history = store.history(&t).await.unwrap();
        assert_eq!(history.len(), 20, "{name}");
        for writer in 0..4 {
            let run = format!("w{writer}");
            let own: Vec<u32> = history
                .iter()
                .filter(|c| c.run_id.as_str() == run)
                .map(|c| c.step)
                .collect();
            assert_eq!(own, [0, 1, 2, 3, 4], "{name}: {run}'s saves in its order");
        }
        let latest = store.latest(&t).await.unwrap().unwrap();
        assert_eq!(
            CheckpointSummary::from(&latest),
            *history.last().unwrap(),
            "{name}: the latest is the last saved"
        );
    }
}

// ---- Databases ----

#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[tokio::test]
async fn a_second_store_on_the_same_database_sees_everything() {
    for store in stores().await {
        let name = store.name;
        store.create_run(&record("kept", "t")).await.unwrap();
        let c0 = checkpoint("t", "kept", 0, None, RunStatus::Interrupted, 2);
        store.save(&c0, &events("kept", 0..2)).await.unwrap();
        store.append_events(&events("kept", 2..3)).await.unwrap();
        // The memory store has no database to open twice.
        let Some(again) = store.reopen().await else {
            continue;
        };
        let t = ThreadId::from("t");
        assert_eq!(again.latest(&t).await.unwrap(), Some(c0.clone()), "{name}");
        assert_eq!(
            again
                .run(&RunId::from("kept"))
                .await
                .unwrap()
                .unwrap()
                .status,
            RunStatus::Interrupted,
            "{name}"
        );
        let stored = again.events(&RunId::from("kept"), 0).await.unwrap();
        assert_eq!(stored.len(), 3, "{name}");
        // Both enforce one log: the first store's next batch is now a
        // repeat for the second.
        again.append_events(&events("kept", 3..4)).await.unwrap();
        assert!(
            store.append_events(&events("kept", 3..4)).await.is_err(),
            "{name}"
        );
        assert_eq!(seqs(&store, "kept").await, upto(4), "{name}");
    }
}
