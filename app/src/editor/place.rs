//! Adding a node: the kinds a search matches (the palette's filter and
//! double-click's quick add share it) and placing one on the canvas.

use std::collections::BTreeSet;

use heddle_engine::format::{ChannelType, EdgeSpec, Position};
use heddle_engine::kinds::{BuiltinKind, KindGroup};
use heddle_engine::validate::Fix;
use heddle_engine::{EdgeId, GraphDocument, NodeId, Registry};
use leptos::prelude::*;

use super::state::Editor;
use super::{model, splice};

/// Where a node added without the mouse goes: right of `beside` (the
/// selected node) or with its middle at `center`, moved down past every
/// node it would cover, so nodes added one after another never stack.
pub fn free_spot(taken: &[Position], beside: Option<Position>, center: Position) -> Position {
    use super::model::{NODE_HEIGHT, NODE_WIDTH};
    let mut spot = match beside {
        Some(node) => Position {
            x: node.x + NODE_WIDTH + 60.0,
            y: node.y,
        },
        None => Position {
            x: (center.x - NODE_WIDTH / 2.0).round(),
            y: (center.y - NODE_HEIGHT / 2.0).round(),
        },
    };
    let covers = |spot: &Position| {
        taken.iter().any(|node| {
            (node.x - spot.x).abs() < NODE_WIDTH + 20.0
                && (node.y - spot.y).abs() < NODE_HEIGHT + 20.0
        })
    };
    for _ in 0..500 {
        if !covers(&spot) {
            break;
        }
        spot.y += NODE_HEIGHT + 24.0;
    }
    spot
}

/// Adds a node of `kind` where [`free_spot`] says and selects it: after
/// the selected node (beside it and joined to it, see [`join_after`]),
/// else in the middle of the view `center`.
pub fn place_free(editor: Editor, kind: &str, center: Position) {
    let selected = editor.selected.get_untracked();
    let positions = editor.positions().get_untracked();
    let after = match selected.iter().next() {
        Some(id) if selected.len() == 1 => {
            positions.get(id).map(|at| (id.clone(), at.get_untracked()))
        }
        _ => None,
    };
    let taken: Vec<Position> = positions.values().map(|at| at.get_untracked()).collect();
    let spot = free_spot(&taken, after.as_ref().map(|(_, at)| *at), center);
    let join = after.map_or(Join::None, |(id, _)| Join::After(id));
    add(editor, kind, spot, join);
}

/// Adds a node of `kind` at `at` and selects it.
pub fn place(editor: Editor, kind: &str, at: Position) {
    place_into(editor, kind, at, None);
}

/// Adds a node of `kind` at `at`, put into edge `into` when one is given
/// (see [`splice`]), in one undo step, and selects it. Dropped on other
/// nodes, it goes to the nearest place beside them (see [`nudge`]).
pub fn place_into(editor: Editor, kind: &str, at: Position, into: Option<EdgeId>) {
    let at = match into {
        Some(_) => at,
        None => {
            let taken: Vec<Position> = editor.positions().with_untracked(|positions| {
                positions.values().map(|at| at.get_untracked()).collect()
            });
            nudge(&taken, at)
        }
    };
    add(editor, kind, at, into.map_or(Join::None, Join::Into));
}

/// Adds a node of `kind` at `at` (moved off other nodes, see [`nudge`]),
/// led to from `from` (a wire dropped on the empty canvas), in one undo
/// step, and selects it.
pub fn place_after(editor: Editor, kind: &str, at: Position, from: NodeId) {
    let taken: Vec<Position> = editor
        .positions()
        .with_untracked(|positions| positions.values().map(|at| at.get_untracked()).collect());
    add(editor, kind, nudge(&taken, at), Join::From(from));
}

/// `at`, or when a node put there would cover one of `taken`, the nearest
/// place where it covers none: a drop lands where it was aimed, never on
/// top of a node (the one under would be hidden).
pub fn nudge(taken: &[Position], at: Position) -> Position {
    use super::model::{NODE_HEIGHT, NODE_WIDTH};
    clear_of(taken, at, (NODE_WIDTH, NODE_HEIGHT))
}

/// A box on the canvas, in world units: its top-left corner and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Area {
    /// The box of a node whose top-left corner is `at`.
    pub fn node(at: Position) -> Area {
        use super::model::{NODE_HEIGHT, NODE_WIDTH};
        Area {
            x: at.x,
            y: at.y,
            width: NODE_WIDTH,
            height: NODE_HEIGHT,
        }
    }
}

