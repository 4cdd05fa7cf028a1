//! Room for a new group's frame. A frame is drawn around its nodes' box,
//! so nodes picked here and there (a box selection at 45% that caught
//! three nodes on a diagonal) made a frame that covered nodes not in the
//! group, its name bar under one of them: it read as holding them. As the
//! group is made, each node its frame would cover steps out of it to the
//! nearest side with room, in the same undo step; the group's own nodes
//! stay where they were put.

use std::collections::HashSet;

use heddle_engine::format::Position;
use heddle_engine::{GraphDocument, NodeId};

use super::model::{NODE_HEIGHT, NODE_WIDTH};

/// Room between a frame and its nodes.
pub const FRAME_PAD: f64 = 20.0;
/// The frame's bar above its nodes.
pub const FRAME_BAR: f64 = 32.0;
/// How far a node that steps out keeps from the frame.
const CLEAR: f64 = 24.0;

/// A box on the canvas: left, top, right, bottom.
pub type Bounds = (f64, f64, f64, f64);

/// The frame around nodes whose top-left corners are `places` (its bar
/// included); `None` without a place.
pub fn frame_box(places: impl IntoIterator<Item = (f64, f64)>) -> Option<Bounds> {
    let mut bounds: Option<(f64, f64, f64, f64)> = None;
    for (x, y) in places {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        let (x2, y2) = (x + NODE_WIDTH, y + NODE_HEIGHT);
        bounds = Some(match bounds {
            None => (x, y, x2, y2),
            Some((a, b, c, d)) => (a.min(x), b.min(y), c.max(x2), d.max(y2)),
        });
    }
    bounds.map(|(x1, y1, x2, y2)| {
        (
            x1 - FRAME_PAD,
            y1 - FRAME_PAD - FRAME_BAR,
            x2 + FRAME_PAD,
            y2 + FRAME_PAD,
        )
    })
}

fn overlaps(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

fn node_box((x, y): (f64, f64)) -> (f64, f64, f64, f64) {
    (x, y, x + NODE_WIDTH, y + NODE_HEIGHT)
}

/// Moves each node not among `members` that the frame around them would
/// cover out of it: to the nearest side (above, below, left, right) where
/// it meets no other node, else to the nearest side. Nodes without a
/// place (laid out as the graph opens) are left alone.
pub fn step_out(document: &mut GraphDocument, members: &[NodeId]) {
    let members: HashSet<&NodeId> = members.iter().collect();
    let Some(frame) = frame_box(
        document
            .nodes
            .iter()
            .filter(|node| members.contains(&node.id))
            .filter_map(|node| node.position.map(|p| (p.x, p.y))),
    ) else {
        return;
    };
    let covered: Vec<usize> = document
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| !members.contains(&node.id))
        .filter(|(_, node)| {
            node.position
                .is_some_and(|p| overlaps(node_box((p.x, p.y)), frame))
        })
        .map(|(i, _)| i)
        .collect();
    for i in covered {
        let Some(at) = document.nodes[i].position else {
            continue;
        };
        let (left, top, right, bottom) = frame;
        let sides = [
            (at.x, top - CLEAR - NODE_HEIGHT),
            (at.x, bottom + CLEAR),
            (left - CLEAR - NODE_WIDTH, at.y),
            (right + CLEAR, at.y),
        ];
        let distance = |(x, y): (f64, f64)| (x - at.x).abs() + (y - at.y).abs();
        let free = |spot: (f64, f64)| {
            document.nodes.iter().enumerate().all(|(j, other)| {
                j == i
                    || other
                        .position
                        .is_none_or(|p| !overlaps(node_box(spot), node_box((p.x, p.y))))
            })
        };
        let nearest = |spots: &mut dyn Iterator<Item = (f64, f64)>| {
            spots.min_by(|a, b| distance(*a).total_cmp(&distance(*b)))
        };
        let spot = nearest(&mut sides.into_iter().filter(|spot| free(*spot)))
            .or_else(|| nearest(&mut sides.into_iter()));
        if let Some((x, y)) = spot {
            document.nodes[i].position = Some(Position { x, y });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::format::NodeSpec;

    fn graph(at: &[(&str, f64, f64)]) -> GraphDocument {
        let mut document = GraphDocument::new("g");
        for (id, x, y) in at {
            document.nodes.push(
                serde_json::from_value::<NodeSpec>(serde_json::json!({
                    "id": id, "kind": "set", "position": {"x": x, "y": y}
                }))
                .expect("a node"),
            );
        }
        document
    }

    fn at(document: &GraphDocument, id: &str) -> (f64, f64) {
        let p = document
            .nodes
            .iter()
            .find(|node| node.id.as_str() == id)
            .and_then(|node| node.position)
            .expect("placed");
        (p.x, p.y)
    }

    #[test]
    fn nodes_a_new_frame_would_cover_step_out_to_the_nearest_free_side_and_members_stay() {
        // Technical, condition and ask picked on a diagonal; Billing and
        // set sit inside their box, `far` well away.
        let mut document = graph(&[
            ("technical", 0.0, 100.0),
            ("condition", 260.0, 100.0),
            ("ask", 520.0, 40.0),
            ("billing", 0.0, 10.0),
            ("set", 260.0, 10.0),
            ("far", 0.0, 600.0),
        ]);
        let members: Vec<NodeId> = ["technical", "condition", "ask"].map(NodeId::from).to_vec();
        let before: Vec<(f64, f64)> = ["technical", "condition", "ask", "far"]
            .iter()
            .map(|id| at(&document, id))
            .collect();
        step_out(&mut document, &members);
        let after: Vec<(f64, f64)> = ["technical", "condition", "ask", "far"]
            .iter()
            .map(|id| at(&document, id))
            .collect();
        assert_eq!(before, after, "the group's nodes and the others stay");
        let frame = frame_box(["technical", "condition", "ask"].map(|id| at(&document, id)))
            .expect("a frame");
        for id in ["billing", "set"] {
            assert!(
                !overlaps(node_box(at(&document, id)), frame),
                "{id} in the frame"
            );
        }
        // The nearest side: above it, where they were (above the middle).
        assert!(at(&document, "billing").1 < frame.1);
        // No two nodes on one another.
        let boxes: Vec<_> = document.nodes.iter().filter_map(|n| n.position).collect();
        for (i, p) in boxes.iter().enumerate() {
            for q in &boxes[i + 1..] {
                assert!(!overlaps(node_box((p.x, p.y)), node_box((q.x, q.y))));
            }
        }
    }

    #[test]
    fn a_frame_that_covers_nothing_moves_nothing() {
        let mut document = graph(&[("a", 0.0, 0.0), ("b", 260.0, 0.0), ("c", 0.0, 300.0)]);
        let was = document.clone();
        step_out(&mut document, &["a".into(), "b".into()]);
        assert_eq!(document, was);
        // No member placed: nothing to frame, nothing moves.
        step_out(&mut document, &["ghost".into()]);
        assert_eq!(document, was);
    }
}
