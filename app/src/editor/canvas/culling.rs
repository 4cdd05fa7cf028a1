//! Culling: a big graph's page holds only the nodes and edges near the
//! view, so opening, panning and dragging cost what is seen, not the size
//! of the graph (docs/performance.md, "Big graphs").
//!
//! The part of the world drawn (the [`Window`]) is the view grown by half
//! a screen on each side, and it stays put while the view moves inside
//! it: a pan redraws nothing until it nears the window's edge, then the
//! window moves once, and the nodes it brings join the page a few per
//! frame, nearest first, so no frame is spent making a screenful. Selected nodes are always drawn (a drag or the
//! keyboard may take them anywhere), and so is every edge touching a drawn
//! node or crossing the window. A graph of up to [`DRAW_ALL`] nodes is
//! drawn whole: culling it would save little, and keep nodes out of the
//! Tab order and away from screen readers for nothing.
//!
//! The server draws the window of the guessed canvas
//! (`Viewport::GUESSED_CANVAS`), as the browser's first render does, so
//! hydration finds what it drew.

use std::collections::BTreeSet;

use heddle_engine::format::{EdgeSpec, Position};
use heddle_engine::{EdgeId, NodeId};
use leptos::prelude::*;

use crate::editor::gestures::Gestures;
use crate::editor::model::{NODE_HEIGHT, NODE_WIDTH};
use crate::editor::state::{Editor, NodeView, Viewport};

mod node_grid;
use node_grid::NodeGrid;

/// Graphs with at most this many nodes are drawn whole.
pub(super) const DRAW_ALL: usize = 200;

/// How much of a screen the window reaches past the view on each side.
const MARGIN: f64 = 0.5;

/// A box of the world: `(x1, y1)` to `(x2, y2)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Window {
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
}

impl Window {
    /// The part of the world `view` shows in a canvas of `size`.
    fn seen(view: Viewport, (width, height): (f64, f64)) -> Window {
        let zoom = view.zoom.max(Viewport::MIN_ZOOM);
        Window {
            x1: -view.x / zoom,
            y1: -view.y / zoom,
            x2: (width - view.x) / zoom,
            y2: (height - view.y) / zoom,
        }
    }

    /// Whether all of `inner` is inside.
    fn contains(&self, inner: &Window) -> bool {
        inner.x1 >= self.x1 && inner.y1 >= self.y1 && inner.x2 <= self.x2 && inner.y2 <= self.y2
    }

    /// Grown by `by` of its width and height on each side.
    fn grown(&self, by: f64) -> Window {
        let (dx, dy) = ((self.x2 - self.x1) * by, (self.y2 - self.y1) * by);
        Window {
            x1: self.x1 - dx,
            y1: self.y1 - dy,
            x2: self.x2 + dx,
            y2: self.y2 + dy,
        }
    }

    /// The window to draw for `view`: `previous` while the view stays a
    /// quarter of a screen inside it (and, zoomed in, still fills half its
    /// width), else the view grown by [`MARGIN`]. It moves before the view
    /// reaches its edge, so what comes into view is drawn already.
    pub(super) fn next(previous: Option<Window>, view: Viewport, size: (f64, f64)) -> Window {
        let seen = Window::seen(view, size);
        let fresh = seen.grown(MARGIN);
        match previous {
            Some(previous)
                if previous.contains(&seen.grown(MARGIN / 2.0))
                    && previous.x2 - previous.x1 <= 2.0 * (fresh.x2 - fresh.x1) =>
            {
                previous
            }
            _ => fresh,
        }
    }

    /// Whether any of the box of a node at `at` is inside.
    fn holds_node(&self, at: Position) -> bool {
        at.x + NODE_WIDTH >= self.x1
            && at.x <= self.x2
            && at.y + NODE_HEIGHT >= self.y1
            && at.y <= self.y2
    }

