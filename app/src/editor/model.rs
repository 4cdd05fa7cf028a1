//! The editor's rules, as plain functions over a [`GraphDocument`]: new
//! ids, which connections are allowed (and why not), removing, copying
//! and pasting a selection, the undo history, and the Mermaid export.
//! No signals here, so all of it is tested on the host.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use heddle_engine::format::{Channel, EdgeSpec, Group, NodeSpec, Position};
use heddle_engine::kinds::BuiltinKind;
use heddle_engine::{EdgeId, GraphDocument, NodeId, Registry};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A node's box on the canvas, in world units.
pub const NODE_WIDTH: f64 = 180.0;
pub const NODE_HEIGHT: f64 = 56.0;

/// A sticky note's box on the canvas (`.sticky-note` in the style, its
/// text at its least height).
pub const NOTE_SIZE: (f64, f64) = (200.0, 120.0);

/// A fresh node id for `kind`: `llm`, then `llm_2`, `llm_3`, ...
pub fn new_node_id(document: &GraphDocument, kind: &str) -> NodeId {
    document.fresh_node_id(kind)
}

/// A fresh edge id: `e1`, `e2`, ...
pub fn new_edge_id(document: &GraphDocument) -> EdgeId {
    document.fresh_edge_id()
}

/// The config a new node of `kind` starts with: what it needs to make
/// sense. A model's system prompt is not among it: an empty field shows an
/// example as its placeholder, so what a person types is all there is.
pub fn starting_config(kind: &str) -> Value {
    match BuiltinKind::from_name(kind) {
        Some(BuiltinKind::Wait) => json!({"ms": 1000}),
        // Bounded from the start: a memory with no bound is a problem.
        Some(BuiltinKind::Memory) => json!({"max_messages": 20}),
        Some(BuiltinKind::Ask) => {
            json!({"prompt": "What should happen next?", "answer": "answer"})
        }
        _ => json!({}),
    }
}

/// A new node of `kind` at `at`.
pub fn new_node(document: &GraphDocument, kind: &str, at: Position) -> NodeSpec {
    let mut node: NodeSpec = serde_json::from_value(json!({
        "id": new_node_id(document, kind).as_str(),
        "kind": kind,
        "config": starting_config(kind),
    }))
    .unwrap_or_else(|_| unreachable_node(kind));
    node.position = Some(at);
    node
}

