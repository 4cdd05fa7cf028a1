//! A `fan_out` node's link to the node it sends items to: a dashed line
//! labelled with what is spread (`each item of topics`), between the two
//! nodes or, where they stand too close for it, above them. It is no edge (the
//! target runs once per item, not once), so it cannot be selected or
//! deleted; the node's form changes it.

use crate::editor::model::{NODE_HEIGHT, NODE_WIDTH};
use crate::editor::routing;
use crate::editor::state::Editor;
use heddle_engine::NodeId;
use heddle_engine::format::Position;
use heddle_engine::kinds::BuiltinKind;
use leptos::prelude::*;
use std::collections::HashMap;

/// A fan-out, what it spreads, and where to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Spread {
    from: NodeId,
    to: NodeId,
    over: String,
}

impl Spread {
    /// The fan-out node.
    pub(super) fn from(&self) -> &NodeId {
        &self.from
    }

    /// The node it sends items to.
    pub(super) fn to(&self) -> &NodeId {
        &self.to
    }
}

/// Every fan-out's link, kept as the nodes' settings change.
pub(super) fn sends(editor: Editor) -> Memo<Vec<Spread>> {
    Memo::new(move |_| {
        editor.nodes.with(|nodes| {
            nodes
                .iter()
                .filter_map(|node| {
                    node.spec.with(|spec| {
                        if spec.kind != BuiltinKind::FanOut.name() {
                            return None;
                        }
                        let to = spec.config.get("to")?.as_str()?;
                        Some(Spread {
                            from: spec.id.clone(),
                            to: NodeId::from(to),
                            over: spec
                                .config
                                .get("over")
                                .and_then(|over| over.as_str())
                                .unwrap_or_default()
                                .to_string(),
                        })
                    })
                })
                .collect()
        })
    })
}

#[component]
pub(super) fn FanOutLink(
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    send: Spread,
) -> impl IntoView {
    let Spread { from, to, over } = send;
    let ends = (from.clone(), to.clone());
    let route = Memo::new(move |_| {
        let (a, b) = positions.with(|map| (map.get(&from).copied(), map.get(&to).copied()));
        let (a, b) = (a?.get(), b?.get());
        Some(routing::forward(
            a.x + NODE_WIDTH,
            a.y + NODE_HEIGHT / 2.0,
            b.x,
            b.y + NODE_HEIGHT / 2.0,
        ))
    });
    let label = if over.trim().is_empty() {
        "each item".to_string()
    } else {
        format!("each item of {}", over.trim())
    };
    // Between the two nodes when it fits there; else above them (a chain
    // laid out close would hide it under its nodes).
    let half_width = label.chars().count() as f64 * 3.3 + 8.0;
    let above = Memo::new(move |_| {
        let (a, b) = positions.with(|map| (map.get(&ends.0).copied(), map.get(&ends.1).copied()));
        let (a, b) = (a?.get(), b?.get());
        let gap = b.x - (a.x + NODE_WIDTH);
        (2.0 * half_width + 12.0 > gap).then(|| a.y.min(b.y) - 8.0)
    });
    move || {
        route.get().map(|route| {
            let (x, y) = route.label;
            let y = above.get().unwrap_or(y - 6.0);
            view! {
                <g class="editor-send" aria-hidden="true">
                    <path class="editor-send-line" d=route.path />
                    <text class="editor-send-label" x=x y=y text-anchor="middle">{label.clone()}</text>
                </g>
            }
        })
    }
}
