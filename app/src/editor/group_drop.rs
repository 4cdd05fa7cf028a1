//! Where a drag of nodes leaves groups. A frame is drawn around its
//! group's nodes, so what is dropped inside a frame reads as in the group:
//! - a member dropped where its box no longer meets the box of the group's
//!   other members (grown by a frame's padding) leaves the group (without
//!   this the frame stretched after it, over nodes not in the group);
//! - a node of no group dropped inside a frame (its middle within it)
//!   joins that group, and the frame grows around it.
//!
//! A group dragged whole over other nodes moves only its own: they stay
//! where they were, out of it (as in n8n or ComfyUI; pushing them aside
//! moved nodes nobody touched, and dragging the group back left them
//! pushed). It is part of the move: one undo step puts every node back in
//! its place and in its group.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::Position;
use heddle_engine::{GraphDocument, NodeId};
use leptos::prelude::*;

use super::group_room::{Bounds, frame_box};
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::state::Editor;

/// How far from its group's other nodes a dropped node may still be in
/// the group: about the frame's padding and bar.
const REACH: f64 = 48.0;

/// The nodes of `moved` that the move took out of their group: in an
/// expanded group some of whose nodes stayed, and whose box no longer
/// meets the box around those that stayed, grown by [`REACH`].
pub fn dropped_out(document: &GraphDocument, moved: &BTreeSet<NodeId>) -> Vec<NodeId> {
    let at: HashMap<&NodeId, Position> = document
        .nodes
        .iter()
        .filter_map(|node| Some((&node.id, node.position?)))
        .collect();
    let mut out = Vec::new();
    for group in document.groups.iter().filter(|group| !group.collapsed) {
        let (gone, stayed): (Vec<&NodeId>, Vec<&NodeId>) =
            group.nodes.iter().partition(|id| moved.contains(*id));
        let stayed: Vec<Position> = stayed.iter().filter_map(|id| at.get(id).copied()).collect();
        if gone.is_empty() || stayed.is_empty() {
            continue;
        }
        let x1 = stayed.iter().map(|p| p.x).fold(f64::INFINITY, f64::min) - REACH;
        let y1 = stayed.iter().map(|p| p.y).fold(f64::INFINITY, f64::min) - REACH;
        let x2 = stayed.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max) + NODE_WIDTH + REACH;
        let y2 = stayed.iter().map(|p| p.y).fold(f64::NEG_INFINITY, f64::max) + NODE_HEIGHT + REACH;
        for id in gone {
            let Some(p) = at.get(id) else { continue };
            let meets = p.x + NODE_WIDTH >= x1 && p.x <= x2 && p.y + NODE_HEIGHT >= y1 && p.y <= y2;
            if !meets {
                out.push(id.clone());
            }
        }
    }
    out
}

/// The nodes of `moved` in no group that the move dropped inside an
/// expanded group's frame (their box's middle within it), each with the
/// group it joins (the first whose frame holds it).
pub fn dropped_in(document: &GraphDocument, moved: &BTreeSet<NodeId>) -> Vec<(NodeId, String)> {
    let grouped: BTreeSet<&NodeId> = document
        .groups
        .iter()
        .flat_map(|group| &group.nodes)
        .collect();
    let at: HashMap<&NodeId, Position> = document
        .nodes
        .iter()
        .filter_map(|node| Some((&node.id, node.position?)))
        .collect();
    let frames: Vec<(&str, Bounds)> = document
        .groups
        .iter()
        .filter(|group| !group.collapsed)
        .filter_map(|group| {
            let places = group
                .nodes
                .iter()
                .filter_map(|id| at.get(id))
                .map(|p| (p.x, p.y));
            Some((group.id.as_str(), frame_box(places)?))
        })
        .collect();
    let mut joined = Vec::new();
    for id in moved.iter().filter(|id| !grouped.contains(id)) {
        let Some(p) = at.get(id) else { continue };
        let (x, y) = (p.x + NODE_WIDTH / 2.0, p.y + NODE_HEIGHT / 2.0);
        let holding = frames.iter().find(|(_, (left, top, right, bottom))| {
            *left <= x && x <= *right && *top <= y && y <= *bottom
        });
        if let Some((group, _)) = holding {
            joined.push((id.clone(), (*group).to_string()));
        }
    }
    joined
}

