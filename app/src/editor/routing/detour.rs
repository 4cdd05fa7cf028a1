//! Forward edges that would be drawn through other nodes: an edge that
//! skips a column (Billing → end past `set`) drawn as its plain curve runs
//! behind the nodes in between and reads as theirs. Such an edge goes
//! around them instead: out of its source, along a lane above or below
//! the nodes in its way (the nearer), and into its target, as n8n's and
//! Rivet's long edges do. Detours whose lanes would lie on one another
//! get lanes of their own, as loops do.
//!
//! Finding what is in the way asks only the nodes between an edge's two
//! ends, found in a list sorted by x, so a 2,000-node graph is not walked
//! once per edge.

use super::{NodeSize, Route};

/// How far a lane keeps from the nodes it passes at the least: room for
/// an edge's label (10 px each side of the line) and a little air.
const MIN_CLEAR: f64 = 14.0;
/// Vertical distance between two detours' lanes.
const LANE: f64 = 12.0;
/// How far a detour runs out of its port before it turns to its lane.
const SWING: f64 = 24.0;
/// Points of a plain curve tested against the nodes.
const SAMPLES: usize = 24;
/// How many lanes out a detour moves, at most, to keep off the others.
const MAX_SHIFTS: usize = 8;
/// How many edges go around nodes, at most: past that many (a hostile or
/// a huge tangled graph), the others keep their plain curves, so routing
/// stays linear in the edges.
pub(super) const MAX_DETOURS: usize = 400;

/// The nodes ordered by their left side, to find those between two
/// x positions without walking them all.
pub(super) struct ByX {
    /// Node indices, by x.
    order: Vec<usize>,
    /// Their x, in the same order.
    xs: Vec<f64>,
}

impl ByX {
    pub(super) fn new(positions: &[(f64, f64)]) -> ByX {
        let mut order: Vec<usize> = (0..positions.len())
            .filter(|&i| positions[i].0.is_finite() && positions[i].1.is_finite())
            .collect();
        order.sort_by(|&i, &j| positions[i].0.total_cmp(&positions[j].0));
        let xs = order.iter().map(|&i| positions[i].0).collect();
        ByX { order, xs }
    }

    /// The nodes whose boxes reach into the open span `(left, right)`.
    fn between(&self, left: f64, right: f64, width: f64) -> impl Iterator<Item = usize> + '_ {
        let first = self.xs.partition_point(|&x| x + width <= left);
        let last = self.xs.partition_point(|&x| x < right);
        self.order[first..last.max(first)].iter().copied()
    }
}

/// One edge to go around the nodes in its way.
pub(super) struct Detour {
    from: (f64, f64),
    to: (f64, f64),
    /// The lane's y.
    lane: f64,
    /// Whether it goes above the nodes in its way (else below).
    above: bool,
}

impl Detour {
    /// The detour of the forward edge from the node at `positions[a]` to
    /// the one at `positions[b]`, when its plain curve would cross another
    /// node; `None` when it is clear (or too short to go around anything).
    pub(super) fn of(
        (a, b): (usize, usize),
        positions: &[(f64, f64)],
        size: NodeSize,
        by_x: &ByX,
    ) -> Option<Detour> {
        let (pa, pb) = (*positions.get(a)?, *positions.get(b)?);
        let from = (pa.0 + size.width, pa.1 + size.height / 2.0);
        let to = (pb.0, pb.1 + size.height / 2.0);
        if to.0 - from.0 < 4.0 * SWING {
            return None;
        }
        let mid = (from.0 + to.0) / 2.0;
        // The plain curve (control points at the middle's x), at points
        // in the order of their x: it only goes right.
        let samples: Vec<(f64, f64)> = (1..SAMPLES)
            .map(|step| {
                let t = step as f64 / SAMPLES as f64;
                let u = 1.0 - t;
                let x = u * u * u * from.0 + 3.0 * u * t * mid + t * t * t * to.0;
                let y = u * u * u * from.1
                    + 3.0 * u * u * t * from.1
                    + 3.0 * u * t * t * to.1
                    + t * t * t * to.1;
                (x, y)
            })
            .collect();
        let (low, high) = (from.1.min(to.1), from.1.max(to.1));
        let in_way: Vec<usize> = by_x
            .between(from.0, to.0, size.width)
            .filter(|&i| i != a && i != b)
            .filter(|&i| {
                let (nx, ny) = positions[i];
                let (top, bottom) = (ny + 2.0, ny + size.height - 2.0);
                // Most nodes are above or below the whole curve.
                if bottom <= low || top >= high {
                    return false;
                }
                let first = samples.partition_point(|&(x, _)| x <= nx + 2.0);
                let last = samples.partition_point(|&(x, _)| x < nx + size.width - 2.0);
                samples[first..last.max(first)]
                    .iter()
                    .any(|&(_, y)| y > top && y < bottom)
            })
            .collect();
        if in_way.is_empty() {
            return None;
        }
        let top = in_way
            .iter()
            .map(|&i| positions[i].1)
            .fold(f64::INFINITY, f64::min);
        let bottom = in_way
            .iter()
            .map(|&i| positions[i].1 + size.height)
            .fold(f64::NEG_INFINITY, f64::max);
        // The rows of every node the lane's run passes over.
        let rows: Vec<(f64, f64)> = by_x
            .between(from.0 + SWING, to.0 - SWING, size.width)
            .filter(|&i| i != a && i != b)
            .map(|i| (positions[i].1, positions[i].1 + size.height))
            .collect();
        let up = free_lane(top - MIN_CLEAR, &rows, true);
        let down = free_lane(bottom + MIN_CLEAR, &rows, false);
        let travel = |lane: f64| (from.1 - lane).abs() + (lane - to.1).abs();
        let above = travel(up) <= travel(down);
        Some(Detour {
            from,
            to,
            lane: if above { up } else { down },
            above,
        })
    }

