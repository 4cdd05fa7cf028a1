//! Pointer gestures: what is being dragged (a pan, a node, a wire, a
//! rubber band, a kind from the palette), shared by the canvas, the
//! palette and the notes, and the window-level listeners that move it, so
//! a drag that leaves the canvas still ends cleanly.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use heddle_engine::format::Position;
use heddle_engine::{EdgeId, GraphDocument, NodeId};
use leptos::prelude::*;
use leptos::{ev, html};

use super::model::{self, NODE_HEIGHT, NODE_WIDTH};
use super::place::place_into;
use super::splice;
use super::state::{Editor, Viewport};

/// How far inside the canvas's edges a node dropped from the palette
/// stays, on screen.
const DROP_MARGIN: f64 = 8.0;

/// A gesture in progress.
#[derive(Clone)]
pub enum Drag {
    None,
    Pan {
        from: (f64, f64),
        origin: Viewport,
    },
    /// Nodes dragged: each one's position signal, and where it was.
    Move {
        from: Position,
        origins: Vec<(RwSignal<Position>, Position)>,
        /// A node pressed inside a selection of several (a group's): the
        /// press keeps them all, to be dragged together; released where
        /// it was pressed, it was a click, and selects that node alone.
        alone: Option<NodeId>,
    },
    Connect {
        from: NodeId,
    },
    /// A sticky note dragged by its bar.
    MoveNote {
        id: String,
        from: Position,
        origin: Position,
        /// Shared: a gesture's state is read at every pointer move.
        before: Arc<GraphDocument>,
    },
    Rubber {
        from: Position,
        add: bool,
    },
    /// A kind dragged from the palette.
    Place {
        kind: String,
    },
}

/// The room an idle moment needs for drawing a node's form after a drop.
const FORM_NEEDS_MS: f64 = 12.0;

/// Where the quick-add list (`quick_add.rs`) is open: the world point it
/// adds at, the screen point (relative to the canvas) it is drawn at, and
/// the node the new one is led to from when a wire was dropped there.
#[derive(Clone, Debug, PartialEq)]
pub struct QuickAdd {
    pub at: Position,
    pub x: f64,
    pub y: f64,
    pub from: Option<NodeId>,
}

/// An edge being drawn: where the pointer is, and why it cannot land
/// where it is (if it cannot).
#[derive(Clone, Debug, PartialEq)]
pub struct Wire {
    pub from: NodeId,
    pub to: Position,
    pub refusal: Option<String>,
}

/// What the canvas and the palette share while dragging.
#[derive(Clone, Copy)]
pub struct Gestures {
    pub drag: StoredValue<Drag>,
    pub wire: RwSignal<Option<Wire>>,
    pub rubber: RwSignal<Option<(Position, Position)>>,
    /// The palette kind being dragged, and the pointer (screen).
    pub ghost: RwSignal<Option<(String, f64, f64)>>,
    /// The edge a node dragged from the palette would be put into.
    pub landing: RwSignal<Option<EdgeId>>,
    /// The double-click search box, when open.
    pub quick: RwSignal<Option<QuickAdd>>,
    pub canvas: NodeRef<html::Div>,
    /// A node's context menu, when open.
    pub menu: RwSignal<Option<super::node_menu::NodeMenuAt>>,
    /// The node the keyboard's connect list is open on, and where (under
    /// the node).
    pub connect: RwSignal<Option<super::node_menu::NodeMenuAt>>,
    /// Whether the find box (`find_node.rs`) is open.
    pub finding: RwSignal<bool>,
    /// Where the pointer last was (screen), for pasting where it points.
    pub pointer: StoredValue<Option<(f64, f64)>>,
    /// Whether a button is down on the canvas (until the frame after the
    /// drop). The minimap does not follow a drag, and catches up then.
    pub held: RwSignal<bool>,
    /// Whether the last press is over and the page has had an idle moment
    /// since: the inspector's form follows the selection only then, so it
    /// is drawn neither in a drag's first frames nor in its drop's
    /// ([`Gestures::release`]).
    pub settled: RwSignal<bool>,
    /// Moves on at each press: a release's late `held` is for its press only.
    presses: StoredValue<u64>,
    /// The node a Shift (Ctrl, ⌘) press just took out of or put into the
    /// selection: the focus the press gives it must not make it the whole
    /// selection (`node_keys::focused`). Cleared by the next press or key.
    pub toggled: StoredValue<Option<NodeId>>,
    /// The canvas's box on screen while a gesture lasts: asking for it at
    /// every pointer move would make the browser lay the page out again
    /// before each frame.
    rect: StoredValue<Option<(f64, f64, f64, f64)>>,
    /// The canvas's size as last observed (`resize.rs` keeps it), so what
    /// follows it (the minimap) never makes the browser lay the page out
    /// in the middle of a frame.
    seen_size: RwSignal<Option<(f64, f64)>>,
}

