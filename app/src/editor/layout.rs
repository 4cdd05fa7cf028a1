//! Auto-layout: layered, left to right. Loops are found first (edges that
//! go back to a node still being visited) and set aside, so every other
//! edge points right; each node's layer is the longest path to it; within
//! a layer, nodes are ordered by the average place of their predecessors
//! (one barycenter sweep), which untangles most crossings. A graph of more
//! layers than fit a screen wraps into bands, read top to bottom. A
//! fan-out's sends count as edges (its instances' node comes after it).
//! A node no start leads to sits just before the first node it leads to.
//! Nodes joined to nothing are not a layer of their own: they line up
//! under the rest, start first and end last, in rows as wide as a screen
//! (a graph of nodes yet to be connected reads as a row, not a column).
//! A group is laid out on its own, then as one block of its size in the
//! graph around it (a collapsed one as its card): its frame holds its
//! nodes and no other, wherever Layout puts it.

use std::collections::{BTreeMap, HashMap, HashSet};

use heddle_engine::format::{EdgeSpec, Group, NodeSpec, Position};
use heddle_engine::kinds::BuiltinKind;
use heddle_engine::{EdgeId, GraphDocument, NodeId};

use super::model::{NODE_HEIGHT, NODE_WIDTH};

// Room between a group's frame and its nodes, and the frame's bar above
// them (as `canvas/group_frame.rs` draws them).
use super::group_room::{FRAME_BAR as GROUP_BAR, FRAME_PAD as GROUP_PAD};

/// The size a node or a group's block takes, by its id in the document
/// laid out (a node's when absent).
type Sizes = HashMap<NodeId, (f64, f64)>;

const LAYER_GAP: f64 = 80.0;
const ROW_GAP: f64 = 40.0;
/// Between two bands of a wrapped layout.
const BAND_GAP: f64 = 100.0;
/// The canvas a layout is shaped for, less the margins Fit leaves: a
/// 1440×900 window's, beside the palette and the inspector
/// (`Viewport::GUESSED_CANVAS`). At 1024 px the same shape, smaller.
const CANVAS: (f64, f64) = (900.0 - 96.0, 660.0 - 120.0);
/// The zoom from which a graph fitted in [`CANVAS`] reads (ports are
/// drawn from 50%): one row as long as it fits at this zoom or more.
const READS_AT: f64 = 0.5;
/// How much more a graph must read at for one more band.
const WRAP_GAIN: f64 = 1.2;
/// The most bands tried (a band of a 2,000-layer graph holds 40 layers).
const MAX_BANDS: usize = 50;
/// The most nodes joined to nothing lined up in one row.
const LOOSE_ROW: usize = 5;
/// The most of a group's nodes joined to none of the others in one column.
const LOOSE_COLUMN: usize = 6;

/// A position for every node.
pub fn layout(document: &GraphDocument) -> HashMap<NodeId, Position> {
    let present: HashSet<&NodeId> = document.nodes.iter().map(|node| &node.id).collect();
    let groups: Vec<&Group> = document
        .groups
        .iter()
        .filter(|group| group.nodes.iter().any(|id| present.contains(id)))
        .collect();
    if groups.is_empty() {
        return flat(document, &Sizes::new(), Loose::Rows);
    }
    // Each group on its own, as a graph of its nodes, from (0, 0).
    let inside: Vec<Block> = groups
        .iter()
        .enumerate()
        .filter_map(|(at, group)| Block::of(document, group, at))
        .collect();
    let block_of: HashMap<&NodeId, usize> = inside
        .iter()
        .enumerate()
        .flat_map(|(at, block)| block.places.keys().map(move |id| (id, at)))
        .collect();
    // The graph with each group as one node of its block's size.
    let stand_in = |id: &NodeId| -> NodeId {
        block_of
            .get(id)
            .map_or_else(|| id.clone(), |at| inside[*at].id.clone())
    };
    let mut outer = GraphDocument::new("");
    outer.entry = document.entry.as_ref().map(stand_in);
    outer.nodes = document
        .nodes
        .iter()
        .filter(|node| !block_of.contains_key(&node.id))
        .map(|node| NodeSpec {
            // Links are edges below: a fan-out's send is one already.
            config: serde_json::Value::Null,
            ..node.clone()
        })
        .chain(inside.iter().map(|block| block.node.clone()))
        .collect();
    // Each link keeps its edge's route (or condition): the layer after a
    // router leaves room for its labels into a group's block too.
    let labels: HashMap<(&NodeId, &NodeId), &str> = document
        .edges
        .iter()
        .filter_map(|edge| {
            let text = edge.route.as_deref().or(edge.condition.as_deref())?;
            Some(((&edge.from, &edge.to), text))
        })
        .collect();
    outer.edges = links(document)
        .into_iter()
        .map(|(from, to)| {
            let label = labels.get(&(from, to)).map(|text| text.to_string());
            (stand_in(from), stand_in(to), label)
        })
        .filter(|(from, to, _)| from != to)
        .enumerate()
        .map(|(at, (from, to, route))| EdgeSpec {
            id: EdgeId::from(format!("link-{at}")),
            from,
            to,
            condition: None,
            route,
        })
        .collect();
    let sizes: Sizes = inside
        .iter()
        .map(|block| (block.id.clone(), block.size))
        .collect();
    let mut positions = flat(&outer, &sizes, Loose::Rows);
    for block in &inside {
        let Some(at) = positions.remove(&block.id) else {
            continue;
        };
        positions.extend(block.places.iter().map(|(id, place)| {
            (
                id.clone(),
                Position {
                    x: at.x + place.x,
                    y: at.y + place.y,
                },
            )
        }));
    }
    positions
}

/// A group laid out on its own: where its nodes go from the block's
/// top-left corner, and the node standing for it in the graph around it.
struct Block {
    id: NodeId,
    node: NodeSpec,
    size: (f64, f64),
    places: HashMap<NodeId, Position>,
}

