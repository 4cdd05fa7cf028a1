//! The canvas: nodes as DOM elements over an SVG layer of edges, inside a
//! "world" that pans and zooms with one CSS transform. Pointer gestures
//! (pan, move, connect, rubber band, place from the palette) are one state
//! machine fed by window-level pointer events, so a drag that leaves the
//! canvas still ends cleanly.

mod culling;
mod edge_label;
mod edge_path;
mod fan_out_link;
mod group_box;
mod group_frame;
mod group_toggle;
mod instances;
mod label_text;
mod loops;
mod node;
mod rubber_band;
mod wire_preview;

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::Position;
use heddle_engine::validate::Problem;
use heddle_engine::{EdgeId, NodeId};
use leptos::ev;
use leptos::prelude::*;

use super::gestures::{Drag, Gestures, QuickAdd, commit_focused_field, install_pointer_listeners};
use super::groups::Folds;
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::notes::Notes;
use super::pressed::{Pressed, node_menu, press_edge, press_group, press_node, press_port};
use super::quick_add::QuickAddBox;
use super::routing::NodeSize;
use super::state::{Editor, Viewport};
use crate::live::RunView;
use edge_label::EdgeLabel;
use edge_path::EdgePath;
pub(crate) use edge_path::edge_name;
use fan_out_link::FanOutLink;
use group_box::GroupBox;
use group_frame::GroupFrame;
use loops::LoopRoutes;
use node::CanvasNode;
use rubber_band::RubberBand;
use wire_preview::{WirePreview, WireReason};

