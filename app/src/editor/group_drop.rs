//! A node dragged out of its group's frame leaves the group. A frame is
//! drawn around its nodes, so without this a member dragged away would
//! stretch the frame after it, over nodes that are not in the group. A
//! member dropped where its box no longer meets the box of the group's
//! other members (grown by a frame's padding) is out; dragging the whole
//! group (by its bar, or with all its nodes selected) moves the frame.
//! It is part of the move: one undo step puts the node back in its place
//! and in its group.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::Position;
use heddle_engine::{GraphDocument, NodeId};
use leptos::prelude::*;

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

/// After a drag of the nodes whose positions are `moved`: takes those it
/// dropped out of their group out of it, in the same undo step as the
/// move (call it right after the move is committed).
pub fn leave_when_dropped_out(editor: Editor, moved: &[RwSignal<Position>]) {
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
    let out = dropped_out(&editor.document(), &ids);
    if out.is_empty() {
        return;
    }
    editor
        .skeleton
        .update(|document| super::groups::take_out(document, &out));
    editor.content.update(|content| *content += 1);
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
}
