//! The order a person reads a graph in, and so the order the canvas puts
//! its nodes in the page (which is the order Tab goes through them, and a
//! screen reader's): from where runs begin, along the edges and a
//! fan-out's sends, one step at a time, each step's nodes top to bottom;
//! a part no edge reaches comes after, from its top-left node. The
//! document's own order is the order nodes were made in, which after a
//! layout or a few edits says nothing about where a node is.

use std::collections::{HashMap, HashSet, VecDeque};

use heddle_engine::NodeId;
use heddle_engine::format::{EdgeSpec, Position};

/// A node as the order needs it.
pub struct FlowNode {
    pub id: NodeId,
    /// A `start` node: runs may begin there.
    pub start: bool,
    /// A fan-out's target: each item is sent there.
    pub sends_to: Option<NodeId>,
    pub at: Position,
}

/// Each node's place in the reading order (0 first).
pub fn ranks(
    entry: Option<&NodeId>,
    nodes: &[FlowNode],
    edges: &[EdgeSpec],
) -> HashMap<NodeId, usize> {
    let by_id: HashMap<&NodeId, &FlowNode> = nodes.iter().map(|node| (&node.id, node)).collect();
    let top_left = |a: &&FlowNode, b: &&FlowNode| {
        a.at.y
            .total_cmp(&b.at.y)
            .then(a.at.x.total_cmp(&b.at.x))
            .then(a.id.cmp(&b.id))
    };
    let mut next: HashMap<&NodeId, Vec<&FlowNode>> = HashMap::new();
    for (from, to) in edges.iter().map(|edge| (&edge.from, &edge.to)).chain(
        nodes
            .iter()
            .filter_map(|node| node.sends_to.as_ref().map(|to| (&node.id, to))),
    ) {
        if let Some(target) = by_id.get(to) {
            next.entry(from).or_default().push(target);
        }
    }
    for targets in next.values_mut() {
        targets.sort_by(top_left);
    }
    // Where reading begins: the entry, then the other starts, then each
    // part nothing reached yet from its top-left node.
    let mut seeds: Vec<&FlowNode> = entry
        .and_then(|id| by_id.get(id))
        .copied()
        .into_iter()
        .collect();
    let mut starts: Vec<&FlowNode> = nodes.iter().filter(|node| node.start).collect();
    starts.sort_by(top_left);
    seeds.extend(starts);
    let mut rest: Vec<&FlowNode> = nodes.iter().collect();
    rest.sort_by(top_left);
    seeds.extend(rest);

    let mut seen: HashSet<&NodeId> = HashSet::new();
    let mut ranks = HashMap::with_capacity(nodes.len());
    let mut queue = VecDeque::new();
    for seed in seeds {
        if !seen.insert(&seed.id) {
            continue;
        }
        queue.push_back(seed);
        while let Some(node) = queue.pop_front() {
            ranks.insert(node.id.clone(), ranks.len());
            for target in next.get(&node.id).into_iter().flatten() {
                if seen.insert(&target.id) {
                    queue.push_back(target);
                }
            }
        }
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, x: f64, y: f64) -> FlowNode {
        FlowNode {
            id: id.into(),
            start: id == "start",
            sends_to: None,
            at: Position { x, y },
        }
    }

    fn edge(from: &str, to: &str) -> EdgeSpec {
        serde_json::from_value(
            serde_json::json!({"id": format!("{from}-{to}"), "from": from, "to": to}),
        )
        .expect("edge")
    }

    fn order(entry: Option<&str>, nodes: &[FlowNode], edges: &[EdgeSpec]) -> Vec<String> {
        let entry = entry.map(NodeId::from);
        let ranks = ranks(entry.as_ref(), nodes, edges);
        let mut ids: Vec<(usize, String)> = ranks
            .into_iter()
            .map(|(id, rank)| (rank, id.to_string()))
            .collect();
        ids.sort();
        ids.into_iter().map(|(_, id)| id).collect()
    }

    #[test]
    fn nodes_are_read_from_the_start_along_the_edges_a_step_at_a_time() {
        // Made in another order than they run: the router's routes top to
        // bottom after it, the end after them all.
        let nodes = [
            node("end", 800.0, 100.0),
            node("general", 500.0, 200.0),
            node("billing", 500.0, 0.0),
            node("triage", 250.0, 100.0),
            node("technical", 500.0, 100.0),
            node("start", 0.0, 100.0),
        ];
        let edges = [
            edge("triage", "general"),
            edge("start", "triage"),
            edge("triage", "billing"),
            edge("general", "end"),
            edge("billing", "end"),
            edge("triage", "technical"),
            edge("technical", "end"),
        ];
        assert_eq!(
            order(None, &nodes, &edges),
            ["start", "triage", "billing", "technical", "general", "end"]
        );
    }

    #[test]
    fn a_fan_outs_sends_a_loop_and_a_part_apart_keep_their_place() {
        let mut spread = node("spread", 200.0, 0.0);
        spread.sends_to = Some("research".into());
        let nodes = [
            node("note taker", 0.0, 400.0),
            node("research", 400.0, 0.0),
            node("join", 600.0, 0.0),
            spread,
            node("plan", 100.0, 0.0),
            node("begin", 0.0, 0.0),
            node("tools", 100.0, 100.0),
            node("archive", 200.0, 400.0),
        ];
        let edges = [
            edge("begin", "plan"),
            edge("plan", "spread"),
            edge("research", "join"),
            edge("plan", "tools"),
            edge("tools", "plan"),
            edge("note taker", "archive"),
        ];
        assert_eq!(
            order(Some("begin"), &nodes, &edges),
            [
                "begin",
                "plan",
                "spread",
                "tools",
                "research",
                "join",
                "note taker",
                "archive"
            ]
        );
    }
}
