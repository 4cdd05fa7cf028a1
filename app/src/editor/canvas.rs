//! The canvas: nodes as DOM elements over an SVG layer of edges, inside a
//! "world" that pans and zooms with one CSS transform. Pointer gestures
//! (pan, move, connect, rubber band, place from the palette) are one state
//! machine fed by window-level pointer events, so a drag that leaves the
//! canvas still ends cleanly.

use std::collections::{BTreeSet, HashMap, HashSet};

use heddle_engine::format::Position;
use heddle_engine::validate::Problem;
use heddle_engine::{EdgeId, NodeId};
use leptos::ev;
use leptos::prelude::*;

use super::attr_keys::{D, DataEdge, DataNode, DataState};
use super::gestures::{Drag, Gestures, commit_focused_field, install_pointer_listeners};
use super::model::{NODE_HEIGHT, NODE_WIDTH};
use super::notes::Notes;
use super::pressed::{Pressed, node_menu, press_edge, press_node, press_port};
use super::quick_add::{QuickAdd, QuickAddBox};
use super::routing::{self, EdgeEnds, NodeSize, Route};
use super::state::{Editor, NodeView, Viewport};
use crate::live::RunView;

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
    let loops = LoopRoutes::new(editor, gestures, positions);
    let selection = Selection::of(editor);
    let viewport = editor.viewport;
    // Panning moves the world, a composited layer, by a translation: the
    // browser repaints nothing. The zoom's scale and level of detail sit on
    // the element inside it, and change only with the zoom.
    let world_shift = move || {
        let v = viewport.get();
        format!("translate({}px, {}px)", v.x, v.y)
    };
    let zoom = Memo::new(move |_| viewport.get().zoom);
    let world_scale = move || format!("scale({})", zoom.get());
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
        match Pressed::of(&event) {
            Pressed::Port(node) => return press_port(editor, gestures, node, &event),
            Pressed::Node(node) => return press_node(editor, gestures, node, &event),
            Pressed::Edge(edge) => return press_edge(editor, edge),
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
        let (dx, dy) = (event.delta_x(), event.delta_y());
        viewport.update(|v| {
            *v = if event.ctrl_key() || event.meta_key() {
                v.zoom_at((-dy * 0.002).exp(), x, y)
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
    let on_dblclick = move |event: ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let on_node = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.closest(".canvas-node, .quick-add").ok().flatten())
            .is_some();
        if on_node || !editor.can_edit {
            return;
        }
        if let Some((x, y, _)) = gestures.local(event.client_x() as f64, event.client_y() as f64) {
            let at = viewport.get_untracked().to_world(x, y);
            gestures.quick.set(Some(QuickAdd { at, x, y }));
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
            aria-label="Canvas"
            tabindex="0"
        >
            <div class="editor-grid" aria-hidden="true" style:background-size=grid_size style:transform=grid_shift></div>
            <div class="editor-world" style:transform=world_shift>
            <div class="editor-zoom" data-detail=move || detail.get().as_str() style:transform=world_scale>
                <svg class="editor-edges" aria-hidden="true">
                    <defs>
                        <marker id="editor-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                            <path d="M0,0 L10,5 L0,10 z" />
                        </marker>
                    </defs>
                    <For
                        each=move || editor.edges.get()
                        key=|edge| (edge.id.clone(), edge.from.clone(), edge.to.clone(), edge.condition.clone(), edge.route.clone())
                        let:edge
                    >
                        <EdgePath selection positions loops edge live problems />
                    </For>
                    <WirePreview gestures positions />
                </svg>
                <Notes editor gestures />
                <For each=move || editor.nodes.get() key=|node| node.id.get_value() let:node>
                    <CanvasNode editor selection node live problems drawn />
                </For>
                <For
                    each=move || editor.edges.get().into_iter().filter(|edge| edge.route.is_some() || edge.condition.is_some())
                    key=|edge| (edge.id.clone(), edge.condition.clone(), edge.route.clone())
                    let:edge
                >
                    <EdgeLabel selection positions loops edge live />
                </For>
                <RubberBand gestures />
                <WireReason gestures />
            </div>
            </div>
            <QuickAddBox editor open=gestures.quick />
            {move || editor.nodes.with(Vec::is_empty).then(|| view! {
                <div class="canvas-empty">
                    <h2>"This graph is empty"</h2>
                    <p>
                        {if editor.can_edit {
                            "Drag a node from the palette on the left to start."
                        } else {
                            "It has no nodes yet."
                        }}
                    </p>
                </div>
            })}
        </div>
    }
}

#[component]
fn CanvasNode(
    editor: Editor,
    selection: Selection,
    node: NodeView,
    live: RwSignal<RunView>,
    problems: Memo<Vec<Problem>>,
    drawn: Drawn,
) -> impl IntoView {
    let id = node.id.get_value();
    let selected = {
        let id = id.clone();
        Memo::new(move |_| selection.nodes.with(|selected| selected.contains(&id)))
    };
    let state = {
        let id = id.clone();
        move || live.with(|view| view.state_of(id.as_str()))
    };
    let stats = {
        let id = id.clone();
        Memo::new(move |_| live.with(|view| view.stats.get(id.as_str()).cloned()))
    };
    let runs = move || {
        stats
            .with(|stats| stats.as_ref().map(|stats| stats.runs))
            .filter(|runs| *runs > 1)
            .map(|runs| format!("×{runs}"))
    };
    let badges = move || {
        stats.with(|stats| {
            let stats = stats.as_ref()?;
            let took = stats.last_duration_us.map(crate::run_panel::duration);
            let usage = &stats.usage;
            let tokens = (!usage.is_empty()).then(|| {
                let cost = if usage.unpriced_calls == usage.calls {
                    String::new()
                } else {
                    format!(" · {}", crate::run_panel::usage::cost(usage.cost_usd))
                };
                (
                    format!("{} tok{cost}", crate::run_panel::usage::tokens(usage.tokens())),
                    crate::run_panel::usage::summary(usage).unwrap_or_default(),
                )
            });
            let breakers: Vec<(String, &'static str)> = stats
                .breakers
                .iter()
                .map(|(tool, state)| {
                    let state = match state {
                        heddle_engine::tools::BreakerState::HalfOpen => "half-open",
                        _ => "open",
                    };
                    (tool.clone(), state)
                })
                .collect();
            (took.is_some() || tokens.is_some() || !breakers.is_empty()).then(|| view! {
                <span class="canvas-node-badges">
                    {took.map(|took| view! { <span class="node-badge" title="How long its last run took">{took}</span> })}
                    {tokens.map(|(tokens, detail)| view! { <span class="node-badge" title=format!("Model calls: {detail}")>{tokens}</span> })}
                    {breakers.into_iter().map(|(tool, state)| view! {
                        <span
                            class=format!("node-badge breaker-badge breaker-{state}")
                            data-testid="breaker-badge"
                            title=format!("The circuit breaker of `{tool}` is {state}: calls fail at once until it closes")
                        >
                            {format!("{tool}: {state}")}
                        </span>
                    }).collect_view()}
                </span>
            })
        })
    };
    let streamed = move || {
        stats.with(|stats| {
            let text = stats
                .as_ref()
                .map(|stats| stats.streamed.as_str())
                .unwrap_or("");
            (!text.is_empty()).then(|| {
                // The tail: the newest words are the interesting ones.
                let tail: String = text
                    .chars()
                    .rev()
                    .take(90)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                view! { <span class="canvas-node-stream" data-testid="node-stream">{tail}</span> }
            })
        })
    };
    let failure = move || stats.with(|stats| stats.as_ref().and_then(|stats| stats.error.clone()));
    let own_problems = {
        let id = id.clone();
        Memo::new(move |_| {
            problems.with(|all| {
                all.iter()
                    .filter(|problem| problem.node.as_ref() == Some(&id))
                    .map(|problem| problem.message.clone())
                    .collect::<Vec<_>>()
            })
        })
    };
    let transform = move || {
        let p = node.position.get();
        format!("translate({}px, {}px)", p.x, p.y)
    };
    let label = move || {
        node.spec.with(|spec| {
            if spec.label.is_empty() {
                spec.id.to_string()
            } else {
                spec.label.clone()
            }
        })
    };
    let kind = move || node.spec.with(|spec| spec.kind.clone());
    // One class attribute, one effect: a page holds hundreds of nodes, and
    // each effect is work when it hydrates.
    let class = move || {
        let mut class = format!("canvas-node kind-{}", kind());
        if selected.get() {
            class.push_str(" selected");
        }
        if own_problems.with(|problems| !problems.is_empty()) {
            class.push_str(" has-problems");
        }
        class
    };

    let breakpoints = move || {
        node.spec
            .with(|spec| match (spec.interrupt_before, spec.interrupt_after) {
                (true, true) => Some("Pauses before and after this node"),
                (true, false) => Some("Pauses before this node"),
                (false, true) => Some("Pauses after this node"),
                (false, false) => None,
            })
    };
    let connectable = editor.can_edit && node.spec.with_untracked(|spec| spec.kind != "end");

    let node_id = id.to_string();
    view! {
        <div
            class=class
            title=failure
            style:transform=transform
        >
            // What most nodes do not have (a breakpoint, a run's figures and
            // text, problems) is one part, drawn again when any of it changes.
            {move || {
                let breakpoint = breakpoints().map(|title| view! {
                    <span class="canvas-node-breakpoint" title=title data-testid="breakpoint"></span>
                });
                let problems = own_problems.with(|problems| {
                    (!problems.is_empty()).then(|| {
                        let title = problems.join("\n");
                        view! { <span class="canvas-node-problems" title=title>{problems.len()}</span> }
                    })
                });
                (breakpoint, badges(), streamed(), problems)
            }}
            {move || drawn.full.get().then(|| view! {
                <span class="port port-in" aria-hidden="true"></span>
                <span class="canvas-node-kind">{kind}</span>
                <span class="canvas-node-count">{runs}</span>
                {connectable.then(|| view! {
                    <span class="port port-out" title="Drag to another node to connect"></span>
                })}
            })}
            // Last in the node, though placed first in its grid: its text is
            // clipped, and the browser draws a clipped part as a run of its
            // own. Last, it splits the node's drawing in two runs, not three.
            {move || drawn.labelled.get().then(|| view! { <span class="canvas-node-label">{label}</span> })}
        </div>
    }
    .attr(DataNode, node_id)
    .attr(DataState, state)
}

/// The selection as the canvas's nodes and edges follow it: a signal's
/// `set` notifies its readers even when it changes nothing (pressing a
/// node clears the edge selection, mostly already clear), and hundreds of
/// nodes and edges read these. A memo passes on only a change.
#[derive(Clone, Copy)]
struct Selection {
    nodes: Memo<BTreeSet<NodeId>>,
    edge: Memo<Option<EdgeId>>,
}

impl Selection {
    fn of(editor: Editor) -> Selection {
        Selection {
            nodes: Memo::new(move |_| editor.selected.get()),
            edge: Memo::new(move |_| editor.selected_edge.get()),
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

/// The routes of the edges that go back, and one signal per edge that
/// changes only when that edge's route does. Each edge reads its own
/// signal: were hundreds of edges to read the whole map, every change of
/// it would rerun them all, each leaving and rejoining the subscribers of
/// sources with hundreds of subscribers (linear each time; it was most of
/// a drag frame's time on a 500-node graph).
#[derive(Clone, Copy)]
struct LoopRoutes {
    all: Memo<HashMap<EdgeId, Route>>,
    each: StoredValue<HashMap<EdgeId, RwSignal<Option<Route>>>>,
    /// The canvas's: the edges' signals live as long as it does.
    owner: StoredValue<Owner>,
}

impl LoopRoutes {
    fn new(
        editor: Editor,
        gestures: Gestures,
        positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    ) -> LoopRoutes {
        let all = loop_routes(editor, gestures, positions);
        let each: StoredValue<HashMap<EdgeId, RwSignal<Option<Route>>>> =
            StoredValue::new(HashMap::new());
        Effect::new(move |_| {
            all.with(|all| {
                each.with_value(|each| {
                    for (id, signal) in each {
                        let now = all.get(id);
                        if signal.with_untracked(|was| was.as_ref() != now) {
                            signal.set(now.cloned());
                        }
                    }
                })
            })
        });
        let owner = StoredValue::new(Owner::current().unwrap_or_default());
        LoopRoutes { all, each, owner }
    }

    /// The route of `edge` when it goes back.
    fn of(&self, edge: &EdgeId) -> RwSignal<Option<Route>> {
        if let Some(signal) = self.each.with_value(|each| each.get(edge).copied()) {
            return signal;
        }
        let now = self.all.with_untracked(|all| all.get(edge).cloned());
        let signal = self
            .owner
            .with_value(|owner| owner.with(|| RwSignal::new(now)));
        self.each.update_value(|each| {
            each.insert(edge.clone(), signal);
        });
        signal
    }
}

/// What loop routing needs of the graph's structure, kept while only
/// positions change: the nodes in one order with their position signals,
/// and each edge's ends as indices into it. A drag move then hashes no id
/// and clones no string.
#[derive(PartialEq)]
struct LoopBase {
    positions: Vec<RwSignal<Position>>,
    ends: Vec<(EdgeId, usize, usize)>,
}

impl LoopBase {
    fn new(
        positions: &HashMap<NodeId, RwSignal<Position>>,
        edges: &[heddle_engine::format::EdgeSpec],
    ) -> LoopBase {
        let index: HashMap<&NodeId, usize> = positions
            .keys()
            .enumerate()
            .map(|(i, id)| (id, i))
            .collect();
        LoopBase {
            positions: positions.values().copied().collect(),
            ends: edges
                .iter()
                .filter_map(|edge| {
                    Some((
                        edge.id.clone(),
                        *index.get(&edge.from)?,
                        *index.get(&edge.to)?,
                    ))
                })
                .collect(),
        }
    }
}

/// The routes of the edges that go back, recomputed when a node moves or
/// an edge changes: loops need to know about each other to keep apart.
/// Forward edges are routed one by one ([`edge_route`]), so dragging a node
/// redraws only what it touches. While nodes are dragged only their own
/// loops follow them, and only their positions are followed (the others
/// change only with a committed change, which moves `revision`); the other
/// loops are laid out again once the drag ends, so a drag repaints what it
/// moves, not every loop its path crosses.
fn loop_routes(
    editor: Editor,
    gestures: Gestures,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
) -> Memo<HashMap<EdgeId, Route>> {
    let base = Memo::new(move |_| {
        positions.with(|positions| editor.edges.with(|edges| LoopBase::new(positions, edges)))
    });
    Memo::new(move |previous: Option<&HashMap<EdgeId, Route>>| {
        editor.revision.track();
        let dragged: Vec<RwSignal<Position>> = gestures.drag.with_value(|drag| match drag {
            Drag::Move { origins, .. } => origins.iter().map(|(position, _)| *position).collect(),
            _ => Vec::new(),
        });
        let previous = previous.filter(|_| !dragged.is_empty());
        base.with(|base| {
            let moving: Vec<bool> = base
                .positions
                .iter()
                .map(|position| dragged.contains(position))
                .collect();
            let at: Vec<(f64, f64)> = base
                .positions
                .iter()
                .zip(&moving)
                .map(|(position, &moves)| {
                    let p = if previous.is_none() || moves {
                        position.get()
                    } else {
                        position.get_untracked()
                    };
                    (p.x, p.y)
                })
                .collect();
            // Mid-drag, the loops of nodes that stay keep their routes.
            let (kept, ends): (Vec<&EdgeId>, Vec<EdgeEnds>) = base
                .ends
                .iter()
                .filter(|(_, from, to)| previous.is_none() || moving[*from] || moving[*to])
                .map(|(id, from, to)| {
                    let ends = EdgeEnds {
                        from: *from,
                        to: *to,
                        label: None,
                    };
                    (id, ends)
                })
                .unzip();
            let mut routes: HashMap<EdgeId, Route> = kept
                .iter()
                .zip(routing::loops(&at, NODE_SIZE, &ends))
                .filter_map(|(id, route)| Some(((*id).clone(), route?)))
                .collect();
            if let Some(previous) = previous {
                let moved: HashSet<&EdgeId> = kept.into_iter().collect();
                for (id, route) in previous {
                    if !moved.contains(id) {
                        routes.insert(id.clone(), route.clone());
                    }
                }
            }
            routes
        })
    })
}

/// One edge's route: its loop's, or its own curve between its two nodes
/// (with its label kept off the nodes). A memo, so a drag updates only
/// the edges whose route changed.
fn edge_route(
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    loops: LoopRoutes,
    edge: &heddle_engine::format::EdgeSpec,
) -> Memo<Option<Route>> {
    let (id, from, to) = (edge.id.clone(), edge.from.clone(), edge.to.clone());
    let label = edge
        .route
        .as_deref()
        .or(edge.condition.as_deref())
        .map(edge_label);
    let looped = loops.of(&id);
    Memo::new(move |_| {
        if let Some(route) = looped.get() {
            return Some(route);
        }
        let (a, b) = positions.with(|map| (map.get(&from).copied(), map.get(&to).copied()));
        let (a, b) = (a?.get(), b?.get());
        let (a, b) = ((a.x, a.y), (b.x, b.y));
        let others: Vec<(f64, f64)> = match &label {
            Some(_) => positions.with(|map| {
                map.values()
                    .map(|position| {
                        let p = position.get();
                        (p.x, p.y)
                    })
                    .collect()
            }),
            None => Vec::new(),
        };
        Some(routing::forward_edge(
            a,
            b,
            NODE_SIZE,
            label.as_deref(),
            &others,
        ))
    })
}

#[component]
fn EdgePath(
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
    let (selected, taken) = edge_looks(selection, &edge, live);
    // One class attribute, one effect (hundreds of edges hydrate).
    let class = move || {
        let mut class = String::from("editor-edge");
        for (name, on) in [
            (" conditional", conditional),
            (" selected", selected()),
            (" taken", taken()),
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
    view! {
        <g class=class>
            {hit}
            {line}
        </g>
    }
    .attr(DataEdge, id.to_string())
}

/// Whether an edge is selected, and whether the watched run took it:
/// shared by its line and its label (both pressed through the canvas).
fn edge_looks(
    selection: Selection,
    edge: &heddle_engine::format::EdgeSpec,
    live: RwSignal<RunView>,
) -> (
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
    (selected, taken)
}

/// An edge's condition or route, on a background above the nodes (so no
/// node hides it), at the place its route chose; the whole text on hover.
#[component]
fn EdgeLabel(
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
    let (selected, taken) = edge_looks(selection, &edge, live);
    view! {
        <div
            class="editor-edge-label"
            class:selected=selected
            class:taken=taken
            style=style
            title=full
        >
            {label}
        </div>
    }
    .attr(DataEdge, edge.id.to_string())
}

/// An edge's label as drawn: short ones whole; long ones keep their start
/// and their end, so two conditions that share a beginning still read
/// apart (the whole text is the label's tooltip).
pub fn edge_label(full: &str) -> String {
    const MAX: usize = 28;
    let chars: Vec<char> = full.chars().collect();
    if chars.len() <= MAX {
        return full.to_string();
    }
    let head: String = chars[..MAX / 2].iter().collect();
    let tail: String = chars[chars.len() - (MAX / 2 - 1)..].iter().collect();
    format!("{}…{}", head.trim_end(), tail.trim_start())
}

/// The edge being drawn, red when it cannot land.
#[component]
fn WirePreview(
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
            <g class="editor-wire" class:refused=refused>
                <path d=d />
            </g>
        })
    }
}

/// Why the edge being drawn cannot land, next to the pointer and above the
/// nodes (the edges' layer is under them).
#[component]
fn WireReason(gestures: Gestures) -> impl IntoView {
    move || {
        let wire = gestures.wire.get()?;
        let reason = wire.refusal?;
        let style = format!("left: {}px; top: {}px", wire.to.x + 14.0, wire.to.y + 14.0);
        Some(view! { <div class="editor-wire-reason" role="status" style=style>{reason}</div> })
    }
}

#[component]
fn RubberBand(gestures: Gestures) -> impl IntoView {
    move || {
        gestures.rubber.get().map(|(a, b)| {
            let style = format!(
                "left: {}px; top: {}px; width: {}px; height: {}px",
                a.x.min(b.x),
                a.y.min(b.y),
                (a.x - b.x).abs(),
                (a.y - b.y).abs()
            );
            view! { <div class="editor-rubber" style=style></div> }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Detail, edge_label, grid_cell};

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
    fn long_labels_keep_their_start_and_end_so_they_read_apart() {
        assert_eq!(edge_label("count < 3"), "count < 3");
        let a = edge_label("len(last(messages).tool_calls) > 0");
        let b = edge_label("len(last(messages).tool_calls) == 0");
        assert_ne!(a, b);
        assert_eq!(a, "len(last(messa…ol_calls) > 0");
        assert!(a.chars().count() <= 28, "{a}");
        assert!(b.ends_with("== 0"), "{b}");
    }
}