    /// Whether the box spanning nodes at `a` and `b` (an edge's bounds)
    /// meets the window.
    fn meets_span(&self, a: Position, b: Position) -> bool {
        let (x1, x2) = (a.x.min(b.x), a.x.max(b.x) + NODE_WIDTH);
        let (y1, y2) = (a.y.min(b.y), a.y.max(b.y) + NODE_HEIGHT);
        x2 >= self.x1 && x1 <= self.x2 && y2 >= self.y1 && y1 <= self.y2
    }
}

/// How many nodes beyond the view join the page in one frame when the
/// window moves: a node drawn in full, with its edges, costs about 1.5 ms
/// to make, and a frame has 16.
#[cfg(feature = "hydrate")]
const ARRIVING: usize = 8;

/// How many nodes no longer wanted leave the page in one frame: taking a
/// node's elements out and dropping its effects costs about 1 ms, and a
/// moved window sends some 40 away at once (a 50 ms frame, measured).
#[cfg(feature = "hydrate")]
const LEAVING: usize = 12;

/// Keeps `drawn` following `wanted`. Those in the view join at once (after
/// Fit or a zoom out, the view is what the person asked to see), and so do
/// the selected; the rest,
/// in the window's margin, join `ARRIVING` a frame, nearest the window's
/// middle first. Nodes no longer wanted (out of the window, so out of
/// sight) leave `LEAVING` a frame, farthest first, once none is left to
/// arrive. The window moves
/// before the view reaches its edge, so a pan finds them drawn.
#[cfg(feature = "hydrate")]
fn arrive(
    editor: Editor,
    gestures: Gestures,
    grid: Memo<Option<NodeGrid>>,
    wanted: Memo<Option<BTreeSet<NodeId>>>,
    drawn: RwSignal<Option<BTreeSet<NodeId>>>,
    window: Memo<Window>,
) {
    use std::cell::Cell;
    use std::rc::Rc;

    /// What a walk reads and writes, frame after frame.
    #[derive(Clone, Copy)]
    struct Walk {
        editor: Editor,
        gestures: Gestures,
        grid: Memo<Option<NodeGrid>>,
        drawn: RwSignal<Option<BTreeSet<NodeId>>>,
        window: Memo<Window>,
    }

    // Each change of what is wanted starts one walk; an older one stops.
    let walks = Rc::new(Cell::new(0u64));
    let walk = Walk {
        editor,
        gestures,
        grid,
        drawn,
        window,
    };
    Effect::new(move |_| {
        let Some(target) = wanted.get() else {
            drawn.set(None);
            return;
        };
        walks.set(walks.get() + 1);
        step(walk, target, Rc::clone(&walks), walks.get(), true);
    });

    /// One frame's share of the walk. The `first`, run in the frame that
    /// moved the window (a pointer move's), brings only what is in view:
    /// that frame has already worked out the window, and making nodes of
    /// the margin too passed its budget (a 25 ms task, traced).
    fn step(walk: Walk, target: BTreeSet<NodeId>, walks: Rc<Cell<u64>>, this: u64, first: bool) {
        let Walk {
            editor,
            gestures,
            grid,
            drawn,
            window,
        } = walk;
        // A newer walk took over, or the canvas is gone (a walk goes on
        // over frames, and the page may be left in between).
        if walks.get() != this || drawn.is_disposed() {
            return;
        }
        let now = drawn.get_untracked().unwrap_or_default();
        let arriving = target.difference(&now).take(ARRIVING + 1).count();
        let leaving = now.difference(&target).take(LEAVING + 1).count();
        if !first
            && ((arriving == 0 && leaving <= LEAVING) || (leaving == 0 && arriving <= ARRIVING))
        {
            let _ = drawn.try_set(Some(target));
            return;
        }
        let size = gestures
            .seen_size_untracked()
            .unwrap_or(Viewport::GUESSED_CANVAS);
        let seen = Window::seen(editor.viewport.get_untracked(), size);
        let (mx, my) = window.with_untracked(|w| ((w.x1 + w.x2) / 2.0, (w.y1 + w.y2) / 2.0));
        let far = |at: Position| (at.x - mx).hypot(at.y - my);
        // Each missing node once: in view (or selected), or how far from
        // the middle; each node to leave, how far from the middle (a node
        // gone from the graph first).
        let mut margin: Vec<(f64, NodeId)> = Vec::new();
        let mut leaving: Vec<(f64, NodeId)> = Vec::new();
        let mut next: BTreeSet<NodeId> = now.intersection(&target).cloned().collect();
        // The selected join at once wherever they are: the keyboard or a
        // search has just gone to one, and focuses it.
        let selected = editor.selected.get_untracked();
        grid.with_untracked(|grid| {
            let at = |id: &NodeId| grid.as_ref().and_then(|grid| grid.at(id));
            for id in target.difference(&now) {
                match at(id) {
                    Some(at) if !seen.holds_node(at) && !selected.contains(id) => {
                        margin.push((far(at), id.clone()))
                    }
                    _ => {
                        next.insert(id.clone());
                    }
                }
            }
            for id in now.difference(&target) {
                leaving.push((at(id).map_or(f64::INFINITY, far), id.clone()));
            }
        });
        margin.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The nearest stay a frame or more: they are the likeliest wanted
        // again, and the farthest cost the same to take out.
        leaving.sort_by(|a, b| b.0.total_cmp(&a.0));
        // A frame either brings nodes or takes some away, never both: the
        // two together passed a frame's budget (33 ms frames while
        // panning 2,000 nodes). Those leaving are out of sight, so they
        // wait until all wanted have arrived.
        let leave = if margin.is_empty() && !first {
            LEAVING
        } else {
            0
        };
        let arrive = if first { 0 } else { ARRIVING };
        let done = margin.len() <= arrive && leaving.len() <= leave;
        next.extend(margin.into_iter().take(arrive).map(|(_, id)| id));
        next.extend(leaving.into_iter().skip(leave).map(|(_, id)| id));
        if next != now {
            let focused = focused_node();
            let _ = drawn.try_set(Some(next));
            if let Some(id) = focused {
                keep_focus(id);
            }
        }
        if !done {
            request_animation_frame(move || step(walk, target, walks, this, false));
        }
    }
}

