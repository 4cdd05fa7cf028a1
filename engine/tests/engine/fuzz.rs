//! Property tests: no input, however odd, makes parsing, validation,
//! expression evaluation or a run panic.

use heddle_engine::expr::Expr;
use heddle_engine::{GraphDocument, Registry};
use proptest::prelude::*;
use serde_json::{Value, json};

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z_]{0,8}".prop_map(Value::from),
        Just(json!(2)),
        Just(json!("start")),
        Just(json!("set")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("format_version".to_string()),
                    Just("name".to_string()),
                    Just("nodes".to_string()),
                    Just("edges".to_string()),
                    Just("state".to_string()),
                    Just("id".to_string()),
                    Just("kind".to_string()),
                    Just("config".to_string()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Documents that parse, with random nodes, edges and conditions, so the
/// deeper checks and the executor are exercised too.
fn arbitrary_graph() -> impl Strategy<Value = Value> {
    let kinds = prop_oneof![
        Just("start"),
        Just("end"),
        Just("set"),
        Just("condition"),
        Just("join"),
        Just("fan_out"),
        Just("bogus")
    ];
    let node = (0u8..6, kinds, "[a-z0-9 +<>=()._|&!\"']{0,16}");
    let edge = (
        0u8..7,
        0u8..7,
        proptest::option::of("[a-z0-9 +<>=()._]{0,12}"),
        proptest::option::of("[a-c]"),
    );
    (proptest::collection::vec(node, 0..7), proptest::collection::vec(edge, 0..10), 1u32..20).prop_map(
        |(nodes, edges, max_steps)| {
            let nodes: Vec<Value> = nodes
                .into_iter()
                .map(|(id, kind, text)| {
                    let config = match kind {
                        "set" => json!({"values": {"n": {"expr": text}}}),
                        "condition" => json!({"routes": [{"route": "a", "when": text}], "otherwise": "b"}),
                        "fan_out" => json!({"over": text, "to": format!("n{}", id % 3)}),
                        _ => json!({}),
                    };
                    json!({"id": format!("n{id}"), "kind": kind, "config": config})
                })
                .collect();
            let edges: Vec<Value> = edges
                .into_iter()
                .enumerate()
                .map(|(i, (from, to, condition, route))| {
                    json!({"id": format!("e{i}"), "from": format!("n{from}"), "to": format!("n{to}"),
                           "condition": condition, "route": route})
                })
                .collect();
            json!({
                "format_version": 2, "name": "fuzz",
                "state": {"channels": {"n": {"type": "any"}, "list": {"type": "list", "reducer": "append"}}},
                "nodes": nodes, "edges": edges, "entry": "n0", "limits": {"max_steps": max_steps}
            })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parsing_and_validating_arbitrary_json_never_panics(value in arbitrary_json()) {
        if let Ok(document) = GraphDocument::from_value(value.clone()) {
            let _ = heddle_engine::validate(&document, &Registry::new());
        }
        let _ = GraphDocument::from_json(&value.to_string());
    }

    #[test]
    fn arbitrary_text_never_panics_the_parser(text in "\\PC{0,64}") {
        let _ = GraphDocument::from_json(&text);
        let _ = Expr::parse(&text);
    }

    #[test]
    fn expressions_never_panic(text in "[a-z0-9 +*/%<>=!()\\[\\]._,\"'&|-]{0,40}") {
        if let Ok(expr) = Expr::parse(&text) {
            let state = json!({"a": 1, "b": [1, 2, "x"], "c": {"d": null}, "s": "text", "z": 0});
            let _ = expr.eval(&|name| state.get(name).cloned());
        }
    }

    #[test]
    fn arbitrary_graphs_validate_and_run_without_panicking(value in arbitrary_graph()) {
        let document = GraphDocument::from_value(value).unwrap();
        let registry = Registry::new();
        let report = heddle_engine::validate(&document, &registry);
        if let Ok(graph) = heddle_engine::compile(&document, &registry) {
            prop_assert!(!report.has_errors());
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let run = heddle_engine::run::Run::new(
                std::sync::Arc::new(graph),
                heddle_engine::RunId::from("fuzz"),
                json!({"n": 3, "list": [1, 2]}),
                heddle_engine::run::RunOptions::default(),
            );
            let _ = runtime.block_on(run.execute());
        }
    }
}

#[test]
fn deep_and_long_expressions_are_refused_not_overflowed() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(Expr::parse(&deep).is_err());
    let nested_not = "!".repeat(3000) + "true";
    assert!(Expr::parse(&nested_not).is_err());
    let long_chain = vec!["a"; 1500].join("+");
    let error = Expr::parse(&long_chain).unwrap_err();
    assert!(error.message.contains("operations"), "{error}");
    let fields = format!("a{}", ".b".repeat(1000));
    assert!(Expr::parse(&fields).is_err());
}
