//! From a document to a runnable graph: resolve names into indexes once,
//! build every node's runtime from its config, and check the whole graph,
//! collecting every problem with its location.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::expr::Expr;
use crate::format::{Channel, ChannelType, FormatError, GraphDocument, NodeSpec, RetryPolicy};
use crate::ids::{EdgeId, NodeId};
use crate::kinds::BuiltinKind;
use crate::node::{BuildContext, Built, ChildGraph, Node, Registry};
use crate::schema::ValueSchema;
use crate::state::{StateLayout, fits, is_of_type};
use crate::validate::{EdgeEnd, Fix, ProblemKind, Report, Severity};

mod exclusive_join;

/// A node's position in a compiled graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeIdx(pub(crate) u32);

impl NodeIdx {
    pub(crate) fn get(self) -> usize {
        self.0 as usize
    }
}

/// A graph ready to run: validated, with every name resolved. Cheap to
/// share between runs (`Arc` it); runs never change it.
pub struct CompiledGraph {
    pub(crate) name: String,
    pub(crate) layout: Arc<StateLayout>,
    pub(crate) nodes: Vec<CompiledNode>,
    pub(crate) index: HashMap<NodeId, NodeIdx>,
    pub(crate) entry: NodeIdx,
    pub(crate) max_steps: u32,
    /// Whether `max_steps` is the runner's ceiling rather than the
    /// graph's own (lower) limit.
    pub(crate) steps_ceiling: bool,
    /// How model calls are priced (the registry's table).
    pub(crate) prices: Arc<crate::usage::PriceTable>,
    /// How deep and large the run's values may be (the registry's).
    pub(crate) value_limits: crate::state::ValueLimits,
    /// Whether the graph has an `end` node: then a run whose branches all
    /// stop before reaching an end has no answer (see `RunError::NoAnswer`).
    pub(crate) has_end: bool,
    warnings: Report,
    document: GraphDocument,
}

pub(crate) struct CompiledNode {
    pub(crate) id: NodeId,
    pub(crate) runtime: Arc<dyn Node>,
    pub(crate) out: Vec<CompiledEdge>,
    /// For a join: the distinct nodes with an edge into it.
    pub(crate) join_sources: Option<Vec<NodeIdx>>,
    pub(crate) retry: Option<RetryPolicy>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) interrupt_before: bool,
    pub(crate) interrupt_after: bool,
    /// Whether a branch that runs this node has ended (an `end`, or a node
    /// with no edge out and nothing it sends to): a run whose branches all
    /// stop elsewhere ended without an answer.
    pub(crate) ends_branch: bool,
}

pub(crate) struct CompiledEdge {
    pub(crate) id: EdgeId,
    pub(crate) to: NodeIdx,
    pub(crate) route: Option<String>,
    pub(crate) condition: Option<Expr>,
}

/// Why a graph could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The text is not a graph document (or a newer one).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The document has problems; all of them are listed.
    #[error("the graph has problems:\n{0}")]
    Invalid(Report),
}

impl CompiledGraph {
    /// Parses, validates and compiles a graph document in one go.
    pub fn from_json(text: &str, registry: &Registry) -> Result<CompiledGraph, LoadError> {
        let document = GraphDocument::from_json(text)?;
        compile(&document, registry).map_err(LoadError::Invalid)
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How deep and large the run's values may be (its registry's).
    pub fn value_limits(&self) -> crate::state::ValueLimits {
        self.value_limits
    }

    /// The document the graph was compiled from.
    pub fn document(&self) -> &GraphDocument {
        &self.document
    }

    /// The problems that did not stop compilation.
    pub fn warnings(&self) -> &Report {
        &self.warnings
    }

    /// The index of a node.
    pub fn node(&self, id: &NodeId) -> Option<NodeIdx> {
        self.index.get(id).copied()
    }