/// The id of the canvas node that has the focus, if one has.
#[cfg(feature = "hydrate")]
fn focused_node() -> Option<String> {
    let active = document().active_element()?;
    active
        .matches(".canvas-node")
        .unwrap_or(false)
        .then(|| active.get_attribute("data-node"))
        .flatten()
}

/// Gives node `id` the focus back, once the nodes joining the page are
/// in, if it lost it to the page. The list's keyed diff moves an element
/// in the page when nodes arrive before it, and the browser takes the
/// focus from an element it moves: a keyboard user who had just gone to a
/// node far away would find the focus gone.
#[cfg(feature = "hydrate")]
pub(super) fn keep_focus(id: String) {
    use wasm_bindgen::JsCast;
    request_animation_frame(move || {
        let page = document();
        let lost = page
            .active_element()
            .is_none_or(|element| element.tag_name().eq_ignore_ascii_case("body"));
        if !lost {
            return;
        }
        let selector = format!(
            ".canvas-node[data-node=\"{}\"]",
            id.replace(['"', '\\'], "")
        );
        if let Some(node) = page
            .query_selector(&selector)
            .ok()
            .flatten()
            .and_then(|node| node.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = node.focus();
        }
    });
}

/// On the server nothing arrives: what it draws is what is wanted.
#[cfg(not(feature = "hydrate"))]
fn arrive(
    _editor: Editor,
    _gestures: Gestures,
    _grid: Memo<Option<NodeGrid>>,
    _wanted: Memo<Option<BTreeSet<NodeId>>>,
    _drawn: RwSignal<Option<BTreeSet<NodeId>>>,
    _window: Memo<Window>,
) {
}

