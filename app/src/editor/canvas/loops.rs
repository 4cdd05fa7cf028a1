//! Where edges are drawn: loops that go back around the nodes they skip
//! and forward edges that go around the nodes in their way, kept apart
//! from each other, and the route of every other edge.

use crate::editor::gestures::{Drag, Gestures};
use crate::editor::groups::Folds;
use crate::editor::routing::{self, EdgeEnds, Route};
use crate::editor::state::Editor;
use heddle_engine::format::Position;
use heddle_engine::{EdgeId, NodeId};
use leptos::prelude::*;
use std::collections::{HashMap, HashSet};

use super::NODE_SIZE;
use super::label_text::edge_label;

/// The routes of the edges that go back, and one signal per edge that
/// changes only when that edge's route does. Each edge reads its own
/// signal: were hundreds of edges to read the whole map, every change of
/// it would rerun them all, each leaving and rejoining the subscribers of
/// sources with hundreds of subscribers (linear each time; it was most of
/// a drag frame's time on a 500-node graph).
#[derive(Clone, Copy)]
pub(super) struct LoopRoutes {
    all: Memo<HashMap<EdgeId, Route>>,
    /// Each edge that shares its two ends as drawn with others (a
    /// collapsed group's card is the end of every edge into it): its place
    /// among them and how many there are (`routing::forward_fanned`).
    fans: Memo<HashMap<EdgeId, (usize, usize)>>,
    /// The labelled edges whose source (as drawn) has labelled edges to
    /// other nodes too: a router's routes (`routing::EdgeLabel`).
    siblings: Memo<HashSet<EdgeId>>,
    /// How many times their size at 100% edges' labels are drawn now
    /// (`routing::label_scale`): changes only when the zoom crosses a step.
    pub(super) label_scale: Memo<f64>,
    each: StoredValue<HashMap<EdgeId, RwSignal<Option<Route>>>>,
    /// The canvas's: the edges' signals live as long as it does.
    owner: StoredValue<Owner>,
}

impl LoopRoutes {
    pub(super) fn new(
        editor: Editor,
        gestures: Gestures,
        positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
        folds: Memo<Folds>,
    ) -> LoopRoutes {
        let all = loop_routes(editor, gestures, positions);
        let each: StoredValue<HashMap<EdgeId, RwSignal<Option<Route>>>> =
            StoredValue::new(HashMap::new());
        Effect::new(move |_| {
            all.with(|all| {
                each.with_value(|each| {
                    for (id, signal) in each {
                        let now = all.get(id);
                        if signal.with_untracked(|was| was.as_ref() != now) {
                            signal.set(now.cloned());
                        }
                    }
                })
            })
        });
        let owner = StoredValue::new(Owner::current().unwrap_or_default());
        let fans = Memo::new(move |_| {
            folds.with(|folds| {
                editor
                    .edges
                    .with(|edges| fans(edges, |id| folds.drawn_at(id)))
            })
        });
        let siblings = Memo::new(move |_| {
            folds.with(|folds| {
                editor
                    .edges
                    .with(|edges| labelled_siblings(edges, |id| folds.drawn_at(id)))
            })
        });
        let label_scale = Memo::new(move |_| routing::label_scale(editor.viewport.get().zoom));
        LoopRoutes {
            all,
            fans,
            siblings,
            label_scale,
            each,
            owner,
        }
    }

    /// The route of `edge` when it goes back.
    pub(super) fn of(&self, edge: &EdgeId) -> RwSignal<Option<Route>> {
        if let Some(signal) = self.each.with_value(|each| each.get(edge).copied()) {
            return signal;
        }
        let now = self.all.with_untracked(|all| all.get(edge).cloned());
        let signal = self
            .owner
            .with_value(|owner| owner.with(|| RwSignal::new(now)));
        self.each.update_value(|each| {
            each.insert(edge.clone(), signal);
        });
        signal
    }
}

/// What loop routing needs of the graph's structure, kept while only
/// positions change: the nodes in one order with their position signals,
/// and each edge's ends as indices into it. A drag move then hashes no id
/// and clones no string.
#[derive(PartialEq)]
pub(super) struct LoopBase {
    positions: Vec<RwSignal<Position>>,
    ends: Vec<(EdgeId, usize, usize)>,
}

impl LoopBase {
    pub(super) fn new(
        positions: &HashMap<NodeId, RwSignal<Position>>,
        edges: &[heddle_engine::format::EdgeSpec],
    ) -> LoopBase {
        let index: HashMap<&NodeId, usize> = positions
            .keys()
            .enumerate()
            .map(|(i, id)| (id, i))
            .collect();
        LoopBase {
            positions: positions.values().copied().collect(),
            ends: edges
                .iter()
                .filter_map(|edge| {
                    Some((
                        edge.id.clone(),
                        *index.get(&edge.from)?,
                        *index.get(&edge.to)?,
                    ))
                })
                .collect(),
        }
    }
}