/// `at`, or the nearest place to it where a box of `size` (its top-left
/// corner there) covers none of the nodes at `taken`.
pub fn clear_of(taken: &[Position], at: Position, size: (f64, f64)) -> Position {
    let areas: Vec<Area> = taken.iter().map(|node| Area::node(*node)).collect();
    clear_of_areas(&areas, at, size)
}

/// `at`, or the nearest place to it where a box of `size` (its top-left
/// corner there) covers none of the `taken` areas (nodes, an edge's label).
pub fn clear_of_areas(taken: &[Area], at: Position, (width, height): (f64, f64)) -> Position {
    const MARGIN: f64 = 12.0;
    const STEP: f64 = 16.0;
    const REACH: i32 = 30;
    let reach = STEP * f64::from(REACH) + MARGIN;
    // Only the areas a place within reach could cover: a big graph's far
    // nodes are not checked for every place tried.
    let near: Vec<&Area> = taken
        .iter()
        .filter(|area| {
            area.x < at.x + width + reach
                && at.x < area.x + area.width + reach
                && area.y < at.y + height + reach
                && at.y < area.y + area.height + reach
        })
        .collect();
    let covers = |spot: &Position| {
        near.iter().any(|area| {
            spot.x < area.x + area.width + MARGIN
                && area.x < spot.x + width + MARGIN
                && spot.y < area.y + area.height + MARGIN
                && area.y < spot.y + height + MARGIN
        })
    };
    if !covers(&at) {
        return at;
    }
    let mut tries: Vec<(i32, i32)> = (-REACH..=REACH)
        .flat_map(|dx| (-REACH..=REACH).map(move |dy| (dx, dy)))
        .collect();
    tries.sort_by_key(|(dx, dy)| dx * dx + dy * dy);
    tries
        .into_iter()
        .map(|(dx, dy)| Position {
            x: at.x + f64::from(dx) * STEP,
            y: at.y + f64::from(dy) * STEP,
        })
        .find(|spot| !covers(spot))
        .unwrap_or(at)
}

/// How a node being added joins the graph.
enum Join {
    /// Not at all: where it was put is all it was told.
    None,
    /// Put into this edge (it was dropped on it).
    Into(EdgeId),
    /// After this node (it was selected when the node was added).
    After(NodeId),
    /// Led to from this node (a wire from it was dropped where the node
    /// goes), on its next free route when it chooses one.
    From(NodeId),
}

/// Adds a node of `kind` at `at`, joined as `join` says, in one undo step,
/// and selects it.
fn add(editor: Editor, kind: &str, at: Position, join: Join) {
    let mut placed = None;
    let mut left_alone = None;
    let mut refused = None;
    editor.change(|document| {
        let node = model::new_node(document, kind, at);
        let id = node.id.clone();
        document.nodes.push(node);
        match &join {
            Join::None => {}
            Join::Into(edge) => {
                splice::splice(document, edge, &id);
            }
            Join::After(from) => {
                // An end or a fan-out leads on to nothing (a fan-out sends):
                // nothing to say when the node is not joined after one.
                let leads_on = document.nodes.iter().any(|spec| {
                    &spec.id == from
                        && spec.kind != BuiltinKind::End.name()
                        && spec.kind != BuiltinKind::FanOut.name()
                }) && kind != BuiltinKind::Start.name();
                if !join_after(document, from, &id) && leads_on {
                    left_alone = Some(from.clone());
                }
            }
            Join::From(from) => {
                if let Err(why) = model::connect(document, from, &id) {
                    refused = Some(why);
                }
            }
        }
        model::name_after_its_route(document, &id);
        bring_its_conversation(document, &id);
        placed = Some(id);
    });
    // Not joined where a person might expect it (every way on from the
    // selected node taken): said, so nobody looks for an edge that is not
    // there.
    if let Some(from) = left_alone {
        editor.say_more(format!(
            "not joined: which way “{}” leads to it is yours to choose (C connects)",
            editor.name_of(from.as_str())
        ));
    }
    if let Some(why) = refused {
        editor.say_more(format!("not joined: {why}"));
    }
    if let Some(id) = placed {
        editor.selected.set(BTreeSet::from([id]));
        editor.selected_edge.set(None);
    }
}