/// The canvas.
#[component]
pub fn Canvas(
    editor: Editor,
    gestures: Gestures,
    live: RwSignal<RunView>,
    problems: Memo<Vec<Problem>>,
) -> impl IntoView {
    install_pointer_listeners(editor, gestures);
    let positions = editor.positions();
    // Nodes in a collapsed group are hidden; edges to them end at the
    // group's card, drawn where its top-left node is (`groups.rs`).
    let folds = Folds::follow(editor);
    super::groups::select_whole(editor, folds);
    let shown = shown_positions(positions, folds);
    let loops = LoopRoutes::new(editor, gestures, shown, folds);
    let selection = Selection::of(editor, gestures);
    let fan_outs = fan_out_link::sends(editor);
    let culled = culling::Culled::new(editor, gestures);
    let drawn_fan_outs = move || {
        let mut sends = fan_outs.get();
        folds.with(|folds| {
            sends.retain(|send| {
                (culled.node(send.from()) || culled.node(send.to()))
                    && !(folds.hides(send.from())
                        && folds.group_of(send.from()) == folds.group_of(send.to()))
            })
        });
        sends
    };
    let reading = reading_order(editor, fan_outs);
    let drawn_nodes = move || {
        let mut nodes = culled.nodes(editor);
        folds.with(|folds| {
            if !folds.is_empty() {
                nodes.retain(|node| node.id.with_value(|id| !folds.hides(id)));
            }
        });
        reading.with(|ranks| {
            nodes.sort_by_key(|node| node.id.with_value(|id| ranks.get(id).copied()));
        });
        // A node the new order moves in the page loses the browser's focus
        // (the list's keyed diff moves its element): the node that has it
        // now, before the list is drawn again, takes it back after.
        #[cfg(feature = "hydrate")]
        if let Some(id) = focused_node() {
            culling::keep_focus(id);
        }
        nodes
    };
    let groups = move |collapsed: bool| {
        editor.skeleton.with(|document| {
            document
                .groups
                .iter()
                .filter(|group| group.collapsed == collapsed)
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    let viewport = editor.viewport;
    // Panning moves the world, a composited layer, by a translation: the
    // browser repaints nothing. The zoom's scale and level of detail sit on
    // the element inside it, and change only with the zoom.
    let world_shift = move || {
        let v = viewport.get();
        format!("translate({}px, {}px)", v.x, v.y)
    };
    let zoom = Memo::new(move |_| viewport.get().zoom);
    // Edges' labels are drawn bigger as the graph is zoomed out, so a
    // route still reads (`routing::label_scale`); the stylesheet sizes them.
    let label_scale = loops.label_scale;
    // Nodes' names too, where all of a node is drawn (`Detail::Full`),
    // so a graph fitted at 60% reads its names at 10 px, not 8.
    let title_scale = Memo::new(move |_| title_scale(zoom.get()));
    let world_scale = move || {
        format!(
            "transform: scale({}); --label-scale: {}; --title-scale: {}",
            zoom.get(),
            label_scale.get(),
            title_scale.get()
        )
    };
    let detail = Memo::new(move |_| Detail::at(zoom.get()));
    let drawn = Drawn {
        full: Memo::new(move |_| detail.get() == Detail::Full),
        labelled: Memo::new(move |_| detail.get() != Detail::Tiny),
    };
    // The dot grid is a layer of its own, moved by a transform within one
    // cell: panning then repaints nothing, the compositor only shifts it.
    let cell = Memo::new(move |_| grid_cell(zoom.get()));
    let grid_size = move || format!("{0}px {0}px", cell.get());
    let grid_shift = move || {
        let v = viewport.get();
        let size = cell.get();
        format!(
            "translate({}px, {}px)",
            v.x.rem_euclid(size) - size,
            v.y.rem_euclid(size) - size
        )
    };

    // Nodes, ports and edges are pressed through the canvas (pressed.rs).
    let on_pointerdown = move |event: ev::PointerEvent| {
        // Any press but in the quick-add list (which keeps its own) closes it.
        gestures.close_quick();
        match Pressed::of(&event) {
            Pressed::Port(node) => return press_port(editor, gestures, node, &event),
            Pressed::Node(node) => return press_node(editor, gestures, node, &event),
            Pressed::Edge(edge) => return press_edge(editor, edge),
            Pressed::Group(group) => return press_group(editor, gestures, &group, &event),
            Pressed::Canvas => {}
        }
        gestures.menu.set(None);
        if event.button() != 0 {
            return;
        }
        gestures.hold();
        commit_focused_field();
        let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64)
        else {
            return;
        };
        let shift = event.shift_key();
        if shift && editor.can_edit {
            let from = viewport.get_untracked().to_world(x, y);
            gestures.drag.set_value(Drag::Rubber { from, add: true });
            gestures.rubber.set(Some((from, from)));
        } else {
            editor.selected.set(BTreeSet::new());
            editor.selected_edge.set(None);
            editor.selected_note.set(None);
            gestures.drag.set_value(Drag::Pan {
                from: (x, y),
                origin: viewport.get_untracked(),
            });
        }
    };
    let on_wheel = move |event: ev::WheelEvent| {
        event.prevent_default();
        let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64)
        else {
            return;
        };
        // Lines and pages in pixels (a mouse wheel in Firefox says lines).
        let unit = match event.delta_mode() {
            1 => 16.0,
            2 => gestures.size().1.max(1.0),
            _ => 1.0,
        };
        let (dx, dy) = (event.delta_x() * unit, event.delta_y() * unit);
        viewport.update(|v| {
            *v = if event.ctrl_key() || event.meta_key() {
                // A wheel's notch zooms by about 16%, however big a step
                // the device reports; a trackpad's pinch, in small steps,
                // as smoothly as it moves.
                v.zoom_at((-dy.clamp(-100.0, 100.0) * 0.0015).exp(), x, y)
            } else {
                Viewport {
                    x: v.x - dx,
                    y: v.y - dy,
                    zoom: v.zoom,
                }
            }
        });
    };
    let on_menu = move |event: ev::MouseEvent| {
        if let Pressed::Node(node) | Pressed::Port(node) = Pressed::of(&event) {
            node_menu(gestures, node, &event);
        }
    };
    // Editing a node shows a folded inspector (`node_keys::edit`).
    let panels = use_context::<crate::editor::panels::Panels>();
    let on_dblclick = move |event: ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let on_node = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| {
                element
                    .closest(".canvas-node, .quick-add, .canvas-group-bar")
                    .ok()
                    .flatten()
            })
            .is_some();
        // A double click on a node edits it, as Enter does.
        if let Pressed::Node(node) = Pressed::of(&event) {
            crate::editor::node_keys::edit(editor, panels, node);
            return;
        }
        if on_node || !editor.can_edit {
            return;
        }
        if let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64) {
            let at = viewport.get_untracked().to_world(x, y);
            gestures.open_quick(QuickAdd {
                at,
                x,
                y,
                from: None,
            });
        }
    };

    view! {
        <div
            class="editor-canvas"
            node_ref=gestures.canvas
            on:pointerdown=on_pointerdown
            on:contextmenu=on_menu
            on:wheel=on_wheel
            on:dblclick=on_dblclick
            on:focusin=move |event| {
                crate::editor::node_keys::focused(editor, gestures, &event);
                crate::editor::edge_keys::focused(editor, &event);
            }
            on:keydown=move |event| {
                gestures.toggled.set_value(None);
                crate::editor::node_keys::pressed(editor, gestures, panels, &event);
                crate::editor::edge_keys::pressed(editor, &event);
            }
            // Its keys are its own (arrows, letters): a screen reader passes
            // them through rather than reading on, and says how they go.
            role="application"
            aria-roledescription="canvas"
            aria-label="Canvas"
            aria-describedby="canvas-keys"
            tabindex="0"
            data-skip-target=""
        >
            <p id="canvas-keys" class="visually-hidden">
                "Tab and the arrow keys go from node to node; Alt or Shift with an arrow moves the node. \
                 Enter edits the focused node, C connects it to another, E goes to its edges, Delete removes it. \
                 Question mark lists every key."
            </p>
            <div class="editor-grid" aria-hidden="true" style:background-size=grid_size style:transform=grid_shift></div>
            <div class="editor-world" style:transform=world_shift>
            <div class="editor-zoom" data-detail=move || detail.get().as_str() style=world_scale>
                <For each=move || groups(false) key=|group| group.clone() let:group>
                    <GroupFrame editor selection positions group />
                </For>
                <svg class="editor-edges" role="group" aria-label="Edges">
                    <defs aria-hidden="true">
                        <marker id="editor-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M0,0 L10,5 L0,10 z" />
                        </marker>
                    </defs>
                    <For
                        each=move || folds.with(|folds| culled.edges(editor, |edge| !folds.inside(edge)))
                        key=|edge| (edge.id.clone(), edge.from.clone(), edge.to.clone(), edge.condition.clone(), edge.route.clone())
                        let:edge
                    >
                        <EdgePath editor selection positions=shown loops edge live problems />
                    </For>
                    <For
                        each=drawn_fan_outs
                        key=|send| send.clone()
                        let:send
                    >
                        <FanOutLink positions=shown send />
                    </For>
                    <WirePreview gestures positions=shown />
                </svg>
                <Notes editor gestures />
                <For each=drawn_nodes key=|node| node.id.get_value() let:node>
                    <CanvasNode editor selection node live problems drawn />
                </For>
                // After the nodes: the Tab order reaches a graph's nodes
                // first, from its start, then its collapsed groups.
                <For each=move || groups(true) key=|group| group.clone() let:group>
                    <GroupBox editor selection positions=shown folds live group />
                </For>
                <For
                    each=move || folds.with(|folds| culled.edges(editor, |edge| {
                        (edge.route.is_some() || edge.condition.is_some()) && !folds.inside(edge)
                    }))
                    key=|edge| (edge.id.clone(), edge.condition.clone(), edge.route.clone())
                    let:edge
                >
                    <EdgeLabel selection positions=shown loops edge live />
                </For>
                <RubberBand gestures />
                <WireReason gestures />
            </div>
            </div>
            <QuickAddBox editor gestures />
            {move || editor.nodes.with(Vec::is_empty).then(|| view! {
                <div class="canvas-empty">
                    <h2>"This graph is empty"</h2>
                    <p>
                        {if editor.can_edit {
                            "Drag a node from the palette on the left to start, or type a kind (start, llm, end…) in its search box and press Enter: each one added is joined to the last."
                        } else {
                            "It has no nodes yet."
                        }}
                    </p>
                </div>
            })}
        </div>
    }
}

