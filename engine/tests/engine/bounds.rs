//! Property tests of bounded values: values of any shape and depth (far
//! past what a stack or a JSON parser takes) given to a run as its input,
//! built by a script, or written by a node. The run never panics; a value
//! within the limits runs, one past them fails saying where; and every
//! event of the run, written as stored and read back as stored, reads.

use heddle_engine::run::{Event, RunError};
use heddle_engine::state::{ValueLimits, drop_flat, from_stored_json};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::{compile, run};

/// A value `levels.len()` containers deep along one spine (an array or an
/// object per level, each with a few scalar siblings), built without
/// recursion so it can be deeper than any stack.
fn spine(levels: &[(bool, u8)]) -> Value {
    let mut value = json!("leaf");
    for (i, &(array, siblings)) in levels.iter().enumerate() {
        value = if array {
            let mut items: Vec<Value> = (0..siblings).map(|n| json!(n)).collect();
            items.push(value);
            Value::Array(items)
        } else {
            let mut fields = serde_json::Map::new();
            for n in 0..siblings {
                fields.insert(format!("s{n}"), json!(format!("text {i}")));
            }
            fields.insert("next".into(), value);
            Value::Object(fields)
        };
    }
    value
}

fn levels(most: usize) -> impl Strategy<Value = Vec<(bool, u8)>> {
    proptest::collection::vec((any::<bool>(), 0u8..3), 0..most)
}

/// Every event as the stores write it, and read back as they read it.
fn stored_and_read_back(events: &[Event]) {
    let text = serde_json::to_string(events).expect("events serialise");
    let read: Vec<Event> = from_stored_json(&text).expect("stored events read back");
    assert_eq!(read.len(), events.len());
}

fn any_channel() -> std::sync::Arc<heddle_engine::CompiledGraph> {
    compile(json!({
        "state": {"channels": {"x": {"type": "any"}}},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}]
    }))
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_input_runs_or_is_refused_where_it_crosses_the_limit(levels in levels(400)) {
        let value = spine(&levels);
        let depth = ValueLimits::depth(&value, usize::MAX);
        prop_assert_eq!(depth, levels.len());
        let graph = any_channel();
        let (result, events) = block_on(run(&graph, json!({"x": value})));
        if depth <= 64 {
            prop_assert!(result.is_ok(), "{:?}", result.err());
        } else {
            match result {
                Err(RunError::BadInput { message }) => prop_assert!(
                    message.starts_with("input.x: the value nests deeper than 64 levels (at $"),
                    "{}", message
                ),
                other => prop_assert!(false, "a value {} deep: {:?}", depth, other.err()),
            }
        }
        stored_and_read_back(&events);
    }

    #[test]
    fn any_value_a_script_builds_is_taken_or_refused(levels in levels(300)) {
        // The script nests `[m]` or `#{ a: m }` per level, as the levels say.
        let steps: String = levels
            .iter()
            .map(|&(array, _)| if array { "m = [m];" } else { "m = #{ a: m };" })
            .collect();
        let graph = compile(json!({
            "state": {"channels": {"x": {"type": "any"}}},
            "nodes": [{"id": "start", "kind": "start"},
                      {"id": "build", "kind": "script", "config": {
                          "source": format!("let m = 1; {steps} #{{ x: m }}"),
                          "max_operations": 10_000_000, "timeout_ms": 30_000}},
                      {"id": "end", "kind": "end"}],
            "edges": [{"id": "e1", "from": "start", "to": "build"}, {"id": "e2", "from": "build", "to": "end"}]
        }));
        let (result, events) = block_on(run(&graph, json!({})));
        // The result map is one level more than the value it holds.
        if levels.len() < 64 {
            let output = result.expect("a value within the limit");
            let stored = ValueLimits::depth(&output.state["x"], usize::MAX);
            prop_assert_eq!(stored, levels.len());
        } else {
            let error = result.expect_err("a value past the limit").to_string();
            prop_assert!(error.contains("nests deeper than 64 levels"), "{}", error);
        }
        stored_and_read_back(&events);
    }
}

/// At the limit exactly: a channel value 64 deep runs, 65 does not (the
/// input object around it does not count, as on the server).
#[tokio::test]
async fn an_input_value_64_deep_runs_and_65_is_refused() {
    let graph = any_channel();
    let deep = |depth: usize| spine(&vec![(false, 0); depth]);
    let (result, _) = run(&graph, json!({"x": deep(64)})).await;
    assert!(result.is_ok(), "{:?}", result.err());
    let (result, _) = run(&graph, json!({"x": deep(65)})).await;
    assert!(
        matches!(result, Err(RunError::BadInput { .. })),
        "{result:?}"
    );
}

/// Far past any stack: a million levels, checked and dropped flat.
#[test]
fn a_million_levels_are_checked_without_a_stack_to_match() {
    // Built by moving each level into the next (`json!` would copy it).
    let mut value = json!(null);
    for _ in 0..1_000_000 {
        let mut fields = serde_json::Map::new();
        fields.insert("a".into(), value);
        value = Value::Object(fields);
    }
    assert!(ValueLimits::default().check(&value).is_err());
    drop_flat(value);
}
