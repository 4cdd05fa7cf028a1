//! An edge's label on the canvas: its route or condition, placed on the
//! edge's path, a button that selects the edge.

use crate::editor::attr_keys::DataEdge;
use crate::live::RunView;
use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::prelude::*;
use std::collections::HashMap;

use super::Selection;
use super::edge_path::edge_looks;
use super::label_text::edge_label;
use super::loops::{LoopRoutes, edge_route};

/// An edge's condition or route, on a background above the nodes (so no
/// node hides it), at the place its route chose; the whole text on hover.
#[component]
pub(super) fn EdgeLabel(
    selection: Selection,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    loops: LoopRoutes,
    edge: heddle_engine::format::EdgeSpec,
    live: RwSignal<RunView>,
) -> impl IntoView {
    let route = edge_route(positions, loops, &edge);
    let full = edge
        .route
        .clone()
        .or_else(|| edge.condition.clone())
        .unwrap_or_default();
    let label = edge_label(&full);
    let style = move || {
        route.with(|route| {
            route.as_ref().map_or_else(
                || "display: none".to_string(),
                |route| format!("left: {}px; top: {}px", route.label.0, route.label.1),
            )
        })
    };
    let (selected, taken, walked) = edge_looks(selection, &edge, live);
    view! {
        <div
            class="editor-edge-label"
            class:selected=selected
            class:taken=taken
            class:walked=walked
            style=style
            title=full
        >
            {label}
        </div>
    }
    .attr(DataEdge, edge.id.to_string())
}
