//! The editor's reactive state. Each node has its own position and spec
//! signals, so dragging one node re-renders that node and the edges that
//! touch it, nothing else. Every change that is not a drag in progress
//! goes through [`Editor::change`]: it records the document before it for
//! undo and moves `revision` on (which autosave follows) and `content`
//! (which validation follows). A drag of nodes is committed when it ends
//! ([`Editor::commit_move`]); it moves `revision` only: where nodes are
//! drawn is nothing to validate.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::{Channel, EdgeSpec, NodeSpec, Position};
use heddle_engine::{EdgeId, GraphDocument, NodeId};
use leptos::prelude::*;

use super::model::History;

/// One node on the canvas.
#[derive(Clone, Copy)]
pub struct NodeView {
    pub id: StoredValue<NodeId>,
    pub position: RwSignal<Position>,
    /// The node without its position (that is `position`).
    pub spec: RwSignal<NodeSpec>,
}

/// Pan and zoom: world point `p` is drawn at `p * zoom + (x, y)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub x: f64,
    pub y: f64,
    pub zoom: f64,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            x: 40.0,
            y: 40.0,
            zoom: 1.0,
        }
    }
}

impl Viewport {
    pub const MIN_ZOOM: f64 = 0.1;
    pub const MAX_ZOOM: f64 = 3.0;

    /// The canvas's size before the browser has laid it out: at 1440×900,
    /// the window less the palette, the inspector, the page's bars and the
    /// run panel's tabs. The page is drawn at the view that fits this, so a
    /// large graph arrives zoomed out (and drawn with less, `Detail` in
    /// canvas.rs) rather than at full size to be zoomed out and drawn again
    /// once hydrated; the fit then corrects the view to the real size.
    pub const GUESSED_CANVAS: (f64, f64) = (900.0, 660.0);

    /// Below this zoom a node's label is not read but guessed at (drawn
    /// at 21 px this far out, it is some 7 px on screen): a graph that
    /// fits only smaller opens at its start. (The canvas stops drawing
    /// labels at 0.3.)
    pub const READABLE: f64 = 0.35;
    /// The zoom a graph too big to read whole opens at. However big the
    /// graph, only what is near the view is drawn (`canvas/culling.rs`),
    /// so its start opens as fast as a small graph.
    pub const START_ZOOM: f64 = 0.9;

    /// The view that fits box `extent` (`(x1, y1, x2, y2)`, in the world)
    /// in a `width` × `height` canvas, centred, with a margin (at the top,
    /// clear of the toolbar floating over the canvas); the default view
    /// for nothing to fit.
    ///
    /// Fitted too small to read, the view says so in a note at the
    /// canvas's foot (`start_framing.rs`): the graph is fitted above it,
    /// its last row not under the note.
    pub fn fitting(extent: Option<(f64, f64, f64, f64)>, width: f64, height: f64) -> Viewport {
        let Some((x1, y1, x2, y2)) = extent else {
            return Viewport::default();
        };
        let zoom_in = |height: f64| {
            let (top, bottom) = fit_room(height);
            let tall = height - bottom - top;
            ((width - 2.0 * FIT_MARGIN) / (x2 - x1))
                .min(tall / (y2 - y1))
                .clamp(Viewport::MIN_ZOOM, 1.25)
        };
        let zoom = zoom_in(height);
        if zoom >= Viewport::READABLE {
            return Viewport::centred(extent, zoom, width, height);
        }
        let above_note = height - FRAMING_NOTE;
        Viewport::centred(extent, zoom_in(above_note), width, above_note)
    }

    /// The view at `zoom` with box `extent` centred as [`Viewport::fitting`]
    /// centres it (clear of the toolbar at the top).
    pub fn centred(
        extent: Option<(f64, f64, f64, f64)>,
        zoom: f64,
        width: f64,
        height: f64,
    ) -> Viewport {
        let Some((x1, y1, x2, y2)) = extent else {
            return Viewport::default();
        };
        let (top, bottom) = fit_room(height);
        let tall = height - bottom - top;
        Viewport {
            x: (width - (x2 - x1) * zoom) / 2.0 - x1 * zoom,
            y: top + (tall - (y2 - y1) * zoom) / 2.0 - y1 * zoom,
            zoom,
        }
    }

    /// The view a graph opens at: all of it when it reads at that size,
    /// else its start at a readable zoom (`at_start`). The flag says the
    /// view shows only the start.
    pub fn opening(
        extent: Option<(f64, f64, f64, f64)>,
        start: Option<Position>,
        width: f64,
        height: f64,
    ) -> (Viewport, bool) {
        let whole = Viewport::fitting(extent, width, height);
        if whole.zoom >= Viewport::READABLE {
            return (whole, false);
        }
        Viewport::at_start(extent, start, height).map_or((whole, false), |view| (view, true))
    }

    /// The view moved to show a node at `at` whole and readable in a
    /// `width` × `height` canvas (clear of the floating toolbar), centred
    /// on it; `None` when it shows already. A view too small to read (a
    /// big graph fitted whole) zooms in to the start's zoom: whoever goes
    /// to a node (Find, the arrow keys) means to read it.
    pub fn revealing(self, at: Position, width: f64, height: f64) -> Option<Viewport> {
        use super::model::{NODE_HEIGHT, NODE_WIDTH};
        let (left, top) = (at.x * self.zoom + self.x, at.y * self.zoom + self.y);
        let (right, bottom) = (left + NODE_WIDTH * self.zoom, top + NODE_HEIGHT * self.zoom);
        let (margin, toolbar) = (16.0, 72.0);
        let readable = self.zoom >= Viewport::READABLE;
        if readable
            && left >= margin
            && top >= toolbar
            && right <= width - margin
            && bottom <= height - margin
        {
            return None;
        }
        let zoom = if readable {
            self.zoom
        } else {
            Viewport::START_ZOOM
        };
        Some(Viewport {
            x: width / 2.0 - (at.x + NODE_WIDTH / 2.0) * zoom,
            y: (height + toolbar) / 2.0 - (at.y + NODE_HEIGHT / 2.0) * zoom,
            zoom,
        })
    }

