//! A route renamed in its node's form takes its edges with it: the edges
//! from the node that carried the old name (and the node's `otherwise`,
//! when it named it) carry the new one, in the same undo step. Without
//! this, renaming `other` to `human` would leave an edge on a route the
//! node no longer has, and the run would fail there.
//!
//! A route typed as a new one, on a router or condition whose edges were
//! drawn first, goes to one of its edges that carries none (see
//! [`route_an_open_edge`]): drawing first and naming after is as good as
//! the other way round. And the other way: a route typed on a router's
//! edge that the router does not have yet becomes one of its routes
//! ([`route_edge`]), so an edge drawn from a router with no routes is
//! named where it was drawn, as n8n's Switch asks.

use heddle_engine::NodeId;
use heddle_engine::format::GraphDocument;
use heddle_engine::kinds::BuiltinKind;
use serde_json::Value;

use super::model::route_label;

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
    let mut reached = Vec::new();
    for edge in &mut document.edges {
        if &edge.from == node && edge.route.as_deref() == Some(from) {
            edge.route = Some(to.to_string());
            reached.push(edge.to.clone());
            moved += 1;
        }
    }
    // A node named after the route (made for it: `name_after_its_route`)
    // takes the new name: a typo corrected in the route is
    // corrected on the node too. A name typed otherwise stays.
    let (old_label, new_label) = (route_label(from), route_label(to));
    for spec in &mut document.nodes {
        if reached.contains(&spec.id) && spec.label == old_label && !new_label.is_empty() {
            spec.label = new_label.clone();
        }
    }
    moved
}

/// After route `route` was typed, new, in node `node`'s form: when the
/// node is a router or a condition (every edge from it is routed) and no
/// edge carries the route yet, one of its edges that carries none (nor a
/// condition) takes it, paired as validation's one-click fix pairs them
/// (an edge to a node named like the route first, else the first drawn).
/// The node it leads to keeps its name. Part of the same undo step.
/// Returns whether an edge took it.
pub fn route_an_open_edge(document: &mut GraphDocument, node: &NodeId, route: &str) -> bool {
    let Some(spec) = document.nodes.iter().find(|spec| &spec.id == node) else {
        return false;
    };
    let chooser = matches!(
        BuiltinKind::from_name(&spec.kind),
        Some(BuiltinKind::Router | BuiltinKind::Condition)
    );
    if !chooser || route.is_empty() || declared(&spec.config).filter(|r| *r == route).count() != 1 {
        return false;
    }
    let from_node = || document.edges.iter().filter(|edge| &edge.from == node);
    if from_node().any(|edge| edge.route.as_deref() == Some(route)) {
        return false;
    }
    let carried: Vec<&str> = from_node()
        .filter_map(|edge| edge.route.as_deref())
        .collect();
    let open: Vec<usize> = document
        .edges
        .iter()
        .enumerate()
        .filter(|(_, edge)| &edge.from == node && edge.route.is_none() && edge.condition.is_none())
        .map(|(at, _)| at)
        .collect();
    let targets: Vec<&str> = open
        .iter()
        .map(|&at| {
            let to = &document.edges[at].to;
            document
                .nodes
                .iter()
                .find(|spec| &spec.id == to)
                .map_or(to.as_str(), |spec| spec.name())
        })
        .collect();
    let Some(&(_, paired)) =
        heddle_engine::validate::pair_routes(&[route], &carried, &targets).first()
    else {
        return false;
    };
    document.edges[open[paired]].route = Some(route.to_string());
    true
}

/// Gives edge `edge` route `route` (none: always taken). When its source
/// is a router that has no such route, the route is added to the
/// router's routes, in the caller's one change. The node the edge leads
/// to keeps its name.
pub fn route_edge(
    document: &mut GraphDocument,
    edge: &heddle_engine::EdgeId,
    route: Option<String>,
) {
    let Some(found) = document.edges.iter_mut().find(|e| &e.id == edge) else {
        return;
    };
    found.route = route.clone();
    let from = found.from.clone();
    let Some(route) = route else {
        return;
    };
    let Some(source) = document
        .nodes
        .iter_mut()
        .find(|node| node.id == from && node.kind == BuiltinKind::Router.name())
    else {
        return;
    };
    if declared(&source.config).any(|declared| declared == route) {
        return;
    }
    if !source.config.is_object() {
        source.config = Value::Object(serde_json::Map::new());
    }
    let Some(config) = source.config.as_object_mut() else {
        return;
    };
    let routes = config
        .entry("routes")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !routes.is_array() {
        *routes = Value::Array(Vec::new());
    }
    if let Some(routes) = routes.as_array_mut() {
        routes.push(serde_json::json!({ "route": route }));
    }
}

