//! One edge on the canvas: its path (straight, curved or a loop around
//! the nodes it skips) and how it looks (taken by the run, selected, a
//! problem's).

use crate::editor::attr_keys::{D, DataEdge};
use crate::live::RunView;
use heddle_engine::format::Position;
use heddle_engine::validate::Problem;
use heddle_engine::{EdgeId, NodeId};
use leptos::prelude::*;
use std::collections::HashMap;

use super::Selection;
use super::loops::{LoopRoutes, edge_route};

#[component]
pub(super) fn EdgePath(
    editor: crate::editor::state::Editor,
    selection: Selection,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    loops: LoopRoutes,
    edge: heddle_engine::format::EdgeSpec,
    live: RwSignal<RunView>,
    problems: Memo<Vec<Problem>>,
) -> impl IntoView {
    let id: EdgeId = edge.id.clone();
    let route = edge_route(positions, loops, &edge);
    let path = move || {
        route.with(|route| {
            route
                .as_ref()
                .map(|route| route.path.clone())
                .unwrap_or_default()
        })
    };
    let conditional = edge.route.is_some() || edge.condition.is_some();
    let own_problems = {
        let id = id.clone();
        Memo::new(move |_| {
            problems.with(|all| {
                all.iter()
                    .filter(|problem| problem.edge.as_ref() == Some(&id))
                    .map(|problem| problem.message.clone())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
    };
    let (selected, taken, walked) = edge_looks(selection, &edge, live);
    let landing = {
        let id = id.clone();
        move || {
            selection
                .landing
                .with(|landing| landing.as_ref() == Some(&id))
        }
    };
    // Named for a screen reader as a person reads it: "From Writer to
    // Critic, route revise". Read as the edge is drawn, and again as it
    // takes the focus (`edge_keys::focused`), after a node was renamed.
    let name = edge_name(editor, &edge);
    // One class attribute, one effect (hundreds of edges hydrate).
    let class = move || {
        let mut class = String::from("editor-edge");
        for (name, on) in [
            (" conditional", conditional),
            (" selected", selected()),
            (" taken", taken()),
            (" walked", walked()),
            (" landing", landing()),
            (" has-problems", own_problems.with(|text| !text.is_empty())),
        ] {
            if on {
                class.push_str(name);
            }
        }
        class
    };
    // The whole edge selects it: the wide hit area and the drawn line (its
    // arrow is the stylesheet's).
    let hit = view! {
        <path class="editor-edge-hit">
            {move || own_problems.with(|text| (!text.is_empty()).then(|| view! { <title>{text.clone()}</title> }))}
        </path>
    }
    .attr(D, path);
    let line = view! { <path class="editor-edge-line" /> }.attr(D, path);
    // Out of the Tab order (E on a node reaches it; see `edge_keys.rs`).
    view! {
        <g class=class tabindex="-1" role="group" aria-roledescription="edge" aria-label=name>
            {hit}
            {line}
        </g>
    }
    .attr(DataEdge, id.to_string())
}

/// An edge's name, as a person reads it: "From Writer to Critic, route
/// revise" (its nodes by label, read untracked).
pub(crate) fn edge_name(
    editor: crate::editor::state::Editor,
    edge: &heddle_engine::format::EdgeSpec,
) -> String {
    let mut name = format!(
        "From {} to {}",
        editor.name_of(edge.from.as_str()),
        editor.name_of(edge.to.as_str())
    );
    if let Some(route) = &edge.route {
        name.push_str(&format!(", route {route}"));
    }
    if let Some(condition) = &edge.condition {
        name.push_str(&format!(", when {condition}"));
    }
    name
}

/// Whether an edge is selected, whether the watched run's latest step
/// took it, and whether the run took it at all (the way it went): shared
/// by its line and its label (both pressed through the canvas).
pub(super) fn edge_looks(
    selection: Selection,
    edge: &heddle_engine::format::EdgeSpec,
    live: RwSignal<RunView>,
) -> (
    impl Fn() -> bool + Clone + Send + Sync + use<>,
    impl Fn() -> bool + Clone + Send + Sync + use<>,
    impl Fn() -> bool + Clone + Send + Sync + use<>,
) {
    let selected = {
        let id = edge.id.clone();
        move || {
            selection
                .edge
                .with(|selected| selected.as_ref() == Some(&id))
        }
    };
    let taken = {
        let (from, to) = (edge.from.to_string(), edge.to.to_string());
        move || live.with(|view| view.edges_taken.iter().any(|(a, b)| *a == from && *b == to))
    };
    // One look-up an edge, however long the way (a big graph's run walks
    // thousands of edges, and every edge asks at every update).
    let walked = {
        let edge = (edge.from.to_string(), edge.to.to_string());
        move || live.with(|view| view.edges_walked.contains(&edge))
    };
    (selected, taken, walked)
}