impl Gestures {
    pub fn new() -> Gestures {
        Gestures {
            drag: StoredValue::new(Drag::None),
            wire: RwSignal::new(None),
            rubber: RwSignal::new(None),
            ghost: RwSignal::new(None),
            landing: RwSignal::new(None),
            quick: RwSignal::new(None),
            canvas: NodeRef::new(),
            menu: RwSignal::new(None),
            connect: RwSignal::new(None),
            finding: RwSignal::new(false),
            pointer: StoredValue::new(None),
            held: RwSignal::new(false),
            settled: RwSignal::new(true),
            presses: StoredValue::new(0),
            toggled: StoredValue::new(None),
            rect: StoredValue::new(None),
            seen_size: RwSignal::new(None),
        }
    }

    /// Opens the quick-add list (`quick_add.rs`).
    pub fn open_quick(&self, spot: QuickAdd) {
        self.quick.set(Some(spot));
    }

    /// Closes the quick-add list, and the wire drawn to it if any.
    pub fn close_quick(&self) {
        if self.quick.get_untracked().is_some() {
            self.quick.set(None);
            if !matches!(self.drag.get_value(), Drag::Connect { .. }) {
                self.wire.set(None);
            }
        }
    }

    /// A button went down on the canvas.
    pub fn hold(&self) {
        self.presses.update_value(|presses| *presses += 1);
        if !self.held.get_untracked() {
            self.held.set(true);
        }
        if self.settled.get_untracked() {
            self.settled.set(false);
        }
    }

    /// The button came up. The minimap catches up in the next frame; the
    /// inspector's form in an idle moment with room for it (about a frame's
    /// worth of work on a large graph: in the frame of the drop, or in any
    /// frame already busy, it made that frame late). A rAF asked for while
    /// handling the pointer may still run before the current frame is
    /// drawn, hence two.
    fn release(&self) {
        if !self.held.get_untracked() {
            return;
        }
        let press = self.presses.get_value();
        let gestures = *self;
        let current = move || gestures.presses.try_get_value() == Some(press);
        request_animation_frame(move || {
            request_animation_frame(move || {
                if current() {
                    gestures.held.set(false);
                }
            })
        });
        super::idle::when_idle(FORM_NEEDS_MS, 300, move || {
            if current() {
                gestures.settled.set(true);
            }
        });
    }

    /// Sends the pointer's events to the canvas for the rest of a gesture
    /// that has started to move. The browser then stops looking for the
    /// element under the pointer at each move (with hundreds of nodes that
    /// took several milliseconds a frame), and no element hovers. Not on
    /// pointerdown: a click or double-click must still reach its node.
    fn capture(&self, pointer: i32) {
        if let Some(canvas) = self.canvas.get_untracked()
            && !canvas.has_pointer_capture(pointer)
        {
            let _ = canvas.set_pointer_capture(pointer);
        }
    }

    /// The point of the graph under the pointer, when it is over the canvas.
    pub fn pointer_in_world(&self, viewport: Viewport) -> Option<Position> {
        let (cx, cy) = self.pointer.get_value()?;
        let (x, y, inside) = self.local(cx, cy)?;
        inside.then(|| viewport.to_world(x, y))
    }

    /// The pointer relative to the canvas, and whether it is over it.
    pub fn local(&self, client_x: f64, client_y: f64) -> Option<(f64, f64, bool)> {
        let (left, top, width, height) = match self.rect.get_value() {
            Some(rect) => rect,
            None => {
                let rect = self.canvas.get_untracked()?.get_bounding_client_rect();
                let measured = (rect.left(), rect.top(), rect.width(), rect.height());
                if !matches!(self.drag.get_value(), Drag::None) {
                    self.rect.set_value(Some(measured));
                }
                measured
            }
        };
        let (x, y) = (client_x - left, client_y - top);
        let inside = x >= 0.0 && y >= 0.0 && x <= width && y <= height;
        Some((x, y, inside))
    }

    /// The canvas's size on screen.
    pub fn size(&self) -> (f64, f64) {
        self.seen_size
            .get_untracked()
            .unwrap_or_else(|| self.measure())
    }

    /// The canvas's size as the resize observer last saw it, followed: for
    /// what must change with it. None before the first observation (asking
    /// the browser then would lay the page out in the middle of hydrating it).
    pub fn seen_size(&self) -> Option<(f64, f64)> {
        self.seen_size.get()
    }

    /// The canvas's size as the browser lays it out now (which may mean
    /// laying it out first).
    pub fn measure(&self) -> (f64, f64) {
        self.canvas
            .get_untracked()
            .map_or((1200.0, 800.0), |canvas| {
                let rect = canvas.get_bounding_client_rect();
                (rect.width(), rect.height())
            })
    }

