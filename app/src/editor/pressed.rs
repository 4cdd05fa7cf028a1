//! What a press on the canvas landed on, and what a press on each part
//! does. Nodes, their ports and edges carry no listeners of their own: the
//! canvas reads the part from the element under the pointer (its
//! `data-node`, `data-edge`, `data-group` and `port-out` marks). A 500-node graph
//! otherwise hydrates some 1,700 listeners, each a closure made and an
//! `addEventListener` call before the page answers (docs/performance.md).

use std::collections::BTreeSet;

use heddle_engine::{EdgeId, NodeId};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::gestures::{Drag, Gestures, commit_focused_field};
use super::node_menu::NodeMenuAt;
use super::state::Editor;

/// The part of the canvas a press landed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pressed {
    /// A node's output port: the start of a new edge.
    Port(NodeId),
    /// A node, anywhere but its output port.
    Node(NodeId),
    /// An edge's line or its label.
    Edge(EdgeId),
    /// A group's bar, or a collapsed group's card: its id.
    Group(String),
    /// The canvas itself (or a part that handles its own presses).
    Canvas,
}

impl Pressed {
    /// Reads the part from the element the event's target is in.
    pub fn of(event: &ev::Event) -> Pressed {
        let Some(element) = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
        else {
            return Pressed::Canvas;
        };
        let within = |selector: &str| element.closest(selector).ok().flatten();
        let mark = |selector: &str, name: &str| {
            within(selector).and_then(|found| found.get_attribute(name))
        };
        if let Some(group) = mark(".canvas-group-bar, .canvas-group-box", "data-group") {
            return Pressed::Group(group);
        }
        if within(".port-out").is_some()
            && let Some(node) = mark(".canvas-node", "data-node")
        {
            return Pressed::Port(NodeId::from(node));
        }
        if let Some(node) = mark(".canvas-node", "data-node") {
            if on_a_hidden_port(event, &element) {
                return Pressed::Port(NodeId::from(node));
            }
            return Pressed::Node(NodeId::from(node));
        }
        if let Some(edge) = mark("[data-edge]", "data-edge") {
            return Pressed::Edge(EdgeId::from(edge));
        }
        Pressed::Canvas
    }
}

/// Zoomed out past drawing ports (below 50%: a dot would be under 6 px),
/// whether a press landed on the right edge of a node that leads on
/// (within 10 px on screen), where its output dot would be: a wire starts
/// there as from the dot, rather than the node moving.
fn on_a_hidden_port(event: &ev::Event, element: &web_sys::Element) -> bool {
    const REACH_PX: f64 = 10.0;
    let Some(pointer) = event.dyn_ref::<web_sys::MouseEvent>() else {
        return false;
    };
    let far = element
        .closest(".editor-zoom")
        .ok()
        .flatten()
        .and_then(|zoom| zoom.get_attribute("data-detail"))
        .is_some_and(|detail| detail != "full");
    let Some(node) = element.closest(".canvas-node").ok().flatten() else {
        return false;
    };
    let leads_on = !node.class_list().contains("kind-end");
    let right = node.get_bounding_client_rect().right();
    far && leads_on && f64::from(pointer.client_x()) >= right - REACH_PX
}

/// A node pressed: selects it (Shift, Ctrl or ⌘ toggles it in the
/// selection, as in React Flow and n8n) and starts moving the selection.
pub fn press_node(editor: Editor, gestures: Gestures, id: NodeId, event: &ev::PointerEvent) {
    if event.button() != 0 {
        return;
    }
    gestures.hold();
    gestures.menu.set(None);
    commit_focused_field();
    let shift = event.shift_key() || event.ctrl_key() || event.meta_key();
    gestures.toggled.set_value(shift.then(|| id.clone()));
    editor.selected_edge.set(None);
    // Pressed among others selected: they stay selected for a drag; a
    // click (no move) then selects it alone, so a node of a selected group
    // is reached in one click, not only after clicking beside it.
    let among_others = !shift
        && editor
            .selected
            .with_untracked(|selected| selected.len() > 1 && selected.contains(&id));
    editor.selected.update(|selected| {
        if shift {
            if !selected.remove(&id) {
                selected.insert(id.clone());
            }
        } else if !selected.contains(&id) {
            selected.clear();
            selected.insert(id.clone());
        }
    });
    if shift {
        return;
    }
    if !editor.can_edit {
        if among_others {
            editor.selected.set(BTreeSet::from([id]));
        }
        return;
    }
    start_move(editor, gestures, event, among_others.then_some(id));
}

/// A group's bar or card pressed: selects its nodes (Shift adds them to
/// the selection) and starts moving the selection.
pub fn press_group(editor: Editor, gestures: Gestures, id: &str, event: &ev::PointerEvent) {
    if event.button() != 0 {
        return;
    }
    let members = super::groups::members(editor, id);
    gestures.hold();
    gestures.menu.set(None);
    commit_focused_field();
    editor.selected_edge.set(None);
    editor.selected_note.set(None);
    let shift = event.shift_key();
    editor.selected.update(|selected| {
        if !shift {
            selected.clear();
        }
        selected.extend(members.iter().cloned());
    });
    if editor.can_edit && !shift {
        start_move(editor, gestures, event, None);
    }
}

/// Starts moving the selected nodes from where the pointer is (`alone`:
/// the node to select alone should the pointer be released unmoved).
fn start_move(editor: Editor, gestures: Gestures, event: &ev::PointerEvent, alone: Option<NodeId>) {
    let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64) else {
        return;
    };
    let from = editor.viewport.get_untracked().to_world(x, y);
    let chosen = editor.selected.get_untracked();
    let origins = editor.nodes.with_untracked(|nodes| {
        nodes
            .iter()
            .filter(|node| chosen.contains(&node.id.get_value()))
            .map(|node| (node.position, node.position.get_untracked()))
            .collect()
    });
    gestures.drag.set_value(Drag::Move {
        from,
        origins,
        alone,
    });
}

/// A node's output port pressed: starts drawing an edge from it.
pub fn press_port(editor: Editor, gestures: Gestures, from: NodeId, event: &ev::PointerEvent) {
    if !editor.can_edit {
        // A viewer pressing where a hidden port would be selects the node.
        return press_node(editor, gestures, from, event);
    }
    if event.button() != 0 {
        return;
    }
    gestures.menu.set(None);
    gestures.drag.set_value(Drag::Connect { from });
}

/// An edge pressed: selects it alone.
pub fn press_edge(editor: Editor, id: EdgeId) {
    commit_focused_field();
    editor.selected.set(BTreeSet::new());
    editor.selected_edge.set(Some(id));
}

/// A node's context menu: the node's own menu, where the pointer is.
pub fn node_menu(gestures: Gestures, node: NodeId, event: &ev::MouseEvent) {
    event.prevent_default();
    if let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64) {
        gestures.menu.set(Some(NodeMenuAt { node, x, y }));
    }
}