/// Where each node is drawn: its own place, or for a node hidden in a
/// collapsed group, its group's card's (the group's anchor's signal).
fn shown_positions(
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    folds: Memo<Folds>,
) -> Memo<HashMap<NodeId, RwSignal<Position>>> {
    Memo::new(move |_| {
        folds.with(|folds| {
            positions.with(|map| {
                if folds.is_empty() {
                    return map.clone();
                }
                map.iter()
                    .map(|(id, at)| (id.clone(), *map.get(folds.drawn_at(id)).unwrap_or(at)))
                    .collect()
            })
        })
    })
}

/// The selection as the canvas's nodes and edges follow it: a signal's
/// `set` notifies its readers even when it changes nothing (pressing a
/// node clears the edge selection, mostly already clear), and hundreds of
/// nodes and edges read these. A memo passes on only a change.
#[derive(Clone, Copy)]
struct Selection {
    nodes: Memo<BTreeSet<NodeId>>,
    edge: Memo<Option<EdgeId>>,
    /// The edge a node dragged from the palette would be put into.
    landing: Memo<Option<EdgeId>>,
}

impl Selection {
    fn of(editor: Editor, gestures: Gestures) -> Selection {
        Selection {
            nodes: Memo::new(move |_| editor.selected.get()),
            edge: Memo::new(move |_| editor.selected_edge.get()),
            landing: Memo::new(move |_| gestures.landing.get()),
        }
    }
}

