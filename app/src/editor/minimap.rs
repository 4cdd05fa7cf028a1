//! The minimap: the whole graph small, with the visible part outlined;
//! clicking it moves the view there. The nodes are drawn as one path per
//! kind, redrawn when they move (a drag's when it ends); a collapsed
//! group is one box, where the canvas draws its card.
//! It shows only when part of the graph is out of view: a graph that is
//! all on screen needs no map, and the corner is free for the graph. A
//! canvas too short for it (the chat open in a small window) has none.

use std::collections::BTreeMap;
use std::fmt::Write;

use heddle_engine::NodeId;
use heddle_engine::format::Position;
use leptos::ev;
use leptos::prelude::*;

use super::gestures::Gestures;
use super::groups::Folds;
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::state::{self, Editor, Viewport};

const WIDTH: f64 = 180.0;
const HEIGHT: f64 = 120.0;
const MARGIN: f64 = 200.0;

/// The world box the minimap shows: `(x, y, scale)`.
fn frame(bounds: (f64, f64, f64, f64)) -> (f64, f64, f64) {
    let (x1, y1, x2, y2) = bounds;
    let scale = (WIDTH / (x2 - x1)).min(HEIGHT / (y2 - y1));
    (x1, y1, scale)
}

/// A node's place: followed (`live`), or read without following.
fn place(position: RwSignal<Position>, live: bool) -> Position {
    if live {
        position.get()
    } else {
        position.get_untracked()
    }
}

/// What the map draws node `id` as: its `kind`; `group` for the node a
/// collapsed group's card stands at; nothing for the group's other nodes
/// (a collapsed group is one box, as on the canvas).
fn drawn_as(folds: &Folds, id: &NodeId, kind: impl FnOnce() -> String) -> Option<String> {
    if !folds.hides(id) {
        Some(kind())
    } else if folds.drawn_at(id) == id {
        Some("group".to_string())
    } else {
        None
    }
}

/// Whether a canvas of this size has room for the map beside the graph:
/// in a short one (1024×700 with the chat open leaves some 240 px) the map
/// would cover a third of it, over the very nodes being read.
fn has_room(width: f64, height: f64) -> bool {
    width >= 420.0 && height >= 300.0
}

#[component]
pub fn Minimap(editor: Editor, gestures: Gestures) -> impl IntoView {
    let folds = Folds::follow(editor);
    // The box around every node. While the pointer is down, moves are not
    // followed (a drag would redraw the map at every frame); the map
    // catches up when it comes up.
    let extent = Memo::new(move |_| {
        let live = !gestures.held.get();
        editor
            .nodes
            .with(|nodes| state::extent(nodes, |position| place(position, live)))
    });
    let bounds = Memo::new(move |_| {
        let (x1, y1, x2, y2) = extent.get().unwrap_or((0.0, 0.0, 800.0, 500.0));
        (x1 - MARGIN, y1 - MARGIN, x2 + MARGIN, y2 + MARGIN)
    });
    // Whether some node is outside the canvas as it is now. Until the
    // canvas has been seen at its size, it is not known, and no map shows.
    let needed = Memo::new(move |_| {
        let Some((width, height)) = gestures.seen_size() else {
            return false;
        };
        if !has_room(width, height) {
            return false;
        }
        let Some((x1, y1, x2, y2)) = extent.get() else {
            return false;
        };
        let v = editor.viewport.get();
        let (left, top) = (x1 * v.zoom + v.x, y1 * v.zoom + v.y);
        let (right, bottom) = (x2 * v.zoom + v.x, y2 * v.zoom + v.y);
        left < 0.0 || top < 0.0 || right > width || bottom > height
    });
    // One path per kind of node, a rectangle per node: a few elements to
    // draw and keep, however large the graph. Not drawn while the map is
    // hidden, and like the extent, not followed while the pointer is down
    // (a dragged node lands on the map when it is dropped).
    let shapes = Memo::new(move |_| {
        let live = !gestures.held.get();
        if !needed.get() {
            return Vec::new();
        }
        let (x0, y0, scale) = frame(bounds.get());
        let (w, h) = (NODE_WIDTH * scale, NODE_HEIGHT * scale);
        let mut by_kind: BTreeMap<String, String> = BTreeMap::new();
        let folds = folds.get();
        editor.nodes.with(|nodes| {
            for node in nodes {
                let kind = if folds.is_empty() {
                    node.spec.with_untracked(|spec| spec.kind.clone())
                } else {
                    let kind = node.id.with_value(|id| {
                        drawn_as(&folds, id, || {
                            node.spec.with_untracked(|spec| spec.kind.clone())
                        })
                    });
                    let Some(kind) = kind else { continue };
                    kind
                };
                let p = place(node.position, live);
                let path = by_kind.entry(kind).or_default();
                let _ = write!(
                    path,
                    "M{:.1} {:.1}h{w:.1}v{h:.1}h-{w:.1}z",
                    (p.x - x0) * scale,
                    (p.y - y0) * scale
                );
            }
        });
        by_kind.into_iter().collect::<Vec<_>>()
    });
    let view_box = move || {
        let (x0, y0, scale) = frame(bounds.get());
        let v = editor.viewport.get();
        let (width, height) = gestures.seen_size().unwrap_or_default();
        let top_left = v.to_world(0.0, 0.0);
        let (w, h) = (width / v.zoom, height / v.zoom);
        (
            (top_left.x - x0) * scale,
            (top_left.y - y0) * scale,
            w * scale,
            h * scale,
        )
    };
    let jump = move |event: ev::PointerEvent| {
        event.stop_propagation();
        let Some(target) = event
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        else {
            return;
        };
        let rect = target.get_bounding_client_rect();
        let (mx, my) = (
            (event.client_x() as f64 - rect.left()) * WIDTH / rect.width().max(1.0),
            (event.client_y() as f64 - rect.top()) * HEIGHT / rect.height().max(1.0),
        );
        let (x0, y0, scale) = frame(bounds.get_untracked());
        let world = Position {
            x: x0 + mx / scale,
            y: y0 + my / scale,
        };
        let (width, height) = gestures.size();
        editor.viewport.update(|v| {
            *v = Viewport {
                x: width / 2.0 - world.x * v.zoom,
                y: height / 2.0 - world.y * v.zoom,
                zoom: v.zoom,
            }
        });
    };
    // A selected node under the map (the one being worked on, in the
    // canvas's bottom right corner): the map steps aside to the left. So
    // it does for any node under it while the left corner is free: a
    // tryout found a branch hidden under it on a 340 px canvas. (A look at
    // every node's place as the view moves: some microseconds for 2,000.)
    let positions = editor.positions();
    let aside = Memo::new(move |_| {
        if !needed.get() {
            return false;
        }
        let Some(size) = gestures.seen_size() else {
            return false;
        };
        let viewport = editor.viewport.get();
        let selected_under = editor.selected.with(|selected| {
            positions.with(|positions| {
                selected
                    .iter()
                    .filter_map(|id| positions.get(id))
                    .any(|at| under_map(size, &viewport, at.get(), Corner::Right))
            })
        });
        if selected_under {
            return true;
        }
        // Where the nodes lie once a drag is over.
        if gestures.held.get() {
            return false;
        }
        positions.with(|positions| {
            let (mut right, mut left) = (false, false);
            for at in positions.values() {
                let at = at.get_untracked();
                right |= under_map(size, &viewport, at, Corner::Right);
                left |= under_map(size, &viewport, at, Corner::Left);
                if right && left {
                    break;
                }
            }
            right && !left
        })
    });
    view! {
        <svg
            class="minimap"
            class:minimap-hidden=move || !needed.get()
            class:minimap-aside=move || aside.get()
            viewBox=format!("0 0 {WIDTH} {HEIGHT}")
            role="img"
            aria-label="Minimap: click to move the view"
            on:pointerdown=jump
        >
            <For each=move || shapes.get() key=|shape| shape.clone() let:shape>
                <path class=format!("minimap-node kind-{}", shape.0) d=shape.1 />
            </For>
            <rect
                class="minimap-view"
                x=move || view_box().0
                y=move || view_box().1
                width=move || view_box().2
                height=move || view_box().3
            />
        </svg>
    }
}