/// Joins `node` (just added beside `from`) after `from`, as "add after"
/// goes in n8n or Rivet: put into `from`'s one edge forward (`from → node
/// → what came next`), or led to from `from` when `from` leads nowhere
/// yet. Where `from` branches (several edges), sends each item on (a
/// fan-out), ends, or loops back, which way the node joins is the
/// person's choice: it is left alone. Returns whether it joined.
fn join_after(document: &mut GraphDocument, from: &NodeId, node: &NodeId) -> bool {
    let kind_of = |id: &NodeId| {
        document
            .nodes
            .iter()
            .find(|spec| &spec.id == id)
            .map(|spec| (spec.kind.clone(), spec.position))
    };
    let (Some((from_kind, from_at)), Some((kind, _))) = (kind_of(from), kind_of(node)) else {
        return false;
    };
    let leads_on = from_kind != BuiltinKind::End.name() && from_kind != BuiltinKind::FanOut.name();
    if from == node || !leads_on || kind == BuiltinKind::Start.name() {
        return false;
    }
    let outgoing: Vec<&EdgeSpec> = document.edges.iter().filter(|e| &e.from == from).collect();
    // A node that chooses its way on (a router, a condition, an agent with
    // handoffs): the node added after it is a new branch, on its first
    // route no edge takes yet (none left: the person's choice), never put
    // into a branch it already has.
    match model::branch(document, from, node) {
        model::Branch::Route(route) => {
            lead(document, from, node, Some(route));
            return true;
        }
        model::Branch::Full => return false,
        model::Branch::None => {}
    }
    match outgoing.as_slice() {
        [] => {
            lead(document, from, node, None);
            true
        }
        [edge] => {
            let forward = match (from_at, kind_of(&edge.to).and_then(|(_, at)| at)) {
                (Some(a), Some(b)) => b.x > a.x + model::NODE_WIDTH,
                _ => false,
            };
            let edge = edge.id.clone();
            forward && splice::splice(document, &edge, node)
        }
        _ => false,
    }
}

/// A new edge from `from` to `to`, on `route` when one is given.
fn lead(document: &mut GraphDocument, from: &NodeId, to: &NodeId, route: Option<String>) {
    let id = model::new_edge_id(document);
    document.edges.push(EdgeSpec {
        id,
        from: from.clone(),
        to: to.clone(),
        condition: None,
        route,
    });
}

/// A node that reads the conversation (an `llm`, an agent, a router…)
/// placed in a graph with none (a new empty graph): the conversation's
/// channel comes with it in the same step, as its problem's fix would
/// make it, and the start then asks for it. A graph that has a
/// conversation under another name is left alone: which one the node
/// reads is the person's choice.
fn bring_its_conversation(document: &mut GraphDocument, id: &NodeId) {
    let has_one = document
        .state
        .channels
        .values()
        .any(|channel| channel.ty == ChannelType::Messages);
    if has_one {
        return;
    }
    // The node checked on its own against the graph's state: what it
    // reads does not depend on the rest, however big the graph.
    let Some(node) = document.nodes.iter().find(|node| &node.id == id) else {
        return;
    };
    let mut alone = GraphDocument::new("");
    alone.state = document.state.clone();
    alone.nodes.push(node.clone());
    let mut fixes: Vec<Fix> = heddle_engine::validate(&alone, &Registry::default())
        .problems
        .into_iter()
        .filter(|problem| problem.node.as_ref() == Some(id))
        .filter_map(|problem| problem.fix)
        .filter(|fix| {
            matches!(
                fix,
                Fix::AddChannel {
                    ty: ChannelType::Messages,
                    ..
                }
            )
        })
        .collect();
    // A model's kind reads the conversation even when its config's other
    // problems come first (a router with no routes yet is checked no
    // further): it is brought under the name the kinds read by default.
    let reads_it =
        BuiltinKind::from_name(&node.kind).is_some_and(|kind| kind.group() == KindGroup::Models);
    if fixes.is_empty() && reads_it {
        fixes.push(Fix::AddChannel {
            channel: DEFAULT_CONVERSATION.to_string(),
            ty: ChannelType::Messages,
        });
    }
    for fix in fixes {
        fix.apply(document);
    }
}

/// The conversation's channel as the kinds that read one name it unless
/// told otherwise.
const DEFAULT_CONVERSATION: &str = "messages";

