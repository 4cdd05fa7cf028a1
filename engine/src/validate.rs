//! What can be wrong with a graph, located: every [`Problem`] names a JSON
//! path into the document and the node or edge it concerns. Validation
//! reports every problem at once; the checks themselves run in
//! [`crate::compile`], which builds the runnable graph in the same pass.

mod fix;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::format::{ChannelType, Reducer};
use crate::ids::{EdgeId, NodeId};

pub(crate) use fix::fallback_route;
pub use fix::{Fix, new_channel, pair_routes, type_name};

/// How serious a problem is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The graph cannot run until this is fixed.
    Error,
    /// The graph runs, but probably not as meant.
    Warning,
}

/// One thing wrong with a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Problem {
    pub severity: Severity,
    /// Where in the document, e.g. `nodes[2].config.routes[0].when`.
    pub path: String,
    /// The node concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    /// The edge concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edge: Option<EdgeId>,
    /// What is wrong, typed.
    pub kind: ProblemKind,
    /// What is wrong, for people.
    pub message: String,
    /// The edit that removes it, when validation knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{severity} at {}: {}", self.path, self.message)
    }
}

/// The kinds of problem validation finds.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error, schemars::JsonSchema,
)]
#[serde(tag = "code", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// A node's kind is neither built in nor registered.
    #[error("unknown node kind `{kind}`")]
    UnknownKind { kind: String },
    /// A node's config is from a newer version of its kind.
    #[error(
        "kind `{kind}` version {found} is newer than this Heddle understands (up to {supported})"
    )]
    NewerKindVersion {
        kind: String,
        found: u32,
        supported: u32,
    },
    /// A node's config could not be upgraded from an older version.
    #[error("cannot upgrade kind `{kind}` from version {from}: {message}")]
    MigrationFailed {
        kind: String,
        from: u32,
        message: String,
    },
    /// An id is empty.
    #[error("an id cannot be empty")]
    EmptyId,
    /// Two nodes, or two edges, share an id.
    #[error("the id `{id}` is used more than once")]
    DuplicateId { id: String },
    /// An edge names a node that does not exist.
    #[error("edge `{edge}` {end} `{node}`, which is not a node of this graph")]
    MissingNode {
        edge: EdgeId,
        end: EdgeEnd,
        node: NodeId,
    },
    /// The graph has no entry node.
    #[error("the graph has no entry: set `entry`, or add exactly one `start` node")]
    NoEntry,
    /// The entry names a node that does not exist.
    #[error("the entry `{node}` is not a node of this graph")]
    MissingEntry { node: NodeId },
    /// No path leads from the entry to the node.
    #[error("node `{node}` can never run: no path leads to it from the entry")]
    Unreachable { node: NodeId },
    /// No path leads from the node to an end: a run that gets there never
    /// finishes on its own (it stops at the step limit).
    #[error("node `{node}` can never reach an end: every path from it loops")]
    CannotReachEnd { node: NodeId },
    /// A condition does not parse.
    #[error("condition does not parse: {message} (at offset {offset})")]
    BadCondition { message: String, offset: usize },
    /// A condition reads a name that is not a channel.
    #[error("condition reads `{channel}`, which is not a channel (it will be null)")]
    UnknownChannelInCondition { channel: String },
    /// A node's config does not fit its kind.
    #[error("{message}")]
    BadConfig { message: String },
    /// A channel's reducer does not fit its type.
    #[error("reducer `{reducer:?}` does not fit channel `{channel}` of type `{ty:?}`")]
    ReducerMismatch {
        channel: String,
        reducer: Reducer,
        ty: ChannelType,
    },
    /// A channel's default value is not of its type.
    #[error("the default of channel `{channel}` is not of its type `{ty:?}`")]
    BadDefault { channel: String, ty: ChannelType },
    /// A channel's schema is not one of the subset, does not agree with
    /// the channel's type, or refuses the channel's default.
    #[error("the schema of channel `{channel}`: {message}")]
    BadSchema { channel: String, message: String },
    /// A node declares a route that no edge carries.
    #[error("node `{node}` may choose route `{route}`, but no edge takes it")]
    RouteWithoutEdge { node: NodeId, route: String },
    /// An edge carries a route its source node never chooses.
    #[error("node `{node}` has no route `{route}`{}", known_routes(routes))]
    UnknownRoute {
        node: NodeId,
        route: String,
        routes: Vec<String>,
    },
    /// A node may choose none of its routes (a router's model may name
    /// none), and has no `otherwise` to take then: such a run fails there.
    #[error(
        "node `{node}` has no `otherwise`: a reply that names none of its routes fails the run"
    )]
    NoFallback { node: NodeId },
    /// An edge from a node whose routes are its ways on (a router, a
    /// condition) carries no route nor condition: it is taken whatever
    /// the node picks, besides the picked route's edge.
    #[error(
        "the edge from `{node}` to `{to}` carries no route: it is taken whatever `{node}` picks (give it a route, or delete it)"
    )]
    TakenWhateverPicked { node: NodeId, to: NodeId },
    /// Routes of a router have no description: its model chooses by the
    /// routes' names and descriptions alone, and a name says little. One
    /// warning a router, at its first such route's description.
    #[error(
        "`{node}` has routes without a description: its model picks a route by name and description, so say what each is for"
    )]
    RoutesUndescribed { node: NodeId },
    /// A join fed by different routes of one router or condition, which
    /// takes one of them a pass: it would wait for ever.
    #[error(
        "`{join}` waits for the routes {} of `{chooser}`, which takes only one of them: it would wait for ever. Lead them into the next node without a join",
        quoted_list(routes)
    )]
    JoinOfOneRoute {
        join: NodeId,
        chooser: NodeId,
        routes: Vec<String>,
    },
    /// A node setting (retry, timeout) is out of range.
    #[error("{message}")]
    BadSetting { message: String },
    /// A canvas group names a node that does not exist (the editor drops
    /// it; runs ignore groups).
    #[error("group `{group}` frames `{node}`, which is not a node of this graph")]
    MissingGroupMember { group: String, node: NodeId },
    /// A node is framed by two groups; it belongs to the first.
    #[error("node `{node}` is in group `{first}` already")]
    GroupedTwice { node: NodeId, first: String },
}