fn unreachable_node(kind: &str) -> NodeSpec {
    // Only reached if the document format changes shape; keep the editor alive.
    serde_json::from_value(json!({"id": kind, "kind": kind})).unwrap_or_else(|_| {
        serde_json::from_str(r#"{"id":"node","kind":"set"}"#).expect("a literal node reads")
    })
}

/// Whether an edge from `from` to `to` may be drawn, or why not.
pub fn can_connect(document: &GraphDocument, from: &NodeId, to: &NodeId) -> Result<(), String> {
    let kind = |id: &NodeId| {
        document
            .nodes
            .iter()
            .find(|node| &node.id == id)
            .map(|node| node.kind.as_str())
    };
    let (Some(from_kind), Some(to_kind)) = (kind(from), kind(to)) else {
        return Err("both ends must be nodes of this graph".into());
    };
    if from_kind == "end" {
        return Err("an end node has no way out".into());
    }
    if to_kind == "start" {
        return Err("nothing leads into a start node".into());
    }
    let duplicate = document.edges.iter().any(|edge| {
        &edge.from == from && &edge.to == to && edge.condition.is_none() && edge.route.is_none()
    });
    if duplicate {
        return Err(format!("{from} already leads to {to}"));
    }
    Ok(())
}

/// Adds an edge (after [`can_connect`]); returns its id.
pub fn connect(document: &mut GraphDocument, from: &NodeId, to: &NodeId) -> Result<EdgeId, String> {
    can_connect(document, from, to)?;
    let route = match branch(document, from, to) {
        Branch::Route(route) => Some(route),
        Branch::None | Branch::Full => None,
    };
    let id = new_edge_id(document);
    // A node wired keeps its name, whatever route reaches it: only one
    // made for a route is named after it (`place`). Two tryouts found a
    // node they had placed renamed "Lookup" as they wired it.
    document.edges.push(EdgeSpec {
        id: id.clone(),
        from: from.clone(),
        to: to.clone(),
        condition: None,
        route,
    });
    Ok(id)
}

/// A node made for a route ("billing", "tech_support": added from a router
/// on its free route) is labelled after it ("Billing", "Tech support"): a
/// router's branches then read by what they are for, not as `llm_2`,
/// `llm_3`. A node with a label, an end, or one reached other than by one
/// route, is left alone. Nodes already there keep their names when wired
/// or routed: renaming what a person placed surprised them.
pub fn name_after_its_route(document: &mut GraphDocument, id: &NodeId) {
    let mut routes = document
        .edges
        .iter()
        .filter(|edge| &edge.to == id)
        .map(|edge| edge.route.as_deref());
    let (Some(Some(route)), None) = (routes.next(), routes.next()) else {
        return;
    };
    let label = route_label(route);
    if let Some(node) = document.nodes.iter_mut().find(|node| &node.id == id)
        && node.label.is_empty()
        && node.kind != BuiltinKind::End.name()
        && !label.is_empty()
    {
        node.label = label;
    }
}

/// A route's name as a label: words split at `_` and `-`, the first
/// capitalised, bounded as a typed label is.
pub fn route_label(route: &str) -> String {
    let words = route
        .split(['_', '-', ' '])
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut chars = words.chars();
    let label: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    label.chars().take(ROUTE_LABEL_CHARS).collect()
}

/// The longest label a route gives a node.
const ROUTE_LABEL_CHARS: usize = 60;

/// How a new edge from a node is routed.
#[derive(Debug, PartialEq)]
pub enum Branch {
    /// The node does not choose a way on: its edges carry no route.
    None,
    /// It does (a router, a condition, an agent with handoffs), and every
    /// route it has is taken: the new edge's route is the person's.
    Full,
    /// On this route, one no edge of it takes yet.
    Route(String),
}

/// How a new edge from `from` to `to` is routed: on one of `from`'s routes
/// no edge takes yet (as the engine knows them, `node_routes`: the edge
/// form's picker offers the same), the one named like `to` first
/// ("billing" to a node labelled "Billing agent"), else the first.
pub fn branch(document: &GraphDocument, from: &NodeId, to: &NodeId) -> Branch {
    let Some(source) = document.nodes.iter().find(|node| &node.id == from) else {
        return Branch::None;
    };
    let routes =
        heddle_engine::node_routes(document, from, &Registry::default()).unwrap_or_default();
    let chooses = source.kind == BuiltinKind::Router.name()
        || source.kind == BuiltinKind::Condition.name()
        || !routes.is_empty();
    if !chooses {
        return Branch::None;
    }
    let taken: Vec<&str> = document
        .edges
        .iter()
        .filter(|edge| &edge.from == from)
        .filter_map(|edge| edge.route.as_deref())
        .collect();
    let free: Vec<String> = routes
        .into_iter()
        .filter(|route| !taken.contains(&route.as_str()))
        .collect();
    let target = document.nodes.iter().find(|node| &node.id == to);
    let named = |route: &String| {
        let route = route.to_lowercase();
        target.is_some_and(|node| {
            node.id.as_str().to_lowercase().contains(&route)
                || node.label.to_lowercase().contains(&route)
        })
    };
    free.iter()
        .find(|route| named(route))
        .or(free.first())
        .cloned()
        .map_or(Branch::Full, Branch::Route)
}

/// Removes nodes (with every edge touching them) and edges.
pub fn remove(document: &mut GraphDocument, nodes: &BTreeSet<NodeId>, edges: &BTreeSet<EdgeId>) {
    document.nodes.retain(|node| !nodes.contains(&node.id));
    document.edges.retain(|edge| {
        !edges.contains(&edge.id) && !nodes.contains(&edge.from) && !nodes.contains(&edge.to)
    });
    if document
        .entry
        .as_ref()
        .is_some_and(|entry| nodes.contains(entry))
    {
        document.entry = None;
    }
    document.mend_groups();
}

/// A piece of a graph on the clipboard: some nodes, the edges between
/// them, the groups wholly among them, and the state channels of the graph
/// they came from (so they paste into another graph ready to run). It is
/// JSON, so it pastes into another graph or browser tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fragment {
    /// Marks clipboard text as ours.
    pub heddle_fragment: u32,
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<EdgeSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub channels: BTreeMap<String, Channel>,
}