/// Which of a node's parts the zoom draws (from [`Detail`]): followed by
/// every node, so each is its own memo and a zoom that stays within a
/// level wakes no node. Parts not drawn are left out of the page, not
/// hidden: a large graph opens zoomed out, and its page then holds
/// thousands fewer elements to style, lay out and hydrate.
#[derive(Clone, Copy)]
struct Drawn {
    /// Ports, the kind line and the run count.
    full: Memo<bool>,
    /// The label.
    labelled: Memo<bool>,
}

/// How much of each node is drawn at a zoom. Zoomed out, ports and
/// second lines are too small to aim at or read (a port is 6px at zoom
/// 0.5), and text under 4px is noise; each part left out is one less
/// thing for the browser to go over at every frame of a drag or pan
/// (docs/performance.md, "Profiling the editor").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Detail {
    /// Everything.
    Full,
    /// Labels only: no ports, kind line, run count or shadow.
    Far,
    /// Boxes in their kind's colour, edges without arrows.
    Tiny,
}

/// How many times its size a node's name is drawn at `zoom`, where the
/// whole node is drawn (from 50%): enough to read at 10 px on screen (13 px
/// at 100%), in quarter steps (the names are laid out again only when a
/// step is crossed), and at most 1.5 (a longer name is cut sooner).
fn title_scale(zoom: f64) -> f64 {
    const LEAST_PX: f64 = 10.0;
    const PX: f64 = 13.0;
    if !(zoom.is_finite() && zoom > 0.0) {
        return 1.0;
    }
    let wanted = LEAST_PX / (PX * zoom);
    ((wanted * 4.0).ceil() / 4.0).clamp(1.0, 1.5)
}

impl Detail {
    fn at(zoom: f64) -> Detail {
        if zoom < 0.3 {
            Detail::Tiny
        } else if zoom < 0.5 {
            Detail::Far
        } else {
            Detail::Full
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Detail::Full => "full",
            Detail::Far => "far",
            Detail::Tiny => "tiny",
        }
    }
}