    /// The view moved, at its zoom, as little as shows the world box
    /// `(x1, y1, x2, y2)` clear of the floating toolbar and the canvas's
    /// edges (its top first, where a group's bar is, when it is taller
    /// than the canvas); `None` when it shows already.
    pub fn showing_box(
        self,
        (x1, y1, x2, y2): (f64, f64, f64, f64),
        width: f64,
        height: f64,
    ) -> Option<Viewport> {
        if ![x1, y1, x2, y2].iter().all(|v| v.is_finite()) {
            return None;
        }
        let (margin, toolbar) = (16.0, 72.0);
        let (left, top) = (x1 * self.zoom + self.x, y1 * self.zoom + self.y);
        let (right, bottom) = (x2 * self.zoom + self.x, y2 * self.zoom + self.y);
        let shift = |low: f64, high: f64, from: f64, to: f64| {
            if low < from {
                from - low
            } else if high > to {
                (to - high).max(from - low)
            } else {
                0.0
            }
        };
        let dx = shift(left, right, margin, width - margin);
        let dy = shift(top, bottom, toolbar, height - margin);
        if !(dx.is_finite() && dy.is_finite()) || (dx == 0.0 && dy == 0.0) {
            return None;
        }
        Some(Viewport {
            x: self.x + dx,
            y: self.y + dy,
            zoom: self.zoom,
        })
    }

    /// The least zoom at which a whole graph still reads comfortably: a
    /// chain built from the keyboard is kept whole in view down to it.
    pub const COMFORTABLE: f64 = 0.6;

    /// The view after a node was added at `at` to a graph whose nodes now
    /// span `extent`: `None` when the node shows already; else the whole
    /// graph, when it fits at a comfortable zoom no closer than now (so
    /// the chain being built stays in sight, its first node with its
    /// last); else the view moved to the new node.
    pub fn following(
        self,
        at: Position,
        extent: Option<(f64, f64, f64, f64)>,
        width: f64,
        height: f64,
    ) -> Option<Viewport> {
        let moved = self.revealing(at, width, height)?;
        let whole = Viewport::fitting(extent, width, height);
        if extent.is_some() && whole.zoom >= self.zoom {
            // All of it fits as close as now: centred at this zoom, so no
            // node is left half off the edge (the start, while the view
            // went after the new node).
            return Some(Viewport::centred(extent, self.zoom, width, height));
        }
        let fits = extent.is_some()
            && whole.zoom >= Viewport::COMFORTABLE
            && whole.zoom <= self.zoom.max(Viewport::COMFORTABLE);
        Some(if fits { whole } else { moved })
    }

    /// The view of a graph's start (`start`, the corner of the node runs
    /// begin at) at a readable zoom: the start at the left; the graph
    /// centred in height when all of its height shows, else the start at
    /// mid-height but never past the graph's top.
    pub fn at_start(
        extent: Option<(f64, f64, f64, f64)>,
        start: Option<Position>,
        height: f64,
    ) -> Option<Viewport> {
        let (Some((_, y1, _, y2)), Some(start)) = (extent, start) else {
            return None;
        };
        let zoom = Viewport::START_ZOOM;
        // Screen pixels: the left margin, and the top one clear of the
        // toolbar floating over the canvas.
        let (left_margin, top_margin) = (48.0 / zoom, 72.0 / zoom);
        let left = start.x - left_margin;
        let seen = height / zoom;
        let top = if y2 - y1 + 2.0 * top_margin <= seen {
            // All of its height shows: centred, as Fit would.
            (y1 + y2) / 2.0 - seen / 2.0
        } else {
            let middle = start.y + super::model::NODE_HEIGHT / 2.0 - seen / 2.0;
            middle.max(y1 - top_margin)
        };
        Some(Viewport {
            x: -left * zoom,
            y: -top * zoom,
            zoom,
        })
    }

    /// Whether this view, in a `width` × `height` canvas, shows some of
    /// what is in `bounds` (the box around a graph's nodes and notes).
    pub fn shows_some_of(
        &self,
        bounds: Option<(f64, f64, f64, f64)>,
        (width, height): (f64, f64),
    ) -> bool {
        let Some((x1, y1, x2, y2)) = bounds else {
            return false;
        };
        let top_left = self.to_world(0.0, 0.0);
        let bottom_right = self.to_world(width, height);
        x1 < bottom_right.x && x2 > top_left.x && y1 < bottom_right.y && y2 > top_left.y
    }

    /// The world point under screen point `(sx, sy)` (relative to the canvas).
    pub fn to_world(&self, sx: f64, sy: f64) -> Position {
        Position {
            x: (sx - self.x) / self.zoom,
            y: (sy - self.y) / self.zoom,
        }
    }

    /// Zooms by `factor` keeping the world point under `(sx, sy)` in place.
    pub fn zoom_at(&self, factor: f64, sx: f64, sy: f64) -> Viewport {
        let zoom = (self.zoom * factor).clamp(Self::MIN_ZOOM, Self::MAX_ZOOM);
        let anchor = self.to_world(sx, sy);
        Viewport {
            x: sx - anchor.x * zoom,
            y: sy - anchor.y * zoom,
            zoom,
        }
    }
}

/// The room [`Viewport::fitting`] keeps around a graph, in screen pixels:
/// at the sides and bottom, and at the top (clear of the toolbar).
const FIT_MARGIN: f64 = 48.0;
/// The room the note on a graph too small to read takes at the canvas's
/// foot (`start_framing.rs`), over the fit's margin.
const FRAMING_NOTE: f64 = 48.0;
const FIT_TOP: f64 = 72.0;
/// On a short canvas: the room under the toolbar (its foot is 50 px
/// down), and at the canvas's foot.
const SHORT_FIT_TOP: f64 = 60.0;
const SHORT_FIT_MARGIN: f64 = 16.0;
/// A canvas this tall or less is short; twice as tall, roomy.
const SHORT_CANVAS: f64 = 240.0;

/// The room a fit keeps above and below a graph in a canvas `height`
/// tall: [`FIT_TOP`] and [`FIT_MARGIN`], less of both on a short canvas
/// (a laptop's, with the run panel open), where those 120 px of 240 left a
/// five-node router at 41%, its labels some 8 px; from 480 px up, all of it.
fn fit_room(height: f64) -> (f64, f64) {
    let roomy = ((height - SHORT_CANVAS) / SHORT_CANVAS).clamp(0.0, 1.0);
    (
        SHORT_FIT_TOP + roomy * (FIT_TOP - SHORT_FIT_TOP),
        SHORT_FIT_MARGIN + roomy * (FIT_MARGIN - SHORT_FIT_MARGIN),
    )
}

