//! Cancelling a run stops its in-flight nodes at once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use heddle_engine::RunId;
use heddle_engine::run::{EventPayload, Run, RunError, RunOptions};
use serde_json::json;

use crate::support::{HANG_DROPPED, HANG_STARTED, channels, compile};

#[tokio::test]
async fn cancel_drops_in_flight_nodes_and_ends_cancelled() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "stuck", "kind": "hang"},
            {"id": "quick", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "stuck"}, {"id": "e2", "from": "start", "to": "quick"}]
    }));
    let run = Run::new(
        Arc::clone(&graph),
        RunId::from("c"),
        json!({}),
        RunOptions::default(),
    );
    let cancel = run.cancel_handle();
    let log = run.log().unwrap();
    let task = tokio::spawn(run.execute());
    while !HANG_STARTED.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the run stops promptly")
        .unwrap();
    assert_eq!(result.unwrap_err(), RunError::Cancelled { step: 1 });
    assert!(
        HANG_DROPPED.load(Ordering::SeqCst),
        "the hanging node's future was dropped"
    );
    let events = log.since(0);
    assert!(matches!(
        events.last().unwrap().payload,
        EventPayload::RunCancelled { step: 1 }
    ));
    assert!(cancel.is_cancelled());
}

#[tokio::test]
async fn a_run_cancelled_before_it_starts_runs_nothing() {
    let graph = compile(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}]
    }));
    let run = Run::new(graph, RunId::from("c2"), json!({}), RunOptions::default());
    run.cancel_handle().cancel();
    let log = run.log().unwrap();
    assert_eq!(
        run.execute().await.unwrap_err(),
        RunError::Cancelled { step: 0 }
    );
    assert!(
        !log.since(0)
            .iter()
            .any(|e| matches!(e.payload, EventPayload::NodeStarted { .. }))
    );
}
