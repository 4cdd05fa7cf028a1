//! Where each edge is drawn, for the canvas and the read-only preview.
//!
//! A forward edge is an S curve from the source's right port to the
//! target's left port; one whose curve would cross another node goes
//! around it, along a lane above or below (`detour.rs`). An edge that goes
//! back (a loop, or a target left of the source's right side) leaves to the
//! right, runs under every node between its ends and comes up into the
//! target from the left; to a target in a row below (a wrapped layout's
//! next band) it runs between the rows and comes down into it; loops whose
//! runs would overlap get lanes of their own, so two loops never draw as one
//! line. Labels sit at the middle of the path, moved above or below the
//! nodes when the middle falls on one.

/// The size of a node's box, which differs between the canvas and the
/// smaller preview.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeSize {
    pub width: f64,
    pub height: f64,
}

/// How one edge is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    /// The SVG path.
    pub path: String,
    /// The centre of the edge's label.
    pub label: (f64, f64),
    /// Drawn as a loop under the nodes.
    pub back: bool,
}

/// An edge to route: the indices of its two nodes in the position list,
/// and its label (if it has one) so it can be kept off the nodes.
pub struct EdgeEnds<'a> {
    pub from: usize,
    pub to: usize,
    pub label: Option<&'a str>,
}

mod detour;

/// Vertical distance between two loops' runs.
const LANE: f64 = 16.0;
/// How far below the lowest node in its way a loop runs.
const CLEARANCE: f64 = 26.0;
/// How far a loop swings out of its ports before it turns.
const SWING: f64 = 36.0;