/// Everything the editor's parts share.
#[derive(Clone, Copy)]
pub struct Editor {
    /// The document's other parts: name, state, entry, limits (its nodes
    /// and edges live in `nodes` and `edges`).
    pub skeleton: RwSignal<GraphDocument>,
    pub nodes: RwSignal<Vec<NodeView>>,
    /// `nodes` by id, for finding one without a walk over all of them
    /// (an edge drawn names its two nodes; a big graph has thousands).
    by_id: Memo<HashMap<NodeId, NodeView>>,
    pub edges: RwSignal<Vec<EdgeSpec>>,
    pub selected: RwSignal<BTreeSet<NodeId>>,
    pub selected_edge: RwSignal<Option<EdgeId>>,
    pub selected_note: RwSignal<Option<String>>,
    pub viewport: RwSignal<Viewport>,
    /// Moves on at every committed change.
    pub revision: RwSignal<u64>,
    /// Moves on at every committed change other than nodes moved.
    pub content: RwSignal<u64>,
    history: StoredValue<History>,
    /// The view the last fit made, and how: while the view is still that
    /// one (no pan or zoom since), the canvas frames it again the same way
    /// when its size changes.
    framed: StoredValue<Option<(Viewport, Framing)>>,
    /// Whether the graph opened at its start because the whole of it does
    /// not read at the canvas's size (the canvas offers the rest).
    pub showing_start: RwSignal<bool>,
    /// How many of the live validation's problems are errors (a graph with
    /// any cannot run): Run says so rather than asking the server.
    pub errors: RwSignal<usize>,
    /// How many are warnings: the graph runs, but they are worth a read.
    pub warnings: RwSignal<usize>,
    /// The last edit, said in a sentence for screen readers (see
    /// [`super::edit_words`]), numbered so the same words said twice are
    /// heard twice.
    pub said: RwSignal<(u64, String)>,
    /// The last deletion, offered back (`undo_notice`) until the next edit.
    pub undo_offer: RwSignal<Option<UndoOffer>>,
    /// The editor's reactive owner: node signals are made under it, never
    /// under whatever effect happens to load a document (an effect that
    /// runs again disposes what it made).
    owner: StoredValue<Owner>,
    pub can_edit: bool,
    /// Whether the document came without any node's position (written by
    /// hand or by a tool): it is laid out when it opens.
    pub opened_unplaced: bool,
}

impl Editor {
    pub fn new(document: GraphDocument, can_edit: bool) -> Editor {
        let opened_unplaced =
            !document.nodes.is_empty() && document.nodes.iter().all(|node| node.position.is_none());
        let nodes = RwSignal::new(Vec::<NodeView>::new());
        let by_id = Memo::new_with_compare(
            move |_| {
                nodes.with(|nodes| {
                    nodes
                        .iter()
                        .map(|node| (node.id.get_value(), *node))
                        .collect()
                })
            },
            // Made again only when the nodes changed.
            |_, _| true,
        );
        let editor = Editor {
            skeleton: RwSignal::new(GraphDocument::new("")),
            nodes,
            by_id,
            edges: RwSignal::new(Vec::new()),
            selected: RwSignal::new(BTreeSet::new()),
            selected_edge: RwSignal::new(None),
            selected_note: RwSignal::new(None),
            viewport: RwSignal::new(Viewport::default()),
            revision: RwSignal::new(0),
            content: RwSignal::new(0),
            history: StoredValue::new(History::default()),
            framed: StoredValue::new(None),
            showing_start: RwSignal::new(false),
            errors: RwSignal::new(0),
            warnings: RwSignal::new(0),
            said: RwSignal::new((0, String::new())),
            undo_offer: RwSignal::new(None),
            owner: StoredValue::new(Owner::current().unwrap_or_default()),
            can_edit,
            opened_unplaced,
        };
        editor.load(document);
        // The same on the server and in the browser, from the document
        // alone: hydration finds the view it would have drawn.
        let (width, height) = Viewport::GUESSED_CANVAS;
        let guessed = editor.bounds();
        let (view, at_start) = Viewport::opening(guessed, editor.start_position(), width, height);
        editor.viewport.set(view);
        editor.showing_start.set(at_start);
        editor
    }

    /// The whole document as it stands (read without tracking).
    pub fn document(&self) -> GraphDocument {
        self.document_moved_back(&[])
    }