impl Block {
    /// Group `group` (the `at`th) of `document`, laid out (none when
    /// none of its nodes is in the document).
    fn of(document: &GraphDocument, group: &Group, at: usize) -> Option<Block> {
        let members: HashSet<&NodeId> = group.nodes.iter().collect();
        let mut own = GraphDocument::new("");
        own.nodes = document
            .nodes
            .iter()
            .filter(|node| members.contains(&node.id))
            .cloned()
            .collect();
        own.edges = document
            .edges
            .iter()
            .filter(|edge| members.contains(&edge.from) && members.contains(&edge.to))
            .cloned()
            .collect();
        own.entry = document
            .entry
            .clone()
            .filter(|entry| members.contains(entry));
        // Its nodes joined to none of the others are most often branches
        // side by side (a router's routes into the group): a column, in
        // the order of the routes that reach them.
        let laid = flat(
            &own,
            &Sizes::new(),
            Loose::Column(route_order(document, &own)),
        );
        let (left, top) = laid.values().fold((f64::MAX, f64::MAX), |(x, y), at| {
            (x.min(at.x), y.min(at.y))
        });
        let (right, bottom) = laid.values().fold((0.0f64, 0.0f64), |(x, y), at| {
            (x.max(at.x - left), y.max(at.y - top))
        });
        let (size, offset) = if group.collapsed {
            // Its card stands where its leftmost (then topmost) node is.
            let anchor = laid
                .values()
                .min_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)))
                .map_or((0.0, 0.0), |at| (at.x - left, at.y - top));
            ((NODE_WIDTH, NODE_HEIGHT), (-anchor.0, -anchor.1))
        } else {
            (
                (
                    right + NODE_WIDTH + 2.0 * GROUP_PAD,
                    bottom + NODE_HEIGHT + 2.0 * GROUP_PAD + GROUP_BAR,
                ),
                (GROUP_PAD, GROUP_PAD + GROUP_BAR),
            )
        };
        let places = laid
            .into_iter()
            .map(|(id, at)| {
                let place = Position {
                    x: at.x - left + offset.0,
                    y: at.y - top + offset.1,
                };
                (id, place)
            })
            .collect();
        // A start inside makes the block where runs begin; an end inside,
        // where they finish.
        let kinds: Vec<&str> = own.nodes.iter().map(|node| node.kind.as_str()).collect();
        let kind = if kinds.contains(&BuiltinKind::Start.name()) {
            BuiltinKind::Start.name()
        } else if kinds.contains(&BuiltinKind::End.name()) {
            BuiltinKind::End.name()
        } else {
            BuiltinKind::Set.name()
        };
        // No node id has a space: this one is no node's.
        let id = NodeId::from(format!("group {at}"));
        let node = NodeSpec {
            id: id.clone(),
            kind: kind.to_string(),
            label: String::new(),
            config: serde_json::Value::Null,
            ..own.nodes.first()?.clone()
        };
        Some(Block {
            id,
            node,
            size,
            places,
        })
    }
}

/// How nodes joined to nothing are lined up: in rows shaped like a screen
/// (a graph of nodes yet to be connected), or in a column, in the order
/// given by each node's rank (a group's branches).
enum Loose {
    Rows,
    Column(HashMap<NodeId, usize>),
}

/// A position for every node of `document`, each taking its size in
/// `sizes` (a node's when absent).
fn flat(document: &GraphDocument, sizes: &Sizes, loose_as: Loose) -> HashMap<NodeId, Position> {
    let links = links(document);
    let joined: HashSet<&NodeId> = links.iter().flat_map(|(from, to)| [*from, *to]).collect();
    let (connected, loose): (Vec<usize>, Vec<usize>) =
        (0..document.nodes.len()).partition(|&i| joined.contains(&document.nodes[i].id));
    let size = |id: &NodeId| sizes.get(id).copied().unwrap_or((NODE_WIDTH, NODE_HEIGHT));
    let mut positions = layered(document, &connected, &links, &size);
    let below = positions
        .iter()
        .map(|(id, at)| at.y + size(id).1 + BAND_GAP)
        .fold(0.0f64, f64::max);
    positions.extend(lined_up(document, loose, below, &size, &loose_as));
    positions
}

/// Each node of `part` reached on a route from outside it, by that
/// route's place in its source's routes (`route_ranks`).
fn route_order(document: &GraphDocument, part: &GraphDocument) -> HashMap<NodeId, usize> {
    let index: HashMap<&NodeId, usize> = document
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| (&node.id, i))
        .collect();
    let ranks = route_ranks(document, &index);
    part.nodes
        .iter()
        .filter_map(|node| Some((node.id.clone(), *ranks.get(index.get(&node.id)?)?)))
        .collect()
}

/// The graph's links between two different nodes: its edges and its
/// fan-outs' sends.
fn links(document: &GraphDocument) -> Vec<(&NodeId, &NodeId)> {
    let known: HashMap<&str, &NodeId> = document
        .nodes
        .iter()
        .map(|node| (node.id.as_str(), &node.id))
        .collect();
    let sends = document
        .nodes
        .iter()
        .filter(|node| node.kind == BuiltinKind::FanOut.name())
        .filter_map(|node| {
            let to = node.config.get("to")?.as_str()?;
            Some((&node.id, *known.get(to)?))
        });
    document
        .edges
        .iter()
        .filter_map(|edge| {
            let from = *known.get(edge.from.as_str())?;
            let to = *known.get(edge.to.as_str())?;
            Some((from, to))
        })
        .chain(sends)
        .filter(|(from, to)| from != to)
        .collect()
}

