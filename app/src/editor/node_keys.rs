//! A focused node's keys, read by the canvas (nodes carry no listeners of
//! their own, see `pressed.rs`): focusing a node selects it (unless it is
//! already among the selected); arrows go to the next node that way, Alt
//! (or Shift) with an arrow moves it, C opens the list of nodes it may
//! lead to (`connect_menu.rs`), E goes to its edges (`edge_keys.rs`).

use std::collections::BTreeSet;

use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::connect_menu::focus_node;
use super::gestures::Gestures;
use super::groups::Folds;
use super::keyboard_nav::{Direction, NUDGE, next_node};
use super::node_menu::NodeMenuAt;
use super::panels::Panels;
use super::state::Editor;

/// The node the event's target is (not a part inside one), with its
/// element.
fn node_of(event: &ev::Event) -> Option<(NodeId, web_sys::Element)> {
    let element = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::Element>().ok())?;
    if !element.class_list().contains("canvas-node") {
        return None;
    }
    let id = element.get_attribute("data-node")?;
    Some((NodeId::from(id), element))
}

/// A node took the focus: it is selected, and shown when the keyboard
/// brought it. A Shift (Ctrl, ⌘) press's focus leaves the selection as
/// the press made it (`pressed::press_node`).
pub fn focused(editor: Editor, gestures: Gestures, event: &ev::FocusEvent) {
    let Some((id, element)) = node_of(event) else {
        return;
    };
    if gestures
        .toggled
        .with_value(|toggled| toggled.as_ref() == Some(&id))
    {
        gestures.toggled.set_value(None);
        return;
    }
    // Reached from the keyboard (Tab, the arrows): the view follows it,
    // so a focused node is never off the canvas. A click leaves the view
    // where it is.
    if element.matches(":focus-visible").unwrap_or(false)
        && let Some(canvas) = element.closest(".editor-canvas").ok().flatten()
    {
        let rect = canvas.get_bounding_client_rect();
        editor.reveal(&id, rect.width(), rect.height());
    }
    if !editor
        .selected
        .with_untracked(|selected| selected.contains(&id))
    {
        editor.selected.set(BTreeSet::from([id]));
        editor.selected_edge.set(None);
        editor.selected_note.set(None);
    }
}

/// Goes from node `from` to the next node `direction` leads to and
/// focuses it. A collapsed group is one place on the way, its card.
pub fn go(editor: Editor, from: &NodeId, direction: Direction) {
    let positions = editor.positions().get_untracked();
    let folds = Folds::now(editor);
    let here = folds.drawn_at(from);
    let Some(at) = positions.get(here).map(|at| at.get_untracked()) else {
        return;
    };
    // A hidden node is a place only as its group's anchor (the card).
    let others = positions
        .iter()
        .filter(|(other, _)| *other != here && folds.drawn_at(other) == *other)
        .map(|(other, at)| (other.clone(), at.get_untracked()));
    let Some(next) = next_node(at, direction, others) else {
        return;
    };
    match folds.group_of(&next) {
        Some(group) => {
            let selector = format!(
                ".canvas-group-box[data-group=\"{}\"]",
                group.replace(['"', '\\'], "")
            );
            crate::components::focus_first(&selector);
        }
        None => focus_node(editor, &next),
    }
}

/// A key on a focused node.
pub fn pressed(
    editor: Editor,
    gestures: Gestures,
    panels: Option<Panels>,
    event: &ev::KeyboardEvent,
) {
    let Some((id, element)) = node_of(event) else {
        return;
    };
    if event.ctrl_key() || event.meta_key() {
        return;
    }
    let positions = editor.positions().get_untracked();
    let Some(here) = positions.get(&id).map(|at| at.get_untracked()) else {
        return;
    };
    if let Some(direction) = Direction::of_key(&event.key()) {
        event.prevent_default();
        if event.alt_key() || event.shift_key() {
            if editor.can_edit {
                let (dx, dy) = direction.step(NUDGE);
                editor.change(|document| {
                    if let Some(spec) = document.nodes.iter_mut().find(|spec| spec.id == id) {
                        spec.position = Some(Position {
                            x: here.x + dx,
                            y: here.y + dy,
                        });
                    }
                });
            }
            return;
        }
        go(editor, &id, direction);
        return;
    }
    // Enter edits it: the focus goes to its label in the inspector
    // (Escape there comes back to the node).
    if event.key() == "Enter" && !event.alt_key() && !event.shift_key() {
        event.prevent_default();
        event.stop_propagation();
        edit(editor, panels, id);
        return;
    }
    if matches!(event.key().as_str(), "e" | "E") {
        if super::edge_keys::enter_edges(editor, &id) {
            event.prevent_default();
            event.stop_propagation();
        }
        return;
    }
    let leads_on = editor.nodes.with_untracked(|nodes| {
        nodes
            .iter()
            .find(|node| node.id.get_value() == id)
            .is_some_and(|node| node.spec.with_untracked(|spec| spec.kind != "end"))
    });
    if matches!(event.key().as_str(), "c" | "C") && editor.can_edit && leads_on {
        event.prevent_default();
        event.stop_propagation();
        // Under the node, where the eye already is.
        let rect = element.get_bounding_client_rect();
        let (x, y) = gestures
            .local(rect.left(), rect.bottom() + 8.0)
            .map_or((16.0, 56.0), |(x, y, _)| (x, y));
        gestures.connect.set(Some(NodeMenuAt { node: id, x, y }));
    }
}

/// Edits node `id` (Enter on it, a double click): it alone selected, the
/// inspector shown (folded away, it opens: a tryout double-clicked a node
/// with it folded, saw nothing, and typed into the canvas's shortcuts),
/// the focus in its Label field.
pub fn edit(editor: Editor, panels: Option<Panels>, id: NodeId) {
    if editor
        .selected
        .with_untracked(|selected| selected.len() != 1 || !selected.contains(&id))
    {
        editor.selected.set(BTreeSet::from([id.clone()]));
        editor.selected_edge.set(None);
    }
    if let Some(panels) = panels {
        panels.show_inspector();
    }
    edit_in_inspector(id, FRAMES_FOR_THE_FORM);
}

/// Frames the inspector's form has to be drawn in before Enter gives up
/// on going to it (it is drawn in an idle moment after the selection).
const FRAMES_FOR_THE_FORM: u32 = 30;

/// Puts the focus in node `id`'s Label field in the inspector once its
/// form is drawn and shown.
fn edit_in_inspector(id: NodeId, frames_left: u32) {
    #[cfg(feature = "hydrate")]
    {
        let selector = format!(
            ".inspector section[data-form-node=\"{}\"] input[name=label]",
            id.as_str().replace(['"', '\\'], "")
        );
        let field = document()
            .query_selector(&selector)
            .ok()
            .flatten()
            .and_then(|field| field.dyn_into::<web_sys::HtmlElement>().ok());
        // Drawn in an inspector still hidden (folded, being shown), it
        // takes no focus yet: tried again a frame on.
        let taken = field.is_some_and(|field| {
            let _ = field.focus();
            document().active_element().as_ref() == Some(field.as_ref())
        });
        if !taken && frames_left > 0 {
            request_animation_frame(move || edit_in_inspector(id, frames_left - 1));
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (id, frames_left);
}
