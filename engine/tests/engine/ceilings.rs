//! A runner's ceilings: graphs may be stricter, never looser, and a run
//! stopped by one fails naming it.

use std::sync::Arc;
use std::time::Duration;

use heddle_engine::run::{ActiveTime, EventPayload, Run, RunError, RunOptions};
use heddle_engine::{Ceilings, CompiledGraph, RunId};
use serde_json::{Value, json};

use crate::support::{channels, document, registry};

fn compile_under(value: Value, ceilings: Ceilings) -> Arc<CompiledGraph> {
    let registry = registry().with_ceilings(ceilings);
    match heddle_engine::compile(&document(value), &registry) {
        Ok(graph) => Arc::new(graph),
        Err(report) => panic!("graph does not compile:\n{report}"),
    }
}

fn ping_pong(max_steps: u32) -> Value {
    json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "ping", "kind": "set", "config": {"values": {"count": {"value": 1}}}},
            {"id": "pong", "kind": "set", "config": {"values": {"count": {"value": 1}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ping"},
            {"id": "e2", "from": "ping", "to": "pong"},
            {"id": "e3", "from": "pong", "to": "ping"}
        ],
        "limits": {"max_steps": max_steps}
    })
}

async fn execute(graph: &Arc<CompiledGraph>, options: RunOptions) -> (RunError, String) {
    let run = Run::new(Arc::clone(graph), RunId::from("r"), json!({}), options);
    let log = run.log().expect("log");
    let error = run.execute().await.expect_err("the run stops");
    let events = log.since(0);
    let stored = match &events.last().expect("events").payload {
        EventPayload::RunFailed { error, .. } => error.clone(),
        other => panic!("the log ends with {other:?}"),
    };
    (error, stored)
}

#[tokio::test]
async fn a_step_ceiling_below_the_graphs_limit_stops_the_run_naming_the_ceiling() {
    let ceilings = Ceilings {
        max_steps: Some(10),
        ..Ceilings::default()
    };
    let graph = compile_under(ping_pong(500), ceilings);
    let (error, stored) = execute(&graph, RunOptions::default()).await;
    match &error {
        RunError::Ceiling { ceiling, step, .. } => {
            assert_eq!(*ceiling, "max_steps_per_run");
            assert_eq!(*step, 10);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(stored.contains("`max_steps_per_run`"), "{stored}");
    assert!(stored.contains("the graph asks for 500"), "{stored}");
    assert!(stored.contains("`ping`, `pong`"), "{stored}");
}

#[tokio::test]
async fn a_graph_stricter_than_the_ceiling_keeps_its_own_limit() {
    let ceilings = Ceilings {
        max_steps: Some(100),
        ..Ceilings::default()
    };
    let graph = compile_under(ping_pong(7), ceilings);
    let (error, _) = execute(&graph, RunOptions::default()).await;
    assert!(
        matches!(error, RunError::StepLimit { limit: 7, .. }),
        "{error:?}"
    );
}

fn fan_out(max_items: Option<usize>) -> Value {
    let mut spread = json!({"over": "numbers", "to": "square"});
    if let Some(max) = max_items {
        spread["max_items"] = json!(max);
    }
    json!({
        "state": {"channels": {
            "numbers": {"type": "list", "reducer": "replace"},
            "squares": {"type": "list", "reducer": "append"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "make", "kind": "set", "config": {"values": {"numbers": {"value": [1, 2, 3, 4, 5]}}}},
            {"id": "spread", "kind": "fan_out", "config": spread},
            {"id": "square", "kind": "set", "config": {"values": {"squares": {"expr": "item * item"}}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "make"},
            {"id": "e2", "from": "make", "to": "spread"}
        ]
    })
}

#[tokio::test]
async fn a_fan_out_past_the_ceiling_fails_naming_it_and_a_stricter_node_keeps_its_own() {
    let graph = compile_under(fan_out(None), ceilings_of(3));
    let (_, stored) = execute(&graph, RunOptions::default()).await;
    assert!(
        stored.contains("5 items is more than the server's ceiling `max_fan_out_items` (3)"),
        "{stored}"
    );
    let graph = compile_under(fan_out(Some(2)), ceilings_of(3));
    let (_, stored) = execute(&graph, RunOptions::default()).await;
    assert!(
        stored.contains("5 items is more than this node's max_items (2)"),
        "{stored}"
    );
    // Under the ceiling, it runs.
    let graph = compile_under(fan_out(None), ceilings_of(10));
    let run = Run::new(graph, RunId::from("r"), json!({}), RunOptions::default());
    let output = run.execute().await.expect("runs");
    assert_eq!(output.state["squares"], json!([1, 4, 9, 16, 25]));
}

fn ceilings_of(items: usize) -> Ceilings {
    Ceilings {
        max_fan_out_items: Some(items),
        ..Ceilings::default()
    }
}

fn waits_forever() -> Value {
    json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "nap", "kind": "wait", "config": {"ms": 60000}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "nap"},
            {"id": "e2", "from": "nap", "to": "nap"}
        ],
        "limits": {"max_steps": 1000}
    })
}

#[tokio::test(start_paused = true)]
async fn a_run_active_past_its_time_fails_mid_step_naming_the_ceiling() {
    let graph = compile_under(waits_forever(), Ceilings::default());
    let started = tokio::time::Instant::now();
    let options = RunOptions {
        max_active: Some(ActiveTime {
            total: Duration::from_secs(300),
            used: Duration::from_secs(100),
        }),
        ..RunOptions::default()
    };
    let (error, stored) = execute(&graph, options).await;
    // The time used before counts: 200 s were left, so it stops in the
    // fourth wait (steps 1 to 3 waited 180 s), not at a step's end.
    assert_eq!(started.elapsed(), Duration::from_secs(200));
    match error {
        RunError::Ceiling { ceiling, step, .. } => {
            assert_eq!(ceiling, "max_run_active_secs");
            assert_eq!(step, 4);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(stored.contains("may be active for 300 s"), "{stored}");
}

#[tokio::test]
async fn the_ceilings_hold_inside_an_embedded_subgraph() {
    let mut child = fan_out(None);
    child["format_version"] = json!(2);
    child["name"] = json!("child");
    let document = json!({
        "state": {"channels": {"squares": {"type": "list", "reducer": "replace"}}},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "inner", "kind": "subgraph",
             "config": {"graph": child, "outputs": {"squares": "squares"}}}
        ],
        "edges": [{"id": "e", "from": "start", "to": "inner"}]
    });
    let graph = compile_under(document, ceilings_of(3));
    let (_, stored) = execute(&graph, RunOptions::default()).await;
    assert!(
        stored.contains("the server's ceiling `max_fan_out_items` (3)"),
        "{stored}"
    );
}
