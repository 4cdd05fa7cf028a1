//! Groups: frames around sets of nodes, kept in the document for people
//! (runs ignore them). A group's frame is worked out from its nodes'
//! places, so it follows them; collapsed, its nodes are drawn as one box
//! where its top-left node is, and edges to any of them end at the box.
//! A node is in one group at most.
//!
//! A collapse is part of the document (saved, undone like any edit) for
//! those who may edit; a viewer's collapse or expand is theirs alone, kept
//! until the page is left.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::{EdgeSpec, Group, GroupColor};
use heddle_engine::{GraphDocument, NodeId};
use leptos::prelude::*;

use super::state::Editor;

/// Takes `nodes` out of whatever groups hold them; a group left empty
/// goes.
pub fn take_out(document: &mut GraphDocument, nodes: &[NodeId]) {
    for group in &mut document.groups {
        group.nodes.retain(|id| !nodes.contains(id));
    }
    document.groups.retain(|group| !group.nodes.is_empty());
}

/// Frames `nodes` in a new group named "Group N", taking them out of any
/// group they were in, and moving the nodes its frame would cover out of
/// it; `None` when there is nothing to frame.
pub fn frame(document: &mut GraphDocument, nodes: &BTreeSet<NodeId>) -> Option<String> {
    let nodes: Vec<NodeId> = document
        .nodes
        .iter()
        .map(|node| node.id.clone())
        .filter(|id| nodes.contains(id))
        .collect();
    if nodes.is_empty() {
        return None;
    }
    take_out(document, &nodes);
    // Its frame holds its nodes and no other (`group_room.rs`).
    super::group_room::step_out(document, &nodes);
    let id = document.fresh_group_id();
    // Named for its id's number (`group-2` is "Group 2"), so the name says
    // how many were made before it.
    let label = format!("Group {}", id.trim_start_matches("group-"));
    document.groups.push(Group {
        id: id.clone(),
        label,
        nodes,
        collapsed: false,
        color: Default::default(),
    });
    Some(id)
}

/// The group whose nodes are exactly `nodes` (tracked on the document).
pub fn exactly(editor: Editor, nodes: &BTreeSet<NodeId>) -> Option<Group> {
    editor.skeleton.with(|document| {
        document
            .groups
            .iter()
            .find(|group| {
                group.nodes.len() == nodes.len() && group.nodes.iter().all(|id| nodes.contains(id))
            })
            .cloned()
    })
}

/// The nodes of group `id` (untracked).
pub fn members(editor: Editor, id: &str) -> BTreeSet<NodeId> {
    editor.skeleton.with_untracked(|document| {
        document
            .groups
            .iter()
            .filter(|group| group.id == id)
            .flat_map(|group| group.nodes.iter().cloned())
            .collect()
    })
}

/// Frames the selected nodes in a new group (one undoable change).
pub fn frame_selection(editor: Editor) {
    let selected = editor.selected.get_untracked();
    let mut made = None;
    editor.change(|document| {
        made = frame(document, &selected);
    });
    if let Some(id) = made {
        show_frame(editor, &id);
    }
}

/// Moves the view, at its zoom, as little as shows group `id`'s frame
/// whole: its bar, above its nodes, lay under the floating toolbar when
/// they were near the canvas's top.
fn show_frame(editor: Editor, id: &str) {
    let places: Vec<(f64, f64)> = members(editor, id)
        .iter()
        .filter_map(|node| editor.view_of(node))
        .map(|view| {
            let at = view.position.get_untracked();
            (at.x, at.y)
        })
        .collect();
    let Some(frame) = super::group_room::frame_box(places) else {
        return;
    };
    let Some(canvas) = document().query_selector(".editor-canvas").ok().flatten() else {
        return;
    };
    let rect = canvas.get_bounding_client_rect();
    let view = editor.viewport.get_untracked();
    if let Some(moved) = view.showing_box(frame, rect.width(), rect.height()) {
        editor.viewport.set(moved);
    }
}

/// Removes every group that frames a selected node.
pub fn ungroup_selection(editor: Editor) {
    let selected = editor.selected.get_untracked();
    editor.change(|document| {
        document
            .groups
            .retain(|group| !group.nodes.iter().any(|id| selected.contains(id)))
    });
}

/// Removes group `id`, leaving its nodes where they are.
pub fn ungroup(editor: Editor, id: &str) {
    editor.change(|document| document.groups.retain(|group| group.id != id));
}

