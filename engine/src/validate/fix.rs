//! One-click fixes: for some problems validation knows the edit that
//! removes them (a missing channel, a graph with no start, a node with no
//! way to an end, a route no edge carries while an edge carries none). The fix is data on the [`Problem`](super::Problem), and
//! applying it is a pure function over the document, so the editor (in
//! wasm) and any other client make exactly the same edit.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::format::{
    Channel, ChannelScope, ChannelType, EdgeSpec, GraphDocument, NodeSpec, Position, Reducer,
};
use crate::ids::{EdgeId, NodeId};
use crate::kinds::BuiltinKind;

/// How far apart the fix places a new node from the one it joins.
const STEP_X: f64 = 240.0;

/// An edit that removes a problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Fix {
    /// Add the channel, with the type the node needs. A `messages` channel
    /// is a conversation: reducer `add_messages`, kept on the thread, and
    /// the start node asks for it (unless it asks for a conversation
    /// already), so Run opens the chat.
    AddChannel { channel: String, ty: ChannelType },
    /// Give an edge that carries no route (it is always taken), or a
    /// route its source no longer has, the route no edge carries: a
    /// router's routes typed after its edges were drawn, or renamed after.
    RouteEdge {
        edge: EdgeId,
        route: String,
        /// The edge's target as a person reads it (its label, else id).
        to: String,
        /// The route the edge carries now, which its source does not
        /// have (none: the edge carries none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        was: Option<String>,
    },
    /// Make one of a node's routes the one taken when it chooses none
    /// (its config's `otherwise`).
    SetFallback { node: NodeId, route: String },
    /// Add a `start` node (which becomes the entry), wired to `before`.
    AddStart { before: Option<NodeId> },
    /// Add an `end` node after `after`.
    AddEnd { after: NodeId },
    /// Make the canvas groups true to the nodes (see
    /// [`GraphDocument::mend_groups`]).
    MendGroups,
}

impl Fix {
    /// What the fix does, as a button says it.
    pub fn label(&self) -> String {
        match self {
            Fix::AddChannel { channel, ty } => {
                format!("Create channel `{channel}` ({})", type_name(*ty))
            }
            Fix::AddStart { .. } => "Add a start node".to_string(),
            Fix::AddEnd { after } => format!("Add an end node after `{after}`"),
            Fix::MendGroups => "Tidy the groups".to_string(),
            Fix::RouteEdge {
                route,
                to,
                was: None,
                ..
            } => format!("Send `{route}` to {to}"),
            Fix::RouteEdge {
                route,
                to,
                was: Some(was),
                ..
            } => format!("Send `{route}` to {to}, not `{was}`"),
            Fix::SetFallback { route, .. } => format!("Take `{route}` when no route fits"),
        }
    }

    /// Makes the edit. A fix that no longer applies (the channel exists by
    /// now, the node is gone) changes nothing.
    pub fn apply(&self, document: &mut GraphDocument) {
        match self {
            Fix::MendGroups => document.mend_groups(),
            Fix::AddChannel { channel, ty } => {
                if channel.is_empty() || document.state.channels.contains_key(channel) {
                    return;
                }
                document
                    .state
                    .channels
                    .insert(channel.clone(), new_channel(*ty));
                if *ty == ChannelType::Messages {
                    ask_at_the_start(document, channel);
                }
            }
            Fix::RouteEdge {
                edge, route, was, ..
            } => {
                if let Some(edge) = document.edges.iter_mut().find(|e| &e.id == edge)
                    && edge.route == *was
                    && edge.condition.is_none()
                {
                    edge.route = Some(route.clone());
                }
            }
            Fix::SetFallback { node, route } => {
                let Some(node) = document.nodes.iter_mut().find(|n| &n.id == node) else {
                    return;
                };
                if let Some(config) = node.config.as_object_mut()
                    && config
                        .get("otherwise")
                        .is_none_or(serde_json::Value::is_null)
                {
                    config.insert("otherwise".to_string(), json!(route));
                }
            }
            Fix::AddStart { before } => {
                if document
                    .nodes
                    .iter()
                    .any(|node| node.kind == BuiltinKind::Start.name())
                {
                    return;
                }
                let target = before
                    .as_ref()
                    .and_then(|id| document.nodes.iter().find(|node| &node.id == id));
                let at = target.and_then(|node| node.position).map_or(
                    Position { x: 0.0, y: 0.0 },
                    |p| Position {
                        x: p.x - STEP_X,
                        y: p.y,
                    },
                );
                let target = target.map(|node| node.id.clone());
                // A conversation's graph asks for its messages at the start.
                let inputs: Vec<&str> = document
                    .state
                    .channels
                    .iter()
                    .filter(|(_, channel)| channel.ty == ChannelType::Messages)
                    .map(|(name, _)| name.as_str())
                    .collect();
                let id = document.fresh_node_id(BuiltinKind::Start.name());
                document.nodes.insert(
                    0,
                    node(
                        id.clone(),
                        BuiltinKind::Start,
                        json!({ "inputs": inputs }),
                        at,
                    ),
                );
                if document.entry.is_some() {
                    document.entry = Some(id.clone());
                }
                if let Some(target) = target {
                    connect(document, id, target);
                }
            }
            Fix::AddEnd { after } => {
                let Some(from) = document.nodes.iter().find(|node| &node.id == after) else {
                    return;
                };
                let at = from
                    .position
                    .map_or(Position { x: 0.0, y: 0.0 }, |p| Position {
                        x: p.x + STEP_X,
                        y: p.y,
                    });
                let id = document.fresh_node_id(BuiltinKind::End.name());
                document
                    .nodes
                    .push(node(id.clone(), BuiltinKind::End, json!({}), at));
                connect(document, after.clone(), id);
            }
        }
    }
}

