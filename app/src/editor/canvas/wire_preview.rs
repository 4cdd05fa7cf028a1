//! The edge being drawn from a port: its line to the pointer, and why it
//! cannot land where the pointer is (when it cannot).

use crate::editor::gestures::Gestures;
use crate::editor::model::{NODE_HEIGHT, NODE_WIDTH};
use crate::editor::routing::{self};
use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::prelude::*;
use std::collections::HashMap;

/// The edge being drawn, red when it cannot land.
#[component]
pub(super) fn WirePreview(
    gestures: Gestures,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
) -> impl IntoView {
    move || {
        let wire = gestures.wire.get()?;
        let from = positions.with(|map| map.get(&wire.from).copied())?.get();
        let d = routing::forward(
            from.x + NODE_WIDTH,
            from.y + NODE_HEIGHT / 2.0,
            wire.to.x,
            wire.to.y,
        )
        .path;
        let refused = wire.refusal.is_some();
        Some(view! {
            <g class="editor-wire" class:refused=refused aria-hidden="true">
                <path d=d />
            </g>
        })
    }
}

/// Why the edge being drawn cannot land, next to the pointer and above the
/// nodes (the edges' layer is under them).
#[component]
pub(super) fn WireReason(gestures: Gestures) -> impl IntoView {
    move || {
        let wire = gestures.wire.get()?;
        let reason = wire.refusal?;
        let style = format!("left: {}px; top: {}px", wire.to.x + 14.0, wire.to.y + 14.0);
        Some(view! { <div class="editor-wire-reason" role="status" style=style>{reason}</div> })
    }
}