/// A bottom corner of the canvas, where the map may stand.
#[derive(Clone, Copy)]
enum Corner {
    Right,
    Left,
}

/// Whether a node at `at` is drawn under the map in `corner` of a canvas
/// of `size` (the map at its largest, with its margin).
fn under_map(size: (f64, f64), viewport: &Viewport, at: Position, corner: Corner) -> bool {
    const MAP: (f64, f64) = (180.0 + 24.0, 120.0 + 24.0);
    let (width, height) = size;
    let (left, top) = (
        at.x * viewport.zoom + viewport.x,
        at.y * viewport.zoom + viewport.y,
    );
    let (right, bottom) = (
        left + NODE_WIDTH * viewport.zoom,
        top + NODE_HEIGHT * viewport.zoom,
    );
    let across = match corner {
        Corner::Right => right > width - MAP.0 && left < width,
        Corner::Left => left < MAP.0 && right > 0.0,
    };
    across && bottom > height - MAP.1 && top < height
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn a_node_in_the_maps_corner_is_under_it() {
        let view = Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 1.0,
        };
        let size = (1000.0, 600.0);
        let at = |x, y| Position { x, y };
        let right = |x, y| under_map(size, &view, at(x, y), Corner::Right);
        assert!(right(900.0, 520.0));
        assert!(right(700.0, 500.0), "its right end");
        assert!(!right(100.0, 520.0), "bottom left");
        assert!(!right(900.0, 100.0), "top right");
        assert!(!right(1100.0, 520.0), "out of view");
        // The left corner, where the map steps aside to.
        let left = |x, y| under_map(size, &view, at(x, y), Corner::Left);
        assert!(left(100.0, 520.0));
        assert!(left(-150.0, 520.0), "its right end");
        assert!(!left(900.0, 520.0), "bottom right");
        assert!(!left(100.0, 100.0), "top left");
        assert!(!left(-300.0, 520.0), "out of view");
    }

    #[test]
    fn a_short_canvas_has_no_room_for_the_map() {
        // 1024×700 with a conversation going: the canvas is 548 × 240.
        assert!(!has_room(548.0, 240.0));
        // The same window, the chat idle, or a bigger window.
        assert!(has_room(548.0, 320.0));
        assert!(has_room(1200.0, 700.0));
        assert!(!has_room(380.0, 700.0));
    }

    #[test]
    fn a_collapsed_group_is_one_box_at_its_card() {
        let at: HashMap<NodeId, (f64, f64)> = [("a", (0.0, 0.0)), ("b", (200.0, 0.0))]
            .into_iter()
            .map(|(id, p)| (NodeId::from(id), p))
            .collect();
        let folds = Folds::of(&[("g".into(), vec!["a".into(), "b".into()])], &at);
        let kind = || "llm".to_string();
        assert_eq!(
            drawn_as(&folds, &"a".into(), kind).as_deref(),
            Some("group")
        );
        assert_eq!(drawn_as(&folds, &"b".into(), kind), None);
        assert_eq!(drawn_as(&folds, &"c".into(), kind).as_deref(), Some("llm"));
    }
}
