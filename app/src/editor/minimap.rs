//! The minimap: the whole graph small, with the visible part outlined;
//! clicking it moves the view there. Each node's box follows its own
//! position signal; the frame is recomputed when a change is committed.
//! It shows only when part of the graph is out of view: a graph that is
//! all on screen needs no map, and the corner is free for the graph.

use heddle_engine::format::Position;
use leptos::ev;
use leptos::prelude::*;

use super::canvas::Gestures;
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::state::{Editor, Viewport};

const WIDTH: f64 = 180.0;
const HEIGHT: f64 = 120.0;
const MARGIN: f64 = 200.0;

/// The world box the minimap shows: `(x, y, scale)`.
fn frame(bounds: (f64, f64, f64, f64)) -> (f64, f64, f64) {
    let (x1, y1, x2, y2) = bounds;
    let scale = (WIDTH / (x2 - x1)).min(HEIGHT / (y2 - y1));
    (x1, y1, scale)
}

#[component]
pub fn Minimap(editor: Editor, gestures: Gestures) -> impl IntoView {
    let bounds = Memo::new(move |_| {
        editor.revision.track();
        editor.nodes.with(|nodes| {
            let (mut x1, mut y1, mut x2, mut y2) = (0.0f64, 0.0f64, 800.0f64, 500.0f64);
            for (i, node) in nodes.iter().enumerate() {
                let p = node.position.get_untracked();
                if i == 0 {
                    (x1, y1, x2, y2) = (p.x, p.y, p.x + NODE_WIDTH, p.y + NODE_HEIGHT);
                }
                x1 = x1.min(p.x);
                y1 = y1.min(p.y);
                x2 = x2.max(p.x + NODE_WIDTH);
                y2 = y2.max(p.y + NODE_HEIGHT);
            }
            (x1 - MARGIN, y1 - MARGIN, x2 + MARGIN, y2 + MARGIN)
        })
    });
    // Whether some node is outside the canvas as it is now.
    let needed = move || {
        let v = editor.viewport.get();
        let (width, height) = gestures.tracked_size();
        editor.nodes.with(|nodes| {
            nodes.iter().any(|node| {
                let p = node.position.get();
                let (x, y) = (p.x * v.zoom + v.x, p.y * v.zoom + v.y);
                x < 0.0
                    || y < 0.0
                    || x + NODE_WIDTH * v.zoom > width
                    || y + NODE_HEIGHT * v.zoom > height
            })
        })
    };
    let view_box = move || {
        let (x0, y0, scale) = frame(bounds.get());
        let v = editor.viewport.get();
        let (width, height) = gestures.tracked_size();
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
    view! {
        <svg
            class="minimap"
            class:minimap-hidden=move || !needed()
            viewBox=format!("0 0 {WIDTH} {HEIGHT}")
            role="img"
            aria-label="Minimap: click to move the view"
            on:pointerdown=jump
        >
            <For each=move || editor.nodes.get() key=|node| node.id.get_value() let:node>
                {
                    let place = move || {
                        let (x0, y0, scale) = frame(bounds.get());
                        let p = node.position.get();
                        ((p.x - x0) * scale, (p.y - y0) * scale, NODE_WIDTH * scale, NODE_HEIGHT * scale)
                    };
                    let kind = node.spec.with_untracked(|spec| spec.kind.clone());
                    view! {
                        <rect
                            class=format!("minimap-node kind-{kind}")
                            x=move || place().0
                            y=move || place().1
                            width=move || place().2
                            height=move || place().3
                            rx="2"
                        />
                    }
                }
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