/// Nodes joined to nothing, in rows under `top`: a start first, an end
/// last, the rest as the document has them; up to [`LOOSE_ROW`] in one
/// row, more in rows as a screen is shaped.
fn lined_up(
    document: &GraphDocument,
    mut loose: Vec<usize>,
    top: f64,
    size: &dyn Fn(&NodeId) -> (f64, f64),
    loose_as: &Loose,
) -> Vec<(NodeId, Position)> {
    let rank = |i: &usize| match document.nodes[*i].kind.as_str() {
        "start" => 0,
        "end" => 2,
        _ => 1,
    };
    let columns = match loose_as {
        // A few in a row; more in rows that make a block shaped like a
        // screen (a row of sixteen would have to be zoomed out past
        // reading).
        Loose::Rows => {
            loose.sort_by_key(rank);
            (((loose.len() as f64) * 4.0 / 3.0).sqrt().ceil() as usize)
                .max(loose.len().min(LOOSE_ROW))
                .max(1)
        }
        // One column of up to LOOSE_COLUMN, in the routes' order.
        Loose::Column(order) => {
            loose.sort_by_key(|i| {
                (
                    rank(i),
                    order
                        .get(&document.nodes[*i].id)
                        .copied()
                        .unwrap_or(usize::MAX),
                )
            });
            loose.len().div_ceil(LOOSE_COLUMN).max(1)
        }
    };
    // Each column as wide as its widest, each row as tall as its tallest
    // (a group's block is bigger than a node).
    let rows = loose.len().div_ceil(columns);
    let mut widths = vec![NODE_WIDTH; columns];
    let mut heights = vec![NODE_HEIGHT; rows];
    for (at, i) in loose.iter().enumerate() {
        let (width, height) = size(&document.nodes[*i].id);
        widths[at % columns] = widths[at % columns].max(width);
        heights[at / columns] = heights[at / columns].max(height);
    }
    let lefts = starts_along(&widths, LAYER_GAP, 0.0);
    let tops = starts_along(&heights, ROW_GAP, top);
    loose
        .into_iter()
        .enumerate()
        .map(|(at, i)| {
            (
                document.nodes[i].id.clone(),
                Position {
                    x: lefts[at % columns],
                    y: tops[at / columns],
                },
            )
        })
        .collect()
}

/// Where each of `lengths` starts, laid one after another from `from`
/// with `gap` between.
fn starts_along(lengths: &[f64], gap: f64, from: f64) -> Vec<f64> {
    lengths
        .iter()
        .scan(from, |next, length| {
            let at = *next;
            *next += length + gap;
            Some(at)
        })
        .collect()
}

/// Where the `start` nodes are among `members` (indices into `members`).
fn starts_of(document: &GraphDocument, members: &[usize]) -> Vec<usize> {
    members
        .iter()
        .enumerate()
        .filter(|&(_, &i)| document.nodes[i].kind == BuiltinKind::Start.name())
        .map(|(at, _)| at)
        .collect()
}

