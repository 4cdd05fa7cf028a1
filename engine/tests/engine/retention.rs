//! Retention (`CheckpointStore::prune`) on the database stores: a prune
//! keeps a thread's newest checkpoints, every pause, every fork point,
//! each run's last checkpoint and every pinned one, and each of them reads
//! back exactly as it was saved; the thread goes on after it, also from a
//! process whose base was pruned meanwhile; a graph's own retention
//! overrides the server's; and the events of a run that ended long ago
//! are compacted to its first and last, numbers unchanged, its end holding
//! what the run changed.

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;
use std::sync::Arc;

use heddle_engine::format::Retention;
use heddle_engine::run::{
    Checkpoint, CheckpointPin, CheckpointStore, Event, EventPayload, Pruned, RunStatus,
};
use heddle_engine::{CheckpointId, NodeId, RunId, ThreadId};
use serde_json::json;

use crate::stored_changes::{checkpoint, record};
use crate::stores::stores;

fn keep(checkpoints: u32) -> Retention {
    Retention {
        keep_checkpoints: NonZeroU32::new(checkpoints),
        keep_events_days: None,
    }
}

const DAY_US: u64 = 86_400_000_000;

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

async fn prune(store: &dyn CheckpointStore, policy: Retention, now: u64) -> Pruned {
    let seen = std::sync::Mutex::new(Vec::new());
    let total = store
        .prune(policy, now, 0, &|pruned| seen.lock().unwrap().push(pruned))
        .await
        .unwrap();
    let seen = seen.into_inner().unwrap();
    let mut sum = Pruned::default();
    for step in &seen {
        assert!(!step.what.is_empty());
        sum.add(step);
    }
    assert_eq!(sum, total, "progress adds up to the total");
    total
}

/// Saves checkpoints `from..to` of `run` on thread `t`, the first the child
/// of `parent`, with `status` on the one at `paused` (if any).
async fn turn(
    store: &dyn CheckpointStore,
    run: &str,
    from: usize,
    to: usize,
    parent: Option<&Checkpoint>,
    paused: Option<usize>,
) -> Vec<Checkpoint> {
    store.create_run(&record(run, "t")).await.unwrap();
    let mut saved: Vec<Checkpoint> = Vec::new();
    for n in from..to {
        let mut next = checkpoint("t", run, n, saved.last().or(parent));
        next.created_at_us = now_us();
        if Some(n) == paused {
            next.status = RunStatus::Interrupted;
        }
        if n + 1 == to {
            next.status = RunStatus::Finished;
        }
        store.save(&next, &[]).await.unwrap();
        saved.push(next);
    }
    saved
}

