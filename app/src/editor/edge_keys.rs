//! A focused edge's keys, read by the canvas as a node's are
//! (`node_keys.rs`; edges carry no listeners either). Edges are out of the
//! Tab order, so a big graph is not thousands of stops: E on a node goes
//! to its edges (leaving first, then arriving), one press after another.
//! Focusing an edge selects it; on an edge, Left and Right go to the node
//! it leaves and the node it reaches. Escape goes back to the node E was
//! pressed on (either end: an edge reached from the node it arrives at
//! goes back there, not to its source), E goes on to that node's next
//! edge, and Delete removes the edge and goes back there too.

use std::collections::BTreeSet;

use heddle_engine::{EdgeId, NodeId};
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::connect_menu::focus_node;
use super::model;
use super::state::Editor;

/// The edge the event's target is, by id.
fn edge_of(event: &ev::Event) -> Option<EdgeId> {
    let element = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())?;
    if !element.class_list().contains("editor-edge") {
        return None;
    }
    element.get_attribute("data-edge").map(EdgeId::from)
}

/// An edge took the focus: it is the selection.
pub fn focused(editor: Editor, event: &ev::FocusEvent) {
    let Some(id) = edge_of(event) else {
        return;
    };
    // Its name as its nodes are called now (one renamed since it was
    // drawn): set as it takes the focus, before it is read.
    let name = editor.edges.with_untracked(|edges| {
        edges
            .iter()
            .find(|edge| edge.id == id)
            .map(|edge| super::canvas::edge_name(editor, edge))
    });
    if let (Some(name), Some(element)) = (
        name,
        event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok()),
    ) && element.get_attribute("aria-label").as_deref() != Some(name.as_str())
    {
        let _ = element.set_attribute("aria-label", &name);
    }
    editor.selected.set(BTreeSet::new());
    editor.selected_note.set(None);
    editor.selected_edge.set(Some(id));
}

/// Puts the focus on an edge.
pub fn focus_edge(id: &EdgeId) {
    crate::components::focus_first(&format!(
        ".editor-edge[data-edge=\"{}\"]",
        id.as_str().replace('"', "")
    ));
}

/// The edges of `node` in the order E visits them: those leaving it, then
/// those reaching it, each in the document's order.
pub fn edges_of(editor: Editor, node: &NodeId) -> Vec<EdgeId> {
    editor.edges.with_untracked(|edges| {
        let leaving = edges.iter().filter(|edge| edge.from == *node);
        let reaching = edges
            .iter()
            .filter(|edge| edge.to == *node && edge.from != *node);
        leaving
            .chain(reaching)
            .map(|edge| edge.id.clone())
            .collect()
    })
}

thread_local! {
    /// The node whose edges E is going through: where Escape goes back to.
    static CAME_FROM: std::cell::RefCell<Option<NodeId>> = const { std::cell::RefCell::new(None) };
}

/// E on a node: its first edge, if it has one.
pub fn enter_edges(editor: Editor, node: &NodeId) -> bool {
    match edges_of(editor, node).first() {
        Some(first) => {
            CAME_FROM.with(|came| *came.borrow_mut() = Some(node.clone()));
            focus_edge(first);
            true
        }
        None => false,
    }
}

/// The node to go back to from an edge between `from` and `to`: the one E
/// was pressed on when it is one of them, else `from`.
fn home(from: &NodeId, to: &NodeId) -> NodeId {
    CAME_FROM
        .with(|came| came.borrow().clone())
        .filter(|node| node == from || node == to)
        .unwrap_or_else(|| from.clone())
}

/// A key on a focused edge.
pub fn pressed(editor: Editor, event: &ev::KeyboardEvent) {
    let Some(id) = edge_of(event) else {
        return;
    };
    if event.ctrl_key() || event.meta_key() || event.alt_key() {
        return;
    }
    let Some((from, to)) = editor.edges.with_untracked(|edges| {
        edges
            .iter()
            .find(|edge| edge.id == id)
            .map(|edge| (edge.from.clone(), edge.to.clone()))
    }) else {
        return;
    };
    let home = home(&from, &to);
    match event.key().as_str() {
        "ArrowLeft" | "ArrowUp" => focus_node(editor, &from),
        "ArrowRight" | "ArrowDown" => focus_node(editor, &to),
        "Escape" => focus_node(editor, &home),
        "e" | "E" => {
            // The next edge of the node E was pressed on, round again at
            // the end.
            let all = edges_of(editor, &home);
            let next = all
                .iter()
                .position(|edge| *edge == id)
                .and_then(|at| all.get((at + 1) % all.len()));
            if let Some(next) = next {
                focus_edge(next);
            }
        }
        "Delete" | "Backspace" if editor.can_edit => {
            editor.change(|document| {
                model::remove(document, &BTreeSet::new(), &BTreeSet::from([id.clone()]));
            });
            editor.selected_edge.set(None);
            focus_node(editor, &home);
        }
        _ => return,
    }
    // Handled here: not again by the page's shortcuts.
    event.prevent_default();
    event.stop_propagation();
}
