//! What an edit did, in a sentence, for people who do not see the canvas:
//! a screen reader hears "Deleted “Writer”; “Start” now leads to “End”"
//! after Delete, "Connected “Triage” to “Billing”, route billing" after
//! C, "Undone: added “Writer” (llm)" after Ctrl+Z. Worked out from the
//! document before and after (whatever made the change: a key, a menu, a
//! fix, a paste), so no edit goes unsaid for want of a message at its call
//! site. Edits a person sees where they make them (a field typed into, a
//! node dragged) say nothing: the field or the focus says it already.
//! A plain function over two documents, tested on the host.

use std::collections::{HashMap, HashSet};

use heddle_engine::GraphDocument;
use heddle_engine::format::{Change, NodeSpec, changes};

/// The edit from `before` to `after`, said as a sentence; `None` when it
/// is one a person sees where they make it (see the module's doc). What
/// changed is the engine's own reading of two documents
/// ([`heddle_engine::format::changes`], which also words a version's
/// summary); this says it for the moment it was made, nodes by label.
pub fn describe(before: &GraphDocument, after: &GraphDocument) -> Option<String> {
    let was: HashMap<&str, &NodeSpec> = before.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let now: HashMap<&str, &NodeSpec> = after.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let found = changes(before, after);
    let mut added: Vec<&NodeSpec> = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    // Edges that lead on from or to something (an edge whose end moved to
    // a new node keeps its id: the engine reads it as edited).
    let mut linked: Vec<(&str, &str)> = Vec::new();
    let mut cut: Vec<(&str, &str)> = Vec::new();
    let mut moved = 0;
    for change in &found {
        match change {
            Change::AddedNode(id) => added.extend(now.get(id.as_str())),
            Change::RemovedNode(id) => removed.push(id),
            Change::Connected { from, to } | Change::EditedEdge { from, to } => {
                linked.push((from, to));
            }
            Change::Disconnected { from, to } => cut.push((from, to)),
            Change::Moved(count) => moved = *count,
            _ => {}
        }
    }
    let name = |id: &str| -> String {
        let label = now
            .get(id)
            .or_else(|| was.get(id))
            .map_or("", |spec| spec.label.as_str());
        if label.is_empty() {
            format!("“{id}”")
        } else {
            format!("“{label}”")
        }
    };
    let is_new = |id: &str| added.iter().any(|n| n.id.as_str() == id);
    let kept = |id: &str| was.contains_key(id) && now.contains_key(id);
    let mut said = Vec::new();
    match added.as_slice() {
        [] => {}
        [node] => {
            let id = node.id.as_str();
            let mut words = format!("Added {} ({})", name(id), node.kind);
            let from = linked.iter().find(|(from, to)| *to == id && !is_new(from));
            let to = linked.iter().find(|(from, to)| *from == id && !is_new(to));
            match (from, to) {
                (Some((from, _)), Some((_, to))) => {
                    words.push_str(&format!(" between {} and {}", name(from), name(to)));
                }
                (Some((from, _)), None) => words.push_str(&format!(" after {}", name(from))),
                (None, Some((_, to))) => words.push_str(&format!(" before {}", name(to))),
                (None, None) => {}
            }
            said.push(words);
        }
        many => said.push(format!("Added {} nodes", many.len())),
    }
    match removed.as_slice() {
        [] => {}
        [id] => said.push(format!("Deleted {}", name(id))),
        many => said.push(format!("Deleted {} nodes", many.len())),
    }
    // Edges drawn between nodes that were there before and still are.
    let connected: Vec<(&str, &str)> = found
        .iter()
        .filter_map(|change| match change {
            Change::Connected { from, to } => Some((from.as_str(), to.as_str())),
            _ => None,
        })
        .filter(|(from, to)| kept(from) && kept(to))
        .collect();
    let route = |from: &str, to: &str| {
        let edge = after
            .edges
            .iter()
            .find(|e| e.from.as_str() == from && e.to.as_str() == to);
        match edge.map(|e| (&e.route, &e.condition)) {
            Some((Some(route), _)) => format!(", route {route}"),
            Some((None, Some(_))) => ", with a condition".to_string(),
            _ => String::new(),
        }
    };
    if removed.is_empty() {
        match connected.as_slice() {
            [] => {}
            [(from, to)] => said.push(format!(
                "Connected {} to {}{}",
                name(from),
                name(to),
                route(from, to)
            )),
            many => said.push(format!("Added {} edges", many.len())),
        }
    } else if let [(from, to)] = connected.as_slice() {
        // A node deleted from a chain leaves its neighbours joined.
        said.push(format!("{} now leads to {}", name(from), name(to)));
    }
    if added.is_empty() {
        let cut: Vec<&(&str, &str)> = cut
            .iter()
            .filter(|(from, to)| kept(from) && kept(to))
            .collect();
        match cut.as_slice() {
            [] => {}
            [(from, to)] => said.push(format!(
                "Removed the edge from {} to {}",
                name(from),
                name(to)
            )),
            many => said.push(format!("Removed {} edges", many.len())),
        }
    }
    let groups_before: HashSet<&str> = before.groups.iter().map(|g| g.id.as_str()).collect();
    let groups_after: HashSet<&str> = after.groups.iter().map(|g| g.id.as_str()).collect();
    for group in after
        .groups
        .iter()
        .filter(|g| !groups_before.contains(g.id.as_str()))
    {
        said.push(format!(
            "Grouped {} nodes as “{}”",
            group.nodes.len(),
            group.label
        ));
    }
    for group in before
        .groups
        .iter()
        .filter(|g| !groups_after.contains(g.id.as_str()))
    {
        said.push(format!("Ungrouped “{}”", group.label));
    }
    let notes_before: HashSet<&str> = before.notes.iter().map(|n| n.id.as_str()).collect();
    let notes_after: HashSet<&str> = after.notes.iter().map(|n| n.id.as_str()).collect();
    if after
        .notes
        .iter()
        .any(|n| !notes_before.contains(n.id.as_str()))
    {
        said.push("Added a note".to_string());
    }
    if before
        .notes
        .iter()
        .any(|n| !notes_after.contains(n.id.as_str()))
    {
        said.push("Deleted a note".to_string());
    }
    // Many nodes moved at once (Layout, a group dragged); one node moved is
    // where the person moved it.
    if said.is_empty() && moved > 1 {
        said.push(format!("Moved {moved} nodes"));
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// The edit from `before` to `after` as an undo or a redo says it: as
/// [`describe`] does, and also the edits [`describe`] leaves to the field
/// they are made in ("edited the system prompt of “Poet”"): undone with
/// the focus elsewhere, that field may not be in sight. `None` when the
/// two documents do not differ.
pub fn taken_back(before: &GraphDocument, after: &GraphDocument) -> Option<String> {
    if let Some(said) = describe(before, after) {
        return Some(said);
    }
    // Nodes by label (else id) in quotes, as `describe` names them; the
    // other code spans (a config key, a channel) as plain words.
    let label_of = |id: &str| {
        after
            .nodes
            .iter()
            .chain(&before.nodes)
            .find(|node| node.id.as_str() == id)
            .map(|node| match node.label.as_str() {
                "" => id.to_string(),
                label => label.to_string(),
            })
    };
    let found = changes(before, after);
    const SAID: usize = 3;
    let mut said: Vec<String> = found
        .iter()
        .take(SAID)
        .map(|change| super::node_names::name_nodes(&change.to_string(), label_of).replace('`', ""))
        .collect();
    if found.len() > SAID {
        said.push(format!("{} more", found.len() - SAID));
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// What undo (`Undone`) or redo (`Redone`) did: the edit it took back or
/// made again, said as [`taken_back`] says it.
pub fn undone(word: &str, edit: Option<String>) -> String {
    match edit {
        Some(edit) => {
            let mut chars = edit.chars();
            let first = chars.next().map(|c| c.to_lowercase().to_string());
            format!("{word}: {}{}", first.unwrap_or_default(), chars.as_str())
        }
        None => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::GraphDocument;
    use serde_json::{Value, json};

    use super::{describe, taken_back, undone};

    fn graph(nodes: Value, edges: Value) -> GraphDocument {
        serde_json::from_value(json!({
            "format_version": 2, "name": "g", "nodes": nodes, "edges": edges
        }))
        .expect("a document")
    }

    fn node(id: &str, kind: &str, label: &str, x: f64) -> Value {
        json!({"id": id, "kind": kind, "label": label, "position": {"x": x, "y": 0.0}})
    }

    fn chain() -> GraphDocument {
        graph(
            json!([
                node("start", "start", "", 0.0),
                node("llm", "llm", "Writer", 240.0),
                node("end", "end", "", 480.0)
            ]),
            json!([
                {"id": "e1", "from": "start", "to": "llm"},
                {"id": "e2", "from": "llm", "to": "end"}
            ]),
        )
    }

    #[test]
    fn a_deleted_node_and_the_neighbours_it_joined_are_said() {
        let before = chain();
        let after = graph(
            json!([
                node("start", "start", "", 0.0),
                node("end", "end", "", 480.0)
            ]),
            json!([{"id": "e3", "from": "start", "to": "end"}]),
        );
        assert_eq!(
            describe(&before, &after).as_deref(),
            Some("Deleted “Writer”; “start” now leads to “end”")
        );
        assert_eq!(
            undone("Undone", describe(&before, &after)),
            "Undone: deleted “Writer”; “start” now leads to “end”"
        );
    }

    #[test]
    fn a_node_added_says_where_it_went() {
        let before = chain();
        let mut after = before.clone();
        after
            .nodes
            .push(serde_json::from_value(node("llm_2", "llm", "", 720.0)).expect("node"));
        assert_eq!(
            describe(&before, &after).as_deref(),
            Some("Added “llm_2” (llm)")
        );
        // Into an edge: the edge now ends at it, a new one leaves it.
        after.edges[1].to = "llm_2".into();
        after.edges.push(
            serde_json::from_value(json!({"id": "e3", "from": "llm_2", "to": "end"}))
                .expect("edge"),
        );
        assert_eq!(
            describe(&before, &after).as_deref(),
            Some("Added “llm_2” (llm) between “Writer” and “end”")
        );
    }

    #[test]
    fn edges_connected_rerouted_and_removed_are_said() {
        let before = chain();
        let mut after = before.clone();
        after.edges.push(
            serde_json::from_value(
                json!({"id": "e3", "from": "start", "to": "end", "route": "done"}),
            )
            .expect("edge"),
        );
        assert_eq!(
            describe(&before, &after).as_deref(),
            Some("Connected “start” to “end”, route done")
        );
        let mut cut = before.clone();
        cut.edges.remove(0);
        assert_eq!(
            describe(&before, &cut).as_deref(),
            Some("Removed the edge from “start” to “Writer”")
        );
        // A field of a node typed into, one node dragged: nothing to say.
        let mut typed = before.clone();
        typed.nodes[1].label = "Poet".into();
        typed.nodes[1].position = Some(heddle_engine::format::Position { x: 300.0, y: 40.0 });
        assert_eq!(describe(&before, &typed), None);
        // Layout moves many.
        let mut laid = before.clone();
        for spec in &mut laid.nodes {
            spec.position = Some(heddle_engine::format::Position { x: 1.0, y: 2.0 });
        }
        assert_eq!(describe(&before, &laid).as_deref(), Some("Moved 3 nodes"));
        assert_eq!(undone("Redone", None), "Redone");
    }

    #[test]
    fn an_undo_says_also_what_a_field_changed_which_may_be_out_of_sight() {
        let before = chain();
        // A system prompt typed: the field said it; taken back, it is said.
        let mut typed = before.clone();
        typed.nodes[1].config = json!({"system": "Be brief."});
        assert_eq!(describe(&before, &typed), None);
        assert_eq!(
            taken_back(&before, &typed).as_deref(),
            Some("edited the system prompt of “Writer”")
        );
        assert_eq!(
            undone("Undone", taken_back(&typed, &before)),
            "Undone: edited the system prompt of “Writer”"
        );
        // What `describe` says, it says as `describe` does.
        let mut cut = before.clone();
        cut.edges.remove(0);
        assert_eq!(taken_back(&before, &cut), describe(&before, &cut));
        // Nothing changed: nothing to say.
        assert_eq!(taken_back(&before, &before), None);
        // Many fields of many nodes: the first three, and how many more.
        let mut many = before.clone();
        for (i, spec) in many.nodes.iter_mut().enumerate() {
            spec.label = format!("Node {i}");
            spec.config = json!({"prompt": format!("p{i}")});
        }
        many.name = "other".into();
        let said = taken_back(&before, &many).expect("said");
        assert!(said.ends_with(" more"), "{said}");
        assert_eq!(said.matches("; ").count(), 3, "{said}");
    }
}
