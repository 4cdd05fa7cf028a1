//! The event stream: complete, gapless, ordered; slow subscribers are told
//! what they missed and can read it back.

use std::sync::Arc;

use heddle_engine::RunId;
use heddle_engine::run::{Event, EventPayload, Run, RunOptions};
use serde_json::json;

use crate::support::{channels, compile};

fn chain(emits: u32) -> Arc<heddle_engine::CompiledGraph> {
    compile(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "talk", "kind": "emit", "config": {"count": emits}},
            {"id": "end", "kind": "end"}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "talk"}, {"id": "e2", "from": "talk", "to": "end"}]
    }))
}

#[tokio::test]
async fn events_are_numbered_without_gaps_and_bracketed_by_the_run() {
    let run = Run::new(chain(3), RunId::from("r"), json!({}), RunOptions::default());
    let log = run.log().unwrap();
    run.execute().await.unwrap();
    let events = log.since(0);
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.seq, i as u64);
        assert_eq!(event.run_id.as_str(), "r");
    }
    assert!(events.windows(2).all(|w| w[0].at_us <= w[1].at_us));
    assert!(matches!(
        events.first().unwrap().payload,
        EventPayload::RunStarted { .. }
    ));
    assert!(matches!(
        events.last().unwrap().payload,
        EventPayload::RunFinished { steps: 3, .. }
    ));
    let tokens: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Custom {
                node, name, data, ..
            } if name == "token" => {
                assert_eq!(node.as_str(), "talk");
                Some(data["text"].as_str().unwrap().to_string())
            }
            _ => None,
        })
        .collect();
    assert_eq!(tokens, ["t0", "t1", "t2"]);
    assert_eq!(log.since(events.len() as u64 - 2).len(), 2);
}

#[tokio::test]
async fn a_subscriber_sees_the_same_events_as_the_log() {
    let run = Run::new(chain(5), RunId::from("r"), json!({}), RunOptions::default());
    let log = run.log().unwrap();
    let mut subscription = run.subscribe();
    let reader = tokio::spawn(async move {
        let mut seen: Vec<Arc<Event>> = Vec::new();
        while let Some(event) = subscription.recv().await.unwrap() {
            seen.push(event);
        }
        seen
    });
    run.execute().await.unwrap();
    let seen = reader.await.unwrap();
    assert_eq!(seen, log.since(0));
}

#[tokio::test]
async fn a_slow_subscriber_is_told_what_it_missed_and_catches_up_from_the_log() {
    let options = RunOptions {
        event_capacity: 4,
        ..RunOptions::default()
    };
    let run = Run::new(chain(50), RunId::from("r"), json!({}), options);
    let log = run.log().unwrap();
    let mut subscription = run.subscribe();
    // The subscriber reads nothing until the run is over: it must lag.
    run.execute().await.unwrap();

    let mut rebuilt: Vec<Arc<Event>> = Vec::new();
    let mut lagged = 0;
    loop {
        match subscription.recv().await {
            Ok(Some(event)) => rebuilt.push(event),
            Ok(None) => break,
            Err(gap) => {
                lagged += 1;
                assert_eq!(gap.from_seq, rebuilt.len() as u64);
                let missed = log.since(gap.from_seq);
                rebuilt.extend(missed.into_iter().take(gap.missed as usize));
            }
        }
    }
    assert!(lagged >= 1);
    assert_eq!(rebuilt, log.since(0), "nothing lost, nothing twice");
}

#[tokio::test]
async fn events_serialize_with_a_type_tag() {
    let run = Run::new(chain(1), RunId::from("r"), json!({}), RunOptions::default());
    let log = run.log().unwrap();
    run.execute().await.unwrap();
    let events = log.since(0);
    let edge = events
        .iter()
        .find(|e| matches!(e.payload, EventPayload::EdgeTaken { .. }))
        .unwrap();
    let value = serde_json::to_value(&**edge).unwrap();
    assert_eq!(value["type"], "edge_taken");
    assert_eq!(value["reason"], "static");
    assert_eq!(value["from"], "start");
    assert_eq!(value["run_id"], "r");
    let back: Event = serde_json::from_value(value).unwrap();
    assert_eq!(&back, &**edge);
}

#[tokio::test]
async fn without_a_log_nothing_is_kept() {
    let options = RunOptions {
        keep_log: false,
        ..RunOptions::default()
    };
    let run = Run::new(chain(1), RunId::from("r"), json!({}), options);
    assert!(run.log().is_none());
    run.execute().await.unwrap();
}