/// The node that has the browser's focus, if one has.
#[cfg(feature = "hydrate")]
fn focused_node() -> Option<String> {
    document()
        .active_element()?
        .closest(".canvas-node")
        .ok()??
        .get_attribute("data-node")
}

/// Each node's place in the order a person reads the graph in
/// ([`flow_order`]): the page holds the nodes so, and Tab and a screen
/// reader go through them as the graph runs. Recounted when the graph's
/// shape changes, not when a node moves (a position only breaks ties).
fn reading_order(
    editor: Editor,
    fan_outs: Memo<Vec<fan_out_link::Spread>>,
) -> Memo<HashMap<NodeId, usize>> {
    use super::flow_order::{FlowNode, ranks};
    use heddle_engine::kinds::BuiltinKind;
    Memo::new(move |_| {
        let sends: HashMap<NodeId, NodeId> = fan_outs.with(|sends| {
            sends
                .iter()
                .map(|send| (send.from().clone(), send.to().clone()))
                .collect()
        });
        let nodes: Vec<FlowNode> = editor.nodes.with(|nodes| {
            nodes
                .iter()
                .map(|node| {
                    let id = node.id.get_value();
                    FlowNode {
                        start: node
                            .spec
                            .with_untracked(|spec| spec.kind == BuiltinKind::Start.name()),
                        sends_to: sends.get(&id).cloned(),
                        at: node.position.get_untracked(),
                        id,
                    }
                })
                .collect()
        });
        let entry = editor.skeleton.with(|document| document.entry.clone());
        editor
            .edges
            .with(|edges| ranks(entry.as_ref(), &nodes, edges))
    })
}

/// The dot grid's spacing at zoom 1, in graph units.
const GRID_CELL: f64 = 20.0;

/// The dot grid's spacing on screen at `zoom`: every 20 graph units, or
/// every 40, 80… when zoomed out so far that the dots would be closer than
/// 10px (a grey haze, not a grid).
fn grid_cell(zoom: f64) -> f64 {
    let mut cell = GRID_CELL * zoom;
    while cell < 10.0 && cell > 0.0 {
        cell *= 2.0;
    }
    cell
}

const NODE_SIZE: NodeSize = NodeSize {
    width: NODE_WIDTH,
    height: NODE_HEIGHT,
};

#[cfg(test)]
mod tests {
    use super::{Detail, grid_cell};

    #[test]
    fn the_grid_keeps_its_dots_apart_and_on_graph_units() {
        assert_eq!(grid_cell(1.0), 20.0);
        assert_eq!(grid_cell(3.0), 60.0);
        // 20 units at 0.15 are 3px: the dots go every 80 units (12px).
        assert!((grid_cell(0.15) - 12.0).abs() < 1e-9);
        assert!(grid_cell(0.1) >= 10.0);
    }

    #[test]
    fn zoomed_out_nodes_are_drawn_with_less() {
        assert_eq!(Detail::at(1.0), Detail::Full);
        assert_eq!(Detail::at(0.5), Detail::Full);
        assert_eq!(Detail::at(0.4), Detail::Far);
        assert_eq!(Detail::at(0.15), Detail::Tiny);
    }

    #[test]
    fn a_nodes_name_reads_at_ten_pixels_wherever_the_whole_node_is_drawn() {
        for step in 50..=300 {
            let zoom = f64::from(step) / 100.0;
            let scale = super::title_scale(zoom);
            assert!(
                13.0 * scale * zoom >= 9.99 || scale == 1.5,
                "{zoom}: {scale}"
            );
            assert!((1.0..=1.5).contains(&scale));
        }
        assert_eq!(super::title_scale(1.0), 1.0);
        assert_eq!(super::title_scale(0.62), 1.25);
        assert_eq!(super::title_scale(f64::NAN), 1.0);
    }
}