    /// The document with the nodes of `moved` back where they were (their
    /// position signal, and where it was).
    fn document_moved_back(&self, moved: &[(RwSignal<Position>, Position)]) -> GraphDocument {
        let mut document = self.skeleton.get_untracked();
        document.nodes = self.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .map(|node| {
                    let mut spec = node.spec.get_untracked();
                    let was = moved
                        .iter()
                        .find(|(position, _)| *position == node.position)
                        .map(|(_, was)| *was);
                    spec.position = Some(was.unwrap_or_else(|| node.position.get_untracked()));
                    spec
                })
                .collect()
        });
        document.edges = self.edges.get_untracked();
        document
    }

    /// Shows `document`, keeping the signals of nodes that stay (so their
    /// views stay too) and making new ones for new nodes.
    pub fn load(&self, mut document: GraphDocument) {
        let incoming_nodes = std::mem::take(&mut document.nodes);
        let incoming_edges = std::mem::take(&mut document.edges);
        let existing: HashMap<NodeId, NodeView> = self.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .map(|node| (node.id.get_value(), *node))
                .collect()
        });
        let mut views = Vec::with_capacity(incoming_nodes.len());
        for (i, mut spec) in incoming_nodes.into_iter().enumerate() {
            let position = spec.position.take().unwrap_or(Position {
                x: (i % 6) as f64 * 220.0,
                y: (i / 6) as f64 * 100.0,
            });
            match existing.get(&spec.id) {
                Some(view) => {
                    if view.position.get_untracked() != position {
                        view.position.set(position);
                    }
                    if view.spec.with_untracked(|old| *old != spec) {
                        view.spec.set(spec);
                    }
                    views.push(*view);
                }
                None => views.push(self.owner.with_value(|owner| {
                    owner.with(|| NodeView {
                        id: StoredValue::new(spec.id.clone()),
                        position: RwSignal::new(position),
                        spec: RwSignal::new(spec),
                    })
                })),
            }
        }
        let same_order = self.nodes.with_untracked(|nodes| {
            nodes.len() == views.len()
                && nodes
                    .iter()
                    .zip(&views)
                    .all(|(a, b)| a.id.get_value() == b.id.get_value())
        });
        if !same_order {
            self.nodes.set(views);
        }
        if self.edges.with_untracked(|edges| *edges != incoming_edges) {
            self.edges.set(incoming_edges);
        }
        if self.skeleton.with_untracked(|old| *old != document) {
            self.skeleton.set(document);
        }
        // Selections of things that are gone are dropped.
        let ids: BTreeSet<NodeId> = self
            .nodes
            .with_untracked(|nodes| nodes.iter().map(|node| node.id.get_value()).collect());
        // Only when one is gone: the inspector follows the selection, and
        // telling it of a change that is none would draw its form again
        // (losing the focus and whatever a form holds open).
        if self
            .selected
            .with_untracked(|selected| selected.iter().any(|id| !ids.contains(id)))
        {
            self.selected
                .update(|selected| selected.retain(|id| ids.contains(id)));
        }
    }

    /// Applies an edit to the document, remembering the state before it.
    /// Changes the state channel `name` with `edit` (one undo step); a
    /// channel that is not there is left so.
    pub fn change_channel(&self, name: &str, edit: impl FnOnce(&mut Channel)) {
        self.change(|document| {
            if let Some(channel) = document.state.channels.get_mut(name) {
                edit(channel);
            }
        });
    }

    pub fn change(&self, edit: impl FnOnce(&mut GraphDocument)) {
        if !self.can_edit {
            return;
        }
        let before = self.document();
        let mut after = before.clone();
        edit(&mut after);
        if after == before {
            return;
        }
        let words = super::edit_words::describe(&before, &after);
        self.history.update_value(|history| history.record(before));
        self.load(after);
        self.committed();
        self.say(words);
    }

    /// Adds to what the last edit said (what it did not do).
    pub fn say_more(&self, words: String) {
        self.said.update(|(count, said)| {
            *count += 1;
            if said.is_empty() {
                *said = words;
            } else {
                said.push_str("; ");
                said.push_str(&words);
            }
        });
    }

    /// Says an edit to screen readers (nothing when `words` is `None`).
    fn say(&self, words: Option<String>) {
        if let Some(words) = words {
            self.said.update(|(count, said)| {
                *count += 1;
                *said = words;
            });
        }
    }

    /// Moves `revision` and `content` on: something other than positions
    /// may have changed.
    fn committed(&self) {
        self.revision.update(|revision| *revision += 1);
        self.content.update(|content| *content += 1);
    }

    /// Records a change made live (a drag): `before` is the document from
    /// before it began.
    pub fn commit_from(&self, before: GraphDocument) {
        let now = self.document();
        if now == before {
            return;
        }
        let words = super::edit_words::describe(&before, &now);
        self.history.update_value(|history| history.record(before));
        self.committed();
        self.say(words);
    }

    /// Records a drag of nodes that has ended: `origins` are the dragged
    /// nodes' position signals and where each was. Only positions changed,
    /// so the document is built once (for undo) and validation is left be.
    pub fn commit_move(&self, origins: &[(RwSignal<Position>, Position)]) {
        if origins
            .iter()
            .all(|(position, was)| position.get_untracked() == *was)
        {
            return;
        }
        let before = self.document_moved_back(origins);
        self.history.update_value(|history| history.record(before));
        self.revision.update(|revision| *revision += 1);
    }

    pub fn undo(&self) {
        let current = self.document();
        if let Some(previous) = self
            .history
            .try_update_value(|history| history.undo(current.clone()))
            .flatten()
        {
            let words = super::edit_words::taken_back(&previous, &current);
            self.load(previous);
            self.committed();
            self.say(Some(super::edit_words::undone("Undone", words)));
        }
    }

    pub fn redo(&self) {
        let current = self.document();
        if let Some(next) = self
            .history
            .try_update_value(|history| history.redo(current.clone()))
            .flatten()
        {
            let words = super::edit_words::taken_back(&current, &next);
            self.load(next);
            self.committed();
            self.say(Some(super::edit_words::undone("Redone", words)));
        }
    }

    /// Replaces the document without an undo step (a reload from the server).
    pub fn replace(&self, document: GraphDocument) {
        self.history.set_value(History::default());
        self.load(document);
        // Validated again; not saved (it is what the server has).
        self.content.update(|content| *content += 1);
    }

    /// A node's label as the canvas shows it, when it has one other than
    /// its id (read untracked: for names in lists drawn once).
    pub fn label_of(&self, node: &str) -> Option<String> {
        self.view_of(&NodeId::from(node))
            .map(|view| view.spec.with_untracked(|spec| spec.label.clone()))
            .filter(|label| !label.is_empty() && label != node)
    }

    /// `message` with each node it names by id named by its label (read
    /// untracked; `node_names.rs`).
    pub fn named(&self, message: &str) -> String {
        super::node_names::name_nodes(message, |id| self.label_of(id))
    }

    /// A node as a person reads it: its label, else its id (a node the
    /// graph no longer has, or one inside a subgraph). Read untracked.
    pub fn name_of(&self, node: &str) -> String {
        self.label_of(node).unwrap_or_else(|| node.to_string())
    }

    /// Node `id`'s view, if the graph has it (read untracked).
    pub fn view_of(&self, id: &NodeId) -> Option<NodeView> {
        self.by_id.with_untracked(|nodes| nodes.get(id).copied())
    }

    /// The position signal of every node, by id.
    pub fn positions(&self) -> Memo<HashMap<NodeId, RwSignal<Position>>> {
        let nodes = self.nodes;
        Memo::new(move |_| {
            nodes.with(|nodes| {
                nodes
                    .iter()
                    .map(|node| (node.id.get_value(), node.position))
                    .collect()
            })
        })
    }

    /// The node whose box holds world point `at` (topmost first), or one
    /// within `reach` (world units) of its box where none does: a
    /// wire dropped on a node's input dot, which stands half outside the
    /// node, lands on the node.
    pub fn node_near(&self, at: Position, reach: f64) -> Option<NodeId> {
        use super::model::{NODE_HEIGHT, NODE_WIDTH};
        self.nodes.with_untracked(|nodes| {
            let inside = |p: Position, reach: f64| {
                at.x >= p.x - reach
                    && at.x <= p.x + NODE_WIDTH + reach
                    && at.y >= p.y - reach
                    && at.y <= p.y + NODE_HEIGHT + reach
            };
            // On a node itself first: a near one only where none is.
            let on = |reach: f64| {
                nodes.iter().rev().find_map(|node| {
                    inside(node.position.get_untracked(), reach).then(|| node.id.get_value())
                })
            };
            on(0.0).or_else(|| (reach > 0.0).then(|| on(reach)).flatten())
        })
    }

    /// The box every node and note is in, as they stand now.
    fn bounds(&self) -> Option<(f64, f64, f64, f64)> {
        let nodes = self
            .nodes
            .with_untracked(|nodes| extent(nodes, |p| p.get_untracked()));
        // The notes too: a note written over a node is part of what Fit
        // shows, not cut off under the toolbar. And groups' frames: a
        // frame's bar stands above its nodes, and was fitted under the
        // toolbar.
        let (width, height) = super::model::NOTE_SIZE;
        let union = |bounds: Option<(f64, f64, f64, f64)>, (x, y, x2, y2): (f64, f64, f64, f64)| {
            let (x1, y1, right, bottom) = bounds.unwrap_or((x, y, x2, y2));
            Some((x1.min(x), y1.min(y), right.max(x2), bottom.max(y2)))
        };
        self.skeleton.with_untracked(|document| {
            let noted = document.notes.iter().fold(nodes, |bounds, note| {
                let (x, y) = (note.position.x, note.position.y);
                union(bounds, (x, y, x + width, y + height))
            });
            document
                .groups
                .iter()
                .filter(|group| !group.collapsed)
                .filter_map(|group| {
                    super::group_room::frame_box(group.nodes.iter().filter_map(|id| {
                        let at = self.view_of(id)?.position.get_untracked();
                        Some((at.x, at.y))
                    }))
                })
                .fold(noted, union)
        })
    }

    /// Fits every node in a `width` × `height` canvas.
    pub fn fit(&self, width: f64, height: f64) {
        let bounds = self.bounds();
        let view = Viewport::fitting(bounds, width, height);
        self.showing_start.set(false);
        self.viewport.set(view);
        self.framed.set_value(Some((view, Framing::Whole)));
    }

    /// Frames the graph as it opens (or as the canvas changes size before
    /// anyone moved the view): the whole graph when it reads, else its
    /// start at a readable zoom (`Viewport::opening`).
    pub fn frame(&self, width: f64, height: f64) {
        let bounds = self.bounds();
        let (view, at_start) = Viewport::opening(bounds, self.start_position(), width, height);
        self.showing_start.set(at_start);
        self.viewport.set(view);
        self.framed.set_value(Some((view, Framing::Opening)));
    }

    /// Opens the graph at `view` (where it was left on the last visit, see
    /// `view_memory`) in a `width` × `height` canvas, when that shows some
    /// of it; false, and nothing changed, otherwise. The view counts as
    /// moved: the canvas changing size keeps its middle in the middle.
    pub fn reopen_at(&self, view: Viewport, width: f64, height: f64) -> bool {
        let bounds = self.bounds();
        if !view.shows_some_of(bounds, (width, height)) {
            return false;
        }
        let (opening, _) = Viewport::opening(bounds, self.start_position(), width, height);
        self.showing_start.set(false);
        self.viewport.set(view);
        self.framed.set_value(Some((opening, Framing::Opening)));
        true
    }

    /// Frames the graph again, as it was last framed, in a canvas that has
    /// changed size: whole after Fit; as it opened otherwise, so a canvas
    /// made smaller (the chat opening under it) shows the start readable
    /// rather than the whole too small to read.
    pub fn reframe(&self, width: f64, height: f64) {
        match self.framed.get_value().map(|(_, how)| how) {
            Some(Framing::Whole) => self.fit(width, height),
            Some(Framing::Start) => self.go_to_start(height),
            Some(Framing::Opening) | None => self.frame(width, height),
        }
    }

    /// Moves the view to show node `id` whole in a `width` × `height`
    /// canvas, when it does not already.
    pub fn reveal(&self, id: &NodeId, width: f64, height: f64) {
        let at = self.position_of(id);
        let view = self.viewport.get_untracked();
        if let Some(moved) = at.and_then(|at| view.revealing(at, width, height)) {
            self.viewport.set(moved);
        }
    }

    /// Whether node `id` shows whole and readable in a `width` × `height`
    /// canvas at the view as it is.
    pub fn shows(&self, id: &NodeId, width: f64, height: f64) -> bool {
        let view = self.viewport.get_untracked();
        self.position_of(id)
            .is_some_and(|at| view.revealing(at, width, height).is_none())
    }

    /// Where node `id` is (read without tracking).
    fn position_of(&self, id: &NodeId) -> Option<Position> {
        self.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .find(|node| node.id.with_value(|own| own == id))
                .map(|node| node.position.get_untracked())
        })
    }

    /// After node `id` was added from the keyboard: the view follows it,
    /// keeping the whole graph when it still reads (`Viewport::following`),
    /// in the part of the canvas right of `left` (screen pixels: the open
    /// palette lies over the rest on a narrow window).
    pub fn follow_added(&self, id: &NodeId, left: f64, width: f64, height: f64) {
        let at = self.position_of(id);
        let view = self.viewport.get_untracked();
        let left = left.clamp(0.0, width / 2.0);
        let seen = Viewport {
            x: view.x - left,
            ..view
        };
        if let Some(moved) =
            at.and_then(|at| seen.following(at, self.bounds(), width - left, height))
        {
            self.viewport.set(Viewport {
                x: moved.x + left,
                ..moved
            });
        }
    }

    /// Goes to the graph's start at a readable zoom, whatever its size (a
    /// person asked for it).
    pub fn go_to_start(&self, height: f64) {
        let bounds = self.bounds();
        if let Some(view) = Viewport::at_start(bounds, self.start_position(), height) {
            self.showing_start.set(true);
            self.viewport.set(view);
            self.framed.set_value(Some((view, Framing::Start)));
        }
    }

    /// Where runs begin on the canvas: the entry node, else the start node,
    /// else the first.
    fn start_position(&self) -> Option<Position> {
        let entry = self
            .skeleton
            .with_untracked(|document| document.entry.clone());
        self.nodes.with_untracked(|nodes| {
            let kind_is =
                |node: &&NodeView, kind: &str| node.spec.with_untracked(|spec| spec.kind == kind);
            entry
                .and_then(|entry| nodes.iter().find(|node| node.id.get_value() == entry))
                .or_else(|| nodes.iter().find(|node| kind_is(node, "start")))
                .or_else(|| nodes.first())
                .map(|node| node.position.get_untracked())
        })
    }

    /// Whether the graph has been framed (or opened where it was left)
    /// in the canvas's real size yet.
    pub fn framed_yet(&self) -> bool {
        self.framed.get_value().is_some()
    }

    /// Whether the view is still the one the last fit made, or no fit has
    /// happened yet (the canvas was not laid out when the graph opened).
    pub fn still_framed(&self) -> bool {
        self.framed
            .get_value()
            .is_none_or(|(view, _)| view == self.viewport.get_untracked())
    }
}