/// Makes each start node that asks for no conversation ask for `channel`
/// (a conversation's graph takes its next message at the start).
fn ask_at_the_start(document: &mut GraphDocument, channel: &str) {
    let conversations: Vec<String> = document
        .state
        .channels
        .iter()
        .filter(|(_, c)| c.ty == ChannelType::Messages)
        .map(|(name, _)| name.clone())
        .collect();
    for node in &mut document.nodes {
        if node.kind != BuiltinKind::Start.name() {
            continue;
        }
        if node.config.is_null() {
            node.config = json!({});
        }
        let Some(config) = node.config.as_object_mut() else {
            continue;
        };
        let inputs = config.entry("inputs").or_insert_with(|| json!([]));
        let Some(inputs) = inputs.as_array_mut() else {
            continue;
        };
        let asks_for_one = inputs
            .iter()
            .filter_map(|input| input.as_str())
            .any(|input| conversations.iter().any(|c| c == input));
        if !asks_for_one {
            inputs.push(json!(channel));
        }
    }
}

/// Names a route that reads as a catch-all.
const CATCH_ALL: &[&str] = &[
    "other",
    "otherwise",
    "general",
    "default",
    "fallback",
    "else",
    "misc",
    "unknown",
    "human",
];

/// The route a node with none to fall back on had best take when its
/// model names none: one named as a catch-all ("other", "general"), else
/// its last (lists of routes tend to end with the catch-all).
pub(crate) fn fallback_route(routes: &[String]) -> Option<&str> {
    routes
        .iter()
        .find(|route| {
            let route = route.to_lowercase();
            CATCH_ALL.iter().any(|word| route.contains(word))
        })
        .or(routes.last())
        .map(String::as_str)
}

/// How many route-and-edge pairs are compared by name at most: past it
/// (a hostile graph's thousands of routes and edges), pairing goes by
/// order alone, so validation stays linear.
const NAMED_PAIRS: usize = 1 << 16;