/// Routes every edge (in order) between nodes whose top-left corners are
/// `positions`.
pub fn routes(positions: &[(f64, f64)], size: NodeSize, edges: &[EdgeEnds<'_>]) -> Vec<Route> {
    edges
        .iter()
        .zip(detours_and_loops(positions, size, edges))
        .map(|(edge, route)| {
            route.unwrap_or_else(|| {
                let a = positions.get(edge.from).copied().unwrap_or_default();
                let b = positions.get(edge.to).copied().unwrap_or_default();
                forward_edge(a, b, size, edge.label, positions)
            })
        })
        .collect()
}

/// Whether an edge from a node at `a` to one at `b` goes back (drawn as a
/// loop under the nodes). A target that starts left of the source's right
/// side but right of its left, in a row of its own (above or below, with
/// room between), is reached by an S that swings out of the source and
/// into the target, as n8n draws it: a loop under it would be far longer
/// for a node a few pixels behind.
pub fn goes_back(a: (f64, f64), b: (f64, f64), size: NodeSize) -> bool {
    let behind = b.0 <= a.0 + size.width;
    let rows_apart = (b.1 - a.1).abs() >= size.height + ROWS_APART;
    behind && !(rows_apart && b.0 > a.0)
}

/// The room between two rows for an S between them rather than a loop.
const ROWS_APART: f64 = 24.0;

/// How far, at the least, a curve leaves its port before it turns: an
/// edge to a node a little behind its source swings out and back.
const LEAST_SWING: f64 = 40.0;

/// The routes of the edges that go back, and of the forward edges whose
/// plain curve would cross another node (`detour.rs`), each in lanes that
/// keep them apart; `None` for the edges drawn as a plain curve. Only
/// these need to know about each other (and about the nodes between
/// their ends): a plain forward edge depends on its own two nodes (and,
/// for its label, where the nodes are), so the canvas routes those one by
/// one.
pub fn detours_and_loops(
    positions: &[(f64, f64)],
    size: NodeSize,
    edges: &[EdgeEnds<'_>],
) -> Vec<Option<Route>> {
    let mut routes = loops(positions, size, edges);
    let by_x = detour::ByX::new(positions);
    let mut detours: Vec<(usize, detour::Detour)> = edges
        .iter()
        .enumerate()
        .filter(|(i, _)| routes[*i].is_none())
        .filter_map(|(i, edge)| {
            Some((
                i,
                detour::Detour::of((edge.from, edge.to), positions, size, &by_x)?,
            ))
        })
        .take(detour::MAX_DETOURS)
        .collect();
    detour::spread(&mut detours, positions, size, &by_x);
    for (i, around) in detours {
        routes[i] = Some(around.route());
    }
    routes
}

/// The routes of the edges that go back, in lanes that keep them apart;
/// `None` for the edges that go forward.
fn loops(positions: &[(f64, f64)], size: NodeSize, edges: &[EdgeEnds<'_>]) -> Vec<Option<Route>> {
    let mut routes: Vec<Option<Route>> = vec![None; edges.len()];
    // Loops first: the narrow ones inside, nearest the nodes.
    let mut loops: Vec<(usize, Loop)> = edges
        .iter()
        .enumerate()
        .filter_map(|(i, edge)| {
            let (a, b) = (*positions.get(edge.from)?, *positions.get(edge.to)?);
            goes_back(a, b, size).then(|| (i, Loop::new(a, b, size, positions)))
        })
        .collect();
    loops.sort_by(|x, y| {
        (x.1.floor, x.1.right - x.1.left)
            .partial_cmp(&(y.1.floor, y.1.right - y.1.left))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    // Bounded, for a hostile or a huge tangled graph (thousands of loops
    // over one another): each loop tries MAX_LANES lanes at most, and only
    // the first MAX_LANED loops are kept apart; past those, lines may lie
    // together. Unbounded, 5,000 loops took seconds (cubic), and the page
    // is drawn on the server too.
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    for (k, (i, mut run)) in loops.into_iter().enumerate() {
        let mut lane = 0.0;
        while k < MAX_LANED && lane < MAX_LANES {
            let drop = run.floor + lane * LANE;
            // The lanes between two rows are full: under both, then.
            if let Some((ceiling, under_both)) = run.between
                && drop > ceiling
            {
                (run.floor, run.between, lane) = (under_both, None, 0.0);
                continue;
            }
            let clash = placed.iter().any(|&(left, right, other)| {
                left < run.right + SWING && run.left - SWING < right && (other - drop).abs() < LANE
            });
            if !clash {
                break;
            }
            lane += 1.0;
        }
        run.drop = run.floor + lane * LANE;
        run.swing = SWING + lane * LANE / 2.0;
        if k < MAX_LANED {
            placed.push((run.left, run.right, run.drop));
        }
        routes[i] = Some(run.route());
    }
    routes
}

/// How many lanes a loop tries, at most, to keep off the others.
const MAX_LANES: f64 = 24.0;
/// How many nodes may stand in a loop's way between two rows for it to
/// look for a way between them; more, and it runs under both.
const MAX_BETWEEN: usize = 48;
/// How many loops are kept apart in lanes, at most.
const MAX_LANED: usize = 400;

/// How far apart, at their middle, the edges between the same two nodes
/// are drawn (a router's two routes to one node), so each is seen and
/// each label read.
const FAN: f64 = 30.0;

/// A forward edge between nodes at `a` and `b`: its curve, and its label
/// (when it has one) kept off the nodes at `positions`.
pub fn forward_edge(
    a: (f64, f64),
    b: (f64, f64),
    size: NodeSize,
    label: Option<&str>,
    positions: &[(f64, f64)],
) -> Route {
    let label = label.map(|text| EdgeLabel {
        text,
        scale: 1.0,
        among_siblings: false,
    });
    forward_fanned(a, b, size, label, positions, (0, 1))
}

/// An edge's label, as routing places it.
#[derive(Clone, Copy, Debug)]
pub struct EdgeLabel<'a> {
    pub text: &'a str,
    /// How many times its size at 100% it is drawn ([`label_scale`]).
    pub scale: f64,
    /// Its source has labelled edges to other nodes too (a router's
    /// routes): it lies on the line where it arrives, where its siblings'
    /// lie as far apart as their targets, rather than at the middle,
    /// where they would lie half as far apart, and meet when zoomed out.
    pub among_siblings: bool,
}

/// A forward edge that is the `k`th of `n` between the same two nodes
/// (`fan`): the edges bow apart, the middle one (if any) straight.
pub fn forward_fanned(
    a: (f64, f64),
    b: (f64, f64),
    size: NodeSize,
    label: Option<EdgeLabel<'_>>,
    positions: &[(f64, f64)],
    (k, n): (usize, usize),
) -> Route {
    // A cubic whose two control points move by `bow` passes its middle
    // three quarters of it away.
    let bow = (k as f64 - (n.max(1) - 1) as f64 / 2.0) * FAN / 0.75;
    let (x1, y1) = (a.0 + size.width, a.1 + size.height / 2.0);
    let (x2, y2) = (b.0, b.1 + size.height / 2.0);
    let mid = (x1 + x2) / 2.0;
    // The control points at the middle's x; for close ends (a target a
    // little behind), out of the source and into the target by at least
    // LEAST_SWING. The curve's middle is the ends' middle either way.
    let swing = ((x2 - x1) / 2.0).max(LEAST_SWING);
    let route = Route {
        path: format!(
            "M{x1},{y1} C{},{} {},{} {x2},{y2}",
            x1 + swing,
            y1 + bow,
            x2 - swing,
            y2 + bow
        ),
        label: (mid, (y1 + y2) / 2.0 + bow * 0.75),
        back: false,
    };
    match label {
        Some(label) => Route {
            label: off_nodes(route.label, label, (a, b), size, positions, n > 1),
            ..route
        },
        None => route,
    }
}

/// The S curve of a forward edge (also the wire being drawn).
pub fn forward(x1: f64, y1: f64, x2: f64, y2: f64) -> Route {
    let mid = (x1 + x2) / 2.0;
    Route {
        path: format!("M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"),
        label: (mid, (y1 + y2) / 2.0),
        back: false,
    }
}

/// A loop's run under the nodes.
struct Loop {
    /// Source's right port and target's left port.
    from: (f64, f64),
    to: (f64, f64),
    left: f64,
    right: f64,
    /// Just below the lowest node in its way.
    floor: f64,
    /// For a target in a row below its source's (a wrapped layout's next
    /// band): the lowest its run may lie, above the target's row, and
    /// the floor under both rows, should the lanes between fill up.
    between: Option<(f64, f64)>,
    drop: f64,
    swing: f64,
}

impl Loop {
    fn new(a: (f64, f64), b: (f64, f64), size: NodeSize, positions: &[(f64, f64)]) -> Loop {
        let from = (a.0 + size.width, a.1 + size.height / 2.0);
        let to = (b.0, b.1 + size.height / 2.0);
        let (left, right) = (to.0.min(from.0), to.0.max(from.0));
        let (top, bottom) = (a.1.min(b.1), a.1.max(b.1) + size.height);
        // The lowest node the run would cross, between the two rows.
        let lowest = positions
            .iter()
            .filter(|(x, y)| {
                *x < right && x + size.width > left && *y < bottom && y + size.height > top
            })
            .map(|(_, y)| y + size.height)
            .fold(bottom, f64::max);
        let under_both = lowest + CLEARANCE;
        // A target in a row of its own below the source's: the run goes
        // between the rows, as a line of text wraps to the next, rather
        // than under the target: in the widest stretch no node in its way
        // takes between the source's bottom and the target's top (a
        // router's branches stand a little above and below it, so a row
        // is not one line).
        let between = (b.1 >= a.1 + size.height + ROWS_APART)
            .then(|| {
                let mut spans: Vec<(f64, f64)> = positions
                    .iter()
                    .filter(|(x, y)| {
                        *x < right && x + size.width > left && *y < b.1 && y + size.height > a.1
                    })
                    .map(|(_, y)| (*y, y + size.height))
                    .collect();
                // A tangle of nodes between the rows: under both, as
                // cheap to find as the rest (a hostile graph has
                // thousands of loops).
                if spans.len() > MAX_BETWEEN {
                    return None;
                }
                spans.sort_by(|p, q| p.0.total_cmp(&q.0));
                spans.push((b.1, b.1));
                let mut reach = a.1 + size.height;
                let mut widest: Option<(f64, f64)> = None;
                for (top, bottom) in spans {
                    if top > reach && widest.is_none_or(|(start, stop)| top - reach > stop - start)
                    {
                        widest = Some((reach, top));
                    }
                    reach = reach.max(bottom);
                }
                widest
            })
            .flatten()
            .map(|(from, to)| (from + CLEARANCE, to - CLEARANCE))
            .filter(|(floor, ceiling)| floor <= ceiling);
        let floor = between.map_or(under_both, |(floor, _)| floor);
        Loop {
            from,
            to,
            left,
            right,
            floor,
            between: between.map(|(_, ceiling)| (ceiling, under_both)),
            drop: floor,
            swing: SWING,
        }
    }

    fn route(&self) -> Route {
        let ((x1, y1), (x2, y2)) = (self.from, self.to);
        let (drop, k) = (self.drop, self.swing);
        // Out of the source to the right and down, along under the nodes,
        // then up into the target from its left.
        let path = format!(
            "M{x1},{y1} C{},{y1} {},{drop} {x1},{drop} L{x2},{drop} C{},{drop} {},{y2} {x2},{y2}",
            x1 + k,
            x1 + k,
            x2 - k,
            x2 - k,
        );
        Route {
            path,
            label: ((x1 + x2) / 2.0, drop),
            back: true,
        }
    }
}

/// A label's place. Where it fits in the gap between its two nodes, the
/// middle of the path. Where it does not (close nodes, a long route), the
/// middle is on a node, and every route out of one router would fall
/// back to the same spot; so it goes on the line just before its target's
/// port (clear of the arrowhead), where the edges out of one node are as
/// far apart as their targets. Else
/// above the target, else below it; else the middle after all. Edges
/// between the same two nodes (`fanned`) are kept apart by their bows, so
/// their labels stay at their middles when they can; a label among
/// siblings (`EdgeLabel::among_siblings`) goes on the line where it
/// arrives first.
fn off_nodes(
    middle: (f64, f64),
    label: EdgeLabel<'_>,
    (a, b): ((f64, f64), (f64, f64)),
    size: NodeSize,
    positions: &[(f64, f64)],
    fanned: bool,
) -> (f64, f64) {
    let EdgeLabel { text, scale, .. } = label;
    let half_width = (text.chars().count() as f64 * 3.3 + 8.0) * scale;
    let half_height = 10.0 * scale;
    let on_a_node = |(x, y): (f64, f64)| {
        positions.iter().any(|(nx, ny)| {
            x - half_width < nx + size.width
                && x + half_width > *nx
                && y - half_height < ny + size.height
                && y + half_height > *ny
        })
    };
    let gap = b.0 - (a.0 + size.width);
    let fits = 2.0 * half_width + 2.0 * LABEL_MARGIN <= gap;
    // On the line where it arrives, as a label in the middle is: read as
    // the edge's own at any zoom, never as something floating near it.
    // It stops short of the arrowhead, which stays in sight.
    let arrival = (b.0 - ARROW_CLEARANCE - half_width, b.1 + size.height / 2.0);
    let above = (middle.0, b.1 - half_height - 4.0);
    let below = (middle.0, b.1 + size.height + half_height + 4.0);
    let order = if fanned || (fits && !label.among_siblings) {
        [middle, arrival, above, below]
    } else {
        [arrival, middle, above, below]
    };
    order
        .into_iter()
        .find(|&at| !on_a_node(at))
        .unwrap_or(middle)
}

/// How far a label keeps from a node's side.
const LABEL_MARGIN: f64 = 6.0;

/// How far a label on the line where it arrives keeps from the port: the
/// arrowhead (about 10 px) and a little air.
const ARROW_CLEARANCE: f64 = 14.0;

/// How many times its size at 100% an edge's label is drawn at `zoom`, so
/// that it never reads under 9 px on screen (11 px at 100%), yet no bigger
/// than it must: the routes would otherwise shout over the nodes' own
/// labels. In quarter steps, not smoothly: where labels lie depends on
/// their size, and is worked out again (for labelled edges only) when a
/// step is crossed, not at every frame of a pinch.
pub fn label_scale(zoom: f64) -> f64 {
    const LEAST_PX: f64 = 9.0;
    const PX: f64 = 11.0;
    if !zoom.is_finite() || zoom <= 0.0 {
        return 1.0;
    }
    let wanted = LEAST_PX / (PX * zoom);
    ((wanted * 4.0).ceil() / 4.0).clamp(1.0, 4.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: NodeSize = NodeSize {
        width: 180.0,
        height: 56.0,
    };

    fn ends(from: usize, to: usize) -> EdgeEnds<'static> {
        EdgeEnds {
            from,
            to,
            label: None,
        }
    }

    #[test]
    fn a_forward_edge_is_a_curve_from_port_to_port() {
        let routes = routes(&[(0.0, 0.0), (300.0, 100.0)], SIZE, &[ends(0, 1)]);
        assert!(!routes[0].back);
        assert!(routes[0].path.starts_with("M180,28 "));
        assert!(routes[0].path.ends_with(" 300,128"));
        assert_eq!(routes[0].label, (240.0, 78.0));
    }

    #[test]
    fn edges_between_the_same_two_nodes_bow_apart_with_their_labels() {
        let (a, b) = ((0.0, 0.0), (300.0, 0.0));
        let alone = forward_fanned(a, b, SIZE, None, &[], (0, 1));
        assert_eq!(alone, forward_edge(a, b, SIZE, None, &[]));
        let [first, second] = [0, 1].map(|k| forward_fanned(a, b, SIZE, None, &[], (k, 2)));
        // Their middles are FAN apart, on either side of the straight one.
        assert!((second.label.1 - first.label.1 - FAN).abs() < 1e-9);
        assert!((first.label.1 + second.label.1 - 2.0 * alone.label.1).abs() < 1e-9);
        assert_ne!(first.path, second.path);
        // Three: the middle one is the straight one.
        let middle = forward_fanned(a, b, SIZE, None, &[], (1, 3));
        assert_eq!(middle.path, alone.path);
    }

    #[test]
    fn two_loops_into_the_same_node_get_their_own_lanes() {
        // agent → human → tools in a row; human → agent and tools → agent.
        let at = [(0.0, 0.0), (260.0, 0.0), (520.0, 0.0)];
        let routes = routes(&at, SIZE, &[ends(1, 0), ends(2, 0)]);
        assert!(routes.iter().all(|route| route.back));
        let (a, b) = (routes[0].label.1, routes[1].label.1);
        assert!(a >= 56.0 + CLEARANCE && b >= 56.0 + CLEARANCE);
        assert!((a - b).abs() >= LANE, "lanes {a} and {b} overlap");
        // The narrower loop runs nearer the nodes.
        assert!(a < b);
    }

    #[test]
    fn a_loop_runs_under_the_nodes_between_its_ends() {
        // A tall node between the ends pushes the run below it.
        let at = [(0.0, 0.0), (260.0, 40.0), (520.0, 0.0)];
        let routes = routes(&at, SIZE, &[ends(2, 0)]);
        assert!(routes[0].label.1 >= 40.0 + 56.0 + CLEARANCE);
    }

    #[test]
    fn an_edge_to_the_next_band_of_a_wrapped_layout_runs_between_the_bands() {
        // Band one: a, b (and c under b); band two, 240 px lower: d, e.
        let at = [
            (0.0, 0.0),
            (260.0, 0.0),
            (260.0, 96.0),
            (0.0, 392.0),
            (260.0, 392.0),
        ];
        let edges = [ends(1, 3), ends(2, 3), ends(2, 4)];
        let routes = routes(&at, SIZE, &edges);
        for route in &routes {
            assert!(route.back, "{}", route.path);
            // Under band one (c's bottom is 152), over band two (392).
            let run = route.label.1;
            assert!(
                (152.0 + CLEARANCE..=392.0 - CLEARANCE).contains(&run),
                "{run}"
            );
        }
        // Each in its own lane.
        assert!((routes[0].label.1 - routes[1].label.1).abs() >= LANE);
        // Lanes between the bands full: the rest run under both.
        let many: Vec<_> = (0..20).map(|_| ends(2, 3)).collect();
        let routes = super::routes(&at, SIZE, &many);
        let under = routes
            .iter()
            .filter(|route| route.label.1 > 392.0 + 56.0)
            .count();
        assert!(under > 0 && under < 20, "{under}");
    }

    #[test]
    fn an_edge_back_to_a_router_in_the_next_band_runs_between_the_bands_whatever_stands_above_it() {
        // Band one: start, memory, answer. Band two, a router whose first
        // branch stands 45 px above it (its top above the router's), the
        // end right under `answer`. Answer's loop back to the router runs
        // between the bands: under both, it crossed the end on its way.
        let at = [
            (0.0, 0.0),
            (260.0, 0.0),
            (520.0, 0.0),
            (0.0, 250.0),
            (300.0, 205.0),
            (300.0, 295.0),
            (600.0, 250.0),
        ];
        let route = &routes(&at, SIZE, &[ends(2, 3)])[0];
        assert!(route.back, "{}", route.path);
        let run = route.label.1;
        assert!(
            (56.0 + CLEARANCE..=205.0 - CLEARANCE).contains(&run),
            "{run}"
        );
    }

    #[test]
    fn a_target_a_little_behind_in_a_row_of_its_own_is_reached_by_an_s_not_a_loop() {
        // `ask` starts 4 px left of `condition`'s right side, a row below.
        let at = [(0.0, 0.0), (176.0, 120.0)];
        let route = &routes(&at, SIZE, &[ends(0, 1)])[0];
        assert!(!route.back, "{}", route.path);
        // It swings out of the source and into the target.
        assert_eq!(route.path, "M180,28 C220,28 136,148 176,148");
        // In the same row, or behind the source's left side, it loops.
        assert!(routes(&[(0.0, 0.0), (176.0, 30.0)], SIZE, &[ends(0, 1)])[0].back);
        assert!(routes(&[(0.0, 0.0), (-20.0, 200.0)], SIZE, &[ends(0, 1)])[0].back);
    }

    #[test]
    fn thousands_of_loops_over_one_another_are_routed_in_bounded_lanes() {
        // A hostile graph: 5,000 edges back from one node to another over
        // the same stretch. Each is routed; the lanes stop at MAX_LANES
        // (the work is bounded: it was cubic in the loops).
        let at = [(0.0, 0.0), (1000.0, 0.0)];
        let edges: Vec<EdgeEnds> = (0..5_000).map(|_| ends(1, 0)).collect();
        let routes = detours_and_loops(&at, SIZE, &edges);
        assert!(
            routes
                .iter()
                .all(|route| route.as_ref().is_some_and(|r| r.back))
        );
        let floor = 56.0 + CLEARANCE;
        let deepest = routes
            .iter()
            .flatten()
            .map(|route| route.label.1)
            .fold(f64::MIN, f64::max);
        assert!(deepest <= floor + MAX_LANES * LANE + 1e-9, "{deepest}");
        // The first ones still get lanes of their own.
        let first: Vec<f64> = routes.iter().take(3).flatten().map(|r| r.label.1).collect();
        assert_eq!(first, [floor, floor + LANE, floor + 2.0 * LANE]);
    }

    #[test]
    fn loops_far_apart_share_a_lane() {
        let at = [(0.0, 0.0), (260.0, 0.0), (1000.0, 0.0), (1260.0, 0.0)];
        let routes = routes(&at, SIZE, &[ends(1, 0), ends(3, 2)]);
        assert_eq!(routes[0].label.1, routes[1].label.1);
    }

    /// A label's box, as `off_nodes` reckons it.
    fn label_box(at: (f64, f64), text: &str) -> (f64, f64, f64, f64) {
        let half = text.chars().count() as f64 * 3.3 + 8.0;
        (at.0 - half, at.1 - 10.0, at.0 + half, at.1 + 10.0)
    }

    fn overlap(p: (f64, f64, f64, f64), q: (f64, f64, f64, f64)) -> bool {
        p.0 < q.2 && q.0 < p.2 && p.1 < q.3 && q.1 < p.3
    }

    #[test]
    fn a_routers_long_labels_between_close_columns_lie_apart_and_off_the_nodes() {
        // A router and three specialists stacked beside it, 60 px away (a
        // node added from the keyboard), at the layout's row distances.
        for step in [80.0, 110.0, 140.0] {
            let at = [(0.0, 0.0), (240.0, -step), (240.0, 0.0), (240.0, step)];
            let names = ["billing_and_payments", "technical_support", "anything_else"];
            let edges: Vec<EdgeEnds> = names
                .iter()
                .enumerate()
                .map(|(i, name)| EdgeEnds {
                    from: 0,
                    to: i + 1,
                    label: Some(name),
                })
                .collect();
            let routes = routes(&at, SIZE, &edges);
            let boxes: Vec<_> = routes
                .iter()
                .zip(names)
                .map(|(route, name)| label_box(route.label, name))
                .collect();
            for (i, p) in boxes.iter().enumerate() {
                for q in &boxes[i + 1..] {
                    assert!(!overlap(*p, *q), "rows {step} apart: {p:?} and {q:?}");
                }
                for node in at {
                    let node = (node.0, node.1, node.0 + SIZE.width, node.1 + SIZE.height);
                    assert!(!overlap(*p, node), "rows {step} apart: {p:?} on {node:?}");
                }
            }
        }
    }

    #[test]
    fn labels_read_at_9_px_or_more_wherever_nodes_show_theirs_and_lie_off_them_at_that_size() {
        // Nodes show their labels from 30% (below, boxes only); from 82%
        // a label is its own size.
        for percent in 30..=200 {
            let zoom = f64::from(percent) / 100.0;
            let on_screen = 11.0 * label_scale(zoom) * zoom;
            assert!(on_screen >= 9.0 - 1e-9, "{on_screen} px at {percent}%");
            assert!(
                on_screen < 9.0 + 2.75 * zoom || label_scale(zoom) == 1.0,
                "{on_screen} px at {percent}%"
            );
        }
        assert_eq!(label_scale(0.82), 1.0);
        assert_eq!(label_scale(0.5), 1.75);
        for hostile in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300] {
            assert!((1.0..=4.0).contains(&label_scale(hostile)));
        }
        // Twice its size (at 45%), the label between close nodes is
        // placed for the size it is drawn at.
        let (a, b) = ((0.0, 0.0), (300.0, 0.0));
        let route = forward_fanned(a, b, SIZE, Some(alone("technical", 2.0)), &[a, b], (0, 1));
        let half = (9.0 * 3.3 + 8.0) * 2.0;
        assert_off_nodes(&route, half, 2.0, &[a, b]);
        // At its own size it fits between them, at the middle.
        let route = forward_fanned(a, b, SIZE, Some(alone("technical", 1.0)), &[a, b], (0, 1));
        assert_eq!(route.label, (240.0, 28.0));
    }

    /// A label of an edge whose source has no other labelled edge.
    fn alone(text: &str, scale: f64) -> EdgeLabel<'_> {
        EdgeLabel {
            text,
            scale,
            among_siblings: false,
        }
    }

    #[test]
    fn a_routers_labels_lie_where_their_edges_arrive_apart_however_far_out() {
        // A router and its three routes' targets, 80 px apart as a layout
        // stacks them, their labels drawn at 2.5 times their size (at
        // 36%): at their middles they would lie 40 px apart, 50 tall.
        let router = (0.0, 80.0);
        let targets = [(500.0, 0.0), (500.0, 80.0), (500.0, 160.0)];
        let mut at = vec![router];
        at.extend(targets);
        let scale = 2.5;
        let placed: Vec<(f64, f64)> = targets
            .iter()
            .zip(["billing", "technical", "general"])
            .map(|(&target, text)| {
                let label = EdgeLabel {
                    text,
                    scale,
                    among_siblings: true,
                };
                forward_fanned(router, target, SIZE, Some(label), &at, (0, 1)).label
            })
            .collect();
        for pair in placed.windows(2) {
            assert!(
                (pair[1].1 - pair[0].1).abs() >= 20.0 * scale,
                "{placed:?} overlap"
            );
        }
        // Alone (not a router's), a label that fits stays at the middle.
        let middle = forward_fanned(
            router,
            targets[0],
            SIZE,
            Some(alone("billing", 1.0)),
            &at,
            (0, 1),
        );
        assert_eq!(middle.label, (340.0, 68.0));
    }

    /// Asserts that `route`'s label, `half` wide each side and drawn
    /// `scale` times its size, lies on none of the nodes at `at`.
    fn assert_off_nodes(route: &Route, half: f64, scale: f64, at: &[(f64, f64)]) {
        let drawn = (
            route.label.0 - half,
            route.label.1 - 10.0 * scale,
            route.label.0 + half,
            route.label.1 + 10.0 * scale,
        );
        for node in at {
            let node = (node.0, node.1, node.0 + SIZE.width, node.1 + SIZE.height);
            assert!(!overlap(drawn, node), "{drawn:?} on {node:?}");
        }
    }

    #[test]
    fn a_label_too_long_for_the_middle_lies_on_the_line_where_it_arrives() {
        // Drawn twice its size (zoomed out), "tech_support" does not fit
        // in the 120 px between the router and its target.
        let (a, b) = ((0.0, 0.0), (300.0, 100.0));
        let route = forward_fanned(
            a,
            b,
            SIZE,
            Some(alone("tech_support", 2.0)),
            &[a, b],
            (0, 1),
        );
        let half = (12.0 * 3.3 + 8.0) * 2.0;
        // On the line into the target's port, not above or beside it...
        assert_eq!(route.label.1, 100.0 + SIZE.height / 2.0);
        // ...ending before the arrowhead, and off both nodes.
        assert!(route.label.0 + half <= b.0 - 10.0, "{:?}", route.label);
        assert_off_nodes(&route, half, 2.0, &[a, b]);
    }

    #[test]
    fn a_label_between_close_nodes_moves_off_them() {
        // Two nodes 30 px apart: the middle is on a node, so above them.
        let at = [(0.0, 0.0), (210.0, 0.0)];
        let edge = EdgeEnds {
            from: 0,
            to: 1,
            label: Some("approved"),
        };
        let routes = routes(&at, SIZE, &[edge]);
        assert!(routes[0].label.1 < 0.0, "{:?}", routes[0].label);
        // A short label with room stays at the middle.
        let at = [(0.0, 0.0), (400.0, 0.0)];
        let edge = EdgeEnds {
            from: 0,
            to: 1,
            label: Some("ok"),
        };
        assert_eq!(super::routes(&at, SIZE, &[edge])[0].label, (290.0, 28.0));
    }
}