/// What is wanted of a big graph: the nodes in the window or selected,
/// and the edges whose span meets the window. Worked out again only when
/// the window, the selection or a position changes, never as nodes join
/// the page over frames (that reruns [`Culled`], which reads no position:
/// a rerun that subscribes to 2,000 positions costs a frame by itself).
#[derive(Clone, Debug, Default, PartialEq)]
struct Wanted {
    nodes: BTreeSet<NodeId>,
    crossing: BTreeSet<EdgeId>,
}

/// What is drawn of a big graph; `None` in [`Culled`] means all of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Kept {
    pub nodes: BTreeSet<NodeId>,
    /// The edges drawn, in the graph's order: those touching a drawn node
    /// or crossing the window.
    pub edges: Vec<EdgeSpec>,
}

/// What the canvas draws, kept as the view, the canvas's size, the graph
/// and the selection change. `None`: the whole graph.
#[derive(Clone, Copy)]
pub(super) struct Culled(Memo<Option<Kept>>);

impl Culled {
    pub(super) fn new(editor: Editor, gestures: Gestures) -> Culled {
        let window = Memo::new(move |previous: Option<&Window>| {
            let size = gestures.seen_size().unwrap_or(Viewport::GUESSED_CANVAS);
            Window::next(previous.copied(), editor.viewport.get(), size)
        });
        // Where every node is, filed for the window's questions: worked
        // out again when the graph or a position changes, never for a pan.
        let grid = Memo::new_with_compare(
            move |_| {
                if editor.nodes.with(Vec::len) <= DRAW_ALL {
                    return None;
                }
                let nodes: Vec<(NodeId, Position)> = editor.nodes.with(|all| {
                    all.iter()
                        .map(|node| (node.id.get_value(), node.position.get()))
                        .collect()
                });
                Some(editor.edges.with(|edges| NodeGrid::of(nodes, edges)))
            },
            // Rebuilt only when something it holds changed.
            |_, _| true,
        );
        // The nodes that should be drawn (in the window, or selected) and
        // the edges crossing the window.
        let wanted = Memo::new(move |_| {
            let window = window.get();
            let selected = editor.selected.get();
            grid.with(|grid| {
                let grid = grid.as_ref()?;
                let mut nodes = grid.held(&window);
                nodes.extend(selected.iter().filter(|id| grid.at(id).is_some()).cloned());
                let crossing = grid.crossing(&window);
                Some(Wanted { nodes, crossing })
            })
        });
        let wanted_nodes = Memo::new(move |_| wanted.with(|w| w.as_ref().map(|w| w.nodes.clone())));
        // The nodes drawn: at first (and on the server) those wanted; then
        // they follow what is wanted a few at a time (`arrive`).
        let drawn = RwSignal::new(wanted_nodes.get_untracked());
        arrive(editor, gestures, grid, wanted_nodes, drawn, window);
        Culled(Memo::new(move |_| {
            let nodes = drawn.get()?;
            let edges = wanted.with(|wanted| {
                let crossing = wanted.as_ref().map(|w| &w.crossing);
                editor.edges.with(|edges| {
                    edges
                        .iter()
                        .filter(|edge| {
                            nodes.contains(&edge.from)
                                || nodes.contains(&edge.to)
                                || crossing.is_some_and(|crossing| crossing.contains(&edge.id))
                        })
                        .cloned()
                        .collect()
                })
            });
            Some(Kept { nodes, edges })
        }))
    }

    /// The graph's nodes that are drawn (tracked).
    pub(super) fn nodes(&self, editor: Editor) -> Vec<NodeView> {
        self.0.with(|drawn| {
            editor.nodes.with(|nodes| match drawn {
                Some(drawn) => nodes
                    .iter()
                    .filter(|node| node.id.with_value(|id| drawn.nodes.contains(id)))
                    .copied()
                    .collect(),
                None => nodes.clone(),
            })
        })
    }