/// Renames group `id`.
pub fn rename(editor: Editor, id: &str, label: String) {
    editor.change(|document| {
        if let Some(group) = document.groups.iter_mut().find(|group| group.id == id) {
            group.label = label;
        }
    });
}

/// Tints group `id` (one undo step).
pub fn set_color(editor: Editor, id: &str, color: GroupColor) {
    editor.change(|document| {
        if let Some(group) = document.groups.iter_mut().find(|group| group.id == id) {
            group.color = color;
        }
    });
}

/// Collapses or expands group `id`: an edit for those who may edit, the
/// viewer's own view for a viewer. (A node selected in it then has its
/// whole group selected: [`select_whole`].)
pub fn set_collapsed(editor: Editor, id: &str, collapsed: bool) {
    let apply = |document: &mut GraphDocument| {
        if let Some(group) = document.groups.iter_mut().find(|group| group.id == id) {
            group.collapsed = collapsed;
        }
    };
    if editor.can_edit {
        editor.change(apply);
    } else {
        editor.skeleton.update(apply);
    }
}

/// Keeps a collapsed group selected whole: when the selection holds some
/// of its hidden nodes (an undo collapsed it again, a problem named one),
/// it holds all of them, which its card shows.
pub fn select_whole(editor: Editor, folds: Memo<Folds>) {
    Effect::new(move |_| {
        let wanted = folds.with(|folds| {
            if folds.is_empty() {
                return None;
            }
            editor.selected.with(|selected| {
                let groups: BTreeSet<&str> = selected
                    .iter()
                    .filter_map(|id| folds.group_of(id))
                    .collect();
                let mut whole = selected.clone();
                editor.skeleton.with_untracked(|document| {
                    for group in document
                        .groups
                        .iter()
                        .filter(|g| groups.contains(g.id.as_str()))
                    {
                        whole.extend(group.nodes.iter().cloned());
                    }
                });
                (whole != *selected).then_some(whole)
            })
        });
        if let Some(whole) = wanted {
            editor.selected.set(whole);
        }
    });
}

/// Expands the collapsed group node `id` is hidden in, if any: what is
/// asked for by name (a problem, a menu, the keyboard) is shown.
pub fn reveal(editor: Editor, id: &NodeId) {
    let folded = editor.skeleton.with_untracked(|document| {
        document
            .groups
            .iter()
            .find(|group| group.collapsed && group.nodes.contains(id))
            .map(|group| group.id.clone())
    });
    if let Some(group) = folded {
        set_collapsed(editor, &group, false);
    }
}

/// The collapsed groups of `document`: id and nodes.
fn collapsed_groups(document: &GraphDocument) -> Vec<(String, Vec<NodeId>)> {
    document
        .groups
        .iter()
        .filter(|group| group.collapsed)
        .map(|group| (group.id.clone(), group.nodes.clone()))
        .collect()
}

/// Where each node is, read untracked: a collapsed group's box is placed
/// when its group or the nodes change, not as they move.
fn places_untracked(nodes: &[super::state::NodeView]) -> HashMap<NodeId, (f64, f64)> {
    nodes
        .iter()
        .map(|node| {
            let p = node.position.get_untracked();
            (node.id.get_value(), (p.x, p.y))
        })
        .collect()
}

/// Where a node hidden in a collapsed group is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    /// The group's id.
    pub group: String,
    /// The node of the group its box is drawn at.
    pub anchor: NodeId,
}

/// The nodes hidden in collapsed groups, each with where it is drawn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Folds(HashMap<NodeId, Fold>);

impl Folds {
    /// The folds of the editor's document, kept as its groups and nodes
    /// change. A box is drawn at its group's top-left node, picked when
    /// the groups or the nodes change: a collapsed group's nodes move
    /// only together, so it stays the top-left one.
    pub fn follow(editor: Editor) -> Memo<Folds> {
        let collapsed = Memo::new(move |_| editor.skeleton.with(collapsed_groups));
        Memo::new(move |_| {
            let collapsed = collapsed.get();
            if collapsed.is_empty() {
                return Folds::default();
            }
            Folds::of(
                &collapsed,
                &editor.nodes.with(|nodes| places_untracked(nodes)),
            )
        })
    }

    /// The folds of the editor's document as it is now (untracked).
    pub fn now(editor: Editor) -> Folds {
        let collapsed = editor.skeleton.with_untracked(collapsed_groups);
        if collapsed.is_empty() {
            return Folds::default();
        }
        Folds::of(
            &collapsed,
            &editor.nodes.with_untracked(|nodes| places_untracked(nodes)),
        )
    }