/// `a` and `b`, or `a`, `b` and `c`, each in backticks.
fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| format!("`{item}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

fn known_routes(routes: &[String]) -> String {
    if routes.is_empty() {
        " (it chooses no routes)".to_string()
    } else {
        format!(" (its routes: {})", routes.join(", "))
    }
}

/// Which end of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EdgeEnd {
    From,
    To,
}

impl fmt::Display for EdgeEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EdgeEnd::From => "starts at",
            EdgeEnd::To => "goes to",
        })
    }
}

/// Every problem found in a graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub problems: Vec<Problem>,
}

impl Report {
    /// Whether any problem stops the graph from running.
    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// The problems that stop the graph from running.
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
    }

    /// The problems that do not.
    pub fn warnings(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Warning)
    }

    pub(crate) fn push(
        &mut self,
        severity: Severity,
        path: impl Into<String>,
        kind: ProblemKind,
    ) -> &mut Problem {
        self.problems.push(Problem {
            severity,
            path: path.into(),
            node: None,
            edge: None,
            message: kind.to_string(),
            kind,
            fix: None,
        });
        let last = self.problems.len() - 1;
        &mut self.problems[last]
    }
}

impl Problem {
    pub(crate) fn at_node(&mut self, node: &NodeId) -> &mut Self {
        self.node = Some(node.clone());
        self
    }

    pub(crate) fn at_edge(&mut self, edge: &EdgeId) -> &mut Self {
        self.edge = Some(edge.clone());
        self
    }

    pub(crate) fn with_fix(&mut self, fix: Option<Fix>) -> &mut Self {
        self.fix = fix;
        self
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Report {}