/// The routes of the edges that go back, recomputed when a node moves or
/// an edge changes: loops need to know about each other to keep apart.
/// Forward edges are routed one by one ([`edge_route`]), so dragging a node
/// redraws only what it touches. While nodes are dragged only their own
/// loops follow them, and only their positions are followed (the others
/// change only with a committed change, which moves `revision`); the other
/// loops are laid out again once the drag ends, so a drag repaints what it
/// moves, not every loop its path crosses.
pub(super) fn loop_routes(
    editor: Editor,
    gestures: Gestures,
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
) -> Memo<HashMap<EdgeId, Route>> {
    let base = Memo::new(move |_| {
        positions.with(|positions| editor.edges.with(|edges| LoopBase::new(positions, edges)))
    });
    Memo::new(move |previous: Option<&HashMap<EdgeId, Route>>| {
        editor.revision.track();
        let dragged: Vec<RwSignal<Position>> = gestures.drag.with_value(|drag| match drag {
            Drag::Move { origins, .. } => origins.iter().map(|(position, _)| *position).collect(),
            _ => Vec::new(),
        });
        let previous = previous.filter(|_| !dragged.is_empty());
        base.with(|base| {
            let moving: Vec<bool> = base
                .positions
                .iter()
                .map(|position| dragged.contains(position))
                .collect();
            let at: Vec<(f64, f64)> = base
                .positions
                .iter()
                .zip(&moving)
                .map(|(position, &moves)| {
                    let p = if previous.is_none() || moves {
                        position.get()
                    } else {
                        position.get_untracked()
                    };
                    (p.x, p.y)
                })
                .collect();
            // Mid-drag, the loops of nodes that stay keep their routes.
            let (kept, ends): (Vec<&EdgeId>, Vec<EdgeEnds>) = base
                .ends
                .iter()
                .filter(|(_, from, to)| previous.is_none() || moving[*from] || moving[*to])
                .map(|(id, from, to)| {
                    let ends = EdgeEnds {
                        from: *from,
                        to: *to,
                        label: None,
                    };
                    (id, ends)
                })
                .unzip();
            let mut routes: HashMap<EdgeId, Route> = kept
                .iter()
                .zip(routing::detours_and_loops(&at, NODE_SIZE, &ends))
                .filter_map(|(id, route)| Some(((*id).clone(), route?)))
                .collect();
            if let Some(previous) = previous {
                let moved: HashSet<&EdgeId> = kept.into_iter().collect();
                for (id, route) in previous {
                    if !moved.contains(id) {
                        routes.insert(id.clone(), route.clone());
                    }
                }
            }
            routes
        })
    })
}

/// One edge's route: its loop's, or its own curve between its two nodes
/// (with its label kept off the nodes). A memo, so a drag updates only
/// the edges whose route changed.
pub(super) fn edge_route(
    positions: Memo<HashMap<NodeId, RwSignal<Position>>>,
    loops: LoopRoutes,
    edge: &heddle_engine::format::EdgeSpec,
) -> Memo<Option<Route>> {
    let (id, from, to) = (edge.id.clone(), edge.from.clone(), edge.to.clone());
    let label = edge
        .route
        .as_deref()
        .or(edge.condition.as_deref())
        .map(edge_label);
    let looped = loops.of(&id);
    let (fans, siblings, label_scale) = (loops.fans, loops.siblings, loops.label_scale);
    Memo::new(move |_| {
        if let Some(route) = looped.get() {
            return Some(route);
        }
        let fan = fans.with(|fans| fans.get(&id).copied()).unwrap_or((0, 1));
        let (a, b) = positions.with(|map| (map.get(&from).copied(), map.get(&to).copied()));
        let (a, b) = (a?.get(), b?.get());
        let (a, b) = ((a.x, a.y), (b.x, b.y));
        let others: Vec<(f64, f64)> = match &label {
            Some(_) => positions.with(|map| {
                map.values()
                    .map(|position| {
                        let p = position.get();
                        (p.x, p.y)
                    })
                    .collect()
            }),
            None => Vec::new(),
        };
        // Only a labelled edge's place depends on how big labels are, and
        // on its siblings.
        let label = label.as_deref().map(|text| routing::EdgeLabel {
            text,
            scale: label_scale.get(),
            among_siblings: siblings.with(|siblings| siblings.contains(&id)),
        });
        Some(routing::forward_fanned(
            a, b, NODE_SIZE, label, &others, fan,
        ))
    })
}