#[cfg(test)]
mod tests {
    use super::{follow_route_rename, route_an_open_edge, route_edge};
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
    fn a_node_named_after_a_renamed_route_takes_the_new_name_and_a_typed_name_stays() {
        let mut document = graph(&["billing", "payments"], "other");
        document.nodes[2].label = "Billing".into();
        document.nodes[3].label = "Anything else".into();
        document.nodes[0].config["routes"] = json!([{"route": "payments"}, {"route": "others"}]);
        follow_route_rename(&mut document, &"triage".into(), "billing", "payments");
        assert_eq!(document.nodes[2].label, "Payments");
        follow_route_rename(&mut document, &"triage".into(), "other", "others");
        assert_eq!(document.nodes[3].label, "Anything else");
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

    /// A router wired first, to three unnamed llms and one named "Tech
    /// desk", its routes typed after.
    fn wired_first(kind: &str) -> GraphDocument {
        serde_json::from_value(json!({
            "format_version": 1,
            "name": "wired first",
            "nodes": [
                {"id": "triage", "kind": kind, "config": {"routes": []}},
                {"id": "llm_1", "kind": "llm"},
                {"id": "llm_2", "kind": "llm", "label": "Tech desk"},
                {"id": "llm_3", "kind": "llm"}
            ],
            "edges": [
                {"id": "e1", "from": "triage", "to": "llm_1"},
                {"id": "e2", "from": "triage", "to": "llm_2"},
                {"id": "e3", "from": "triage", "to": "llm_3"}
            ]
        }))
        .expect("a graph")
    }

    fn declare(document: &mut GraphDocument, route: &str) {
        let routes = document.nodes[0].config["routes"]
            .as_array_mut()
            .expect("routes");
        routes.push(json!({"route": route}));
    }

    #[test]
    fn a_route_typed_after_its_edges_goes_to_one_that_carries_none() {
        let mut document = wired_first("router");
        let triage = "triage".into();
        declare(&mut document, "billing");
        assert!(route_an_open_edge(&mut document, &triage, "billing"));
        assert_eq!(routes(&document), [Some("billing"), None, None]);
        // The node it leads to keeps its name: it was not made for it.
        assert_eq!(document.nodes[1].label, "");
        // A route named like a node goes to the edge into it, not the next
        // in order; that node keeps its own name.
        declare(&mut document, "tech");
        assert!(route_an_open_edge(&mut document, &triage, "tech"));
        assert_eq!(routes(&document), [Some("billing"), Some("tech"), None]);
        assert_eq!(document.nodes[2].label, "Tech desk");
        declare(&mut document, "other");
        assert!(route_an_open_edge(&mut document, &triage, "other"));
        // Every edge carries a route: a fourth has nowhere to go.
        declare(&mut document, "refunds");
        let before = document.clone();
        assert!(!route_an_open_edge(&mut document, &triage, "refunds"));
        assert_eq!(document, before);
    }

    #[test]
    fn a_route_carried_already_declared_twice_or_on_another_kind_moves_nothing() {
        let triage = "triage".into();
        // Carried already.
        let mut document = wired_first("router");
        declare(&mut document, "billing");
        document.edges[2].route = Some("billing".into());
        let before = document.clone();
        assert!(!route_an_open_edge(&mut document, &triage, "billing"));
        assert_eq!(document, before);
        // Declared twice.
        let mut document = wired_first("router");
        declare(&mut document, "billing");
        declare(&mut document, "billing");
        let before = document.clone();
        assert!(!route_an_open_edge(&mut document, &triage, "billing"));
        assert_eq!(document, before);
        // Not declared (the write did not land), or empty.
        let mut document = wired_first("router");
        assert!(!route_an_open_edge(&mut document, &triage, "billing"));
        assert!(!route_an_open_edge(&mut document, &triage, ""));
        // An agent's unrouted edge is its way on, not a handoff's.
        let mut document = wired_first("agent");
        declare(&mut document, "billing");
        let before = document.clone();
        assert!(!route_an_open_edge(&mut document, &triage, "billing"));
        assert_eq!(document, before);
        // A condition's edges are all routed, as a router's.
        let mut document = wired_first("condition");
        declare(&mut document, "yes");
        assert!(route_an_open_edge(&mut document, &triage, "yes"));
    }
    #[test]
    fn a_route_typed_on_a_routers_edge_becomes_one_of_its_routes() {
        // A router with no routes yet, an edge drawn from it to an
        // unnamed llm.
        let mut document: GraphDocument = serde_json::from_value(json!({
            "format_version": 1, "name": "drawn first",
            "nodes": [
                {"id": "triage", "kind": "router"},
                {"id": "llm_1", "kind": "llm"},
                {"id": "check", "kind": "condition", "config": {"routes": []}},
                {"id": "llm_2", "kind": "llm"}
            ],
            "edges": [
                {"id": "e1", "from": "triage", "to": "llm_1"},
                {"id": "e2", "from": "check", "to": "llm_2"}
            ]
        }))
        .expect("a graph");
        route_edge(&mut document, &"e1".into(), Some("tech_support".into()));
        assert_eq!(routes(&document), [Some("tech_support"), None]);
        assert_eq!(
            document.nodes[0].config["routes"],
            json!([{"route": "tech_support"}])
        );
        // The node it leads to keeps its name.
        assert_eq!(document.nodes[1].label, "");
        // A route it has already is not added twice; none clears the edge.
        route_edge(&mut document, &"e1".into(), Some("tech_support".into()));
        assert_eq!(
            document.nodes[0].config["routes"],
            json!([{"route": "tech_support"}])
        );
        route_edge(&mut document, &"e1".into(), None);
        assert_eq!(routes(&document), [None, None]);
        // A condition's routes need their conditions: its edge takes the
        // name, its routes are left to its form.
        route_edge(&mut document, &"e2".into(), Some("big".into()));
        assert_eq!(routes(&document), [None, Some("big")]);
        assert_eq!(document.nodes[2].config["routes"], json!([]));
        // An edge that is not there changes nothing.
        let before = document.clone();
        route_edge(&mut document, &"nope".into(), Some("x".into()));
        assert_eq!(document, before);
    }
}
