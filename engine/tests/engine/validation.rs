//! Validation reports every problem at once, each located.

use heddle_engine::validate::{ProblemKind, Report, Severity};
use serde_json::{Value, json};

use crate::support::{channels, document, registry};

fn report(value: Value) -> Report {
    heddle_engine::validate(&document(value), &registry())
}

fn find<'a>(report: &'a Report, path: &str) -> &'a heddle_engine::validate::Problem {
    report
        .problems
        .iter()
        .find(|problem| problem.path == path)
        .unwrap_or_else(|| panic!("no problem at {path}; got:\n{report}"))
}

#[test]
fn a_valid_graph_has_no_problems() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end"}]
    }));
    assert!(report.problems.is_empty(), "{report}");
}

#[test]
fn every_problem_is_reported_at_once_with_its_path() {
    let report = report(json!({
        "state": {"channels": {
            "name": {"type": "string", "reducer": "sum"},
            "items": {"type": "list", "reducer": "append", "default": "nope"}
        }},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "start", "kind": "set"},
            {"id": "mystery", "kind": "teleport"},
            {"id": "branch", "kind": "condition", "config": {"routes": [{"route": "yes", "when": "x >"}]}},
            {"id": "writer", "kind": "set", "config": {"values": {"nowhere": {"value": 1}}}},
            {"id": "future", "kind": "set", "version": 9},
            {"id": "picky", "kind": "condition", "config": {"routes": [{"route": "a", "when": "true"}], "otherwise": "b"}},
            {"id": "badcfg", "kind": "set", "config": {"valuez": {}}}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "ghost"},
            {"id": "e1", "from": "start", "to": "writer", "condition": "count >= "},
            {"id": "e3", "from": "picky", "to": "writer", "route": "a"},
            {"id": "e4", "from": "picky", "to": "writer", "route": "nope"},
            {"id": "e5", "from": "start", "to": "writer", "route": "x"}
        ],
        "entry": "start"
    }));
    let expect = [
        ("state.channels.name.reducer", "ReducerMismatch"),
        ("state.channels.items.default", "BadDefault"),
        ("nodes[1].id", "DuplicateId"),
        ("nodes[2].kind", "UnknownKind"),
        ("nodes[3].config.routes[0].when", "BadConfig"),
        ("nodes[4].config.values.nowhere", "BadConfig"),
        ("nodes[5].version", "NewerKindVersion"),
        ("nodes[6].config", "RouteWithoutEdge"),
        ("nodes[7].config.valuez", "BadConfig"),
        ("edges[0].to", "MissingNode"),
        ("edges[1].id", "DuplicateId"),
        ("edges[1].condition", "BadCondition"),
        ("edges[3].route", "UnknownRoute"),
        ("edges[4].route", "UnknownRoute"),
    ];
    for (path, kind) in expect {
        let problem = find(&report, path);
        assert!(
            format!("{:?}", problem.kind).starts_with(kind),
            "{path}: {problem}"
        );
        assert_eq!(problem.severity, Severity::Error, "{path}");
    }
    // Problems name their node or edge.
    assert_eq!(
        find(&report, "nodes[2].kind")
            .node
            .as_ref()
            .unwrap()
            .as_str(),
        "mystery"
    );
    assert_eq!(
        find(&report, "edges[0].to").edge.as_ref().unwrap().as_str(),
        "e1"
    );
    assert!(
        find(&report, "nodes[4].config.values.nowhere")
            .message
            .contains("`nowhere` is not a channel")
    );
    assert!(
        find(&report, "nodes[7].config.valuez")
            .message
            .contains("unknown field `valuez`")
    );
    // The entry is the first `start`; its duplicate is not taken for it.
    assert!(
        report
            .problems
            .iter()
            .all(|p| p.path != "nodes[0]" || p.severity == Severity::Warning)
    );
    assert!(
        !report
            .problems
            .iter()
            .any(|p| p.path == "nodes[0]" && matches!(p.kind, ProblemKind::Unreachable { .. }))
    );
    assert!(
        find(&report, "nodes[6].config")
            .message
            .contains("route `b` of node `picky` has no edge")
    );
    assert!(
        find(&report, "edges[3].route")
            .message
            .contains("its routes: a, b")
    );
    assert!(
        find(&report, "edges[4].route")
            .message
            .contains("it chooses no routes")
    );
}

#[test]
fn an_entry_is_required_unless_there_is_one_start() {
    let no_start = report(json!({"nodes": [{"id": "a", "kind": "set"}]}));
    assert!(matches!(
        find(&no_start, "entry").kind,
        ProblemKind::NoEntry
    ));
    let missing = report(json!({"nodes": [{"id": "a", "kind": "set"}], "entry": "b"}));
    assert!(matches!(
        find(&missing, "entry").kind,
        ProblemKind::MissingEntry { .. }
    ));
    let implied = report(json!({"nodes": [{"id": "s", "kind": "start"}]}));
    assert!(!implied.has_errors(), "{implied}");
}

#[test]
fn unreachable_and_endless_nodes_are_warnings() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [
            {"id": "start", "kind": "start"},
            {"id": "a", "kind": "set"},
            {"id": "b", "kind": "set"},
            {"id": "island", "kind": "set"}
        ],
        "edges": [
            {"id": "e1", "from": "start", "to": "a"},
            {"id": "e2", "from": "a", "to": "b"},
            {"id": "e3", "from": "b", "to": "a"}
        ]
    }));
    assert!(!report.has_errors(), "{report}");
    let island = find(&report, "nodes[3]");
    assert!(matches!(island.kind, ProblemKind::Unreachable { .. }));
    assert_eq!(island.severity, Severity::Warning);
    for path in ["nodes[0]", "nodes[1]", "nodes[2]"] {
        assert!(
            matches!(find(&report, path).kind, ProblemKind::CannotReachEnd { .. }),
            "{path}"
        );
    }
}

#[test]
fn conditions_reading_unknown_channels_are_warned_about() {
    let report = report(json!({
        "state": {"channels": channels()},
        "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
        "edges": [{"id": "e", "from": "start", "to": "end", "condition": "cuont > 1"}]
    }));
    let problem = find(&report, "edges[0].condition");
    assert_eq!(problem.severity, Severity::Warning);
    assert!(problem.message.contains("`cuont`"));
}

#[test]
fn bad_retry_and_timeout_settings_are_errors() {
    let report = report(json!({
        "nodes": [{"id": "s", "kind": "start", "timeout_ms": 0,
                   "retry": {"max_attempts": 0, "backoff_factor": 0.5, "initial_interval_ms": 10, "max_interval_ms": 5}}]
    }));
    for path in [
        "nodes[0].timeout_ms",
        "nodes[0].retry.max_attempts",
        "nodes[0].retry.backoff_factor",
        "nodes[0].retry.max_interval_ms",
    ] {
        assert!(
            matches!(find(&report, path).kind, ProblemKind::BadSetting { .. }),
            "{path}"
        );
    }
}

#[test]
fn problems_serialize_with_a_code_for_the_editor() {
    let report = report(json!({"nodes": [{"id": "x", "kind": "nope"}], "entry": "x"}));
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(value["problems"][0]["kind"]["code"], "unknown_kind");
    assert_eq!(value["problems"][0]["path"], "nodes[0].kind");
    assert_eq!(value["problems"][0]["node"], "x");
}
