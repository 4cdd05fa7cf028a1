//! Deleting a node from the middle of a chain joins its neighbours (as n8n
//! does): `a → b → c` with `b` deleted is `a → c`, not two pieces with a
//! gap a person must wire again. The same holds for a run of nodes
//! deleted together (`a → b → c → d` less `b` and `c`). Only a plain
//! passage is joined: one edge in and one edge out of what is deleted, the
//! way out carrying no route nor condition (a router's branches have no
//! single successor); the way in keeps its route or condition (it is the
//! predecessor's choice). A plain function over the document, tested on
//! the host.

use std::collections::BTreeSet;

use heddle_engine::format::EdgeSpec;
use heddle_engine::{GraphDocument, NodeId};

use super::model::new_edge_id;

/// The edge that joins what is left when `nodes` are deleted, if they are
/// a passage in a chain (see the module's doc). It is not in the document
/// yet: the caller adds it once the nodes and their edges are gone.
pub fn joining_edge(document: &GraphDocument, nodes: &BTreeSet<NodeId>) -> Option<EdgeSpec> {
    if nodes.is_empty() {
        return None;
    }
    let mut ways_in = document
        .edges
        .iter()
        .filter(|e| nodes.contains(&e.to) && !nodes.contains(&e.from));
    let mut ways_out = document
        .edges
        .iter()
        .filter(|e| nodes.contains(&e.from) && !nodes.contains(&e.to));
    let (Some(way_in), None) = (ways_in.next(), ways_in.next()) else {
        return None;
    };
    let (Some(way_out), None) = (ways_out.next(), ways_out.next()) else {
        return None;
    };
    let plain = way_out.route.is_none() && way_out.condition.is_none();
    // A fan-out inside sends its items out of the passage too: no single
    // way out.
    let sends_out = document.nodes.iter().any(|node| {
        nodes.contains(&node.id)
            && node
                .config
                .get("to")
                .and_then(|to| to.as_str())
                .is_some_and(|to| !nodes.iter().any(|id| id.as_str() == to))
    });
    let joined_already = document
        .edges
        .iter()
        .any(|e| e.from == way_in.from && e.to == way_out.to);
    if !plain || sends_out || joined_already || way_in.from == way_out.to {
        return None;
    }
    Some(EdgeSpec {
        id: new_edge_id(document),
        from: way_in.from.clone(),
        to: way_out.to.clone(),
        condition: way_in.condition.clone(),
        route: way_in.route.clone(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use heddle_engine::{GraphDocument, NodeId};
    use serde_json::json;

    use super::joining_edge;

    fn chain(edges: serde_json::Value) -> GraphDocument {
        serde_json::from_value(json!({
            "format_version": 2, "name": "chain",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "router", "kind": "router"},
                {"id": "a", "kind": "llm"},
                {"id": "b", "kind": "llm"},
                {"id": "fan", "kind": "fan_out", "config": {"to": "b"}},
                {"id": "end", "kind": "end"}
            ],
            "edges": edges
        }))
        .expect("a document")
    }

    fn deleting(ids: &[&str]) -> BTreeSet<NodeId> {
        ids.iter().map(|id| NodeId::from(*id)).collect()
    }

    fn ends(
        edge: Option<heddle_engine::format::EdgeSpec>,
    ) -> Option<(String, String, Option<String>)> {
        edge.map(|e| (e.from.to_string(), e.to.to_string(), e.route))
    }

    #[test]
    fn a_node_in_the_middle_of_a_chain_leaves_its_neighbours_joined() {
        let document = chain(json!([
            {"id": "e1", "from": "start", "to": "router"},
            {"id": "e2", "from": "router", "to": "a", "route": "billing"},
            {"id": "e3", "from": "a", "to": "b"},
            {"id": "e4", "from": "b", "to": "end"}
        ]));
        // One node: its way in keeps the router's route.
        assert_eq!(
            ends(joining_edge(&document, &deleting(&["a"]))),
            Some(("router".into(), "b".into(), Some("billing".into())))
        );
        // A run of nodes deleted together.
        assert_eq!(
            ends(joining_edge(&document, &deleting(&["a", "b"]))),
            Some(("router".into(), "end".into(), Some("billing".into())))
        );
        let joined = joining_edge(&document, &deleting(&["b"])).expect("joined");
        assert!(document.edges.iter().all(|e| e.id != joined.id));
    }

    #[test]
    fn branches_ends_and_edges_already_there_are_not_joined() {
        let document = chain(json!([
            {"id": "e1", "from": "start", "to": "router"},
            {"id": "e2", "from": "router", "to": "a", "route": "billing"},
            {"id": "e3", "from": "router", "to": "b", "route": "other"},
            {"id": "e4", "from": "a", "to": "end"},
            {"id": "e5", "from": "b", "to": "end"},
            {"id": "e6", "from": "start", "to": "end"}
        ]));
        // The router's ways out are branches.
        assert_eq!(joining_edge(&document, &deleting(&["router"])), None);
        // Nothing comes after the end.
        assert_eq!(joining_edge(&document, &deleting(&["end"])), None);
        // start → end is there already.
        assert_eq!(
            joining_edge(&document, &deleting(&["router", "a", "b"])),
            None
        );
        assert_eq!(joining_edge(&document, &deleting(&[])), None);
    }

    #[test]
    fn a_fan_out_that_sends_beyond_what_is_deleted_is_not_a_passage() {
        let document = chain(json!([
            {"id": "e1", "from": "start", "to": "fan"},
            {"id": "e2", "from": "fan", "to": "a"},
            {"id": "e3", "from": "a", "to": "end"}
        ]));
        assert_eq!(joining_edge(&document, &deleting(&["fan"])), None);
        assert_eq!(
            ends(joining_edge(&document, &deleting(&["a"]))),
            Some(("fan".into(), "end".into(), None))
        );
    }
}