    /// The canvas's size as the resize observer last saw it, not followed.
    pub fn seen_size_untracked(&self) -> Option<(f64, f64)> {
        self.seen_size.get_untracked()
    }

    /// Keeps the size the resize observer saw.
    pub fn saw_size(&self, size: (f64, f64)) {
        if self.seen_size.get_untracked() != Some(size) {
            self.seen_size.set(Some(size));
        }
    }
}

impl Default for Gestures {
    fn default() -> Self {
        Gestures::new()
    }
}

/// Window-level pointer listeners: a gesture goes on when the pointer
/// leaves the canvas, and ends wherever it is released.
pub(super) fn install_pointer_listeners(editor: Editor, gestures: Gestures) {
    let moving = window_event_listener(ev::pointermove, move |event: ev::PointerEvent| {
        gestures
            .pointer
            .set_value(Some((event.client_x() as f64, event.client_y() as f64)));
        let drag = gestures.drag.get_value();
        if matches!(drag, Drag::None) {
            return;
        }
        if !matches!(drag, Drag::Place { .. }) {
            gestures.capture(event.pointer_id());
        }
        let (cx, cy) = (event.client_x() as f64, event.client_y() as f64);
        let Some((x, y, inside)) = gestures.local(cx, cy) else {
            return;
        };
        let viewport = editor.viewport.get_untracked();
        let world = viewport.to_world(x, y);
        match drag {
            Drag::None => {}
            Drag::Pan { from, origin } => editor.viewport.set(Viewport {
                x: origin.x + x - from.0,
                y: origin.y + y - from.1,
                zoom: origin.zoom,
            }),
            Drag::Move { from, origins, .. } => {
                let (dx, dy) = (world.x - from.x, world.y - from.y);
                for (position, origin) in &origins {
                    position.set(Position {
                        x: origin.x + dx,
                        y: origin.y + dy,
                    });
                }
            }
            Drag::Connect { from } => {
                let refusal = editor
                    .node_near(world, wire_reach(editor))
                    .and_then(|to| model::can_connect(&editor.document(), &from, &to).err());
                gestures.wire.set(Some(Wire {
                    from,
                    to: world,
                    refusal,
                }));
            }
            Drag::MoveNote {
                id, from, origin, ..
            } => editor.skeleton.update(|document| {
                if let Some(note) = document.notes.iter_mut().find(|note| note.id == id) {
                    note.position = Position {
                        x: origin.x + world.x - from.x,
                        y: origin.y + world.y - from.y,
                    };
                }
            }),
            Drag::Rubber { from, .. } => gestures.rubber.set(Some((from, world))),
            Drag::Place { kind } => {
                let landing = inside.then(|| landing_edge(editor, &kind, world)).flatten();
                if gestures.landing.get_untracked() != landing {
                    gestures.landing.set(landing);
                }
                gestures.ghost.set(inside.then_some((kind, cx, cy)));
            }
        }
    });
    let releasing = window_event_listener(ev::pointerup, move |event: ev::PointerEvent| {
        gestures.release();
        let drag = gestures.drag.get_value();
        gestures.drag.set_value(Drag::None);
        let local = gestures.local(event.client_x() as f64, event.client_y() as f64);
        gestures.rect.set_value(None);
        let world = local.map(|(x, y, _)| editor.viewport.get_untracked().to_world(x, y));
        match drag {
            Drag::None | Drag::Pan { .. } => {}
            Drag::Move { origins, alone, .. } => {
                editor.commit_move(&origins);
                let moved: Vec<RwSignal<Position>> = origins
                    .iter()
                    .filter(|(position, was)| position.get_untracked() != *was)
                    .map(|(position, _)| *position)
                    .collect();
                if moved.is_empty()
                    && let Some(node) = alone
                {
                    editor
                        .selected
                        .set(std::collections::BTreeSet::from([node]));
                }
                super::group_drop::settle(editor, &moved);
            }
            Drag::MoveNote { before, .. } => editor.commit_from(Arc::unwrap_or_clone(before)),
            Drag::Connect { from } => {
                let drawn = gestures.wire.get_untracked().is_some();
                gestures.wire.set(None);
                let target = world.and_then(|at| editor.node_near(at, wire_reach(editor)));
                match (target, world, local) {
                    (Some(to), _, _) => {
                        let mut made = None;
                        editor.change(|document| {
                            made = model::connect(document, &from, &to).ok();
                        });
                        if let Some(edge) = made {
                            ask_for_its_route(editor, edge);
                        }
                    }
                    // Dropped on the empty canvas: the kinds to add there,
                    // led to from `from` (as in n8n or Langflow). The wire
                    // stays drawn to the spot while the list is open.
                    (None, Some(at), Some((x, y, true))) if drawn => {
                        gestures.wire.set(Some(Wire {
                            from: from.clone(),
                            to: at,
                            refusal: None,
                        }));
                        gestures.open_quick(QuickAdd {
                            at,
                            x,
                            y,
                            from: Some(from),
                        });
                    }
                    _ => {}
                }
            }
            Drag::Rubber { from, add } => {
                gestures.rubber.set(None);
                if let Some(to) = world {
                    select_in_box(editor, from, to, add);
                }
            }
            Drag::Place { kind } => {
                gestures.ghost.set(None);
                gestures.landing.set(None);
                if let Some((x, y, true)) = local {
                    let view = editor.viewport.get_untracked();
                    let pointer = view.to_world(x, y);
                    // Centred on the pointer, but whole in sight: dropped at
                    // the canvas's edge (beside the palette), half of it was
                    // under the edge.
                    let (width, height) = gestures.size();
                    let (first, last) = (
                        view.to_world(DROP_MARGIN, DROP_MARGIN),
                        view.to_world(width - DROP_MARGIN, height - DROP_MARGIN),
                    );
                    let at = Position {
                        x: (pointer.x - NODE_WIDTH / 2.0)
                            .min(last.x - NODE_WIDTH)
                            .max(first.x)
                            .round(),
                        y: (pointer.y - NODE_HEIGHT / 2.0)
                            .min(last.y - NODE_HEIGHT)
                            .max(first.y)
                            .round(),
                    };
                    place_into(editor, &kind, at, landing_edge(editor, &kind, pointer));
                }
            }
        }
    });
    on_cleanup(move || {
        moving.remove();
        releasing.remove();
    });
}

