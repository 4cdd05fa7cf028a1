//! An expanded group's frame: a tinted box around its nodes with a bar
//! above them holding its name, how many nodes it frames and a button to
//! collapse it. The frame follows its nodes as they move; pressing its bar
//! selects them all and drags them together (`pressed.rs`). Its body lets
//! presses through to the canvas, so panning and the rubber band work
//! inside it as anywhere.

use std::collections::HashMap;

use heddle_engine::NodeId;
use heddle_engine::format::{Group, Position};
use leptos::prelude::*;

use crate::editor::state::Editor;

use super::Selection;
use super::group_toggle::{GroupToggle, names};

use crate::editor::group_room::frame_box;

/// The frame around `group`'s nodes (drawn while it is expanded).
#[component]
pub(super) fn GroupFrame(
    editor: Editor,
    selection: Selection,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    group: Group,
) -> impl IntoView {
    let id = group.id.clone();
    let members = StoredValue::new(group.nodes.clone());
    // The frame around the nodes, from their position signals: it follows
    // a drag. A group's nodes are few next to a graph's. Measured as a new
    // group's room is (`group_room::frame_box`), so nodes stepped out of
    // its way stay out of the frame drawn.
    let frame = Memo::new(move |_| {
        let at = positions.get();
        members.with_value(|members| {
            frame_box(members.iter().filter_map(|id| {
                let p = at.get(id)?.get();
                Some((p.x, p.y))
            }))
        })
    });
    let transform = move || {
        frame
            .get()
            .map(|(x, y, _, _)| format!("translate({x}px, {y}px)"))
            .unwrap_or_default()
    };
    let width = move || {
        frame
            .get()
            .map(|(x1, _, x2, _)| format!("{}px", x2 - x1))
            .unwrap_or_default()
    };
    let height = move || {
        frame
            .get()
            .map(|(_, y1, _, y2)| format!("{}px", y2 - y1))
            .unwrap_or_default()
    };
    let selected = move || {
        selection.nodes.with(|selected| {
            members.with_value(|members| {
                !members.is_empty() && members.iter().all(|id: &NodeId| selected.contains(id))
            })
        })
    };
    let (label, count) = names(&group);
    let name = format!("{label}, group of {count}");
    view! {
        <div
            class=format!("canvas-group tint-{}", group.color.name())
            class:selected=selected
            data-group=id.clone()
            data-testid="group-frame"
            style:transform=transform
            style:width=width
            style:height=height
            role="group"
            aria-label=name
        >
            <div class="canvas-group-bar" data-group=id.clone() title="Drag to move the group">
                <GroupToggle editor id=id.clone() label=label.clone() collapse=true />
                <span class="canvas-group-label">{label}</span>
                <span class="canvas-group-count">{count}</span>
            </div>
        </div>
    }
}