/// A deletion, an undo, a redo or a naming told on the canvas with the way back
/// (`undo_notice`): its words, and the revision it made (any later edit
/// hides it: its button would no longer take back what it says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoOffer {
    pub words: String,
    /// What was done: the button takes it back (a deletion or a redo is
    /// undone, an undo redone).
    pub done: Done,
    pub revision: u64,
    /// Which offer this is, so a timer hides only its own.
    pub number: u64,
}

/// What an [`UndoOffer`] tells of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    Deleted,
    Undone,
    Redone,
}

/// How the view was last framed: it is framed the same way again when the
/// canvas changes size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// As the graph opened: whole when it reads, else its start.
    Opening,
    /// Whole, however small (Fit, Show all).
    Whole,
    /// Its start, readable (Go to the start).
    Start,
}

/// The box `(x1, y1, x2, y2)` around `nodes`, their places read by `place`
/// (followed or not, as the caller needs); None for no nodes.
pub fn extent(
    nodes: &[NodeView],
    place: impl Fn(RwSignal<Position>) -> Position,
) -> Option<(f64, f64, f64, f64)> {
    use super::model::{NODE_HEIGHT, NODE_WIDTH};
    nodes.iter().fold(None, |extent, node| {
        let p = place(node.position);
        let (x1, y1, x2, y2) = extent.unwrap_or((p.x, p.y, p.x, p.y));
        Some((
            x1.min(p.x),
            y1.min(p.y),
            x2.max(p.x + NODE_WIDTH),
            y2.max(p.y + NODE_HEIGHT),
        ))
    })
}