    fn overlaps(&self, other: &Detour) -> bool {
        self.from.0 < other.to.0 && other.from.0 < self.to.0
    }

    pub(super) fn route(&self) -> Route {
        let ((x1, y1), (x2, y2)) = (self.from, self.to);
        let lane = self.lane;
        // Out of the source and round to the lane, along it, then round
        // into the target: horizontal at both ports, as every edge is.
        let path = format!(
            "M{x1},{y1} C{},{y1} {},{lane} {},{lane} L{},{lane} C{},{lane} {},{y2} {x2},{y2}",
            x1 + SWING,
            x1 + SWING,
            x1 + 2.0 * SWING,
            x2 - 2.0 * SWING,
            x2 - SWING,
            x2 - SWING,
        );
        Route {
            path,
            label: ((x1 + x2) / 2.0, lane),
            back: false,
        }
    }
}

/// The nearest y from `start` (going up when `up`, else down) at least
/// [`MIN_CLEAR`] from every row (top, bottom) in `rows`.
fn free_lane(start: f64, rows: &[(f64, f64)], up: bool) -> f64 {
    // Each row keeps the lane out of (top - clear, bottom + clear). Going
    // up, the rows in the order of their bottoms, lowest first; a row the
    // lane is in sends it to above its top. One pass: a row passed was
    // either already above the lane or is now below it.
    let mut kept: Vec<(f64, f64)> = rows
        .iter()
        .filter(|(top, bottom)| top.is_finite() && bottom.is_finite())
        .map(|&(top, bottom)| (top - MIN_CLEAR, bottom + MIN_CLEAR))
        .collect();
    if up {
        kept.sort_by(|p, q| q.1.total_cmp(&p.1));
    } else {
        kept.sort_by(|p, q| p.0.total_cmp(&q.0));
    }
    let mut y = start;
    for (low, high) in kept {
        if y > low && y < high {
            y = if up { low } else { high };
        }
    }
    y
}