/// An edge just drawn from a router that had no route to give it (none
/// free, or none yet): the edge is selected and its route field takes the
/// focus, so the branch is named where it was drawn (a route typed there
/// becomes one of the router's: `route_rename::route_edge`).
fn ask_for_its_route(editor: Editor, edge: EdgeId) {
    let unrouted_from = editor.edges.with_untracked(|edges| {
        edges
            .iter()
            .find(|e| e.id == edge && e.route.is_none())
            .map(|e| e.from.clone())
    });
    let from_a_router = unrouted_from
        .and_then(|from| editor.view_of(&from))
        .is_some_and(|node| {
            node.spec.with_untracked(|spec| {
                spec.kind == heddle_engine::kinds::BuiltinKind::Router.name()
            })
        });
    if !from_a_router {
        return;
    }
    editor.selected.set(Default::default());
    editor.selected_note.set(None);
    editor.selected_edge.set(Some(edge));
    // Once the form is drawn (it waits for the catalog).
    crate::components::focus_once_shown(".inspector [name=route]".into(), 8);
}

/// How far from a node (world units) a wire dropped still lands on it:
/// 12 px on screen at any zoom, so the input dot (half outside the node,
/// 7 px across at 58%) is a target as the node is.
fn wire_reach(editor: Editor) -> f64 {
    const REACH_PX: f64 = 12.0;
    REACH_PX / editor.viewport.get_untracked().zoom.max(0.01)
}

/// The edge a node of `kind` dropped with its centre at `at` (world)
/// would be put into.
fn landing_edge(editor: Editor, kind: &str, at: Position) -> Option<EdgeId> {
    if !splice::can_splice(kind) {
        return None;
    }
    let positions: HashMap<NodeId, Position> = editor.nodes.with_untracked(|nodes| {
        nodes
            .iter()
            .map(|node| (node.id.get_value(), node.position.get_untracked()))
            .collect()
    });
    editor
        .edges
        .with_untracked(|edges| splice::edge_at(edges, |id| positions.get(id).copied(), at))
}

fn select_in_box(editor: Editor, a: Position, b: Position, add: bool) {
    let (x1, x2) = (a.x.min(b.x), a.x.max(b.x));
    let (y1, y2) = (a.y.min(b.y), a.y.max(b.y));
    let inside: BTreeSet<NodeId> = editor.nodes.with_untracked(|nodes| {
        nodes
            .iter()
            .filter(|node| {
                let p = node.position.get_untracked();
                p.x < x2 && p.x + NODE_WIDTH > x1 && p.y < y2 && p.y + NODE_HEIGHT > y1
            })
            .map(|node| node.id.get_value())
            .collect()
    });
    editor.selected.update(|selected| {
        if !add {
            selected.clear();
        }
        selected.extend(inside);
    });
}

/// Applies what is half-typed in the inspector before a click on the
/// canvas changes what the inspector shows. Its fields apply on `change`,
/// which fires when they lose focus; a click here would otherwise replace
/// the form first, and the typed text would be lost. Blurring the focused
/// field fires its `change` now.
pub fn commit_focused_field() {
    use wasm_bindgen::JsCast;
    if let Some(field) = document()
        .active_element()
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
    {
        field.blur().ok();
    }
}