#[cfg(test)]
mod tests {
    use heddle_engine::GraphDocument;
    use heddle_engine::format::Position;
    use leptos::prelude::*;

    use super::{Editor, FIT_MARGIN, FRAMING_NOTE, Viewport};

    #[test]
    fn a_node_out_of_view_is_brought_into_it_and_one_in_view_stays() {
        let view = Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 1.0,
        };
        let seen = Position { x: 300.0, y: 300.0 };
        assert_eq!(view.revealing(seen, 1000.0, 800.0), None);
        let far = Position {
            x: 5000.0,
            y: -900.0,
        };
        let moved = view.revealing(far, 1000.0, 800.0).unwrap();
        assert_eq!(moved.zoom, 1.0);
        assert_eq!(moved.revealing(far, 1000.0, 800.0), None, "now it shows");
        // Under the floating toolbar is not in view.
        let under = Position { x: 300.0, y: 10.0 };
        assert!(view.revealing(under, 1000.0, 800.0).is_some());
        // Seen but too small to read: zoomed in on it, centred.
        let fitted = Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 0.26,
        };
        let read = fitted.revealing(seen, 1000.0, 800.0).expect("zoomed in");
        assert_eq!(read.zoom, Viewport::START_ZOOM);
        assert_eq!(read.revealing(seen, 1000.0, 800.0), None);
    }

    #[test]
    fn a_box_under_the_toolbar_is_brought_down_at_the_same_zoom_and_one_in_view_stays() {
        let view = Viewport {
            x: 0.0,
            y: 20.0,
            zoom: 0.5,
        };
        // A frame whose bar is at 20 px on screen, under the toolbar.
        let frame = (100.0, 0.0, 500.0, 200.0);
        let moved = view.showing_box(frame, 900.0, 600.0).expect("moved");
        assert_eq!(moved.zoom, 0.5);
        assert_eq!(moved.x, 0.0);
        assert!(
            (frame.1 * moved.zoom + moved.y - 72.0).abs() < 1e-9,
            "{moved:?}"
        );
        assert_eq!(moved.showing_box(frame, 900.0, 600.0), None, "now it shows");
        // Taller than the canvas: its top is what shows.
        let tall = (100.0, 0.0, 500.0, 5_000.0);
        let moved = view.showing_box(tall, 900.0, 600.0).expect("moved");
        assert!(
            (tall.1 * moved.zoom + moved.y - 72.0).abs() < 1e-9,
            "{moved:?}"
        );
        // Off the right edge: moved left, no further than its left side.
        let right = (1_700.0, 200.0, 1_900.0, 260.0);
        let moved = view.showing_box(right, 900.0, 600.0).expect("moved");
        assert!(
            (right.2 * moved.zoom + moved.x - 884.0).abs() < 1e-9,
            "{moved:?}"
        );
        assert_eq!(
            view.showing_box((f64::NAN, 0.0, 1.0, 1.0), 900.0, 600.0),
            None
        );
    }

    #[test]
    fn a_chain_built_from_the_keyboard_stays_whole_in_view_while_it_reads() {
        use super::super::model::{NODE_HEIGHT, NODE_WIDTH};
        let view = Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 1.0,
        };
        // Five nodes in a row, 240 apart, the fifth just added off-screen
        // in a 1024-wide canvas.
        let chain = |n: f64| {
            Some((
                0.0,
                100.0,
                240.0 * (n - 1.0) + NODE_WIDTH,
                100.0 + NODE_HEIGHT,
            ))
        };
        let fifth = Position { x: 960.0, y: 100.0 };
        let kept = view
            .following(fifth, chain(5.0), 1024.0, 500.0)
            .expect("moved");
        assert!(
            kept.zoom >= Viewport::COMFORTABLE && kept.zoom < 1.0,
            "{kept:?}"
        );
        let first = Position { x: 0.0, y: 100.0 };
        assert_eq!(
            kept.revealing(first, 1024.0, 500.0),
            None,
            "the first shows"
        );
        assert_eq!(
            kept.revealing(fifth, 1024.0, 500.0),
            None,
            "the fifth shows"
        );
        // Twenty: the whole would not read, so the view moves to the new one.
        let twentieth = Position {
            x: 4560.0,
            y: 100.0,
        };
        let moved = view
            .following(twentieth, chain(20.0), 1024.0, 500.0)
            .expect("moved");
        assert_eq!(moved.zoom, 1.0);
        assert_eq!(moved.revealing(twentieth, 1024.0, 500.0), None);
        // One in view already: the view stays.
        let second = Position { x: 240.0, y: 100.0 };
        assert_eq!(view.following(second, chain(5.0), 1024.0, 500.0), None);
        // Four, which fit as close as now, the fourth just added off the
        // right: all four at this zoom, the first not pushed off the left
        // (moved to the fourth alone, the view would lose it).
        let panned = Viewport {
            x: 200.0,
            y: 0.0,
            zoom: 1.0,
        };
        let fourth = Position { x: 720.0, y: 100.0 };
        let kept = panned
            .following(fourth, chain(4.0), 1024.0, 500.0)
            .expect("moved");
        assert_eq!(kept.zoom, 1.0);
        assert_eq!(
            kept.revealing(first, 1024.0, 500.0),
            None,
            "the first shows"
        );
        assert_eq!(
            kept.revealing(fourth, 1024.0, 500.0),
            None,
            "the fourth shows"
        );
        let alone = panned.revealing(fourth, 1024.0, 500.0).expect("moved");
        assert!(alone.revealing(first, 1024.0, 500.0).is_some(), "lost");
    }

    #[test]
    fn a_drag_is_committed_as_one_undo_step_without_revalidating() {
        let owner = Owner::new();
        owner.with(|| {
            let document = GraphDocument::from_json(
                &serde_json::json!({
                "format_version": 1,
                "name": "g",
                "nodes": [
                    {"id": "a", "kind": "set", "position": {"x": 0.0, "y": 0.0}},
                    {"id": "b", "kind": "set", "position": {"x": 200.0, "y": 0.0}},
                    {"id": "c", "kind": "set", "position": {"x": 400.0, "y": 0.0}}
                ]
                })
                .to_string(),
            )
            .unwrap();
            let editor = Editor::new(document.clone(), true);
            let (revision, content) = (
                editor.revision.get_untracked(),
                editor.content.get_untracked(),
            );
            let [a, b] = editor
                .nodes
                .with_untracked(|nodes| [nodes[0].position, nodes[1].position]);
            let (was_a, was_b) = (a.get_untracked(), b.get_untracked());

            // A press and release without a move commits nothing.
            editor.commit_move(&[(a, was_a)]);
            assert_eq!(editor.revision.get_untracked(), revision);

            // Two nodes dragged together.
            a.set(Position { x: 30.0, y: 40.0 });
            b.set(Position { x: 230.0, y: 40.0 });
            editor.commit_move(&[(a, was_a), (b, was_b)]);
            assert_eq!(editor.revision.get_untracked(), revision + 1, "saved");
            assert_eq!(
                editor.content.get_untracked(),
                content,
                "not validated again"
            );
            let moved = editor.document();
            assert_eq!(moved.nodes[0].position, Some(Position { x: 30.0, y: 40.0 }));
            assert_eq!(moved.nodes[2].position, Some(Position { x: 400.0, y: 0.0 }));

            // One undo puts both back, and nothing else moves.
            editor.undo();
            assert_eq!(editor.document(), document);
            editor.redo();
            assert_eq!(editor.document(), moved);
        });
    }

    #[test]
    fn a_canvas_made_smaller_frames_the_graph_again_as_it_was_framed() {
        let owner = Owner::new();
        owner.with(|| {
            // Seven nodes in a row, 1,380 px wide: whole at 972 px (a 1024
            // window), too small to read at 548 (the inspector open).
            let nodes: Vec<_> = (0..7)
                .map(|i| serde_json::json!({"id": format!("n{i}"), "kind": "set", "position": {"x": 200.0 * f64::from(i), "y": 0.0}}))
                .collect();
            let document = GraphDocument::from_json(
                &serde_json::json!({"format_version": 1, "name": "g", "nodes": nodes}).to_string(),
            )
            .unwrap();
            let editor = Editor::new(document, true);
            editor.frame(972.0, 600.0);
            assert!(!editor.showing_start.get_untracked());
            assert!(editor.viewport.get_untracked().zoom >= Viewport::READABLE);
            // As it opened: readable, so the start rather than the whole.
            editor.reframe(548.0, 360.0);
            assert!(editor.showing_start.get_untracked());
            assert_eq!(editor.viewport.get_untracked().zoom, Viewport::START_ZOOM);
            assert!(editor.still_framed());
            // Back to the room it had: whole again.
            editor.reframe(972.0, 600.0);
            assert!(!editor.showing_start.get_untracked());
            // After Fit, whole whatever the size, even too small to read.
            editor.fit(972.0, 600.0);
            editor.reframe(548.0, 360.0);
            assert!(!editor.showing_start.get_untracked());
            assert!(editor.viewport.get_untracked().zoom < Viewport::READABLE);
        });
    }

    #[test]
    fn fit_shows_a_groups_frame_whole_its_bar_above_its_nodes_too() {
        let owner = Owner::new();
        owner.with(|| {
            let document = GraphDocument::from_json(
                &serde_json::json!({
                    "format_version": 2, "name": "g",
                    "nodes": [
                        {"id": "a", "kind": "set", "position": {"x": 0.0, "y": 0.0}},
                        {"id": "b", "kind": "set", "position": {"x": 240.0, "y": 0.0}}
                    ],
                    "groups": [{"id": "group-1", "label": "Both", "nodes": ["a", "b"]}]
                })
                .to_string(),
            )
            .unwrap();
            let editor = Editor::new(document, true);
            let frame =
                super::super::group_room::frame_box([(0.0, 0.0), (240.0, 0.0)]).expect("a frame");
            assert_eq!(editor.bounds(), Some(frame), "the frame, its bar included");
            editor.fit(900.0, 600.0);
            let view = editor.viewport.get_untracked();
            // The bar's top is below the floating toolbar.
            assert!(
                frame.1 * view.zoom + view.y >= FIT_MARGIN - 1e-9,
                "{view:?}"
            );
        });
    }

    #[test]
    fn a_graph_fitted_too_small_to_read_lies_above_the_note_that_says_so() {
        // Tall: 12 bands of nodes, 4,000 px, in a 900 × 660 canvas.
        let extent = Some((0.0, 0.0, 3_000.0, 4_000.0));
        let view = Viewport::fitting(extent, 900.0, 660.0);
        assert!(view.zoom < Viewport::READABLE);
        let bottom = 4_000.0 * view.zoom + view.y;
        assert!(
            bottom <= 660.0 - FIT_MARGIN - FRAMING_NOTE + 1e-9,
            "{bottom}"
        );
        // Read whole, nothing is said: the fit uses the canvas's height.
        let small = Some((0.0, 0.0, 600.0, 400.0));
        let view = Viewport::fitting(small, 900.0, 660.0);
        let bottom = 400.0 * view.zoom + view.y;
        assert!(bottom > 660.0 - FIT_MARGIN - FRAMING_NOTE, "{bottom}");
    }

    #[test]
    fn zooming_keeps_the_point_under_the_cursor() {
        let view = Viewport {
            x: 10.0,
            y: 20.0,
            zoom: 1.0,
        };
        let before = view.to_world(300.0, 200.0);
        let zoomed = view.zoom_at(1.5, 300.0, 200.0);
        let after = zoomed.to_world(300.0, 200.0);
        assert!((before.x - after.x).abs() < 1e-9 && (before.y - after.y).abs() < 1e-9);
        assert_eq!(view.zoom_at(100.0, 0.0, 0.0).zoom, Viewport::MAX_ZOOM);
    }

    #[test]
    fn fitting_centres_the_extent_with_a_margin() {
        // A 25 × 20 grid of nodes, far wider than tall.
        let view = Viewport::fitting(Some((0.0, 0.0, 5460.0, 1956.0)), 900.0, 660.0);
        assert!((view.zoom - (900.0 - 96.0) / 5460.0).abs() < 1e-9);
        // Centred below the floating toolbar: between 72 px from the top
        // and 48 from the foot, over the note that says it is too small to
        // read (48 more).
        let centre = view.to_world(450.0, (72.0 + 660.0 - 48.0 - 48.0) / 2.0);
        assert!((centre.x - 2730.0).abs() < 1e-6 && (centre.y - 978.0).abs() < 1e-6);
        // A graph taller than wide: its top sits clear of the toolbar.
        let tall = Viewport::fitting(Some((0.0, 0.0, 200.0, 3000.0)), 900.0, 660.0);
        assert!((tall.y - 72.0).abs() < 1e-6, "{tall:?}");
        // A single node is not blown up past 125%.
        assert_eq!(
            Viewport::fitting(Some((0.0, 0.0, 180.0, 60.0)), 900.0, 660.0).zoom,
            1.25
        );
        assert_eq!(Viewport::fitting(None, 900.0, 660.0), Viewport::default());
    }

    #[test]
    fn a_short_canvas_keeps_less_room_around_the_graph() {
        // The Support router (three bands, 296 high at 100%) in a 972 ×
        // 240 canvas: 1024×700 with the chat open. The room above and
        // below took 120 px of the 240, and it was fitted at 41%.
        let router = Some((0.0, 0.0, 1060.0, 296.0));
        let short = Viewport::fitting(router, 972.0, 240.0);
        assert!(
            (short.zoom - (240.0 - 60.0 - 16.0) / 296.0).abs() < 1e-9,
            "{short:?}"
        );
        assert!(short.zoom > 0.55);
        // Its top clear of the toolbar, its foot inside the canvas.
        assert!((short.y - 60.0).abs() < 1e-6, "{short:?}");
        assert!(296.0 * short.zoom + short.y <= 240.0 - 16.0 + 1e-9);
        // From 480 px up, the room is what it always was.
        let roomy = Viewport::fitting(Some((0.0, 0.0, 1060.0, 600.0)), 972.0, 480.0);
        assert!(
            (roomy.zoom - (480.0 - 72.0 - 48.0) / 600.0).abs() < 1e-9,
            "{roomy:?}"
        );
    }

    #[test]
    fn fitting_a_hostile_extent_gives_the_smallest_zoom_and_never_panics() {
        // The server fits every graph it renders; positions come from anyone
        // who can edit. A span past f64's range is infinite, not a panic.
        let view = Viewport::fitting(Some((-1e308, -1e308, 1e308, 1e308)), 900.0, 660.0);
        assert_eq!(view.zoom, Viewport::MIN_ZOOM);
        let view = Viewport::fitting(
            Some((1e300, 1e300, 1e300 + 180.0, 1e300 + 56.0)),
            900.0,
            660.0,
        );
        assert!(view.zoom.is_finite() && view.zoom > 0.0);
    }

    #[test]
    fn a_graph_too_big_to_read_opens_at_its_start_at_a_readable_zoom() {
        // Nine bands of twelve nodes: whole, about 26%.
        let extent = Some((0.0, 0.0, 3060.0, 1500.0));
        let start = Position { x: 0.0, y: 0.0 };
        let (view, at_start) = Viewport::opening(extent, Some(start), 900.0, 660.0);
        assert!(at_start);
        assert_eq!(view.zoom, Viewport::START_ZOOM);
        // The start sits just inside the left edge, the view not above the
        // graph's top.
        let corner = view.to_world(0.0, 0.0);
        assert!(corner.x < 0.0 && corner.x > -60.0, "{corner:?}");
        assert!(corner.y < -60.0 && corner.y > -90.0, "{corner:?}");
        // A start mid-height is centred vertically.
        let (view, _) = Viewport::opening(
            Some((0.0, -2000.0, 3060.0, 2000.0)),
            Some(start),
            900.0,
            660.0,
        );
        let middle = view.to_world(450.0, 330.0);
        assert!((middle.y - 28.0).abs() < 1.0, "{middle:?}");
        // A single row is centred in height.
        let row = Some((0.0, 0.0, 3060.0, 56.0));
        let (view, at_start) = Viewport::opening(row, Some(start), 900.0, 660.0);
        assert!(at_start);
        assert!((view.to_world(450.0, 330.0).y - 28.0).abs() < 1e-6);
        // A graph that reads whole opens whole.
        let small = Some((0.0, 0.0, 900.0, 300.0));
        let (view, at_start) = Viewport::opening(small, Some(start), 900.0, 660.0);
        assert!(!at_start);
        assert_eq!(view, Viewport::fitting(small, 900.0, 660.0));
        // Hostile positions neither panic nor give a view that is not finite.
        let (view, _) = Viewport::opening(
            Some((-1e308, -1e308, 1e308, 1e308)),
            Some(Position {
                x: 1e308,
                y: -1e308,
            }),
            900.0,
            660.0,
        );
        assert!(view.x.is_finite() && view.y.is_finite());
    }
}