/// Spreads detours whose lanes would lie on one another (overlapping
/// spans, lanes closer than [`LANE`]): each later one moves a lane away
/// from the nodes, to the next free y.
pub(super) fn spread(
    detours: &mut [(usize, Detour)],
    positions: &[(f64, f64)],
    size: NodeSize,
    by_x: &ByX,
) {
    // The shortest first, nearest its nodes.
    detours.sort_by(|(_, p), (_, q)| {
        (p.to.0 - p.from.0)
            .total_cmp(&(q.to.0 - q.from.0))
            .then(p.from.0.total_cmp(&q.from.0))
    });
    for k in 0..detours.len() {
        let (placed, rest) = detours.split_at_mut(k);
        let Some((_, detour)) = rest.first_mut() else {
            break;
        };
        let rows: Vec<(f64, f64)> = by_x
            .between(detour.from.0 + SWING, detour.to.0 - SWING, size.width)
            .map(|i| (positions[i].1, positions[i].1 + size.height))
            .collect();
        // A few lanes out at most: past those, lines may lie together.
        for _ in 0..MAX_SHIFTS {
            let clash = placed.iter().any(|(_, other)| {
                other.above == detour.above
                    && other.overlaps(detour)
                    && (other.lane - detour.lane).abs() < LANE
            });
            if !clash {
                break;
            }
            let step = if detour.above { -LANE } else { LANE };
            detour.lane = free_lane(detour.lane + step, &rows, detour.above);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: NodeSize = NodeSize {
        width: 180.0,
        height: 56.0,
    };

    fn detour(a: usize, b: usize, at: &[(f64, f64)]) -> Option<Detour> {
        Detour::of((a, b), at, SIZE, &ByX::new(at))
    }

    /// Whether the lane's run, a line at `lane` between the ports' turns,
    /// keeps `MIN_CLEAR` from every node but its ends.
    fn clear(detour: &Detour, at: &[(f64, f64)], ends: (usize, usize)) -> bool {
        at.iter().enumerate().all(|(i, &(x, y))| {
            i == ends.0
                || i == ends.1
                || x + SIZE.width <= detour.from.0 + SWING
                || x >= detour.to.0 - SWING
                || detour.lane <= y - MIN_CLEAR + 1e-9
                || detour.lane >= y + SIZE.height + MIN_CLEAR - 1e-9
        })
    }

    #[test]
    fn an_edge_past_a_node_in_its_line_goes_around_it_and_a_clear_one_does_not() {
        // Billing → set → end in a row, and Billing → end past `set`.
        let at = [(0.0, 0.0), (260.0, 0.0), (520.0, 0.0)];
        let around = detour(0, 2, &at).expect("set is in the way");
        assert!(clear(&around, &at, (0, 2)), "lane {}", around.lane);
        let route = around.route();
        assert!(route.path.starts_with("M180,28 "), "{}", route.path);
        assert!(route.path.ends_with(" 520,28"), "{}", route.path);
        assert_eq!(route.label.1, around.lane);
        // Neighbours, or a way past with nothing on it, stay plain curves.
        assert!(detour(0, 1, &at).is_none());
        let apart = [(0.0, 0.0), (260.0, 300.0), (520.0, 0.0)];
        assert!(detour(0, 2, &apart).is_none());
    }

    #[test]
    fn the_lane_runs_between_rows_when_they_leave_room_else_past_them() {
        // Three rows 93 px apart (37 px between them, a Layout's), the
        // edge from the middle row's first node to the middle row's last.
        let rows = [-93.0, 0.0, 93.0];
        let mut at: Vec<(f64, f64)> = vec![(0.0, 0.0), (520.0, 0.0)];
        at.extend(rows.iter().map(|&y| (260.0, y)));
        let around = detour(0, 1, &at).expect("the middle row is in the way");
        assert!(clear(&around, &at, (0, 1)), "lane {}", around.lane);
        // In the 37 px between two rows: not past the whole column.
        assert!(
            around.lane > -93.0 + 56.0 && around.lane < 0.0
                || around.lane > 56.0 && around.lane < 93.0
        );
        // Rows 10 px apart leave no room: the lane goes past them all.
        let tight: Vec<(f64, f64)> = [
            (0.0, 0.0),
            (520.0, 0.0),
            (260.0, -66.0),
            (260.0, 0.0),
            (260.0, 66.0),
        ]
        .to_vec();
        let past = detour(0, 1, &tight).expect("in the way");
        assert!(clear(&past, &tight, (0, 1)), "lane {}", past.lane);
        assert!(past.lane <= -66.0 - MIN_CLEAR || past.lane >= 66.0 + 56.0 + MIN_CLEAR);
    }

    #[test]
    fn detours_past_the_same_nodes_get_lanes_of_their_own() {
        // Two sources in one row, both leading past `wait` to `end`.
        let at = [(0.0, 0.0), (0.0, 0.0), (260.0, 0.0), (520.0, 0.0)];
        let by_x = ByX::new(&at);
        let mut detours: Vec<(usize, Detour)> = [0, 1]
            .into_iter()
            .map(|a| (a, Detour::of((a, 3), &at, SIZE, &by_x).expect("in the way")))
            .collect();
        spread(&mut detours, &at, SIZE, &by_x);
        let (p, q) = (&detours[0].1, &detours[1].1);
        assert!((p.lane - q.lane).abs() >= LANE, "{} and {}", p.lane, q.lane);
        assert!(clear(p, &at, (0, 3)) && clear(q, &at, (1, 3)));
    }

    #[test]
    fn hostile_positions_never_hang_nor_panic() {
        let at = [
            (0.0, 0.0),
            (f64::NAN, 0.0),
            (260.0, f64::INFINITY),
            (260.0, 0.0),
            (520.0, 0.0),
            (1e300, -1e300),
        ];
        let _ = detour(0, 4, &at);
        let _ = detour(1, 4, &at);
        let _ = detour(0, 9, &at);
        // A thousand nodes stacked in the way: one lane past them all.
        let mut stacked: Vec<(f64, f64)> = vec![(0.0, 0.0), (520.0, 0.0)];
        stacked.extend((0..1000).map(|i| (260.0, f64::from(i) * 20.0 - 10_000.0)));
        let past = detour(0, 1, &stacked).expect("in the way");
        assert!(clear(&past, &stacked, (0, 1)));
    }
}