/// The edges that share both ends as drawn (`drawn_at`: a node's own, or
/// its collapsed group's) with another, each with its place among them
/// (in the document's order) and how many there are. An edge within one
/// collapsed group is not drawn, and shares with none. Edges that meet at
/// a collapsed group's card carrying no route nor condition are drawn as
/// one line (three nodes inside that each lead to `end` are one way out
/// of the card), not fanned as a router's routes are.
fn fans<'a>(
    edges: &'a [heddle_engine::format::EdgeSpec],
    drawn_at: impl Fn(&'a NodeId) -> &'a NodeId,
) -> HashMap<EdgeId, (usize, usize)> {
    let mut by_ends: HashMap<(&NodeId, &NodeId), Vec<&EdgeId>> = HashMap::new();
    for edge in edges {
        let ends = (drawn_at(&edge.from), drawn_at(&edge.to));
        if ends.0 == ends.1 {
            continue;
        }
        let at_a_card = ends.0 != &edge.from || ends.1 != &edge.to;
        if at_a_card && edge.route.is_none() && edge.condition.is_none() {
            continue;
        }
        by_ends.entry(ends).or_default().push(&edge.id);
    }
    by_ends
        .into_values()
        .filter(|ids| ids.len() > 1)
        .flat_map(|ids| {
            let n = ids.len();
            ids.into_iter()
                .enumerate()
                .map(move |(k, id)| (id.clone(), (k, n)))
        })
        .collect()
}

/// The labelled edges (a route or a condition) whose source, as drawn,
/// has labelled edges to more than one node as drawn.
fn labelled_siblings<'a>(
    edges: &'a [heddle_engine::format::EdgeSpec],
    drawn_at: impl Fn(&'a NodeId) -> &'a NodeId,
) -> HashSet<EdgeId> {
    let mut by_source: HashMap<&NodeId, (Vec<&EdgeId>, HashSet<&NodeId>)> = HashMap::new();
    for edge in edges {
        if edge.route.is_none() && edge.condition.is_none() {
            continue;
        }
        let (from, to) = (drawn_at(&edge.from), drawn_at(&edge.to));
        if from == to {
            continue;
        }
        let (ids, targets) = by_source.entry(from).or_default();
        ids.push(&edge.id);
        targets.insert(to);
    }
    by_source
        .into_values()
        .filter(|(_, targets)| targets.len() > 1)
        .flat_map(|(ids, _)| ids.into_iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use heddle_engine::format::EdgeSpec;

    fn edge(id: &str, from: &str, to: &str) -> EdgeSpec {
        EdgeSpec {
            id: EdgeId::from(id),
            from: NodeId::from(from),
            to: NodeId::from(to),
            condition: None,
            route: Some(id.into()),
        }
    }

    #[test]
    fn edges_into_one_collapsed_group_fan_out_as_edges_between_two_nodes_do() {
        let edges = [
            edge("billing", "router", "a"),
            edge("refunds", "router", "b"),
            edge("tech", "router", "c"),
            edge("inside", "a", "b"),
        ];
        // Nothing folded: each edge has ends of its own.
        assert!(fans(&edges, |id| id).is_empty());
        // a, b and c collapsed into a group drawn at a.
        let group = NodeId::from("a");
        let folded = |id: &NodeId| -> bool { ["a", "b", "c"].contains(&id.as_str()) };
        let fanned = fans(&edges, |id| if folded(id) { &group } else { id });
        let mut places: Vec<(&str, (usize, usize))> = fanned
            .iter()
            .map(|(id, place)| (id.as_str(), *place))
            .collect();
        places.sort();
        assert_eq!(
            places,
            [("billing", (0, 3)), ("refunds", (1, 3)), ("tech", (2, 3))]
        );
        // Out of the card to `end`, with no route: one line, not a fan.
        let plain = |id: &str, from: &str| EdgeSpec {
            route: None,
            ..edge(id, from, "end")
        };
        let out = [plain("x", "a"), plain("y", "b"), plain("z", "c")];
        assert!(fans(&out, |id| if folded(id) { &group } else { id }).is_empty());
        // Between two nodes of their own, edges still fan.
        let own = [plain("p", "a"), plain("q", "a")];
        assert_eq!(fans(&own, |id| id).len(), 2);
    }

    #[test]
    fn a_routers_labelled_edges_to_several_nodes_are_siblings() {
        let edges = [
            edge("billing", "router", "a"),
            edge("tech", "router", "b"),
            edge("alone", "check", "c"),
            EdgeSpec {
                route: None,
                ..edge("plain", "router", "c")
            },
        ];
        let mut siblings: Vec<String> = labelled_siblings(&edges, |id| id)
            .iter()
            .map(ToString::to_string)
            .collect();
        siblings.sort();
        assert_eq!(siblings, ["billing", "tech"]);
        // Both targets folded into one card: one target, no siblings.
        let group = NodeId::from("a");
        let folded = labelled_siblings(&edges, |id| {
            if ["a", "b"].contains(&id.as_str()) {
                &group
            } else {
                id
            }
        });
        assert!(folded.is_empty(), "{folded:?}");
    }
}
