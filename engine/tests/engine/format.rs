//! The document format: round trips, stable output, versions, schema.

use heddle_engine::{FORMAT_VERSION, FormatError, GraphDocument};
use serde_json::json;

use crate::support::document;

fn sample() -> GraphDocument {
    document(json!({
        "name": "Support triage",
        "description": "Routes a ticket.",
        "state": {"channels": {
            "ticket": {"type": "string", "description": "The ticket text"},
            "count": {"type": "integer", "reducer": "sum", "default": 0}
        }},
        "nodes": [
            {"id": "start", "kind": "start", "position": {"x": 0.0, "y": 0.0}},
            {"id": "bump", "kind": "set", "label": "Count", "config": {"values": {"count": {"expr": "1"}}},
             "retry": {"max_attempts": 3}, "timeout_ms": 1000}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "bump", "condition": "len(ticket) > 0"}],
        "entry": "start",
        "limits": {"max_steps": 20}
    }))
}

#[test]
fn a_document_round_trips_exactly() {
    let original = sample();
    let text = original.to_json();
    let again = GraphDocument::from_json(&text).unwrap();
    assert_eq!(again, original);
    assert_eq!(again.to_json(), text, "two exports are byte-identical");
}

#[test]
fn keys_are_written_in_sorted_order_whatever_the_input_order() {
    let text = sample().to_json();
    let reordered: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Re-read from a value whose keys were inserted in another order.
    let mut object = serde_json::Map::new();
    for (key, value) in reordered.as_object().unwrap().iter().rev() {
        object.insert(key.clone(), value.clone());
    }
    let again = GraphDocument::from_value(serde_json::Value::Object(object)).unwrap();
    assert_eq!(again.to_json(), text);
    let keys: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("  \""))
        .map(|line| line.trim().split('"').nth(1).unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted);
}

#[test]
fn empty_optional_fields_are_left_out() {
    let text = GraphDocument::new("empty").to_json();
    assert!(!text.contains("description"));
    assert!(!text.contains("entry"));
    assert!(text.contains("\"max_steps\": 100"));
}

#[test]
fn a_groups_colour_round_trips_and_one_not_known_reads_as_the_default() {
    use heddle_engine::format::GroupColor;
    let mut graph = sample();
    graph.groups.push(heddle_engine::format::Group {
        id: "group-1".into(),
        label: "Counting".into(),
        nodes: vec!["bump".into()],
        collapsed: false,
        color: GroupColor::Green,
    });
    let text = graph.to_json();
    assert!(text.contains("\"color\": \"green\""), "{text}");
    assert_eq!(GraphDocument::from_json(&text).unwrap(), graph);
    // The default is left out; a colour from a newer Heddle (or nonsense)
    // is read as the default, never a reason to refuse the graph.
    for odd in [json!("ultraviolet"), json!(7), json!({"r": 1})] {
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value["groups"][0]["color"] = odd;
        let read = GraphDocument::from_value(value).unwrap();
        assert_eq!(read.groups[0].color, GroupColor::Indigo);
        assert!(!read.to_json().contains("\"color\""));
    }
}

#[test]
fn older_documents_are_migrated_and_newer_refused() {
    let old = r#"{"format_version": 1, "name": "from issue 2", "description": "", "nodes": [], "edges": []}"#;
    let document = GraphDocument::from_json(old).unwrap();
    assert_eq!(document.format_version, FORMAT_VERSION);
    assert_eq!(document.name, "from issue 2");

    let newer = format!(
        r#"{{"format_version": {}, "name": "x"}}"#,
        FORMAT_VERSION + 1
    );
    let error = GraphDocument::from_json(&newer).unwrap_err();
    assert!(matches!(error, FormatError::NewerVersion { .. }));
    assert!(
        error
            .to_string()
            .contains("newer than this Heddle understands")
    );
}

