//! Auto-layout: layered, left to right. Loops are found first (edges that
//! go back to a node still being visited) and set aside, so every other
//! edge points right; each node's layer is the longest path to it; within
//! a layer, nodes are ordered by the average place of their predecessors
//! (one barycenter sweep), which untangles most crossings.

use std::collections::{BTreeMap, HashMap, HashSet};

use heddle_engine::format::Position;
use heddle_engine::{GraphDocument, NodeId};

use super::model::{NODE_HEIGHT, NODE_WIDTH};

const LAYER_GAP: f64 = 80.0;
const ROW_GAP: f64 = 40.0;

/// A position for every node.
pub fn layout(document: &GraphDocument) -> HashMap<NodeId, Position> {
    let ids: Vec<&NodeId> = document.nodes.iter().map(|node| &node.id).collect();
    let index: HashMap<&NodeId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for edge in &document.edges {
        if let (Some(&from), Some(&to)) = (index.get(&edge.from), index.get(&edge.to))
            && from != to
        {
            out[from].push(to);
        }
    }
    let back = back_edges(&out, entry_first(document, &index, ids.len()));
    let forward_edges: Vec<Vec<usize>> = (0..ids.len())
        .map(|from| {
            out[from]
                .iter()
                .copied()
                .filter(|to| !back.contains(&(from, *to)))
                .collect()
        })
        .collect();
    let forward = |from: usize| forward_edges[from].iter().copied();

    // Longest path layering over the forward edges (a DAG now).
    let mut indegree = vec![0usize; ids.len()];
    for from in 0..ids.len() {
        for to in forward(from) {
            indegree[to] += 1;
        }
    }
    let mut layer = vec![0usize; ids.len()];
    let mut ready: Vec<usize> = (0..ids.len()).filter(|&n| indegree[n] == 0).collect();
    ready.reverse();
    while let Some(node) = ready.pop() {
        for to in forward(node) {
            layer[to] = layer[to].max(layer[node] + 1);
            indegree[to] -= 1;
            if indegree[to] == 0 {
                ready.push(to);
            }
        }
    }

    // Rows: document order first, then one barycenter sweep.
    let mut layers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (node, &at) in layer.iter().enumerate() {
        layers.entry(at).or_default().push(node);
    }
    let mut row = vec![0.0f64; ids.len()];
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for from in 0..ids.len() {
        for to in forward(from) {
            predecessors[to].push(from);
        }
    }
    for nodes in layers.values_mut() {
        let key = |node: &usize| {
            let preds = &predecessors[*node];
            if preds.is_empty() {
                *node as f64
            } else {
                preds.iter().map(|p| row[*p]).sum::<f64>() / preds.len() as f64
            }
        };
        nodes.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.cmp(b)));
        for (i, node) in nodes.iter().enumerate() {
            row[*node] = i as f64;
        }
    }
    let tallest = layers.values().map(Vec::len).max().unwrap_or(1) as f64;
    layers
        .iter()
        .flat_map(|(layer, nodes)| {
            // Centre each layer on the tallest one.
            let offset = (tallest - nodes.len() as f64) / 2.0;
            nodes.iter().map(move |node| (*layer, *node, offset))
        })
        .map(|(layer, node, offset)| {
            (
                ids[node].clone(),
                Position {
                    x: layer as f64 * (NODE_WIDTH + LAYER_GAP),
                    y: (row[node] + offset) * (NODE_HEIGHT + ROW_GAP),
                },
            )
        })
        .collect()
}

/// Node order for the depth-first search: the entry (or start nodes)
/// first, so loops are broken where a person reads them as loops.
fn entry_first(
    document: &GraphDocument,
    index: &HashMap<&NodeId, usize>,
    count: usize,
) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(count);
    if let Some(entry) = document.entry.as_ref().and_then(|entry| index.get(entry)) {
        order.push(*entry);
    }
    order.extend(
        document
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.kind == "start")
            .map(|(i, _)| i),
    );
    order.extend(0..count);
    order
}

/// Edges that close a cycle in a depth-first search from `roots`.
fn back_edges(out: &[Vec<usize>], roots: Vec<usize>) -> HashSet<(usize, usize)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; out.len()];
    let mut back = HashSet::new();
    for root in roots {
        if mark[root] != Mark::New {
            continue;
        }
        // Iterative DFS: (node, next child index).
        let mut stack = vec![(root, 0usize)];
        mark[root] = Mark::Open;
        while let Some((node, child)) = stack.last_mut() {
            if let Some(&to) = out[*node].get(*child) {
                *child += 1;
                match mark[to] {
                    Mark::New => {
                        mark[to] = Mark::Open;
                        stack.push((to, 0));
                    }
                    Mark::Open => {
                        back.insert((*node, to));
                    }
                    Mark::Done => {}
                }
            } else {
                mark[*node] = Mark::Done;
                stack.pop();
            }
        }
    }
    back
}

#[cfg(test)]
mod tests {
    use heddle_engine::{GraphDocument, NodeId};
    use serde_json::json;

    use super::layout;

    fn x_of(
        positions: &std::collections::HashMap<NodeId, heddle_engine::format::Position>,
        id: &str,
    ) -> f64 {
        positions[&NodeId::from(id)].x
    }

    #[test]
    fn a_loop_reads_left_to_right_with_its_back_edge_set_aside() {
        // start -> llm -> tools -> llm (the ReAct loop), llm -> end.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "react",
            "nodes": [
                {"id": "tools", "kind": "tools"},
                {"id": "end", "kind": "end"},
                {"id": "llm", "kind": "llm"},
                {"id": "start", "kind": "start"}
            ],
            "edges": [
                {"id": "a", "from": "start", "to": "llm"},
                {"id": "b", "from": "llm", "to": "tools"},
                {"id": "c", "from": "tools", "to": "llm"},
                {"id": "d", "from": "llm", "to": "end"}
            ]
        }))
        .unwrap();
        let positions = layout(&document);
        assert_eq!(positions.len(), 4);
        assert!(x_of(&positions, "start") < x_of(&positions, "llm"));
        assert!(x_of(&positions, "llm") < x_of(&positions, "tools"));
        assert_eq!(
            x_of(&positions, "tools"),
            x_of(&positions, "end"),
            "one layer"
        );
        // No two nodes share a place.
        let mut places: Vec<(i64, i64)> = positions
            .values()
            .map(|p| (p.x as i64, p.y as i64))
            .collect();
        places.sort();
        places.dedup();
        assert_eq!(places.len(), 4);
    }

    #[test]
    fn a_graph_with_no_edges_stacks_in_one_column() {
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "loose",
            "nodes": [{"id": "a", "kind": "set"}, {"id": "b", "kind": "set"}],
            "edges": []
        }))
        .unwrap();
        let positions = layout(&document);
        assert_eq!(x_of(&positions, "a"), x_of(&positions, "b"));
        assert_ne!(
            positions[&NodeId::from("a")].y,
            positions[&NodeId::from("b")].y
        );
    }
}