/// The selected nodes and the edges among them.
pub fn copy(document: &GraphDocument, selected: &BTreeSet<NodeId>) -> Fragment {
    Fragment {
        heddle_fragment: 1,
        nodes: document
            .nodes
            .iter()
            .filter(|node| selected.contains(&node.id))
            .cloned()
            .collect(),
        edges: document
            .edges
            .iter()
            .filter(|edge| selected.contains(&edge.from) && selected.contains(&edge.to))
            .cloned()
            .collect(),
        groups: document
            .groups
            .iter()
            .filter(|group| group.nodes.iter().all(|id| selected.contains(id)))
            .cloned()
            .collect(),
        channels: document.state.channels.clone(),
    }
}

/// Reads clipboard text: a fragment, or a whole graph document.
pub fn read_fragment(text: &str) -> Option<Fragment> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    if value.get("heddle_fragment").is_some() {
        return serde_json::from_value(value).ok();
    }
    let document = GraphDocument::from_value(value).ok()?;
    Some(Fragment {
        heddle_fragment: 1,
        nodes: document.nodes,
        edges: document.edges,
        groups: document.groups,
        channels: document.state.channels,
    })
}

/// How far to move `fragment` so its top-left node lands at `at`.
pub fn offset_to(fragment: &Fragment, at: Position) -> (f64, f64) {
    let corner = fragment
        .nodes
        .iter()
        .map(|node| node.position.unwrap_or(Position { x: 0.0, y: 0.0 }))
        .fold(None::<(f64, f64)>, |corner, p| {
            Some(corner.map_or((p.x, p.y), |(x, y)| (x.min(p.x), y.min(p.y))))
        })
        .unwrap_or((0.0, 0.0));
    (at.x - corner.0, at.y - corner.1)
}

/// Pastes `fragment` into `document`, moved by `offset`, with fresh ids
/// where they clash. Returns the new nodes' ids.
pub fn paste(document: &mut GraphDocument, fragment: &Fragment, offset: (f64, f64)) -> Vec<NodeId> {
    let mut renamed: HashMap<NodeId, NodeId> = HashMap::new();
    let mut added = Vec::new();
    for node in &fragment.nodes {
        let mut node = node.clone();
        let base = node
            .id
            .as_str()
            .trim_end_matches(|c: char| c.is_ascii_digit() || c == '_');
        let base = if base.is_empty() {
            node.kind.as_str()
        } else {
            base
        };
        let id = if document.nodes.iter().any(|n| n.id == node.id) {
            new_node_id(document, base)
        } else {
            node.id.clone()
        };
        renamed.insert(node.id.clone(), id.clone());
        node.id = id.clone();
        let at = node.position.unwrap_or(Position { x: 0.0, y: 0.0 });
        node.position = Some(Position {
            x: at.x + offset.0,
            y: at.y + offset.1,
        });
        document.nodes.push(node);
        added.push(id);
    }
    for edge in &fragment.edges {
        let (Some(from), Some(to)) = (renamed.get(&edge.from), renamed.get(&edge.to)) else {
            continue;
        };
        let mut edge = edge.clone();
        edge.id = new_edge_id(document);
        edge.from = from.clone();
        edge.to = to.clone();
        document.edges.push(edge);
    }
    // Its groups, around the copies; its channels, where this graph has
    // none of that name (a channel here is never changed by a paste).
    for group in &fragment.groups {
        let nodes: Vec<NodeId> = group
            .nodes
            .iter()
            .filter_map(|id| renamed.get(id).cloned())
            .collect();
        if nodes.is_empty() {
            continue;
        }
        let id = document.fresh_group_id();
        document.groups.push(Group {
            id,
            nodes,
            ..group.clone()
        });
    }
    for (name, channel) in &fragment.channels {
        document
            .state
            .channels
            .entry(name.clone())
            .or_insert_with(|| channel.clone());
    }
    document.mend_groups();
    added
}

/// Undo and redo, as whole documents (an edit's "before" and "after").
#[derive(Debug, Default, Clone)]
pub struct History {
    past: Vec<GraphDocument>,
    future: Vec<GraphDocument>,
}

impl History {
    /// How many steps back are kept.
    pub const LIMIT: usize = 200;

    /// Remembers `before` as the state an edit started from.
    pub fn record(&mut self, before: GraphDocument) {
        self.past.push(before);
        if self.past.len() > Self::LIMIT {
            self.past.remove(0);
        }
        self.future.clear();
    }