/// Pairs a node's routes that no edge carries with its edges that carry no
/// route (nor a condition): an edge to a node named like the route first
/// (route `billing`, a node labelled "Billing"), then the rest in order.
/// An edge to a node named like another of the node's routes (`others`:
/// the routes edges carry already) is never given a route by order: the
/// edge to "Billing agent" is not offered route `technical` because it is
/// the one left. Each edge gets one route at most; routes left over get
/// none. The editor pairs a route typed after its edges were drawn the
/// same way.
pub fn pair_routes<'a>(
    routes: &[&'a str],
    others: &[&str],
    edges: &[&str],
) -> Vec<(&'a str, usize)> {
    let mut taken = vec![false; edges.len()];
    let mut pairs: Vec<(&'a str, Option<usize>)> = routes.iter().map(|r| (*r, None)).collect();
    let named = (routes.len() + others.len()).saturating_mul(edges.len()) <= NAMED_PAIRS;
    if named {
        let targets: Vec<String> = edges.iter().map(|to| to.to_lowercase()).collect();
        let named_like = |i: usize, route: &str| {
            let route = route.to_lowercase();
            !route.is_empty() && targets[i].contains(&route)
        };
        for pair in &mut pairs {
            if let Some(i) = (0..edges.len()).find(|&i| !taken[i] && named_like(i, pair.0)) {
                taken[i] = true;
                pair.1 = Some(i);
            }
        }
        // Edges named like a route (one that went elsewhere, or one an
        // edge carries already) are not anyone's by order.
        for (i, taken) in taken.iter_mut().enumerate() {
            if routes
                .iter()
                .chain(others)
                .any(|route| named_like(i, route))
            {
                *taken = true;
            }
        }
    }
    let mut free = (0..edges.len()).filter(|&i| !taken[i]);
    for pair in &mut pairs {
        if pair.1.is_none() {
            pair.1 = free.next();
        }
    }
    pairs
        .into_iter()
        .filter_map(|(route, edge)| Some((route, edge?)))
        .collect()
}

/// A new channel of type `ty`, with the reducer and scope it usually has.
pub fn new_channel(ty: ChannelType) -> Channel {
    let conversation = ty == ChannelType::Messages;
    Channel {
        ty,
        reducer: if conversation {
            Reducer::AddMessages
        } else {
            Reducer::Replace
        },
        default: None,
        description: String::new(),
        scope: if conversation {
            ChannelScope::Thread
        } else {
            ChannelScope::Run
        },
        schema: None,
    }
}

/// A type's name as the document writes it.
pub fn type_name(ty: ChannelType) -> &'static str {
    match ty {
        ChannelType::Any => "any",
        ChannelType::String => "string",
        ChannelType::Number => "number",
        ChannelType::Integer => "integer",
        ChannelType::Boolean => "boolean",
        ChannelType::List => "list",
        ChannelType::Object => "object",
        ChannelType::Messages => "messages",
    }
}

fn node(id: NodeId, kind: BuiltinKind, config: serde_json::Value, at: Position) -> NodeSpec {
    NodeSpec {
        id,
        kind: kind.name().to_string(),
        version: kind.version(),
        label: String::new(),
        config,
        position: Some(at),
        size: None,
        retry: None,
        timeout_ms: None,
        interrupt_before: false,
        interrupt_after: false,
    }
}

fn connect(document: &mut GraphDocument, from: NodeId, to: NodeId) {
    let id = document.fresh_edge_id();
    document.edges.push(EdgeSpec {
        id,
        from,
        to,
        condition: None,
        route: None,
    });
}

#[cfg(test)]
mod tests {
    use super::{NAMED_PAIRS, fallback_route, pair_routes};

    #[test]
    fn routes_go_to_edges_named_after_them_first_then_in_order() {
        let pairs = pair_routes(
            &["billing", "technical", "legal", "other"],
            &[],
            &["Technical support", "General", "Billing"],
        );
        assert_eq!(pairs, [("billing", 2), ("technical", 0), ("legal", 1)]);
    }

    #[test]
    fn an_edge_named_like_another_route_is_not_given_one_by_order() {
        // `billing` is carried by the edge to the technical answerer (a
        // slip): the edge left, to "Billing agent", is not `technical`'s.
        let pairs = pair_routes(&["technical"], &["billing"], &["Billing agent"]);
        assert_eq!(pairs, []);
        // Two edges named like one route: the second is no one's either.
        let pairs = pair_routes(
            &["billing", "other"],
            &[],
            &["Billing agent", "Billing (old)", "Answerer"],
        );
        assert_eq!(pairs, [("billing", 0), ("other", 2)]);
    }

    #[test]
    fn thousands_of_routes_and_edges_pair_by_order_alone() {
        let routes: Vec<String> = (0..3000).map(|i| format!("route{i}")).collect();
        let routes: Vec<&str> = routes.iter().map(String::as_str).collect();
        let names: Vec<String> = (0..3000).map(|i| format!("route{}", 2999 - i)).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert!(routes.len() * names.len() > NAMED_PAIRS);
        let pairs = pair_routes(&routes, &[], &names);
        assert_eq!(pairs.len(), 3000);
        assert!(pairs.iter().enumerate().all(|(i, (_, edge))| *edge == i));
    }

    #[test]
    fn the_fallback_is_the_catch_all_route_else_the_last() {
        let routes = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            fallback_route(&routes(&["billing", "Other questions", "technical"])),
            Some("Other questions")
        );
        assert_eq!(
            fallback_route(&routes(&["billing", "technical"])),
            Some("technical")
        );
        assert_eq!(fallback_route(&[]), None);
    }
}