#[test]
fn shape_errors_name_the_path() {
    let text = r#"{"format_version": 2, "name": "x", "nodes": [{"id": "a", "kind": "set"}, {"kind": "set"}]}"#;
    let error = GraphDocument::from_json(text).unwrap_err();
    match error {
        FormatError::Shape { path, message } => {
            assert_eq!(path, "nodes[1]");
            assert!(message.contains("missing field `id`"), "{message}");
        }
        other => panic!("expected a shape error, got {other:?}"),
    }
    let error =
        GraphDocument::from_json(r#"{"format_version": 2, "name": "x", "nodez": []}"#).unwrap_err();
    assert!(
        error.to_string().contains("unknown field `nodez`"),
        "{error}"
    );
}

#[test]
fn the_shipped_json_schema_is_up_to_date() {
    let schema = serde_json::to_string_pretty(&GraphDocument::json_schema()).unwrap() + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/graph.schema.json");
    if std::env::var_os("HEDDLE_UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &schema).unwrap();
    }
    let shipped = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        shipped == schema,
        "docs/graph.schema.json is stale: rerun with HEDDLE_UPDATE_SCHEMA=1 cargo test -p heddle-engine"
    );
    let value: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(value["title"], "GraphDocument");
    assert!(value["$defs"]["NodeSpec"].is_object());
}

#[test]
fn every_builtin_kind_has_a_config_schema() {
    for kind in heddle_engine::kinds::BuiltinKind::ALL {
        let schema = kind.config_schema();
        assert_eq!(schema["type"], "object", "{}", kind.name());
    }
}

#[tokio::test]
async fn the_example_in_the_format_docs_runs() {
    let docs = include_str!("../../../docs/graph-format.md");
    let start = docs.find("```json\n").unwrap() + "```json\n".len();
    let end = start + docs[start..].find("```").unwrap();
    let graph =
        heddle_engine::CompiledGraph::from_json(&docs[start..end], &heddle_engine::Registry::new())
            .unwrap();
    assert!(graph.warnings().problems.is_empty(), "{}", graph.warnings());
    let (result, _) = crate::support::run(&std::sync::Arc::new(graph), json!({})).await;
    assert_eq!(result.unwrap().state["count"], 3);
}

#[test]
fn a_save_is_described_by_what_it_changed() {
    use heddle_engine::format::{changes, summary};
    let before = crate::support::document(json!({
        "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
        "nodes": [
            {"id": "start", "kind": "start", "position": {"x": 0.0, "y": 0.0}},
            {"id": "agent", "kind": "agent", "config": {"system": "Be brief."}, "position": {"x": 240.0, "y": 0.0}},
            {"id": "old", "kind": "end"}
        ],
        "edges": [{"id": "e1", "from": "start", "to": "agent"}, {"id": "e2", "from": "agent", "to": "old"}]
    }));
    let mut after = before.clone();
    after.nodes[1].config = json!({"system": "Be kind.", "tools": ["calculator"]});
    after.nodes[0].position = Some(heddle_engine::format::Position { x: 10.0, y: 0.0 });
    after.nodes.retain(|node| node.id.as_str() != "old");
    after.edges.retain(|edge| edge.id.as_str() != "e2");
    let mut end: heddle_engine::format::NodeSpec =
        serde_json::from_value(json!({"id": "end", "kind": "end"})).unwrap();
    end.label = "Done".into();
    after.nodes.push(end);
    after
        .edges
        .push(serde_json::from_value(json!({"id": "e3", "from": "agent", "to": "end"})).unwrap());
    after.description = "Answers.".into();
    let found: Vec<String> = changes(&before, &after)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "edited the description",
            "edited the system prompt and the tools of `agent`",
            "added node `end`",
            "removed node `old`",
            "moved a node",
            "connected `agent` → `end`",
            "removed the edge `agent` → `old`",
        ]
    );
    assert_eq!(
        summary(&changes(&before, &after)),
        "edited the description, edited the system prompt and the tools of `agent`, added node `end` and 4 more"
    );
    assert!(changes(&before, &before).is_empty());
}