#[tokio::test]
async fn a_prune_keeps_what_the_thread_needs_each_as_it_was() {
    for store in stores().await {
        let name = store.name;
        if store.location.is_none() {
            continue;
        }
        let t = ThreadId::from("t");
        // Three turns of a conversation, the second paused once; a fork
        // from the middle of the first; a pinned checkpoint.
        let one = turn(&**store, "one", 0, 30, None, None).await;
        let two = turn(&**store, "two", 30, 60, one.last(), Some(40)).await;
        let fork = turn(&**store, "fork", 100, 110, Some(&one[10]), None).await;
        let three = turn(&**store, "three", 60, 90, two.last(), None).await;
        let pin = CheckpointPin {
            kind: "experiment".into(),
            id: "e1".into(),
            thread: t.clone(),
            checkpoint: one[20].id.clone(),
        };
        store.pin(&pin).await.unwrap();
        store.pin(&pin).await.unwrap();
        let missing = CheckpointPin {
            checkpoint: CheckpointId::from("nowhere/1"),
            ..pin.clone()
        };
        assert!(store.pin(&missing).await.is_err(), "{name}");

        let all: Vec<&Checkpoint> = one.iter().chain(&two).chain(&fork).chain(&three).collect();
        let pruned = prune(&**store, keep(5), now_us()).await;
        let expected: BTreeSet<String> = [
            // The newest five.
            "three/85", "three/86", "three/87", "three/88", "three/89",
            // Each run's last.
            "one/29", "two/59", "fork/109", // The pause, the fork point, the pin.
            "two/40", "one/10", "one/20",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let mut kept = BTreeSet::new();
        for saved in &all {
            if let Some(read) = store.checkpoint(&t, saved.id.as_str()).await.unwrap() {
                assert_eq!(&read, *saved, "{name}: {} reads back as saved", saved.id);
                kept.insert(saved.id.to_string());
            }
        }
        // Snapshots the chains began since are kept too: all that is kept
        // beyond the expected are snapshots.
        assert!(kept.is_superset(&expected), "{name}: {kept:?}");
        assert_eq!(
            pruned.checkpoints as usize,
            all.len() - kept.len(),
            "{name}: {pruned:?}"
        );
        assert!(kept.len() < 25, "{name}: {} kept", kept.len());
        assert_eq!(pruned.threads, 1, "{name}");
        assert_eq!(
            store.latest(&t).await.unwrap().as_ref(),
            three.last(),
            "{name}"
        );
        let history: Vec<String> = store
            .history(&t)
            .await
            .unwrap()
            .into_iter()
            .map(|summary| summary.id.to_string())
            .collect();
        assert_eq!(
            history.iter().cloned().collect::<BTreeSet<_>>(),
            kept,
            "{name}: the history lists what is kept"
        );

        // The thread goes on, from its newest and from a kept old one.
        let four = turn(&**store, "four", 90, 95, three.last(), None).await;
        let again = turn(&**store, "again", 200, 203, Some(&one[20]), None).await;
        for saved in four.iter().chain(&again) {
            let read = store.checkpoint(&t, saved.id.as_str()).await.unwrap();
            assert_eq!(read.as_ref(), Some(saved), "{name}");
        }

        // Pruned again: nothing the first kept and still needs goes (the
        // unpinned checkpoint is where `again` began).
        assert_eq!(store.unpin("experiment", "e1").await.unwrap(), 1, "{name}");
        prune(&**store, keep(5), now_us()).await;
        assert_eq!(
            store.checkpoint(&t, "one/20").await.unwrap().as_ref(),
            Some(&one[20]),
            "{name}: the fork point of `again` stays"
        );
        for id in [
            "two/40",
            "one/10",
            "one/29",
            "three/89",
            "four/94",
            "again/202",
        ] {
            assert!(
                store.checkpoint(&t, id).await.unwrap().is_some(),
                "{name}: {id}"
            );
        }
    }
}

#[tokio::test]
async fn a_process_whose_base_was_pruned_writes_its_next_checkpoint_whole() {
    for store in stores().await {
        let name = store.name;
        let Some(other) = store.reopen().await else {
            continue;
        };
        let t = ThreadId::from("t");
        store.create_run(&record("r", "t")).await.unwrap();
        // This process writes the first two (its base for the next is the
        // second); the other goes on and prunes, removing that base.
        let first = checkpoint("t", "r", 0, None);
        store.save(&first, &[]).await.unwrap();
        let mut last = checkpoint("t", "r", 1, Some(&first));
        store.save(&last, &[]).await.unwrap();
        for n in 2..6 {
            let next = checkpoint("t", "r", n, Some(&last));
            other.save(&next, &[]).await.unwrap();
            last = next;
        }
        let pruned = prune(&*other, keep(1), now_us()).await;
        assert!(
            other.checkpoint(&t, "r/1").await.unwrap().is_none(),
            "{name}: {pruned:?}"
        );
        assert_eq!(
            other.checkpoint(&t, "r/5").await.unwrap().as_ref(),
            Some(&last),
            "{name}"
        );
        let next = checkpoint("t", "r", 6, Some(&last));
        store.save(&next, &[]).await.unwrap();
        assert_eq!(
            store.latest(&t).await.unwrap(),
            Some(next.clone()),
            "{name}"
        );
        assert_eq!(
            other.checkpoint(&t, "r/6").await.unwrap(),
            Some(next.clone()),
            "{name}"
        );
        let after = checkpoint("t", "r", 7, Some(&next));
        store.save(&after, &[]).await.unwrap();
        assert_eq!(other.latest(&t).await.unwrap(), Some(after), "{name}");
    }
}

#[tokio::test]
async fn a_graph_keeps_more_than_the_server_says_when_it_says_so() {
    for store in stores().await {
        let name = store.name;
        if store.location.is_none() {
            continue;
        }
        let mut run = record("r", "t");
        run.graph = json!({
            "format_version": 2, "name": "keeps all",
            "retention": {"keep_checkpoints": 1000, "keep_events_days": 365}
        })
        .to_string();
        store.create_run(&run).await.unwrap();
        let mut last: Option<Checkpoint> = None;
        for n in 0..20 {
            let mut next = checkpoint("t", "r", n, last.as_ref());
            next.created_at_us = now_us();
            if n == 19 {
                next.status = RunStatus::Finished;
            }
            store
                .append_events(&[token(&run.run_id, n as u64)])
                .await
                .unwrap();
            store.save(&next, &[]).await.unwrap();
            last = Some(next);
        }
        let policy = Retention {
            keep_checkpoints: NonZeroU32::new(1),
            keep_events_days: Some(1),
        };
        let pruned = prune(&**store, policy, now_us() + 30 * DAY_US).await;
        assert_eq!(pruned, Pruned::default(), "{name}");
        assert_eq!(store.history(&ThreadId::from("t")).await.unwrap().len(), 20);
        assert_eq!(store.events(&run.run_id, 0).await.unwrap().len(), 20);
    }
}

fn token(run: &RunId, seq: u64) -> Arc<Event> {
    Arc::new(Event {
        run_id: run.clone(),
        seq,
        at_us: 1_700_000_000_000_000 + seq,
        path: Vec::new(),
        payload: EventPayload::Custom {
            node: NodeId::from("chat"),
            instance: None,
            name: "token".into(),
            data: json!({"text": format!("word{seq} ")}),
        },
    })
}

#[tokio::test]
async fn the_events_of_a_run_that_ended_long_ago_are_compacted_to_its_outcome() {
    for store in stores().await {
        let name = store.name;
        if store.location.is_none() {
            continue;
        }
        let mut events: BTreeMap<&str, Vec<Event>> = BTreeMap::new();
        let mut finals = BTreeMap::new();
        for (run, status) in [
            ("ended", RunStatus::Finished),
            ("going", RunStatus::Running),
        ] {
            let thread = format!("t-{run}");
            store.create_run(&record(run, &thread)).await.unwrap();
            let run_id = RunId::from(run);
            let started = Arc::new(Event {
                run_id: run_id.clone(),
                seq: 0,
                at_us: 1_700_000_000_000_000,
                path: Vec::new(),
                payload: EventPayload::RunStarted {
                    graph: "g".into(),
                    input: json!({"count": 0}),
                    state: Some(json!({"count": 0})),
                    from: None,
                    changes: Default::default(),
                },
            });
            store.append_events(&[started]).await.unwrap();
            for seq in 1..11 {
                store.append_events(&[token(&run_id, seq)]).await.unwrap();
            }
            let end = match status {
                // As logs since changes end: no final state in the event.
                RunStatus::Finished => EventPayload::RunFinished {
                    output: None,
                    steps: 1,
                    changes: Default::default(),
                },
                _ => EventPayload::StepStarted {
                    step: 1,
                    tasks: Vec::new(),
                },
            };
            let end = Arc::new(Event {
                run_id: run_id.clone(),
                seq: 11,
                at_us: 1_700_000_000_000_011,
                path: Vec::new(),
                payload: end,
            });
            store.append_events(&[end]).await.unwrap();
            let mut last = checkpoint(&thread, run, 0, None);
            last.status = status;
            last.created_at_us = now_us();
            store.save(&last, &[]).await.unwrap();
            finals.insert(run, last.state.clone());
            events.insert(run, store.events(&run_id, 0).await.unwrap());
        }
        let days = |keep_events_days| Retention {
            keep_checkpoints: None,
            keep_events_days,
        };
        // Not old enough yet; then no policy; then old enough.
        assert_eq!(
            prune(&**store, days(Some(3)), now_us() + DAY_US).await,
            Pruned::default(),
            "{name}"
        );
        assert_eq!(
            prune(&**store, days(None), now_us() + 300 * DAY_US).await,
            Pruned::default(),
            "{name}"
        );
        let pruned = prune(&**store, days(Some(3)), now_us() + 4 * DAY_US).await;
        assert_eq!((pruned.runs, pruned.events), (1, 10), "{name}: {pruned:?}");
        let ended = store.events(&RunId::from("ended"), 0).await.unwrap();
        let before = &events["ended"];
        // Its end holds what the run changed: the log still ends in its
        // final state (the last checkpoint's).
        assert_eq!(ended.len(), 2, "{name}");
        assert_eq!(ended[0], before[0], "{name}");
        assert_eq!(
            (ended[1].seq, ended[1].at_us),
            (11, before[11].at_us),
            "{name}"
        );
        let mut state = ended[0].payload.start_state(None).unwrap().unwrap();
        ended[1].payload.apply_step(&mut state).unwrap().unwrap();
        assert_eq!(serde_json::Value::Object(state), finals["ended"], "{name}");
        assert_eq!(
            store.events(&RunId::from("going"), 0).await.unwrap(),
            events["going"],
            "{name}: a run still going keeps its log"
        );
        // Once is enough.
        assert_eq!(
            prune(&**store, days(Some(3)), now_us() + 4 * DAY_US).await,
            Pruned::default(),
            "{name}"
        );
    }
}