    /// The graph's edges that are drawn, those `keep` keeps (tracked).
    pub(super) fn edges(&self, editor: Editor, keep: impl Fn(&EdgeSpec) -> bool) -> Vec<EdgeSpec> {
        self.0.with(|drawn| match drawn {
            Some(drawn) => drawn
                .edges
                .iter()
                .filter(|edge| keep(edge))
                .cloned()
                .collect(),
            None => editor
                .edges
                .with(|edges| edges.iter().filter(|edge| keep(edge)).cloned().collect()),
        })
    }

    /// Whether node `id` is drawn (tracked).
    pub(super) fn node(&self, id: &NodeId) -> bool {
        self.0
            .with(|drawn| drawn.as_ref().is_none_or(|drawn| drawn.nodes.contains(id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: (f64, f64) = (1000.0, 800.0);

    fn view(x: f64, y: f64, zoom: f64) -> Viewport {
        Viewport { x, y, zoom }
    }

    #[test]
    fn the_window_is_the_view_and_half_a_screen_around_it() {
        let window = Window::next(None, view(0.0, 0.0, 1.0), SCREEN);
        assert_eq!(
            window,
            Window {
                x1: -500.0,
                y1: -400.0,
                x2: 1500.0,
                y2: 1200.0
            }
        );
        // Zoomed to 50%, the view sees twice as far.
        let far = Window::next(None, view(0.0, 0.0, 0.5), SCREEN);
        assert_eq!((far.x2, far.y2), (3000.0, 2400.0));
    }

    #[test]
    fn the_window_stays_while_the_view_moves_inside_it_and_moves_once_past() {
        let first = Window::next(None, view(0.0, 0.0, 1.0), SCREEN);
        // Panned 200 px left (the world moves right): still well inside.
        let panned = Window::next(Some(first), view(-200.0, 0.0, 1.0), SCREEN);
        assert_eq!(panned, first);
        // 300 px: within a quarter screen of its edge, the window moves
        // with the view, before the view reaches its edge.
        let past = Window::next(Some(first), view(-300.0, 0.0, 1.0), SCREEN);
        assert_ne!(past, first);
        assert!(past.contains(&Window::seen(view(-300.0, 0.0, 1.0), SCREEN).grown(0.25)));
        // Zooming out past it moves it too.
        let out = Window::next(Some(first), view(0.0, 0.0, 0.4), SCREEN);
        assert_ne!(out, first);
        // Zooming in a little keeps it; to a quarter of it, it shrinks.
        let closer = Window::next(Some(first), view(0.0, 0.0, 1.5), SCREEN);
        assert_eq!(closer, first);
        let close = Window::next(Some(first), view(0.0, 0.0, 2.5), SCREEN);
        assert!(close.x2 - close.x1 < first.x2 - first.x1);
    }

    #[test]
    fn a_node_or_an_edge_partly_inside_is_drawn() {
        let window = Window::next(None, view(0.0, 0.0, 1.0), SCREEN);
        let at = |x: f64, y: f64| Position { x, y };
        assert!(window.holds_node(at(-500.0 - NODE_WIDTH + 1.0, 0.0)));
        assert!(!window.holds_node(at(-500.0 - NODE_WIDTH - 1.0, 0.0)));
        assert!(!window.holds_node(at(2000.0, 0.0)));
        // Both ends outside, on either side: the edge crosses the window.
        assert!(window.meets_span(at(-5000.0, 100.0), at(5000.0, 100.0)));
        assert!(!window.meets_span(at(-5000.0, 5000.0), at(5000.0, 5000.0)));
    }

    #[test]
    fn hostile_views_give_finite_windows() {
        for v in [
            view(f64::MAX, -f64::MAX, 1.0),
            view(0.0, 0.0, 0.0),
            view(1e308, 1e308, Viewport::MIN_ZOOM),
        ] {
            let window = Window::next(None, v, SCREEN);
            // Whatever it is, asking about a node does not panic.
            let _ = window.holds_node(Position { x: 0.0, y: 0.0 });
        }
    }
}