/// Positions for the nodes at `members` (indices into the document's
/// nodes), layered over `links`.
fn layered(
    document: &GraphDocument,
    members: &[usize],
    links: &[(&NodeId, &NodeId)],
    size: &dyn Fn(&NodeId) -> (f64, f64),
) -> HashMap<NodeId, Position> {
    let ids: Vec<&NodeId> = members.iter().map(|&i| &document.nodes[i].id).collect();
    let index: HashMap<&NodeId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for (from, to) in links {
        if let (Some(&from), Some(&to)) = (index.get(from), index.get(to)) {
            out[from].push(to);
        }
    }
    let starts = starts_of(document, members);
    let back = back_edges(
        &out,
        entry_first(document, &index, starts.clone(), ids.len()),
    );
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
    let mut order = Vec::with_capacity(ids.len());
    while let Some(node) = ready.pop() {
        order.push(node);
        for to in forward(node) {
            layer[to] = layer[to].max(layer[node] + 1);
            indegree[to] -= 1;
            if indegree[to] == 0 {
                ready.push(to);
            }
        }
    }

    // What no start leads to (a node wired only onward, to `end`) sits just
    // before the first node it leads to, not in the first column with its
    // edge drawn across the graph. Last first, so a chain of them moves
    // as one.
    if !starts.is_empty() {
        let mut reached = vec![false; ids.len()];
        let mut stack = starts.clone();
        while let Some(node) = stack.pop() {
            if !std::mem::replace(&mut reached[node], true) {
                stack.extend(forward(node).filter(|to| !reached[*to]));
            }
        }
        for &node in order.iter().rev() {
            if reached[node] {
                continue;
            }
            if let Some(first) = forward(node).map(|to| layer[to]).min() {
                layer[node] = layer[node].max(first.saturating_sub(1));
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
    // Branches of one router (or condition) read in the order of its
    // routes, as it lists them: billing, technical, other.
    let route_rank = route_ranks(document, &index);
    let rank = |node: &usize| route_rank.get(node).copied().unwrap_or(usize::MAX);
    for nodes in layers.values_mut() {
        let key = |node: &usize| {
            let preds = &predecessors[*node];
            if preds.is_empty() {
                *node as f64
            } else {
                preds.iter().map(|p| row[*p]).sum::<f64>() / preds.len() as f64
            }
        };
        nodes.sort_by(|a, b| {
            key(a)
                .total_cmp(&key(b))
                .then(rank(a).cmp(&rank(b)))
                .then(a.cmp(b))
        });
        for (i, node) in nodes.iter().enumerate() {
            row[*node] = i as f64;
        }
    }
    // A long graph wraps: its layers fill bands of `columns`, one under
    // the other, read like lines of text, so it fits a screen's shape
    // rather than running one row thousands of pixels wide. Each layer is
    // as wide as its widest, each node as tall as it is (a group's block
    // is bigger than a node).
    let height_of = |nodes: &[usize]| {
        nodes.iter().map(|node| size(ids[*node]).1).sum::<f64>()
            + ROW_GAP * nodes.len().saturating_sub(1) as f64
    };
    let width_of = |nodes: &[usize]| {
        nodes
            .iter()
            .map(|node| size(ids[*node]).0)
            .fold(NODE_WIDTH, f64::max)
    };
    // After a layer whose nodes choose their way on (a router's routes, a
    // condition's), room for the edges' labels to lie on their lines, not
    // above the next nodes where another edge runs.
    let mut room: HashMap<&NodeId, f64> = HashMap::new();
    for edge in &document.edges {
        if let Some(text) = edge.route.as_deref().or(edge.condition.as_deref()) {
            let need = label_room(text);
            let known = room.entry(&edge.from).or_insert(need);
            *known = known.max(need);
        }
    }
    let gap_after = |nodes: &[usize]| {
        nodes
            .iter()
            .filter_map(|node| room.get(ids[*node]))
            .fold(LAYER_GAP, |gap, need| gap.max(*need))
    };
    // Each layer in order: its width with the gap after it, and its height.
    let shapes: Vec<(f64, f64)> = layers
        .values()
        .map(|nodes| (width_of(nodes) + gap_after(nodes), height_of(nodes)))
        .collect();
    let columns = columns_for(&shapes);
    // Where each band ends: at the narrowest waist near `columns` layers,
    // the boundary fewest links cross, so a router and its branches stay
    // in one band (its branches would cross the break together).
    let keys: Vec<usize> = layers.keys().copied().collect();
    let place_of: HashMap<usize, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut crossing = vec![0i64; keys.len() + 1];
    for from in 0..ids.len() {
        for to in forward(from) {
            let (a, b) = (place_of[&layer[from]], place_of[&layer[to]]);
            if a < b {
                crossing[a] += 1;
                crossing[b] -= 1;
            }
        }
    }
    for i in 1..crossing.len() {
        crossing[i] += crossing[i - 1];
    }
    let band_of_place = band_breaks(&crossing[..keys.len()], columns);
    let band_of: HashMap<usize, usize> = keys
        .iter()
        .zip(&band_of_place)
        .map(|(key, band)| (*key, *band))
        .collect();
    let bands = band_of_place.last().map_or(1, |last| last + 1);
    let mut band_top = vec![0.0f64; bands + 1];
    let mut tallest = vec![0.0f64; bands];
    let mut lefts: HashMap<usize, f64> = HashMap::new();
    for band in 0..bands {
        let in_band: Vec<(&usize, &Vec<usize>)> = layers
            .iter()
            .filter(|(layer, _)| band_of.get(layer) == Some(&band))
            .collect();
        tallest[band] = in_band
            .iter()
            .map(|(_, nodes)| height_of(nodes))
            .fold(NODE_HEIGHT, f64::max);
        band_top[band + 1] = band_top[band] + tallest[band] + ROW_GAP + BAND_GAP;
        let mut x = 0.0;
        for (layer, nodes) in &in_band {
            lefts.insert(**layer, x);
            x += width_of(nodes) + gap_after(nodes);
        }
    }
    let mut positions = HashMap::with_capacity(ids.len());
    for (layer, nodes) in &layers {
        let band = band_of.get(layer).copied().unwrap_or(0);
        // Each layer centred on the tallest of its band.
        let mut y = band_top[band] + (tallest[band] - height_of(nodes)) / 2.0;
        let x = lefts.get(layer).copied().unwrap_or(0.0);
        for node in nodes {
            positions.insert(ids[*node].clone(), Position { x, y });
            y += size(ids[*node]).1 + ROW_GAP;
        }
    }
    positions
}

/// Each node reached on a route (at `index`), and that route's place in
/// its source's list of routes (`config.routes[i].route`, a router's or a
/// condition's); the first when it is reached on several.
fn route_ranks(document: &GraphDocument, index: &HashMap<&NodeId, usize>) -> HashMap<usize, usize> {
    let routes_of: HashMap<&NodeId, Vec<&str>> = document
        .nodes
        .iter()
        .filter_map(|node| {
            let routes = node.config.get("routes")?.as_array()?;
            let names = routes
                .iter()
                .filter_map(|route| route.get("route")?.as_str())
                .collect();
            Some((&node.id, names))
        })
        .collect();
    let mut ranks: HashMap<usize, usize> = HashMap::new();
    for edge in &document.edges {
        let (Some(route), Some(&to)) = (edge.route.as_deref(), index.get(&edge.to)) else {
            continue;
        };
        let Some(at) = routes_of
            .get(&edge.from)
            .and_then(|names| names.iter().position(|name| *name == route))
        else {
            continue;
        };
        let rank = ranks.entry(to).or_insert(at);
        *rank = (*rank).min(at);
    }
    ranks
}

/// The room between two layers an edge's label `text` needs to lie on its
/// line (`routing::off_nodes`): as drawn at 1.75 times its size (the
/// canvas draws labels so from 50% to 58% zoom, `routing::label_scale`:
/// the least a laid-out graph is fitted at, [`READS_AT`]), cut as the
/// canvas cuts it (28 characters, `canvas::label_text`), with a margin
/// each side. At 44% a route's label ran into the node it leads to.
fn label_room(text: &str) -> f64 {
    const DRAWN_CHARS: usize = 28;
    let chars = text.chars().count().min(DRAWN_CHARS) as f64;
    (chars * 6.6 + 16.0) * LABEL_SCALE_AT_LEAST_ZOOM + 20.0
}

/// How big a label is drawn at [`READS_AT`] (`routing::label_scale`).
const LABEL_SCALE_AT_LEAST_ZOOM: f64 = 1.75;

/// The band of each of `crossing.len()` layers, given how many links
/// cross the boundary after each: bands of `columns` layers, each ending
/// where fewest links cross among its last third's boundaries (the later
/// on a tie), so a break falls before a router rather than among its
/// branches.
fn band_breaks(crossing: &[i64], columns: usize) -> Vec<usize> {
    let layers = crossing.len();
    let columns = columns.max(1);
    let slack = columns / 3;
    let mut bands = Vec::with_capacity(layers);
    let (mut start, mut band) = (0, 0);
    while start < layers {
        let end = if layers - start <= columns {
            layers
        } else {
            // The band's last layer, at `last`: the boundary after it.
            let earliest = start + columns.saturating_sub(slack).max(1) - 1;
            let latest = start + columns - 1;
            let last = (earliest..=latest)
                .rev()
                .min_by_key(|at| crossing[*at])
                .unwrap_or(latest);
            last + 1
        };
        bands.extend(std::iter::repeat_n(band, end - start));
        start = end;
        band += 1;
    }
    bands
}

/// Layers a band holds, given each layer's width (with the gap after it)
/// and height: one row while the whole reads (at [`READS_AT`] or more
/// fitted in a laptop's canvas, [`CANVAS`]); else as many bands as fit
/// that canvas best, each more taken only for a clear gain (a wrapped
/// graph's edges from one band to the next cost some reading too).
fn columns_for(shapes: &[(f64, f64)]) -> usize {
    let layers = shapes.len().max(1);
    let zoom_at = |columns: usize| {
        let (mut width, mut height) = (0.0f64, 0.0f64);
        for band in shapes.chunks(columns) {
            let wide: f64 = band.iter().map(|(width, _)| width).sum::<f64>() - LAYER_GAP;
            let tall = band
                .iter()
                .map(|(_, height)| *height)
                .fold(NODE_HEIGHT, f64::max);
            width = width.max(wide);
            height += tall;
        }
        height += (ROW_GAP + BAND_GAP) * (layers.div_ceil(columns) - 1) as f64;
        let (canvas_width, canvas_height) = CANVAS;
        (canvas_width / width.max(1.0))
            .min(canvas_height / height.max(1.0))
            .min(1.0)
    };
    let (mut best, mut best_zoom) = (layers, zoom_at(layers));
    if best_zoom >= READS_AT {
        return best;
    }
    let mut last = layers;
    for bands in 2..=layers.min(MAX_BANDS) {
        let columns = layers.div_ceil(bands);
        if columns == last {
            continue;
        }
        last = columns;
        let zoom = zoom_at(columns);
        if zoom > best_zoom * WRAP_GAIN {
            (best, best_zoom) = (columns, zoom);
        }
    }
    best
}

/// Node order for the depth-first search: the entry (or start nodes)
/// first, so loops are broken where a person reads them as loops.
fn entry_first(
    document: &GraphDocument,
    index: &HashMap<&NodeId, usize>,
    starts: Vec<usize>,
    count: usize,
) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(count);
    if let Some(entry) = document.entry.as_ref().and_then(|entry| index.get(entry)) {
        order.push(*entry);
    }
    order.extend(starts);
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
    use std::collections::HashMap;

    use heddle_engine::format::Position;
    use heddle_engine::{GraphDocument, NodeId};
    use serde_json::json;

    use super::{NODE_HEIGHT, NODE_WIDTH, READS_AT, layout};

    fn x_of(
        positions: &std::collections::HashMap<NodeId, heddle_engine::format::Position>,
        id: &str,
    ) -> f64 {
        positions[&NodeId::from(id)].x
    }

    /// How many different places the nodes are at.
    fn distinct_places(
        positions: &std::collections::HashMap<NodeId, heddle_engine::format::Position>,
    ) -> usize {
        let mut places: Vec<(i64, i64)> = positions
            .values()
            .map(|p| (p.x as i64, p.y as i64))
            .collect();
        places.sort();
        places.dedup();
        places.len()
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
        assert_eq!(distinct_places(&positions), 4, "no two nodes share a place");
    }

    /// A chain of `n` set nodes, `n0 -> n1 -> ...`.
    fn chain(n: usize) -> GraphDocument {
        let nodes: Vec<_> = (0..n)
            .map(|i| json!({"id": format!("n{i}"), "kind": "set"}))
            .collect();
        let edges: Vec<_> = (1..n)
            .map(|i| json!({"id": format!("e{i}"), "from": format!("n{}", i - 1), "to": format!("n{i}")}))
            .collect();
        GraphDocument::from_value(json!({
            "format_version": 2, "name": "chain", "nodes": nodes, "edges": edges
        }))
        .unwrap()
    }

    #[test]
    fn a_long_chain_wraps_into_bands_shaped_like_a_screen() {
        let positions = layout(&chain(100));
        let (mut width, mut height) = (0.0f64, 0.0f64);
        for p in positions.values() {
            width = width.max(p.x);
            height = height.max(p.y);
        }
        // 12 layers a band (not one row of 100, 26,000 px wide).
        assert!(width < 3_200.0, "{width}");
        let aspect = width / height;
        assert!((1.0..2.5).contains(&aspect), "{width} x {height}");
        // Each band reads left to right; the next starts at the left, under it.
        let at = |i: usize| positions[&NodeId::from(format!("n{i}").as_str())];
        assert!(at(0).x < at(1).x && at(10).x < at(11).x);
        assert_eq!(at(12).x, 0.0);
        assert!(at(12).y > at(11).y);
        assert_eq!(
            distinct_places(&positions),
            100,
            "no two nodes share a place"
        );
        // A short chain stays one row.
        let short = layout(&chain(6));
        assert!(short.values().all(|p| p.y == 0.0));
    }

    /// The zoom Fit shows `positions` at in a 1440×900 window's canvas.
    fn fitted_zoom(positions: &HashMap<NodeId, Position>) -> f64 {
        let mut extent: Option<(f64, f64, f64, f64)> = None;
        for p in positions.values() {
            let (x2, y2) = (p.x + NODE_WIDTH, p.y + NODE_HEIGHT);
            extent = Some(extent.map_or((p.x, p.y, x2, y2), |(a, b, c, d)| {
                (a.min(p.x), b.min(p.y), c.max(x2), d.max(y2))
            }));
        }
        let (width, height) = crate::editor::state::Viewport::GUESSED_CANVAS;
        crate::editor::state::Viewport::fitting(extent, width, height).zoom
    }

    #[test]
    fn a_groups_branches_stand_in_a_column_in_the_order_of_their_routes() {
        // A router's three routes into one group (no edge among them).
        let document = GraphDocument::from_value(json!({
            "format_version": 3, "name": "branches",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "triage", "kind": "router", "config": {"routes": [
                    {"route": "billing"}, {"route": "technical"}, {"route": "other"}]}},
                {"id": "o", "kind": "llm"}, {"id": "b", "kind": "llm"}, {"id": "t", "kind": "llm"},
                {"id": "end", "kind": "end"}],
            "edges": [
                {"id": "e1", "from": "start", "to": "triage"},
                {"id": "e2", "from": "triage", "to": "b", "route": "billing"},
                {"id": "e3", "from": "triage", "to": "t", "route": "technical"},
                {"id": "e4", "from": "triage", "to": "o", "route": "other"},
                {"id": "e5", "from": "b", "to": "end"},
                {"id": "e6", "from": "t", "to": "end"},
                {"id": "e7", "from": "o", "to": "end"}],
            "groups": [{"id": "g", "nodes": ["o", "b", "t"]}]
        }))
        .unwrap();
        let positions = layout(&document);
        let at = |id: &str| positions[&NodeId::from(id)];
        assert_eq!(at("b").x, at("t").x);
        assert_eq!(at("t").x, at("o").x);
        assert!(at("b").y < at("t").y && at("t").y < at("o").y);
        // Between the router and the end, with room for the routes'
        // labels on their lines into the group.
        assert!(at("triage").x < at("b").x && at("b").x < at("end").x);
        assert!(at("b").x - at("triage").x - NODE_WIDTH >= super::label_room("technical"));
    }

    #[test]
    fn a_band_ends_where_fewest_links_cross_so_a_routers_branches_stay_with_it() {
        // Twelve layers a band; a router at the 12th sends three branches.
        let mut crossing = vec![1i64; 30];
        crossing[11] = 3;
        let bands = super::band_breaks(&crossing, 12);
        assert_eq!(bands.iter().filter(|band| **band == 0).count(), 11);
        assert_eq!(bands.len(), 30);
        // Nothing narrower in its last third: a band of twelve.
        let bands = super::band_breaks(&[1i64; 30], 12);
        assert_eq!(bands.iter().filter(|band| **band == 0).count(), 12);

        // Twenty routers, each sending three branches that rejoin: no
        // router's branches are wrapped into the band under it.
        let mut nodes = vec![json!({"id": "start", "kind": "start"})];
        let mut edges = Vec::new();
        let mut last = "start".to_string();
        for i in 0..20 {
            let router = format!("r{i}");
            nodes.push(
                json!({"id": router, "kind": "router", "config": {"routes": [
                {"route": "alpha"}, {"route": "beta"}, {"route": "gamma"}]}}),
            );
            edges.push(json!({"id": format!("in{i}"), "from": last, "to": router}));
            let join = format!("j{i}");
            nodes.push(json!({"id": join, "kind": "set"}));
            for route in ["alpha", "beta", "gamma"] {
                let branch = format!("{router}_{route}");
                nodes.push(json!({"id": branch, "kind": "llm"}));
                edges.push(json!({"id": format!("{branch}_in"), "from": router, "to": branch, "route": route}));
                edges.push(json!({"id": format!("{branch}_out"), "from": branch, "to": join}));
            }
            last = join;
        }
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "routers", "nodes": nodes, "edges": edges
        }))
        .unwrap();
        let positions = layout(&document);
        let at = |id: &str| positions[&NodeId::from(id)];
        let bands: std::collections::BTreeSet<i64> =
            positions.values().map(|p| (p.y / 400.0) as i64).collect();
        assert!(bands.len() > 1, "wrapped");
        for i in 0..20 {
            let router = at(&format!("r{i}"));
            for route in ["alpha", "beta", "gamma"] {
                let branch = at(&format!("r{i}_{route}"));
                assert!(branch.x > router.x, "r{i}'s {route} wrapped away from it");
            }
        }
    }

    #[test]
    fn a_graph_too_long_to_read_in_one_row_wraps_until_it_reads() {
        // One row of ten would show at 32%, its labels unread and its
        // ports not drawn; in bands it reads.
        assert!(fitted_zoom(&layout(&chain(10))) >= READS_AT);
        // A support bot as a person builds it: a router's three routes,
        // a condition, a human's verdicts, rejoined at a memory (eight
        // layers, a row at 40%).
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "support",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "router", "kind": "router", "config": {"routes": [
                    {"route": "billing"}, {"route": "technical"}, {"route": "other"}]}},
                {"id": "billing", "kind": "llm"}, {"id": "technical", "kind": "condition"},
                {"id": "other", "kind": "human"}, {"id": "tools", "kind": "tools"},
                {"id": "script", "kind": "script"}, {"id": "llm", "kind": "llm"},
                {"id": "memory", "kind": "memory"}, {"id": "end", "kind": "end"}],
            "edges": [
                {"id": "e1", "from": "start", "to": "router"},
                {"id": "e2", "from": "router", "to": "billing", "route": "billing"},
                {"id": "e3", "from": "router", "to": "technical", "route": "technical"},
                {"id": "e4", "from": "router", "to": "other", "route": "other"},
                {"id": "e5", "from": "technical", "to": "tools", "route": "needs_tool"},
                {"id": "e6", "from": "technical", "to": "script", "route": "fallback"},
                {"id": "e7", "from": "tools", "to": "llm"},
                {"id": "e8", "from": "script", "to": "llm"},
                {"id": "e9", "from": "billing", "to": "memory"},
                {"id": "e10", "from": "llm", "to": "memory"},
                {"id": "e11", "from": "other", "to": "memory", "route": "approved"},
                {"id": "e12", "from": "other", "to": "end", "route": "rejected"},
                {"id": "e13", "from": "memory", "to": "end"}]
        }))
        .unwrap();
        let positions = layout(&document);
        assert!(
            fitted_zoom(&positions) >= READS_AT,
            "{}",
            fitted_zoom(&positions)
        );
        assert_eq!(distinct_places(&positions), 10);
        // Read in order: the start first, top left; the end last.
        let at = |id: &str| positions[&NodeId::from(id)];
        assert_eq!(at("start").x, 0.0);
        assert!(at("end").y > at("start").y);
    }

    #[test]
    fn nodes_joined_to_nothing_line_up_start_first_end_last() {
        // Nothing connected yet: a row, read from the start to the end.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "loose",
            "nodes": [{"id": "end", "kind": "end"}, {"id": "a", "kind": "set"},
                      {"id": "start", "kind": "start"}, {"id": "b", "kind": "set"}],
            "edges": []
        }))
        .unwrap();
        let positions = layout(&document);
        assert!(positions.values().all(|p| p.y == 0.0), "one row");
        let order = ["start", "a", "b", "end"].map(|id| x_of(&positions, id));
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
        // Sixteen: a block, not a row too wide to read.
        let many: Vec<_> = (0..16)
            .map(|i| json!({"id": format!("n{i}"), "kind": "set"}))
            .collect();
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "many", "nodes": many, "edges": []
        }))
        .unwrap();
        let positions = layout(&document);
        let rows = {
            let mut ys: Vec<i64> = positions.values().map(|p| p.y as i64).collect();
            ys.sort();
            ys.dedup();
            ys.len()
        };
        assert_eq!(rows, 4, "five a row");
        assert_eq!(distinct_places(&positions), 16);
        // Beside a laid-out graph, a lone node goes under it, not into its
        // first layer; a fan-out's target comes after the fan-out.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "mixed",
            "nodes": [{"id": "start", "kind": "start"}, {"id": "spread", "kind": "fan_out",
                       "config": {"over": "topics", "to": "work"}},
                      {"id": "work", "kind": "set"}, {"id": "lone", "kind": "set"}],
            "edges": [{"id": "a", "from": "start", "to": "spread"}]
        }))
        .unwrap();
        let positions = layout(&document);
        assert!(x_of(&positions, "spread") < x_of(&positions, "work"));
        let y = |id: &str| positions[&NodeId::from(id)].y;
        assert_eq!(y("start"), y("work"), "one band");
        assert!(y("lone") > y("start"), "under the graph");
        assert_eq!(x_of(&positions, "lone"), 0.0);
        assert_eq!(distinct_places(&positions), 4);
    }

    #[test]
    fn what_no_start_leads_to_sits_just_before_where_it_leads() {
        // start → a → b → end, and x → y → end with nothing into x: x and y
        // sit just before the end, not in the start's column with an edge
        // drawn across a and b.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "orphan",
            "nodes": [{"id": "start", "kind": "start"}, {"id": "a", "kind": "set"},
                      {"id": "b", "kind": "set"}, {"id": "x", "kind": "set"},
                      {"id": "y", "kind": "set"}, {"id": "end", "kind": "end"}],
            "edges": [{"id": "e1", "from": "start", "to": "a"}, {"id": "e2", "from": "a", "to": "b"},
                      {"id": "e3", "from": "b", "to": "end"}, {"id": "e4", "from": "x", "to": "y"},
                      {"id": "e5", "from": "y", "to": "end"}]
        }))
        .unwrap();
        let positions = layout(&document);
        assert_eq!(x_of(&positions, "y"), x_of(&positions, "b"));
        assert_eq!(x_of(&positions, "x"), x_of(&positions, "a"));
        assert!(x_of(&positions, "x") > x_of(&positions, "start"));
        assert_eq!(distinct_places(&positions), 6);
    }
    /// The frame a group of `members` is drawn in (`canvas/group_frame.rs`),
    /// and whether a node at `at` lies in it.
    fn framed(
        positions: &std::collections::HashMap<NodeId, heddle_engine::format::Position>,
        members: &[&str],
    ) -> impl Fn(&heddle_engine::format::Position) -> bool {
        use super::{GROUP_BAR, GROUP_PAD, NODE_HEIGHT, NODE_WIDTH};
        let places: Vec<_> = members
            .iter()
            .map(|id| positions[&NodeId::from(*id)])
            .collect();
        let left = places.iter().map(|p| p.x).fold(f64::MAX, f64::min) - GROUP_PAD;
        let top = places.iter().map(|p| p.y).fold(f64::MAX, f64::min) - GROUP_PAD - GROUP_BAR;
        let right = places.iter().map(|p| p.x).fold(f64::MIN, f64::max) + NODE_WIDTH + GROUP_PAD;
        let bottom = places.iter().map(|p| p.y).fold(f64::MIN, f64::max) + NODE_HEIGHT + GROUP_PAD;
        move |at| {
            at.x < right && at.x + NODE_WIDTH > left && at.y < bottom && at.y + NODE_HEIGHT > top
        }
    }

    #[test]
    fn a_groups_frame_holds_its_nodes_and_no_other_after_layout() {
        // Three groups' worth of a research graph: the group is the middle
        // of the main line, a side branch runs beside it, and a node between
        // two of its members is not one of them.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "grouped",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "fetch", "kind": "set"},
                {"id": "check", "kind": "set"},
                {"id": "summarise", "kind": "set"},
                {"id": "write", "kind": "set"},
                {"id": "side", "kind": "set"},
                {"id": "side2", "kind": "set"},
                {"id": "end", "kind": "end"},
                {"id": "loose", "kind": "set"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "fetch"},
                {"id": "e2", "from": "fetch", "to": "check"},
                {"id": "e3", "from": "check", "to": "summarise"},
                {"id": "e4", "from": "summarise", "to": "write"},
                {"id": "e5", "from": "write", "to": "end"},
                {"id": "e6", "from": "start", "to": "side"},
                {"id": "e7", "from": "side", "to": "side2"},
                {"id": "e8", "from": "side2", "to": "end"}
            ],
            "groups": [
                {"id": "g1", "label": "Work", "nodes": ["fetch", "summarise", "write"]},
                {"id": "g2", "label": "Side", "nodes": ["side", "side2"]}
            ]
        }))
        .unwrap();
        let positions = layout(&document);
        assert_eq!(positions.len(), 9);
        assert_eq!(distinct_places(&positions), 9, "no two nodes share a place");
        for (members, others) in [
            (
                &["fetch", "summarise", "write"][..],
                &["start", "check", "side", "side2", "end", "loose"][..],
            ),
            (
                &["side", "side2"][..],
                &[
                    "start",
                    "fetch",
                    "check",
                    "summarise",
                    "write",
                    "end",
                    "loose",
                ][..],
            ),
        ] {
            let inside = framed(&positions, members);
            for other in others {
                assert!(
                    !inside(&positions[&NodeId::from(*other)]),
                    "{other} is in the frame of {members:?}: {positions:?}"
                );
            }
        }
        // Each group still reads left to right inside (by its own edges:
        // fetch reaches summarise only through check, which is not in it),
        // and runs begin left of both and end right of both.
        assert!(x_of(&positions, "summarise") < x_of(&positions, "write"));
        assert!(x_of(&positions, "side") < x_of(&positions, "side2"));
        assert!(x_of(&positions, "start") < x_of(&positions, "fetch"));
        assert!(x_of(&positions, "write") < x_of(&positions, "end"));
        // The two frames do not overlap each other.
        let work = framed(&positions, &["fetch", "summarise", "write"]);
        for id in ["side", "side2"] {
            assert!(!work(&positions[&NodeId::from(id)]), "{id}");
        }
    }

    #[test]
    fn a_collapsed_group_takes_a_cards_room_where_its_first_node_stands() {
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "collapsed",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "a", "kind": "set"},
                {"id": "b", "kind": "set"},
                {"id": "c", "kind": "set"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "a"},
                {"id": "e2", "from": "a", "to": "b"},
                {"id": "e3", "from": "b", "to": "c"},
                {"id": "e4", "from": "c", "to": "end"}
            ],
            "groups": [{"id": "g", "label": "Folded", "nodes": ["a", "b", "c"], "collapsed": true}]
        }))
        .unwrap();
        let positions = layout(&document);
        // The card (drawn at `a`, the leftmost) sits one step after start,
        // and end one step after the card: not after three nodes' room.
        let step = x_of(&positions, "a") - x_of(&positions, "start");
        assert!(step > 0.0);
        assert_eq!(x_of(&positions, "end") - x_of(&positions, "a"), step);
        assert_eq!(
            positions[&NodeId::from("a")].y,
            positions[&NodeId::from("start")].y
        );
    }
    #[test]
    fn a_routers_branches_read_top_to_bottom_in_the_order_of_its_routes() {
        // Made in another order than the routes are listed.
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "order",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "triage", "kind": "router", "config": {"routes": [
                    {"route": "billing"}, {"route": "technical"}, {"route": "other"}
                ]}},
                {"id": "c", "kind": "llm"},
                {"id": "a", "kind": "llm"},
                {"id": "b", "kind": "llm"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "triage"},
                {"id": "e2", "from": "triage", "to": "c", "route": "other"},
                {"id": "e3", "from": "triage", "to": "b", "route": "technical"},
                {"id": "e4", "from": "triage", "to": "a", "route": "billing"},
                {"id": "e5", "from": "a", "to": "end"},
                {"id": "e6", "from": "b", "to": "end"},
                {"id": "e7", "from": "c", "to": "end"}
            ]
        }))
        .unwrap();
        let positions = layout(&document);
        let y = |id: &str| positions[&NodeId::from(id)].y;
        assert!(y("a") < y("b") && y("b") < y("c"), "{positions:?}");
    }

    #[test]
    fn a_routers_next_layer_leaves_room_for_its_routes_on_their_lines() {
        let document = GraphDocument::from_value(json!({
            "format_version": 2, "name": "routes",
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "triage", "kind": "router"},
                {"id": "billing", "kind": "llm"},
                {"id": "support", "kind": "llm"},
                {"id": "end", "kind": "end"}
            ],
            "edges": [
                {"id": "e1", "from": "start", "to": "triage"},
                {"id": "e2", "from": "triage", "to": "billing", "route": "billing"},
                {"id": "e3", "from": "triage", "to": "support", "route": "technical_support"},
                {"id": "e4", "from": "billing", "to": "end"},
                {"id": "e5", "from": "support", "to": "end"}
            ]
        }))
        .unwrap();
        let positions = layout(&document);
        let gap = |from: &str, to: &str| {
            x_of(&positions, to) - x_of(&positions, from) - super::NODE_WIDTH
        };
        // Unlabelled edges keep the usual gap; the router's are as wide as
        // its longest route needs.
        assert_eq!(gap("start", "triage"), super::LAYER_GAP);
        assert_eq!(gap("billing", "end"), super::LAYER_GAP);
        let needed = super::label_room("technical_support");
        assert!(needed > super::LAYER_GAP);
        assert!((gap("triage", "support") - needed).abs() < 1e-9);
        // Enough for the label, drawn as at the least zoom a layout is
        // fitted at, to lie in the middle of its edge (`routing::off_nodes`:
        // its width and 6 px each side).
        assert_eq!(
            crate::editor::routing::label_scale(super::READS_AT),
            super::LABEL_SCALE_AT_LEAST_ZOOM
        );
        let drawn = (17.0 * 6.6 + 16.0) * super::LABEL_SCALE_AT_LEAST_ZOOM;
        assert!(needed >= drawn + 12.0);
    }
}