    /// How many nodes the graph has.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// Makes every fix that creates the same missing channel create it with
/// one type: a conversation (`messages`) when any node needs one there,
/// which the others' needs are met by too (a start node asking for
/// `messages` takes a conversation). A start node's fix offered a string
/// channel while the llm nodes' offered a conversation; the first pressed
/// made a channel none of the others could use, and left them no fix.
fn agree_on_new_channels(report: &mut Report) {
    let conversations: HashSet<String> = report
        .problems
        .iter()
        .filter_map(|problem| match &problem.fix {
            Some(Fix::AddChannel {
                channel,
                ty: ChannelType::Messages,
            }) => Some(channel.clone()),
            _ => None,
        })
        .collect();
    for problem in &mut report.problems {
        if let Some(Fix::AddChannel { channel, ty }) = &mut problem.fix
            && conversations.contains(channel.as_str())
        {
            *ty = ChannelType::Messages;
        }
    }
}

/// Checks a document and reports every problem, errors and warnings.
pub fn validate(document: &GraphDocument, registry: &Registry) -> Report {
    match compile(document, registry) {
        Ok(graph) => graph.warnings,
        Err(report) => report,
    }
}

/// The routes node `node` of `document` may choose (a router's, a
/// condition's with its `otherwise`, an agent's handoffs), as validation
/// knows them: what an edge from it may carry, for the editor's route
/// picker. `None` when there is no such node or it does not build.
pub fn node_routes(
    document: &GraphDocument,
    node: &NodeId,
    registry: &Registry,
) -> Option<Vec<String>> {
    let (i, spec) = document
        .nodes
        .iter()
        .enumerate()
        .find(|(_, spec)| spec.id == *node)?;
    let node_ids: Vec<NodeId> = document.nodes.iter().map(|node| node.id.clone()).collect();
    let mut report = Report::default();
    build_node(i, spec, document, &node_ids, registry, &mut report).map(|built| built.routes)
}

/// Compiles a document, or returns every problem found (errors and
/// warnings) when any is an error.
pub fn compile(document: &GraphDocument, registry: &Registry) -> Result<CompiledGraph, Report> {
    let mut report = Report::default();
    check_channels(document, &mut report);
    check_limits(document, &mut report);
    let ids = check_node_ids(document, &mut report);
    check_groups(document, &ids, &mut report);
    let node_ids: Vec<NodeId> = document.nodes.iter().map(|node| node.id.clone()).collect();

    let mut built: Vec<Option<Built>> = Vec::with_capacity(document.nodes.len());
    for (i, spec) in document.nodes.iter().enumerate() {
        built.push(build_node(
            i,
            spec,
            document,
            &node_ids,
            registry,
            &mut report,
        ));
        check_settings(i, spec, &mut report);
    }
    agree_on_new_channels(&mut report);

    let edges = check_edges(document, &ids, &built, &mut report);
    let entry = find_entry(document, &ids, &mut report);
    if let Some(entry) = entry {
        check_reachability(document, entry, &edges, &built, &mut report);
    }
    exclusive_join::check(document, &built, &mut report);

    let runtimes: Option<Vec<Built>> = built.into_iter().collect();
    let (Some(entry), Some(runtimes), false) = (entry, runtimes, report.has_errors()) else {
        return Err(report);
    };

    let sends_nowhere: Vec<bool> = runtimes
        .iter()
        .map(|built| built.sends_to.is_empty())
        .collect();
    let mut nodes: Vec<CompiledNode> = document
        .nodes
        .iter()
        .zip(runtimes)
        .map(|(spec, built)| CompiledNode {
            id: spec.id.clone(),
            runtime: built.node,
            out: Vec::new(),
            join_sources: built.join.then(Vec::new),
            retry: spec.retry.clone(),
            timeout: spec.timeout_ms.map(Duration::from_millis),
            interrupt_before: spec.interrupt_before,
            interrupt_after: spec.interrupt_after,
            // Without edges yet: set below, once `out` is known.
            ends_branch: built.terminal,
        })
        .collect();
    for edge in edges {
        let to = edge.to;
        let from = edge.from;
        if let Some(sources) = &mut nodes[to.get()].join_sources
            && !sources.contains(&from)
        {
            sources.push(from);
        }
        nodes[from.get()].out.push(CompiledEdge {
            id: edge.id,
            to,
            route: edge.route,
            condition: edge.condition,
        });
    }

    let has_end = nodes.iter().any(|node| node.ends_branch);
    for (node, sends_nowhere) in nodes.iter_mut().zip(sends_nowhere) {
        node.ends_branch = node.ends_branch || (node.out.is_empty() && sends_nowhere);
    }

    let (max_steps, steps_ceiling) =
        crate::ceilings::lower(document.limits.max_steps, registry.ceilings().max_steps);
    Ok(CompiledGraph {
        name: document.name.clone(),
        layout: Arc::new(StateLayout::new(&document.state)),
        nodes,
        index: ids,
        entry,
        max_steps,
        steps_ceiling,
        prices: registry.prices(),
        value_limits: registry.value_limits(),
        has_end,
        warnings: report,
        document: document.clone(),
    })
}

/// Budgets must allow something: a zero or negative one would stop every
/// run at its first model call.
fn check_limits(document: &GraphDocument, report: &mut Report) {
    let limits = &document.limits;
    let bad = |message: &str| ProblemKind::BadSetting {
        message: message.to_string(),
    };
    if limits.max_steps == 0 {
        report.push(
            Severity::Error,
            "limits.max_steps",
            bad("a run needs at least one step"),
        );
    }
    if limits.max_tokens == Some(0) {
        report.push(
            Severity::Error,
            "limits.max_tokens",
            bad("a token budget must be at least 1 (leave it out for none)"),
        );
    }
    if let Some(cost) = limits.max_cost
        && !(cost.is_finite() && cost > 0.0)
    {
        report.push(
            Severity::Error,
            "limits.max_cost",
            bad("a cost budget must be more than $0 (leave it out for none)"),
        );
    }
}

fn check_channels(document: &GraphDocument, report: &mut Report) {
    for (name, channel) in &document.state.channels {
        let path = format!("state.channels.{name}");
        if !fits(channel.reducer, channel.ty) {
            report.push(
                Severity::Error,
                format!("{path}.reducer"),
                ProblemKind::ReducerMismatch {
                    channel: name.clone(),
                    reducer: channel.reducer,
                    ty: channel.ty,
                },
            );
        }
        if let Some(default) = &channel.default
            && !is_of_type(default, channel.ty)
        {
            report.push(
                Severity::Error,
                format!("{path}.default"),
                ProblemKind::BadDefault {
                    channel: name.clone(),
                    ty: channel.ty,
                },
            );
        }
        if let Some(schema) = &channel.schema {
            check_schema(name, channel, schema, &path, report);
        }
    }
}

/// A channel's schema: of the subset, agreeing with the channel's type,
/// and taking the channel's default.
fn check_schema(name: &str, channel: &Channel, schema: &Value, path: &str, report: &mut Report) {
    let bad = |message: String| ProblemKind::BadSchema {
        channel: name.to_string(),
        message,
    };
    let schema = match ValueSchema::parse(schema) {
        Ok(schema) => schema,
        Err(problems) => {
            for problem in problems {
                let at = if problem.path.is_empty() {
                    format!("{path}.schema")
                } else {
                    format!("{path}.schema.{}", problem.path)
                };
                report.push(Severity::Error, at, bad(problem.message));
            }
            return;
        }
    };
    if channel.ty == ChannelType::Messages {
        report.push(
            Severity::Error,
            format!("{path}.schema"),
            bad("a messages channel's values are messages; it takes no schema".into()),
        );
        return;
    }
    if !schema.agrees_with(channel.ty) {
        report.push(
            Severity::Error,
            format!("{path}.schema.type"),
            bad(format!(
                "the schema allows {schema}, which a channel of type `{}` cannot hold",
                crate::validate::type_name(channel.ty)
            )),
        );
        return;
    }
    if let Some(at) = schema
        .allowed
        .iter()
        .flatten()
        .position(|value| !is_of_type(value, channel.ty))
    {
        report.push(
            Severity::Error,
            format!("{path}.schema.enum[{at}]"),
            bad(format!(
                "a channel of type `{}` cannot hold this value",
                crate::validate::type_name(channel.ty)
            )),
        );
        return;
    }
    if let Some(default) = &channel.default
        && !default.is_null()
        && let Err(misfit) = schema.check(default)
    {
        report.push(
            Severity::Error,
            format!("{path}.default"),
            bad(format!("the default does not fit it: {misfit}")),
        );
    }
}

fn check_node_ids(document: &GraphDocument, report: &mut Report) -> HashMap<NodeId, NodeIdx> {
    let mut ids = HashMap::new();
    for (i, node) in document.nodes.iter().enumerate() {
        let path = format!("nodes[{i}].id");
        if node.id.as_str().is_empty() {
            report.push(Severity::Error, path, ProblemKind::EmptyId);
        } else if ids.contains_key(&node.id) {
            // The first node with an id keeps it; later ones are reported.
            report
                .push(
                    Severity::Error,
                    path,
                    ProblemKind::DuplicateId {
                        id: node.id.to_string(),
                    },
                )
                .at_node(&node.id);
        } else {
            ids.insert(node.id.clone(), NodeIdx(i as u32));
        }
    }
    ids
}

/// Groups are for people and never stop a run: what is wrong with one is
/// a warning, whose fix mends the groups (`GraphDocument::mend_groups`).
fn check_groups(document: &GraphDocument, ids: &HashMap<NodeId, NodeIdx>, report: &mut Report) {
    let mut group_ids = HashSet::new();
    let mut framed: HashMap<&NodeId, &str> = HashMap::new();
    for (g, group) in document.groups.iter().enumerate() {
        let path = format!("groups[{g}]");
        let kind = if group.id.is_empty() {
            Some(ProblemKind::EmptyId)
        } else if !group_ids.insert(group.id.as_str()) {
            Some(ProblemKind::DuplicateId {
                id: group.id.clone(),
            })
        } else {
            None
        };
        if let Some(kind) = kind {
            report
                .push(Severity::Warning, format!("{path}.id"), kind)
                .with_fix(Some(Fix::MendGroups));
        }
        for (n, node) in group.nodes.iter().enumerate() {
            let path = format!("{path}.nodes[{n}]");
            if !ids.contains_key(node) {
                report
                    .push(
                        Severity::Warning,
                        path,
                        ProblemKind::MissingGroupMember {
                            group: group.id.clone(),
                            node: node.clone(),
                        },
                    )
                    .with_fix(Some(Fix::MendGroups));
            } else if let Some(first) = framed.get(node) {
                report
                    .push(
                        Severity::Warning,
                        path,
                        ProblemKind::GroupedTwice {
                            node: node.clone(),
                            first: first.to_string(),
                        },
                    )
                    .at_node(node)
                    .with_fix(Some(Fix::MendGroups));
            } else {
                framed.insert(node, &group.id);
            }
        }
    }
}

fn build_node(
    i: usize,
    spec: &NodeSpec,
    document: &GraphDocument,
    node_ids: &[NodeId],
    registry: &Registry,
    report: &mut Report,
) -> Option<Built> {
    let compile_child = |child: &GraphDocument| {
        compile(child, registry)
            .map(|graph| Arc::new(graph) as Arc<dyn ChildGraph>)
            .map_err(|report| report.errors().map(ToString::to_string).collect())
    };
    let cx = BuildContext {
        node: &spec.id,
        state: &document.state,
        nodes: node_ids,
        registry,
        compile_child: &compile_child,
    };
    let builtin = BuiltinKind::from_name(&spec.kind);
    let custom = registry.custom(&spec.kind);
    let current = match (builtin, custom) {
        (Some(kind), _) => kind.version(),
        (None, Some(kind)) => kind.version(),
        (None, None) => {
            report
                .push(
                    Severity::Error,
                    format!("nodes[{i}].kind"),
                    ProblemKind::UnknownKind {
                        kind: spec.kind.clone(),
                    },
                )
                .at_node(&spec.id);
            return None;
        }
    };
    if spec.version > current {
        report
            .push(
                Severity::Error,
                format!("nodes[{i}].version"),
                ProblemKind::NewerKindVersion {
                    kind: spec.kind.clone(),
                    found: spec.version,
                    supported: current,
                },
            )
            .at_node(&spec.id);
        return None;
    }
    let mut config = spec.config.clone();
    for from in spec.version..current {
        let migrated = match (builtin, custom) {
            (Some(kind), _) => kind.migrate(from, config),
            (None, Some(kind)) => kind.migrate(from, config),
            (None, None) => return None,
        };
        match migrated {
            Ok(next) => config = next,
            Err(message) => {
                report
                    .push(
                        Severity::Error,
                        format!("nodes[{i}].config"),
                        ProblemKind::MigrationFailed {
                            kind: spec.kind.clone(),
                            from,
                            message,
                        },
                    )
                    .at_node(&spec.id);
                return None;
            }
        }
    }
    let result = match (builtin, custom) {
        (Some(kind), _) => kind.build(&config, &cx),
        (None, Some(kind)) => kind.build(&config, &cx),
        (None, None) => return None,
    };
    match result {
        Ok(built) => Some(built),
        Err(issues) => {
            for issue in issues {
                let path = if issue.path.is_empty() {
                    format!("nodes[{i}].config")
                } else if issue.path.starts_with('[') {
                    format!("nodes[{i}].config{}", issue.path)
                } else {
                    format!("nodes[{i}].config.{}", issue.path)
                };
                report
                    .push(
                        Severity::Error,
                        path,
                        ProblemKind::BadConfig {
                            message: issue.message,
                        },
                    )
                    .at_node(&spec.id)
                    .with_fix(issue.fix.map(|fix| *fix));
            }
            None
        }
    }
}

fn check_settings(i: usize, spec: &NodeSpec, report: &mut Report) {
    let mut bad = |path: String, message: &str| {
        report
            .push(
                Severity::Error,
                path,
                ProblemKind::BadSetting {
                    message: message.to_string(),
                },
            )
            .at_node(&spec.id);
    };
    if spec.timeout_ms == Some(0) {
        bad(
            format!("nodes[{i}].timeout_ms"),
            "a timeout must be at least 1 ms",
        );
    }
    if let Some(retry) = &spec.retry {
        if retry.max_attempts == 0 {
            bad(
                format!("nodes[{i}].retry.max_attempts"),
                "max_attempts counts the first attempt: at least 1",
            );
        }
        if !(retry.backoff_factor.is_finite() && retry.backoff_factor >= 1.0) {
            bad(
                format!("nodes[{i}].retry.backoff_factor"),
                "backoff_factor must be a number of at least 1",
            );
        }
        if retry.max_interval_ms < retry.initial_interval_ms {
            bad(
                format!("nodes[{i}].retry.max_interval_ms"),
                "max_interval_ms is below initial_interval_ms",
            );
        }
    }
}

/// An edge a route no edge carries may be given: it carries no route
/// (nor a condition), or one its source does not have.
struct OpenEdge {
    /// Its place in the document's edges.
    index: usize,
    /// Its target as a person reads it.
    to: String,
}

struct ResolvedEdge {
    id: EdgeId,
    from: NodeIdx,
    to: NodeIdx,
    route: Option<String>,
    condition: Option<Expr>,
}

fn check_edges(
    document: &GraphDocument,
    ids: &HashMap<NodeId, NodeIdx>,
    built: &[Option<Built>],
    report: &mut Report,
) -> Vec<ResolvedEdge> {
    let mut seen = HashSet::new();
    let mut edges = Vec::new();
    let mut routes_used: HashSet<(NodeIdx, &str)> = HashSet::new();
    // Edges that carry a route their source does not have: each edge's
    // index, and its problem's.
    let mut stale: HashMap<usize, usize> = HashMap::new();
    for (j, edge) in document.edges.iter().enumerate() {
        let path = format!("edges[{j}]");
        if edge.id.as_str().is_empty() {
            report.push(Severity::Error, format!("{path}.id"), ProblemKind::EmptyId);
        } else if !seen.insert(edge.id.clone()) {
            report
                .push(
                    Severity::Error,
                    format!("{path}.id"),
                    ProblemKind::DuplicateId {
                        id: edge.id.to_string(),
                    },
                )
                .at_edge(&edge.id);
        }
        let mut end = |node: &NodeId, which: EdgeEnd, field: &str| {
            let found = ids.get(node).copied();
            if found.is_none() {
                report
                    .push(
                        Severity::Error,
                        format!("{path}.{field}"),
                        ProblemKind::MissingNode {
                            edge: edge.id.clone(),
                            end: which,
                            node: node.clone(),
                        },
                    )
                    .at_edge(&edge.id);
            }
            found
        };
        let from = end(&edge.from, EdgeEnd::From, "from");
        let to = end(&edge.to, EdgeEnd::To, "to");

        let condition = edge
            .condition
            .as_deref()
            .and_then(|source| match Expr::parse(source) {
                Ok(expr) => {
                    for channel in expr.channels() {
                        if !document.state.channels.contains_key(channel) {
                            report
                                .push(
                                    Severity::Warning,
                                    format!("{path}.condition"),
                                    ProblemKind::UnknownChannelInCondition {
                                        channel: channel.to_string(),
                                    },
                                )
                                .at_edge(&edge.id);
                        }
                    }
                    Some(expr)
                }
                Err(error) => {
                    report
                        .push(
                            Severity::Error,
                            format!("{path}.condition"),
                            ProblemKind::BadCondition {
                                message: error.message,
                                offset: error.offset,
                            },
                        )
                        .at_edge(&edge.id);
                    None
                }
            });

        if let (Some(route), Some(from)) = (&edge.route, from)
            && let Some(Some(source)) = built.get(from.get())
        {
            if source.routes.contains(route) {
                routes_used.insert((from, route.as_str()));
            } else {
                stale.insert(j, report.problems.len());
                report
                    .push(
                        Severity::Error,
                        format!("{path}.route"),
                        ProblemKind::UnknownRoute {
                            node: edge.from.clone(),
                            route: route.clone(),
                            routes: source.routes.clone(),
                        },
                    )
                    .at_edge(&edge.id);
            }
        }

        if let (Some(from), Some(to)) = (from, to) {
            edges.push(ResolvedEdge {
                id: edge.id.clone(),
                from,
                to,
                route: edge.route.clone(),
                condition,
            });
        }
    }

    // Each node's edges that carry no route nor condition, or a route it
    // does not have, gathered once: a route no edge carries may be given
    // one of them, in a click.
    let mut open: HashMap<&NodeId, Vec<OpenEdge>> = HashMap::new();
    for (j, edge) in document.edges.iter().enumerate() {
        let unrouted = edge.route.is_none() || stale.contains_key(&j);
        if unrouted && edge.condition.is_none() {
            let to = ids
                .get(&edge.to)
                .map_or(edge.to.as_str(), |at| document.nodes[at.0 as usize].name());
            open.entry(&edge.from).or_default().push(OpenEdge {
                index: j,
                to: to.to_string(),
            });
        }
    }
    // The open edges a missing route is offered to (that error's fix).
    let mut offered: HashSet<usize> = HashSet::new();
    for (i, node) in built.iter().enumerate() {
        let Some(node) = node else { continue };
        let missing: Vec<&str> = node
            .routes
            .iter()
            .map(String::as_str)
            .filter(|route| !routes_used.contains(&(NodeIdx(i as u32), route)))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let id = &document.nodes[i].id;
        let open = open.get(id).map_or(&[][..], Vec::as_slice);
        let targets: Vec<&str> = open.iter().map(|edge| edge.to.as_str()).collect();
        let carried: Vec<&str> = node
            .routes
            .iter()
            .map(String::as_str)
            .filter(|route| routes_used.contains(&(NodeIdx(i as u32), route)))
            .collect();
        let pairs = crate::validate::pair_routes(&missing, &carried, &targets);
        for route in missing {
            let paired = pairs
                .iter()
                .find(|(paired, _)| *paired == route)
                .map(|(_, at)| &open[*at]);
            if let Some(edge) = paired {
                offered.insert(edge.index);
            }
            let fix = paired.map(|edge| {
                let spec = &document.edges[edge.index];
                Fix::RouteEdge {
                    edge: spec.id.clone(),
                    route: route.to_string(),
                    to: edge.to.clone(),
                    was: spec.route.clone(),
                }
            });
            // The edge's own problem (a route its source does not have)
            // is fixed by the same edit.
            if let Some(problem) = paired.and_then(|edge| stale.get(&edge.index)) {
                report.problems[*problem].fix = fix.clone();
            }
            report
                .push(
                    Severity::Error,
                    format!("nodes[{i}].config"),
                    ProblemKind::RouteWithoutEdge {
                        node: id.clone(),
                        route: route.to_string(),
                    },
                )
                .at_node(id)
                .with_fix(fix);
        }
    }
    // An edge out of a router or a condition that carries no route (and
    // that no missing route is offered to, above) runs its target every time,
    // beside the route picked: warned, on the edge.
    for (i, node) in built.iter().enumerate() {
        if !node.as_ref().is_some_and(|node| node.picks_its_way) {
            continue;
        }
        let id = &document.nodes[i].id;
        let Some(open) = open.get(id) else { continue };
        for edge in open {
            let spec = &document.edges[edge.index];
            if spec.route.is_some() || offered.contains(&edge.index) {
                continue;
            }
            report
                .push(
                    Severity::Warning,
                    format!("edges[{}]", edge.index),
                    ProblemKind::TakenWhateverPicked {
                        node: id.clone(),
                        to: spec.to.clone(),
                    },
                )
                .at_edge(&spec.id);
        }
    }
    // A node that fails when it chooses none of its routes is warned, with
    // the catch-all route as the one to fall back on.
    for (i, node) in built.iter().enumerate() {
        let Some(node) = node.as_ref().filter(|node| node.may_choose_none) else {
            continue;
        };
        let id = &document.nodes[i].id;
        let fix = crate::validate::fallback_route(&node.routes).map(|route| Fix::SetFallback {
            node: id.clone(),
            route: route.to_string(),
        });
        report
            .push(
                Severity::Warning,
                format!("nodes[{i}].config.otherwise"),
                ProblemKind::NoFallback { node: id.clone() },
            )
            .at_node(id)
            .with_fix(fix);
    }
    // A router's route without a description gives its model only a
    // name to choose by ("- billing:" in its prompt).
    for (i, node) in document.nodes.iter().enumerate() {
        if node.kind != crate::kinds::BuiltinKind::Router.name() {
            continue;
        }
        let Some(routes) = node.config.get("routes").and_then(|r| r.as_array()) else {
            continue;
        };
        let first = routes.iter().position(|route| {
            let named = route
                .get("route")
                .and_then(|r| r.as_str())
                .is_some_and(|name| !name.is_empty());
            let described = route
                .get("description")
                .and_then(|d| d.as_str())
                .is_some_and(|d| !d.trim().is_empty());
            named && !described
        });
        if let Some(j) = first {
            report
                .push(
                    Severity::Warning,
                    format!("nodes[{i}].config.routes[{j}].description"),
                    ProblemKind::RoutesUndescribed {
                        node: node.id.clone(),
                    },
                )
                .at_node(&node.id);
        }
    }
    edges
}

fn find_entry(
    document: &GraphDocument,
    ids: &HashMap<NodeId, NodeIdx>,
    report: &mut Report,
) -> Option<NodeIdx> {
    match &document.entry {
        Some(entry) => {
            let found = ids.get(entry).copied();
            if found.is_none() {
                report.push(
                    Severity::Error,
                    "entry",
                    ProblemKind::MissingEntry {
                        node: entry.clone(),
                    },
                );
            }
            found
        }
        None => {
            let mut starts = document
                .nodes
                .iter()
                .filter(|node| node.kind == BuiltinKind::Start.name());
            match (starts.next(), starts.next()) {
                (Some(start), None) => ids.get(&start.id).copied(),
                (first, _) => {
                    // With no start at all, one can be added before the
                    // first node nothing leads to.
                    let fix = first.is_none().then(|| Fix::AddStart {
                        before: document
                            .nodes
                            .iter()
                            .find(|node| !document.edges.iter().any(|edge| edge.to == node.id))
                            .or(document.nodes.first())
                            .map(|node| node.id.clone()),
                    });
                    report
                        .push(Severity::Error, "entry", ProblemKind::NoEntry)
                        .with_fix(fix);
                    None
                }
            }
        }
    }
}

fn check_reachability(
    document: &GraphDocument,
    entry: NodeIdx,
    edges: &[ResolvedEdge],
    built: &[Option<Built>],
    report: &mut Report,
) {
    let count = document.nodes.len();
    let mut forward: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut backward: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut link = |from: usize, to: usize| {
        forward[from].push(to);
        backward[to].push(from);
    };
    for edge in edges {
        link(edge.from.get(), edge.to.get());
    }
    for (i, node) in built.iter().enumerate() {
        for target in node.iter().flat_map(|built| &built.sends_to) {
            if let Some(j) = document.nodes.iter().position(|node| &node.id == target) {
                link(i, j);
            }
        }
    }

    let depth = depths(&forward, entry.get());
    let reached: Vec<bool> = depth.iter().map(Option::is_some).collect();
    // A branch ends at an `end` node or at a node with nowhere to go.
    let ends = (0..count).filter(|&i| {
        forward[i].is_empty() || built[i].as_ref().is_some_and(|built| built.terminal)
    });
    let can_end = walk(&backward, ends);

    for (i, node) in document.nodes.iter().enumerate() {
        if !reached[i] {
            report
                .push(
                    Severity::Warning,
                    format!("nodes[{i}]"),
                    ProblemKind::Unreachable {
                        node: node.id.clone(),
                    },
                )
                .at_node(&node.id);
        } else if !can_end[i] {
            report
                .push(
                    Severity::Warning,
                    format!("nodes[{i}]"),
                    ProblemKind::CannotReachEnd {
                        node: node.id.clone(),
                    },
                )
                .at_node(&node.id)
                // Where a loop closes (an edge back to a node no deeper
                // than this one), a node that chooses no route can simply
                // go on to an end as well.
                .with_fix(
                    (built[i]
                        .as_ref()
                        .is_some_and(|built| built.routes.is_empty())
                        && forward[i].iter().any(|&j| depth[j] <= depth[i]))
                    .then(|| Fix::AddEnd {
                        after: node.id.clone(),
                    }),
                );
        }
    }
}

/// How many links from `start` each node is (none: unreachable).
fn depths(links: &[Vec<usize>], start: usize) -> Vec<Option<usize>> {
    let mut depth = vec![None; links.len()];
    depth[start] = Some(0);
    let mut queue = VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        let next_depth = depth[at].map(|d| d + 1);
        for &next in &links[at] {
            if depth[next].is_none() {
                depth[next] = next_depth;
                queue.push_back(next);
            }
        }
    }
    depth
}

/// Breadth-first reach over `links` from `starts`.
fn walk(links: &[Vec<usize>], starts: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut seen = vec![false; links.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for start in starts {
        if !seen[start] {
            seen[start] = true;
            queue.push_back(start);
        }
    }
    while let Some(at) = queue.pop_front() {
        for &next in &links[at] {
            if !seen[next] {
                seen[next] = true;
                queue.push_back(next);
            }
        }
    }
    seen
}
