//! A read-only picture of a graph: its nodes where the editor placed them,
//! and its edges as curves (dashed when conditional or routed), drawn as
//! SVG on the server. The interactive canvas replaces it in the editor.

use heddle_engine::GraphDocument;
use leptos::prelude::*;

use crate::editor::routing::{self, EdgeEnds, NodeSize};
use crate::live::RunView;

const NODE_WIDTH: f64 = 168.0;
const NODE_HEIGHT: f64 = 52.0;
const MARGIN: f64 = 32.0;

/// The preview of a stored document (nothing if it does not read).
#[component]
pub fn GraphPreview(
    document: String,
    /// A run being watched: nodes show its states.
    #[prop(optional)]
    live: Option<RwSignal<RunView>>,
) -> impl IntoView {
    let Ok(document) = GraphDocument::from_json(&document) else {
        return None;
    };
    if document.nodes.is_empty() {
        return None;
    }
    // Nodes without a position are laid out in a row.
    let positions: Vec<(f64, f64)> = document
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            node.position
                .map_or((i as f64 * 220.0, 0.0), |p| (p.x, p.y))
        })
        .collect();
    let min_x = positions.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let min_y = positions.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let max_x = positions
        .iter()
        .map(|p| p.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let max_y = positions
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let at = |i: usize| {
        (
            positions[i].0 - min_x + MARGIN,
            positions[i].1 - min_y + MARGIN,
        )
    };
    let width = max_x - min_x + NODE_WIDTH + 2.0 * MARGIN;
    let index = |id: &heddle_engine::NodeId| document.nodes.iter().position(|node| &node.id == id);
    let placed: Vec<(f64, f64)> = (0..positions.len()).map(at).collect();
    let texts: Vec<(String, String, bool)> = document
        .edges
        .iter()
        .map(|edge| {
            let full = edge.route.clone().or_else(|| edge.condition.clone());
            let conditional = full.is_some();
            let full = full.unwrap_or_default();
            // Long conditions are shortened on the picture; the full text
            // is the label's tooltip.
            let label = if full.chars().count() > 22 {
                format!("{}…", full.chars().take(21).collect::<String>())
            } else {
                full.clone()
            };
            (full, label, conditional)
        })
        .collect();
    let (kept, ends): (Vec<usize>, Vec<EdgeEnds>) = document
        .edges
        .iter()
        .enumerate()
        .filter_map(|(i, edge)| {
            let label = Some(texts[i].1.as_str()).filter(|label| !label.is_empty());
            Some((
                i,
                EdgeEnds {
                    from: index(&edge.from)?,
                    to: index(&edge.to)?,
                    label,
                },
            ))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .unzip();
    // The canvas's own routes: loops run below the nodes, apart.
    let size = NodeSize {
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
    };
    let routes = routing::routes(&placed, size, &ends);
    // Room below for the lowest loop.
    let lowest = routes.iter().map(|route| route.label.1).fold(0.0, f64::max);
    let height = (max_y - min_y + NODE_HEIGHT).max(lowest) + 2.0 * MARGIN;
    let lines = kept
        .iter()
        .zip(&routes)
        .map(|(&i, route)| {
            view! {
                <g class="preview-edge" class:conditional=texts[i].2>
                    <path d=route.path.clone() marker-end="url(#arrow)" />
                </g>
            }
        })
        .collect_view();
    let labels = kept
        .iter()
        .zip(&routes)
        .filter(|(i, _)| texts[**i].2)
        .map(|(&i, route)| {
            let (full, label, _) = texts[i].clone();
            view! {
                <text class="preview-edge-label" x=route.label.0 y=route.label.1 + 4.0 text-anchor="middle">
                    <title>{full}</title>
                    {label}
                </text>
            }
        })
        .collect_view();

    let nodes = document
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let (x, y) = at(i);
            let label = if node.label.is_empty() {
                node.id.to_string()
            } else {
                node.label.clone()
            };
            let class = format!("preview-node kind-{}", node.kind);
            let id = node.id.to_string();
            let state = {
                let id = id.clone();
                move || live.map_or("idle", |live| live.with(|view| view.state_of(&id)))
            };
            let count = {
                let id = id.clone();
                move || {
                    live.and_then(|live| live.with(|view| view.stats.get(&id).map(|stats| stats.runs)))
                        .filter(|runs| *runs > 1)
                        .map(|runs| format!("×{runs}"))
                }
            };
            view! {
                <g class=class data-node=id data-state=state>
                    <rect x=x y=y width=NODE_WIDTH height=NODE_HEIGHT rx="10" />
                    <rect class="preview-kind-bar" x=x y=y width="6" height=NODE_HEIGHT rx="3" />
                    <text class="preview-label" x=x + 16.0 y=y + 22.0>{label}</text>
                    <text class="preview-kind" x=x + 16.0 y=y + 40.0>{node.kind.clone()}</text>
                    <text class="preview-count" x=x + NODE_WIDTH - 10.0 y=y + 22.0 text-anchor="end">{count}</text>
                </g>
            }
        })
        .collect_view();

    Some(view! {
        <svg
            class="graph-preview"
            viewBox=format!("0 0 {width} {height}")
            width=width
            height=height
            role="img"
            aria-label=format!("{} nodes and {} edges", document.nodes.len(), document.edges.len())
        >
            <defs>
                <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                    <path d="M0,0 L10,5 L0,10 z" />
                </marker>
            </defs>
            {lines}
            {nodes}
            {labels}
        </svg>
    })
}
