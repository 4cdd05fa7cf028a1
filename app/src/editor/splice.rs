//! Dropping a node onto an edge puts it into that edge (as in n8n or
//! Node-RED): `a → b` becomes `a → new → b` in one step, the edge's route
//! or condition kept on its first half (it is `a`'s choice). A `fan_out`
//! dropped so sends each item to `b` instead of leading to it, since an
//! edge would also run `b` once without an item. The new node sits
//! between the two, and `b` and everything right of it move right to make
//! room when it does not fit. Plain functions over the document, tested on
//! the host.

use heddle_engine::format::{EdgeSpec, Position};
use heddle_engine::kinds::BuiltinKind;
use heddle_engine::{EdgeId, GraphDocument, NodeId};
use serde_json::Value;

use super::model::{NODE_HEIGHT, NODE_WIDTH, new_edge_id};

/// How near (world units) a dropped node's centre must be to an edge's
/// curve to land on it.
const NEAR: f64 = 24.0;

/// The room kept between a node put into an edge and its neighbours.
const GAP: f64 = 60.0;

/// The edge a node dropped with its centre at `at` lands on, if any: the
/// nearest forward edge whose curve passes within [`NEAR`] of it.
/// `position` gives a node's place (world units).
pub fn edge_at<'a>(
    edges: impl IntoIterator<Item = &'a EdgeSpec>,
    position: impl Fn(&NodeId) -> Option<Position>,
    at: Position,
) -> Option<EdgeId> {
    edges
        .into_iter()
        .filter_map(|edge| {
            let (a, b) = (position(&edge.from)?, position(&edge.to)?);
            // Back edges loop around the nodes; only forward ones are
            // drawn as this curve.
            if b.x <= a.x + NODE_WIDTH {
                return None;
            }
            let start = (a.x + NODE_WIDTH, a.y + NODE_HEIGHT / 2.0);
            let end = (b.x, b.y + NODE_HEIGHT / 2.0);
            let distance = distance_to_curve(start, end, (at.x, at.y));
            (distance <= NEAR).then(|| (distance, edge.id.clone()))
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .map(|(_, id)| id)
}

/// Whether a node of `kind` can be put into an edge (it has a way in and
/// a way out).
pub fn can_splice(kind: &str) -> bool {
    kind != BuiltinKind::Start.name() && kind != BuiltinKind::End.name()
}

/// Puts node `node` (already in the document) into edge `edge`. Returns
/// whether it did (the edge exists, the node is neither of its ends and
/// may have edges both ways).
pub fn splice(document: &mut GraphDocument, edge: &EdgeId, node: &NodeId) -> bool {
    let Some(at) = document.edges.iter().position(|e| &e.id == edge) else {
        return false;
    };
    let kind = document
        .nodes
        .iter()
        .find(|n| &n.id == node)
        .map(|n| n.kind.clone());
    let Some(kind) = kind else {
        return false;
    };
    let original = document.edges[at].clone();
    if &original.from == node || &original.to == node || !can_splice(&kind) {
        return false;
    }
    // The first half keeps the edge's id, route and condition.
    document.edges[at].to = node.clone();
    if kind == BuiltinKind::FanOut.name() {
        if let Some(spec) = document.nodes.iter_mut().find(|n| &n.id == node) {
            if !spec.config.is_object() {
                spec.config = Value::Object(serde_json::Map::new());
            }
            if let Value::Object(config) = &mut spec.config {
                config.insert("to".into(), Value::String(original.to.to_string()));
            }
        }
    } else {
        let id = new_edge_id(document);
        document.edges.push(EdgeSpec {
            id,
            from: node.clone(),
            to: original.to.clone(),
            condition: None,
            route: None,
        });
    }
    make_room(document, &original.from, node, &original.to);
    true
}

/// Places `node` between `from` and `to`, moving `to` and every node at
/// or right of it right when there is not room.
fn make_room(document: &mut GraphDocument, from: &NodeId, node: &NodeId, to: &NodeId) {
    let position = |id: &NodeId| {
        document
            .nodes
            .iter()
            .find(|spec| &spec.id == id)
            .and_then(|spec| spec.position)
    };
    let (Some(a), Some(dropped), Some(b)) = (position(from), position(node), position(to)) else {
        return;
    };
    let placed = Position {
        x: dropped.x.max(a.x + NODE_WIDTH + GAP),
        y: ((a.y + b.y) / 2.0).round(),
    };
    let needed = placed.x + NODE_WIDTH + GAP - b.x;
    for spec in &mut document.nodes {
        if &spec.id == node {
            spec.position = Some(placed);
        } else if needed > 0.0
            && let Some(at) = &mut spec.position
            && at.x >= b.x - 0.5
        {
            at.x += needed;
        }
    }
}

/// The shortest distance from `point` to the S curve the canvas draws from
/// `start` to `end` (see `routing::forward`), measured on 32 pieces.
fn distance_to_curve(start: (f64, f64), end: (f64, f64), point: (f64, f64)) -> f64 {
    let mid = (start.0 + end.0) / 2.0;
    let controls = [start, (mid, start.1), (mid, end.1), end];
    let at = |t: f64| {
        let u = 1.0 - t;
        let weights = [u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t];
        controls
            .iter()
            .zip(weights)
            .fold((0.0, 0.0), |(x, y), (c, w)| (x + c.0 * w, y + c.1 * w))
    };
    const PIECES: u32 = 32;
    (0..PIECES)
        .map(|i| {
            let a = at(f64::from(i) / f64::from(PIECES));
            let b = at(f64::from(i + 1) / f64::from(PIECES));
            to_segment(point, a, b)
        })
        .fold(f64::INFINITY, f64::min)
}

fn to_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length == 0.0 {
        0.0
    } else {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / length).clamp(0.0, 1.0)
    };
    let (x, y) = (a.0 + t * dx, a.1 + t * dy);
    ((p.0 - x).powi(2) + (p.1 - y).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    use heddle_engine::GraphDocument;
    use heddle_engine::format::Position;
    use serde_json::json;

    use super::splice;
    use crate::editor::model::new_node;

    fn edge_at(document: &GraphDocument, at: Position) -> Option<heddle_engine::EdgeId> {
        super::edge_at(
            &document.edges,
            |id| {
                document
                    .nodes
                    .iter()
                    .find(|node| &node.id == id)
                    .and_then(|node| node.position)
            },
            at,
        )
    }

    fn chain() -> GraphDocument {
        serde_json::from_value(json!({
            "format_version": 3, "name": "chain",
            "nodes": [
                {"id": "start", "kind": "start", "position": {"x": 0.0, "y": 0.0}},
                {"id": "agent", "kind": "agent", "position": {"x": 600.0, "y": 0.0}},
                {"id": "end", "kind": "end", "position": {"x": 1200.0, "y": 300.0}}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "agent", "route": "go"},
                {"id": "e2", "from": "agent", "to": "end"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn a_drop_on_an_edge_finds_it_and_a_drop_beside_it_does_not() {
        let document = chain();
        // Halfway along the straight edge start → agent (y = 28).
        let on = Position { x: 390.0, y: 36.0 };
        assert_eq!(
            edge_at(&document, on).map(|e| e.to_string()),
            Some("e1".into())
        );
        let beside = Position { x: 390.0, y: 120.0 };
        assert_eq!(edge_at(&document, beside), None);
        // The middle of the S curve agent → end.
        let curve = Position { x: 990.0, y: 178.0 };
        assert_eq!(
            edge_at(&document, curve).map(|e| e.to_string()),
            Some("e2".into())
        );
    }

    #[test]
    fn a_node_put_into_an_edge_sits_between_its_ends() {
        let mut document = chain();
        let llm = new_node(&document, "llm", Position { x: 300.0, y: 0.0 });
        let id = llm.id.clone();
        document.nodes.push(llm);
        assert!(splice(&mut document, &"e1".into(), &id));
        let edges: Vec<(String, String, Option<String>)> = document
            .edges
            .iter()
            .map(|e| (e.from.to_string(), e.to.to_string(), e.route.clone()))
            .collect();
        assert_eq!(
            edges,
            [
                ("start".into(), "llm".into(), Some("go".into())),
                ("agent".into(), "end".into(), None),
                ("llm".into(), "agent".into(), None),
            ]
        );
    }

    #[test]
    fn a_fan_out_put_into_an_edge_sends_its_items_on() {
        let mut document = chain();
        let spread = new_node(&document, "fan_out", Position { x: 300.0, y: 0.0 });
        let id = spread.id.clone();
        document.nodes.push(spread);
        assert!(splice(&mut document, &"e1".into(), &id));
        assert_eq!(document.edges.len(), 2, "no edge out of the fan-out");
        assert_eq!(document.edges[0].to, id);
        let config = &document.nodes[3].config;
        assert_eq!(config["to"], "agent");
    }

    #[test]
    fn a_node_put_into_a_short_edge_pushes_the_rest_right() {
        let mut document = chain();
        document.nodes[1].position = Some(Position { x: 240.0, y: 0.0 });
        document.nodes[2].position = Some(Position { x: 480.0, y: 0.0 });
        let llm = new_node(&document, "llm", Position { x: 120.0, y: 10.0 });
        let id = llm.id.clone();
        document.nodes.push(llm);
        assert!(splice(&mut document, &"e1".into(), &id));
        let x = |i: usize| document.nodes[i].position.unwrap().x;
        // start 0..180, the new node after a gap, then the rest after another.
        assert_eq!(x(3), 240.0);
        assert_eq!(document.nodes[3].position.unwrap().y, 0.0);
        assert_eq!((x(1), x(2)), (480.0, 720.0));
        assert_eq!(x(0), 0.0);
    }

    #[test]
    fn start_and_end_nodes_are_not_put_into_edges() {
        let mut document = chain();
        for kind in ["start", "end"] {
            let node = new_node(&document, kind, Position { x: 300.0, y: 0.0 });
            let id = node.id.clone();
            document.nodes.push(node);
            assert!(!splice(&mut document, &"e1".into(), &id), "{kind}");
        }
        assert!(!splice(&mut document, &"e9".into(), &"agent".into()));
    }
}