    /// The folds of `collapsed` groups (id, nodes), their nodes at `at`.
    pub fn of(collapsed: &[(String, Vec<NodeId>)], at: &HashMap<NodeId, (f64, f64)>) -> Folds {
        let mut folds = HashMap::new();
        for (group, nodes) in collapsed {
            let anchor = nodes
                .iter()
                .filter_map(|id| at.get(id).map(|place| (id, *place)))
                .min_by(|(_, a), (_, b)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)))
                .map(|(id, _)| id.clone());
            let Some(anchor) = anchor else { continue };
            for node in nodes {
                folds.entry(node.clone()).or_insert_with(|| Fold {
                    group: group.clone(),
                    anchor: anchor.clone(),
                });
            }
        }
        Folds(folds)
    }

    /// Whether node `id` is hidden in a collapsed group.
    pub fn hides(&self, id: &NodeId) -> bool {
        self.0.contains_key(id)
    }

    /// The node whose place node `id` is drawn at: its group's anchor
    /// when hidden, else itself.
    pub fn drawn_at<'a>(&'a self, id: &'a NodeId) -> &'a NodeId {
        self.0.get(id).map_or(id, |fold| &fold.anchor)
    }

    /// Whether an edge runs between two nodes of one collapsed group (it
    /// is inside the box, and not drawn).
    pub fn inside(&self, edge: &EdgeSpec) -> bool {
        match (self.0.get(&edge.from), self.0.get(&edge.to)) {
            (Some(a), Some(b)) => a.group == b.group,
            _ => false,
        }
    }

    /// The collapsed group node `id` is hidden in.
    pub fn group_of(&self, id: &NodeId) -> Option<&str> {
        self.0.get(id).map(|fold| fold.group.as_str())
    }

    /// Whether nothing is folded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::format::NodeSpec;

    fn graph(ids: &[&str]) -> GraphDocument {
        let mut document = GraphDocument::new("g");
        for id in ids {
            document.nodes.push(
                serde_json::from_value::<NodeSpec>(serde_json::json!({"id": id, "kind": "set"}))
                    .expect("a node"),
            );
        }
        document
    }

    fn ids(ids: &[&str]) -> BTreeSet<NodeId> {
        ids.iter().map(|id| NodeId::from(*id)).collect()
    }

    #[test]
    fn framing_takes_nodes_from_their_old_group_and_drops_it_when_empty() {
        let mut document = graph(&["a", "b", "c"]);
        let first = frame(&mut document, &ids(&["a", "b"])).expect("framed");
        assert_eq!(document.groups[0].label, "Group 1");
        assert_eq!(first, "group-1");
        frame(&mut document, &ids(&["a", "b", "c", "ghost"])).expect("framed");
        assert_eq!(document.groups.len(), 1, "the first group, emptied, went");
        assert_eq!(document.groups[0].nodes.len(), 3, "no ghost member");
        assert_eq!(frame(&mut document, &ids(&["ghost"])), None);
    }

    #[test]
    fn a_collapsed_group_is_drawn_at_its_top_left_node_and_hides_its_inner_edges() {
        let at: HashMap<NodeId, (f64, f64)> = [
            ("a", (300.0, 0.0)),
            ("b", (100.0, 200.0)),
            ("c", (100.0, 50.0)),
            ("out", (0.0, 0.0)),
        ]
        .into_iter()
        .map(|(id, p)| (NodeId::from(id), p))
        .collect();
        let folds = Folds::of(
            &[("g".into(), vec!["a".into(), "b".into(), "c".into()])],
            &at,
        );
        let c = NodeId::from("c");
        let out = NodeId::from("out");
        assert_eq!(folds.drawn_at(&NodeId::from("a")), &c);
        assert_eq!(folds.drawn_at(&NodeId::from("b")), &c);
        assert_eq!(folds.drawn_at(&out), &out);
        assert!(folds.hides(&c) && !folds.hides(&out));
        let edge = |from: &str, to: &str| EdgeSpec {
            id: "e".into(),
            from: from.into(),
            to: to.into(),
            condition: None,
            route: None,
        };
        assert!(folds.inside(&edge("a", "b")));
        assert!(!folds.inside(&edge("out", "a")));
        // A group whose nodes are all gone hides nothing.
        assert!(Folds::of(&[("g".into(), vec!["gone".into()])], &at).is_empty());
    }
}