/// After a drag of the nodes whose positions are `moved` (call it right
/// after the move is committed, so it is in the move's undo step): those
/// dropped out of their group leave it, and those dropped into a frame
/// join its group.
pub fn settle(editor: Editor, moved: &[RwSignal<Position>]) {
    // Most graphs have no group: nothing to look at, whatever was moved.
    let has_groups = editor
        .skeleton
        .with_untracked(|document| !document.groups.is_empty());
    if moved.is_empty() || !has_groups {
        return;
    }
    let ids: BTreeSet<NodeId> = editor.nodes.with_untracked(|nodes| {
        nodes
            .iter()
            .filter(|node| moved.contains(&node.position))
            .map(|node| node.id.get_value())
            .collect()
    });
    let mut document = editor.document();
    let out = dropped_out(&document, &ids);
    super::groups::take_out(&mut document, &out);
    let joined = dropped_in(&document, &ids);
    for (node, group) in &joined {
        if let Some(group) = document.groups.iter_mut().find(|g| &g.id == group) {
            group.nodes.push(node.clone());
        }
    }
    if !out.is_empty() || !joined.is_empty() {
        let groups = document.groups.clone();
        editor.skeleton.update(|skeleton| skeleton.groups = groups);
        editor.content.update(|content| *content += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::format::{Group, NodeSpec};

    fn document(places: &[(&str, f64, f64)], members: &[&str], collapsed: bool) -> GraphDocument {
        let mut document = GraphDocument::new("g");
        for (id, x, y) in places {
            let mut node: NodeSpec =
                serde_json::from_value(serde_json::json!({"id": id, "kind": "set"}))
                    .expect("a node");
            node.position = Some(Position { x: *x, y: *y });
            document.nodes.push(node);
        }
        document.groups.push(Group {
            id: "group-1".into(),
            label: "Research".into(),
            nodes: members.iter().map(|id| NodeId::from(*id)).collect(),
            collapsed,
            color: Default::default(),
        });
        document
    }

    fn moved(ids: &[&str]) -> BTreeSet<NodeId> {
        ids.iter().map(|id| NodeId::from(*id)).collect()
    }

    #[test]
    fn a_member_dropped_away_from_the_others_leaves_and_one_dropped_near_stays() {
        let members = ["a", "b", "c"];
        // c dragged far below: out.
        let far = document(
            &[("a", 0.0, 0.0), ("b", 240.0, 0.0), ("c", 240.0, 600.0)],
            &members,
            false,
        );
        assert_eq!(dropped_out(&far, &moved(&["c"])), [NodeId::from("c")]);
        // c dropped just under the others, within the frame's padding: stays.
        let near = document(
            &[
                ("a", 0.0, 0.0),
                ("b", 240.0, 0.0),
                ("c", 240.0, NODE_HEIGHT + 40.0),
            ],
            &members,
            false,
        );
        assert!(dropped_out(&near, &moved(&["c"])).is_empty());
        // The whole group dragged: the frame moves, nobody leaves.
        assert!(dropped_out(&far, &moved(&["a", "b", "c"])).is_empty());
        // A node of no group, or a collapsed group's, never leaves one.
        assert!(dropped_out(&far, &moved(&["x"])).is_empty());
        let folded = document(
            &[("a", 0.0, 0.0), ("b", 240.0, 0.0), ("c", 240.0, 600.0)],
            &members,
            true,
        );
        assert!(dropped_out(&folded, &moved(&["c"])).is_empty());
    }

    #[test]
    fn a_loose_node_dropped_inside_a_frame_joins_its_group_and_one_dropped_beside_does_not() {
        let members = ["a", "b"];
        // x's middle inside the frame around a and b (under them, within
        // the padding); y beside it, well out; c in no frame.
        let inside = document(
            &[
                ("a", 0.0, 0.0),
                ("b", 240.0, 0.0),
                ("x", 100.0, 30.0),
                ("y", 900.0, 0.0),
            ],
            &members,
            false,
        );
        assert_eq!(
            dropped_in(&inside, &moved(&["x", "y"])),
            [(NodeId::from("x"), "group-1".to_string())]
        );
        // Only what moved joins: x lying there unmoved stays out.
        assert!(dropped_in(&inside, &moved(&["y"])).is_empty());
        // A member stays a member (no second group); a collapsed group's
        // frame is not drawn, so it takes nobody.
        assert!(dropped_in(&inside, &moved(&["a"])).is_empty());
        let folded = document(
            &[("a", 0.0, 0.0), ("b", 240.0, 0.0), ("x", 100.0, 30.0)],
            &members,
            true,
        );
        assert!(dropped_in(&folded, &moved(&["x"])).is_empty());
    }
}