/// The kinds matching `query`: names that are the query first, then names
/// that start with it, then names that contain it, then kinds whose
/// summary mentions it; palette order within each.
pub fn matching(query: &str) -> Vec<BuiltinKind> {
    let query = query.trim().to_lowercase();
    let rank = |kind: &BuiltinKind| {
        let name = kind.name();
        if query.is_empty() || name == query {
            Some(0)
        } else if name.starts_with(&query) {
            Some(1)
        } else if name.contains(&query) {
            Some(2)
        } else if kind.summary().to_lowercase().contains(&query) {
            Some(3)
        } else {
            None
        }
    };
    let mut kinds: Vec<(u8, BuiltinKind)> = BuiltinKind::ALL
        .into_iter()
        .filter_map(|kind| rank(&kind).map(|rank| (rank, kind)))
        .collect();
    // The palette's order: by group (models first), then as listed.
    let group = |kind: &BuiltinKind| {
        KindGroup::ALL
            .iter()
            .position(|group| *group == kind.group())
    };
    kinds.sort_by_key(|(rank, kind)| (*rank, group(kind)));
    kinds.into_iter().map(|(_, kind)| kind).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::model::{NODE_HEIGHT, NODE_WIDTH};

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    #[test]
    fn a_node_reading_the_conversation_brings_it_to_a_graph_without_one() {
        let place = |document: &mut GraphDocument, kind: &str| {
            let node = model::new_node(document, kind, at(0.0, 0.0));
            let id = node.id.clone();
            document.nodes.push(node);
            bring_its_conversation(document, &id);
        };
        // An empty graph: a `set` brings nothing, an `llm` the conversation.
        let mut document = GraphDocument::new("g");
        place(&mut document, "set");
        assert!(document.state.channels.is_empty());
        place(&mut document, "llm");
        let channel = document.state.channels.get("messages").expect("brought");
        assert_eq!(channel.ty, ChannelType::Messages);
        // A router with no routes yet (its config checked no further)
        // brings it too.
        let mut routed = GraphDocument::new("g");
        place(&mut routed, "router");
        let channel = routed.state.channels.get("messages").expect("brought");
        assert_eq!(channel.ty, ChannelType::Messages);
        assert!(
            heddle_engine::validate(&document, &Registry::default())
                .problems
                .iter()
                .all(|problem| problem.node.is_none() || !problem.message.contains("messages"))
        );
        // A graph with a conversation under another name keeps it alone.
        let mut document = GraphDocument::new("g");
        document.state.channels.insert(
            "conversation".into(),
            serde_json::from_value(
                serde_json::json!({"type": "messages", "reducer": "add_messages"}),
            )
            .expect("channel"),
        );
        place(&mut document, "agent");
        assert_eq!(document.state.channels.len(), 1);
    }

    #[test]
    fn a_node_added_after_the_selected_one_joins_it() {
        let graph = |json: serde_json::Value| -> GraphDocument {
            serde_json::from_value(json).expect("graph")
        };
        let node = |id: &str, kind: &str, x: f64| serde_json::json!({"id": id, "kind": kind, "position": {"x": x, "y": 0.0}});
        let edge =
            |id: &str, from: &str, to: &str| serde_json::json!({"id": id, "from": from, "to": to});
        let add = |document: &mut GraphDocument, kind: &str, after: &str| {
            let new = model::new_node(document, kind, at(10_000.0, 0.0));
            let id = new.id.clone();
            document.nodes.push(new);
            let joined = join_after(document, &NodeId::from(after), &id);
            (id, joined)
        };
        let pairs = |document: &GraphDocument| -> Vec<(String, String)> {
            let mut pairs: Vec<_> = document
                .edges
                .iter()
                .map(|e| (e.from.to_string(), e.to.to_string()))
                .collect();
            pairs.sort();
            pairs
        };
        let p = |a: &str, b: &str| (a.to_string(), b.to_string());
        // start → end: an llm after the start goes between them.
        let mut document = graph(serde_json::json!({
            "format_version": 3, "name": "g", "entry": "start",
            "nodes": [node("start", "start", 0.0), node("end", "end", 400.0)],
            "edges": [edge("e1", "start", "end")],
        }));
        let (llm, joined) = add(&mut document, "llm", "start");
        assert!(joined);
        assert_eq!(
            pairs(&document),
            vec![p(llm.as_str(), "end"), p("start", llm.as_str())]
        );
        let (_, joined) = add(&mut document, "tools", "end");
        assert!(!joined, "nothing comes after an end");
        // After a node that leads nowhere yet: led to from it.
        let mut document = graph(serde_json::json!({
            "format_version": 3, "name": "g", "entry": "start",
            "nodes": [node("start", "start", 0.0), node("a", "set", 200.0), node("b", "set", 400.0), node("c", "set", 400.0)],
            "edges": [edge("e1", "start", "a"), edge("e2", "a", "b"), edge("e3", "a", "c"), edge("e4", "b", "start")],
        }));
        let before = pairs(&document);
        let (_, joined) = add(&mut document, "set", "c");
        assert!(joined, "c leads nowhere: the new node follows it");
        assert_eq!(pairs(&document).len(), before.len() + 1);
        // A branch, a loop back, a new start: left alone.
        for (after, kind) in [("a", "set"), ("b", "set"), ("start", "start")] {
            let edges = document.edges.len();
            let (_, joined) = add(&mut document, kind, after);
            assert!(!joined, "{kind} after {after}");
            assert_eq!(document.edges.len(), edges);
        }
        // After a router: a new branch on its next free route, never put
        // into the branch it has; none free, left alone.
        let mut document = graph(serde_json::json!({
            "format_version": 3, "name": "g", "entry": "start",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [node("start", "start", 0.0),
                {"id": "triage", "kind": "router", "position": {"x": 200.0, "y": 0.0},
                 "config": {"routes": [{"route": "billing"}, {"route": "technical"}], "otherwise": "technical"}},
                node("bill", "llm", 400.0)],
            "edges": [edge("e1", "start", "triage"),
                {"id": "e2", "from": "triage", "to": "bill", "route": "billing"}],
        }));
        let (tech, joined) = add(&mut document, "llm", "triage");
        assert!(joined);
        let branch = document
            .edges
            .iter()
            .find(|e| e.to == tech)
            .expect("a branch");
        assert_eq!(branch.from.as_str(), "triage");
        assert_eq!(branch.route.as_deref(), Some("technical"));
        assert!(
            document
                .edges
                .iter()
                .any(|e| e.from.as_str() == "triage" && e.to.as_str() == "bill")
        );
        let (_, joined) = add(&mut document, "llm", "triage");
        assert!(!joined, "every route has its branch");
    }

    #[test]
    fn a_node_added_from_the_keyboard_goes_beside_the_selection_or_mid_view() {
        let node = at(100.0, 100.0);
        assert_eq!(
            free_spot(&[node], Some(node), at(0.0, 0.0)),
            at(100.0 + NODE_WIDTH + 60.0, 100.0)
        );
        assert_eq!(
            free_spot(&[], None, at(500.0, 300.0)),
            at(500.0 - NODE_WIDTH / 2.0, 300.0 - NODE_HEIGHT / 2.0)
        );
    }

    #[test]
    fn a_node_dropped_on_another_goes_beside_it_not_over_it() {
        use super::super::model::{NODE_HEIGHT, NODE_WIDTH};
        use super::nudge;
        let taken = [at(100.0, 100.0), at(400.0, 100.0)];
        // In the open: where it was dropped.
        assert_eq!(nudge(&taken, at(100.0, 300.0)), at(100.0, 300.0));
        // On a node: near it, covering none.
        let spot = nudge(&taken, at(110.0, 110.0));
        for node in &taken {
            assert!(
                (node.x - spot.x).abs() >= NODE_WIDTH || (node.y - spot.y).abs() >= NODE_HEIGHT,
                "{spot:?} covers {node:?}"
            );
        }
        let moved = ((spot.x - 110.0).powi(2) + (spot.y - 110.0).powi(2)).sqrt();
        assert!(moved < NODE_WIDTH + 40.0, "moved {moved}");
    }

    #[test]
    fn nodes_added_one_after_another_never_stack() {
        let mut taken = Vec::new();
        for _ in 0..5 {
            let spot = free_spot(&taken, None, at(400.0, 300.0));
            assert!(!taken.contains(&spot), "{spot:?} in {taken:?}");
            taken.push(spot);
        }
        let ys: Vec<f64> = taken.iter().map(|p| p.y).collect();
        assert!(ys.windows(2).all(|w| w[1] >= w[0] + NODE_HEIGHT), "{ys:?}");
    }
}