    /// The state before the last edit; `current` becomes redoable.
    pub fn undo(&mut self, current: GraphDocument) -> Option<GraphDocument> {
        let previous = self.past.pop()?;
        self.future.push(current);
        Some(previous)
    }

    /// The state the last undo left; `current` becomes undoable.
    pub fn redo(&mut self, current: GraphDocument) -> Option<GraphDocument> {
        let next = self.future.pop()?;
        self.past.push(current);
        Some(next)
    }

    pub fn can_undo(&self) -> bool {
        !self.past.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.future.is_empty()
    }
}

/// The graph as a Mermaid flowchart (left to right; conditional and routed
/// edges labelled).
pub fn mermaid(document: &GraphDocument) -> String {
    let safe = |id: &str| -> String {
        id.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let quote = |text: &str| text.replace('"', "#quot;");
    let mut out = String::from("flowchart LR\n");
    for node in &document.nodes {
        let label = if node.label.is_empty() {
            node.id.as_str()
        } else {
            &node.label
        };
        out.push_str(&format!(
            "    {}[\"{}<br/><small>{}</small>\"]\n",
            safe(node.id.as_str()),
            quote(label),
            quote(&node.kind)
        ));
    }
    for edge in &document.edges {
        let label = edge.route.as_deref().or(edge.condition.as_deref());
        match label {
            Some(label) => out.push_str(&format!(
                "    {} -->|\"{}\"| {}\n",
                safe(edge.from.as_str()),
                quote(label),
                safe(edge.to.as_str())
            )),
            None => out.push_str(&format!(
                "    {} --> {}\n",
                safe(edge.from.as_str()),
                safe(edge.to.as_str())
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use heddle_engine::format::Position;
    use heddle_engine::{EdgeId, GraphDocument, NodeId};
    use serde_json::json;

    use super::*;

    fn graph() -> GraphDocument {
        GraphDocument::from_value(json!({
            "format_version": 2, "name": "g",
            "nodes": [
                {"id": "start", "kind": "start", "position": {"x": 0, "y": 0}},
                {"id": "llm", "kind": "llm", "position": {"x": 220, "y": 0}},
                {"id": "end", "kind": "end", "position": {"x": 440, "y": 0}}
            ],
            "edges": [{"id": "e1", "from": "start", "to": "llm"}]
        }))
        .unwrap()
    }

    fn id(text: &str) -> NodeId {
        NodeId::from(text)
    }

    #[test]
    fn an_edge_from_a_router_takes_its_free_route_named_like_its_target() {
        let mut document = GraphDocument::from_value(json!({
            "format_version": 3, "name": "g",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "triage", "kind": "router",
                 "config": {"routes": [{"route": "billing"}, {"route": "technical"}]}},
                {"id": "llm_2", "kind": "llm", "label": "Tech agent"},
                {"id": "llm_3", "kind": "llm", "label": "Billing agent"},
                {"id": "end", "kind": "end"}
            ],
            "edges": []
        }))
        .unwrap();
        let route = |document: &GraphDocument, edge: &EdgeId| {
            document
                .edges
                .iter()
                .find(|e| &e.id == edge)
                .and_then(|e| e.route.clone())
        };
        // The first free route unless another is named like the target.
        let first = super::connect(&mut document, &"triage".into(), &"llm_3".into()).unwrap();
        assert_eq!(route(&document, &first).as_deref(), Some("billing"));
        let second = super::connect(&mut document, &"triage".into(), &"llm_2".into()).unwrap();
        assert_eq!(route(&document, &second).as_deref(), Some("technical"));
        // None left: the person's to choose.
        let third = super::connect(&mut document, &"triage".into(), &"end".into()).unwrap();
        assert_eq!(route(&document, &third), None);
        // A node that does not branch carries no route.
        let plain = super::connect(&mut document, &"llm_2".into(), &"end".into()).unwrap();
        assert_eq!(route(&document, &plain), None);
    }

    #[test]
    fn new_ids_do_not_clash() {
        let document = graph();
        assert_eq!(new_node_id(&document, "llm").as_str(), "llm_2");
        assert_eq!(new_node_id(&document, "tools").as_str(), "tools");
        assert_eq!(new_edge_id(&document).as_str(), "e2");
        let node = new_node(&document, "wait", Position { x: 5.0, y: 6.0 });
        assert_eq!(node.config, json!({"ms": 1000}));
        assert_eq!(node.position, Some(Position { x: 5.0, y: 6.0 }));
    }

    #[test]
    fn connections_are_refused_with_a_reason() {
        let mut document = graph();
        assert_eq!(
            can_connect(&document, &id("end"), &id("llm")),
            Err("an end node has no way out".into())
        );
        assert_eq!(
            can_connect(&document, &id("llm"), &id("start")),
            Err("nothing leads into a start node".into())
        );
        assert_eq!(
            can_connect(&document, &id("start"), &id("llm")),
            Err("start already leads to llm".into())
        );
        // Loops are graphs' bread and butter: a node may lead to itself.
        assert!(can_connect(&document, &id("llm"), &id("llm")).is_ok());
        let edge = connect(&mut document, &id("llm"), &id("end")).unwrap();
        assert_eq!(edge.as_str(), "e2");
        assert_eq!(document.edges.len(), 2);
    }

    #[test]
    fn removing_a_node_takes_its_edges() {
        let mut document = graph();
        document.entry = Some(id("start"));
        remove(
            &mut document,
            &BTreeSet::from([id("start")]),
            &BTreeSet::new(),
        );
        assert_eq!(document.nodes.len(), 2);
        assert!(document.edges.is_empty());
        assert_eq!(document.entry, None);
    }

    #[test]
    fn copy_and_paste_keep_inner_edges_and_rename_clashes() {
        let mut document = graph();
        let fragment = copy(&document, &BTreeSet::from([id("start"), id("llm")]));
        assert_eq!(fragment.nodes.len(), 2);
        assert_eq!(fragment.edges.len(), 1);
        let text = serde_json::to_string(&fragment).unwrap();
        let read = read_fragment(&text).unwrap();
        let added = paste(&mut document, &read, (40.0, 40.0));
        assert_eq!(added, [id("start_2"), id("llm_2")]);
        let pasted = document.edges.last().unwrap();
        assert_eq!(
            (pasted.from.as_str(), pasted.to.as_str()),
            ("start_2", "llm_2")
        );
        let moved = document.nodes.iter().find(|n| n.id == id("llm_2")).unwrap();
        assert_eq!(moved.position, Some(Position { x: 260.0, y: 40.0 }));
        // Pasted where the pointer is: the fragment's top-left node lands there.
        let offset = offset_to(
            &read,
            Position {
                x: 1000.0,
                y: 500.0,
            },
        );
        let added = paste(&mut document, &read, offset);
        let corner = document
            .nodes
            .iter()
            .filter(|n| added.contains(&n.id))
            .filter_map(|n| n.position)
            .fold((f64::MAX, f64::MAX), |(x, y), p| (x.min(p.x), y.min(p.y)));
        assert_eq!(corner, (1000.0, 500.0));
        assert_eq!(added, [id("start_3"), id("llm_3")]);
        // A whole exported graph pastes too; other text does not.
        assert_eq!(read_fragment(&graph().to_json()).unwrap().nodes.len(), 3);
        assert!(read_fragment("hello").is_none());
    }

    #[test]
    fn a_pasted_group_frames_the_copies_and_channels_come_along_without_overwriting() {
        let mut document = graph();
        document.groups.push(Group {
            id: "group-1".into(),
            label: "Front".into(),
            nodes: vec![id("start"), id("llm")],
            collapsed: true,
            color: Default::default(),
        });
        for (name, ty) in [("messages", "messages"), ("notes", "string")] {
            document.state.channels.insert(
                name.into(),
                serde_json::from_value(json!({"type": ty})).unwrap(),
            );
        }
        // Two of the group's nodes and one more: the group comes along.
        let all = BTreeSet::from([id("start"), id("llm"), id("end")]);
        let fragment = copy(&document, &all);
        assert_eq!(fragment.groups.len(), 1);
        // One of its nodes only: a group is copied whole or not at all.
        assert!(
            copy(&document, &BTreeSet::from([id("llm")]))
                .groups
                .is_empty()
        );
        let mut other = GraphDocument::new("other");
        other.state.channels.insert(
            "messages".into(),
            serde_json::from_value(json!({"type": "string"})).unwrap(),
        );
        let text = serde_json::to_string(&fragment).unwrap();
        paste(&mut other, &read_fragment(&text).unwrap(), (0.0, 0.0));
        assert_eq!(other.groups.len(), 1);
        assert_eq!(other.groups[0].nodes, [id("start"), id("llm")]);
        assert!(other.groups[0].collapsed);
        // The channels it needs came, the one of the same name stayed.
        assert_eq!(other.state.channels.len(), 2);
        for (name, channel) in &document.state.channels {
            if name != "messages" {
                assert_eq!(other.state.channels.get(name), Some(channel), "{name}");
            }
        }
        assert_eq!(
            serde_json::to_value(&other.state.channels["messages"]).unwrap()["type"],
            "string"
        );
        // Pasted again into the same graph: a second group, around the new copies.
        paste(&mut document, &fragment, (40.0, 40.0));
        assert_eq!(document.groups.len(), 2);
        assert_eq!(document.groups[1].nodes, [id("start_2"), id("llm_2")]);
    }

    #[test]
    fn history_undoes_and_redoes_in_order() {
        let mut history = History::default();
        let a = graph();
        let mut b = a.clone();
        b.name = "b".into();
        let mut c = a.clone();
        c.name = "c".into();
        history.record(a.clone());
        history.record(b.clone());
        assert_eq!(history.undo(c.clone()).unwrap().name, "b");
        assert_eq!(history.undo(b.clone()).unwrap().name, "g");
        assert!(!history.can_undo());
        assert_eq!(history.redo(a.clone()).unwrap().name, "b");
        // A new edit forgets what could be redone.
        history.record(b);
        assert!(!history.can_redo());
    }

    #[test]
    fn mermaid_lists_nodes_and_labelled_edges() {
        let mut document = graph();
        document.edges.push(heddle_engine::format::EdgeSpec {
            id: "e9".into(),
            from: id("llm"),
            to: id("end"),
            condition: Some("done == true".into()),
            route: None,
        });
        let text = mermaid(&document);
        assert!(text.starts_with("flowchart LR\n"));
        assert!(text.contains("    start --> llm\n"));
        assert!(text.contains("    llm -->|\"done == true\"| end\n"));
    }

    #[test]
    fn a_route_reads_as_a_label() {
        assert_eq!(route_label("billing"), "Billing");
        assert_eq!(route_label("tech_support"), "Tech support");
        assert_eq!(route_label("__-"), "");
        assert_eq!(route_label("ärger-mit_rechnung"), "Ärger mit rechnung");
        assert_eq!(
            route_label(&"x".repeat(500)).chars().count(),
            ROUTE_LABEL_CHARS
        );
    }

    #[test]
    fn a_node_added_on_a_route_is_labelled_after_it_and_only_then() {
        let mut document = GraphDocument::new("g");
        for kind in ["router", "llm", "llm", "llm"] {
            let node = new_node(&document, kind, Position { x: 0.0, y: 0.0 });
            document.nodes.push(node);
        }
        let ids: Vec<NodeId> = document.nodes.iter().map(|n| n.id.clone()).collect();
        let edge = |document: &mut GraphDocument, to: &NodeId, route: Option<&str>| {
            let id = new_edge_id(document);
            document.edges.push(EdgeSpec {
                id,
                from: ids[0].clone(),
                to: to.clone(),
                condition: None,
                route: route.map(str::to_string),
            });
        };
        edge(&mut document, &ids[1], Some("tech_support"));
        edge(&mut document, &ids[2], None);
        edge(&mut document, &ids[3], Some("billing"));
        document.nodes[3].label = "Invoices".into();
        for id in &ids {
            name_after_its_route(&mut document, id);
        }
        let labels: Vec<&str> = document.nodes.iter().map(|n| n.label.as_str()).collect();
        assert_eq!(labels, ["", "Tech support", "", "Invoices"]);
    }

    #[test]
    fn a_node_wired_on_a_route_keeps_its_name() {
        let mut document: GraphDocument = serde_json::from_value(json!({
            "format_version": 3,
            "name": "g",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "triage", "kind": "router",
                 "config": {"routes": [{"route": "refunds", "description": "money back"}]}},
                {"id": "llm", "kind": "llm"}
            ],
            "edges": []
        }))
        .expect("a graph");
        let (router, llm) = (document.nodes[0].id.clone(), document.nodes[1].id.clone());
        connect(&mut document, &router, &llm).expect("connects");
        assert_eq!(document.edges[0].route.as_deref(), Some("refunds"));
        assert_eq!(document.nodes[1].label, "");
    }
}
