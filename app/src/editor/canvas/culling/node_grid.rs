//! Where each node of a big graph is, filed by the cell of a coarse grid,
//! so that the culling window's questions (which nodes does it hold, which
//! edges cross it) cost what the window holds rather than the size of the
//! graph, and read no node's signal. Built again only when the graph or a
//! position changes; a pan only asks it questions.

use std::collections::{BTreeSet, HashMap};

use heddle_engine::format::{EdgeSpec, Position};
use heddle_engine::{EdgeId, NodeId};

use super::Window;
use crate::editor::model::{NODE_HEIGHT, NODE_WIDTH};

/// A cell's side, in world units: a few nodes wide, so a window at 100%
/// spans a handful of cells and one at the smallest zoom some dozens.
const CELL: f64 = 1000.0;

/// The nodes by cell, where each is, and every edge's ends.
#[derive(Debug, Default)]
pub(in crate::editor::canvas) struct NodeGrid {
    cells: HashMap<(i64, i64), Vec<NodeId>>,
    at: HashMap<NodeId, Position>,
    edges: Vec<(EdgeId, Position, Position)>,
}

/// The cell holding world point `(x, y)`. Casting saturates, so a
/// hostile position lands in an edge cell rather than wrapping.
fn cell_of(x: f64, y: f64) -> (i64, i64) {
    ((x / CELL).floor() as i64, (y / CELL).floor() as i64)
}

impl NodeGrid {
    /// Files `nodes` (with their positions) and the ends of `edges`.
    pub(in crate::editor::canvas) fn of(
        nodes: impl IntoIterator<Item = (NodeId, Position)>,
        edges: &[EdgeSpec],
    ) -> NodeGrid {
        let mut grid = NodeGrid::default();
        for (id, at) in nodes {
            grid.cells
                .entry(cell_of(at.x, at.y))
                .or_default()
                .push(id.clone());
            grid.at.insert(id, at);
        }
        grid.edges = edges
            .iter()
            .filter_map(|edge| {
                let (a, b) = (grid.at.get(&edge.from)?, grid.at.get(&edge.to)?);
                Some((edge.id.clone(), *a, *b))
            })
            .collect();
        grid
    }

    /// Where node `id` is.
    pub(in crate::editor::canvas) fn at(&self, id: &NodeId) -> Option<Position> {
        self.at.get(id).copied()
    }

    /// The nodes any of whose box is inside `window`. A node is filed by
    /// its top-left corner, so the cells looked in reach a node's size
    /// past the window's top and left. A window wider than the cells
    /// filed (a hostile or far-out view) walks the filed cells instead.
    pub(in crate::editor::canvas) fn held(&self, window: &Window) -> BTreeSet<NodeId> {
        let (cx1, cy1) = cell_of(window.x1 - NODE_WIDTH, window.y1 - NODE_HEIGHT);
        let (cx2, cy2) = cell_of(window.x2, window.y2);
        let span = (cx2.saturating_sub(cx1).saturating_add(1) as u128)
            * (cy2.saturating_sub(cy1).saturating_add(1) as u128);
        let holds = |id: &&NodeId| self.at.get(*id).is_some_and(|at| window.holds_node(*at));
        if span > self.cells.len() as u128 {
            return self
                .cells
                .iter()
                .filter(|((x, y), _)| (cx1..=cx2).contains(x) && (cy1..=cy2).contains(y))
                .flat_map(|(_, ids)| ids.iter())
                .filter(holds)
                .cloned()
                .collect();
        }
        let mut held = BTreeSet::new();
        for x in cx1..=cx2 {
            for y in cy1..=cy2 {
                if let Some(ids) = self.cells.get(&(x, y)) {
                    held.extend(ids.iter().filter(holds).cloned());
                }
            }
        }
        held
    }

    /// The edges whose span (the box of their two nodes) meets `window`.
    pub(in crate::editor::canvas) fn crossing(&self, window: &Window) -> BTreeSet<EdgeId> {
        self.edges
            .iter()
            .filter(|(_, a, b)| window.meets_span(*a, *b))
            .map(|(id, _, _)| id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> NodeId {
        NodeId::from(s)
    }

    fn window(x1: f64, y1: f64, x2: f64, y2: f64) -> Window {
        Window { x1, y1, x2, y2 }
    }

    /// A 30 by 30 grid of nodes 300 apart, as a big graph's layout is.
    fn many() -> NodeGrid {
        let nodes = (0..900).map(|i| {
            let at = Position {
                x: f64::from(i % 30) * 300.0,
                y: f64::from(i / 30) * 300.0,
            };
            (id(&format!("n{i}")), at)
        });
        NodeGrid::of(nodes, &[])
    }

    #[test]
    fn a_window_holds_the_nodes_whose_box_meets_it_across_cells() {
        let grid = many();
        // Every node the grid gives is one the window holds, and every
        // node the window holds is given: the grid loses none at a
        // cell's edge.
        for w in [
            window(950.0, 950.0, 2050.0, 1600.0),
            window(-100.0, -100.0, 10.0, 10.0),
            window(1001.0, 0.0, 1002.0, 9000.0),
        ] {
            let held = grid.held(&w);
            let expected: BTreeSet<NodeId> = grid
                .at
                .iter()
                .filter(|(_, at)| w.holds_node(**at))
                .map(|(id, _)| id.clone())
                .collect();
            assert_eq!(held, expected);
            assert!(!held.is_empty());
        }
        // A node whose box only reaches into the window from the left is
        // held (its corner is a cell away).
        let w = window(1000.0 + NODE_WIDTH / 2.0 + 800.0, 0.0, 2000.0, 10.0);
        assert!(
            grid.held(&w).contains(&id("n6")),
            "n6 at x 1800 reaches past 1800 + its width"
        );
    }

    #[test]
    fn a_hostile_window_is_answered_from_the_cells_filed() {
        let grid = many();
        let all = window(-f64::MAX, -f64::MAX, f64::MAX, f64::MAX);
        assert_eq!(grid.held(&all).len(), 900);
        let none = window(f64::MAX / 2.0, 0.0, f64::MAX, 10.0);
        assert!(grid.held(&none).is_empty());
        let nan = window(f64::NAN, f64::NAN, f64::NAN, f64::NAN);
        assert!(grid.held(&nan).is_empty());
    }

    #[test]
    fn an_edge_crossing_the_window_is_found_though_neither_end_is_in_it() {
        let nodes = [
            (
                id("a"),
                Position {
                    x: -5000.0,
                    y: 100.0,
                },
            ),
            (
                id("b"),
                Position {
                    x: 5000.0,
                    y: 100.0,
                },
            ),
            (
                id("c"),
                Position {
                    x: 5000.0,
                    y: 5000.0,
                },
            ),
        ];
        let edge = |name: &str, from: &str, to: &str| -> EdgeSpec {
            serde_json::from_value(serde_json::json!({"id": name, "from": from, "to": to}))
                .expect("an edge")
        };
        let grid = NodeGrid::of(
            nodes,
            &[
                edge("ab", "a", "b"),
                edge("bc", "b", "c"),
                edge("ax", "a", "gone"),
            ],
        );
        let crossing = grid.crossing(&window(0.0, 0.0, 1000.0, 1000.0));
        assert_eq!(
            crossing
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>(),
            ["ab"]
        );
    }
}
