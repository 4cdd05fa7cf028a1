//! A route renamed in its node's form takes its edges with it: the edges
//! from the node that carried the old name (and the node's `otherwise`,
//! when it named it) carry the new one, in the same undo step. Without
//! this, renaming `other` to `human` would leave an edge on a route the
//! node no longer has, and the run would fail there.

use heddle_engine::NodeId;
use heddle_engine::format::GraphDocument;
use serde_json::Value;

/// Routes the node's config declares: every `<list>[i].route` at its top
/// level (a router's or condition's routes, an agent's handoffs).
fn declared(config: &Value) -> impl Iterator<Item = &str> {
    config
        .as_object()
        .into_iter()
        .flat_map(|object| object.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|item| item.get("route").and_then(Value::as_str))
}

/// After node `node`'s route `from` was renamed `to` in its config: moves
/// its edges and its `otherwise` from the old name to the new. Nothing
/// moves when the change was not a rename (either name empty, the old
/// still declared, the new declared twice). Returns how many edges moved.
pub fn follow_route_rename(
    document: &mut GraphDocument,
    node: &NodeId,
    from: &str,
    to: &str,
) -> usize {
    if from.is_empty() || to.is_empty() || from == to {
        return 0;
    }
    let Some(spec) = document.nodes.iter_mut().find(|spec| &spec.id == node) else {
        return 0;
    };
    let still = declared(&spec.config).any(|route| route == from);
    let new = declared(&spec.config).filter(|route| *route == to).count();
    if still || new != 1 {
        return 0;
    }
    if let Some(config) = spec.config.as_object_mut()
        && config.get("otherwise").and_then(Value::as_str) == Some(from)
    {
        config.insert("otherwise".to_string(), Value::String(to.to_string()));
    }
    let mut moved = 0;
    for edge in &mut document.edges {
        if &edge.from == node && edge.route.as_deref() == Some(from) {
            edge.route = Some(to.to_string());
            moved += 1;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::follow_route_rename;
    use heddle_engine::format::GraphDocument;
    use serde_json::json;

    fn graph(routes: &[&str], otherwise: &str) -> GraphDocument {
        let routes: Vec<_> = routes.iter().map(|r| json!({"route": r})).collect();
        serde_json::from_value(json!({
            "format_version": 1,
            "name": "triage",
            "nodes": [
                {"id": "triage", "kind": "router", "config": {"routes": routes, "otherwise": otherwise}},
                {"id": "other_router", "kind": "router", "config": {"routes": [{"route": "other"}]}},
                {"id": "a", "kind": "end"}, {"id": "b", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "triage", "to": "a", "route": "billing"},
                {"id": "e2", "from": "triage", "to": "b", "route": "other"},
                {"id": "e3", "from": "other_router", "to": "b", "route": "other"}
            ]
        }))
        .expect("a graph")
    }

    fn routes(document: &GraphDocument) -> Vec<Option<&str>> {
        document.edges.iter().map(|e| e.route.as_deref()).collect()
    }

    #[test]
    fn a_renamed_route_takes_its_edges_and_otherwise_along() {
        let mut document = graph(&["billing", "human"], "other");
        assert_eq!(
            follow_route_rename(&mut document, &"triage".into(), "other", "human"),
            1
        );
        assert_eq!(
            routes(&document),
            [Some("billing"), Some("human"), Some("other")]
        );
        assert_eq!(document.nodes[0].config["otherwise"], json!("human"));
    }

    #[test]
    fn what_is_not_a_rename_moves_nothing() {
        for (routes_now, from, to) in [
            // The old name is still a route (a second was added).
            (&["billing", "other", "human"][..], "other", "human"),
            // The new name is now declared twice.
            (&["billing", "billing"][..], "other", "billing"),
            // Cleared, not renamed.
            (&["billing", ""][..], "other", ""),
        ] {
            let mut document = graph(routes_now, "other");
            let before = document.clone();
            assert_eq!(
                follow_route_rename(&mut document, &"triage".into(), from, to),
                0
            );
            assert_eq!(document, before, "{routes_now:?} {from} → {to}");
        }
    }
}
