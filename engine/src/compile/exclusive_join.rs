//! A `join` runs once every node leading into it has. Two of those that
//! are branches of one router or condition, on different routes of it,
//! never both run in one pass: the join would wait for ever and the run
//! end without an answer. Such a join is warned of where it is drawn,
//! naming the node that chooses between its branches.
//!
//! A branch is followed back along a chain of nodes that each have one
//! way in, to the routed edge it starts on; a branch that others lead
//! into too is not followed (it may be reached either way), so the
//! warning is never given where the join could fire.

use std::collections::{BTreeMap, HashMap};

use crate::format::GraphDocument;
use crate::ids::NodeId;
use crate::node::Built;
use crate::validate::{ProblemKind, Report, Severity};

/// Warns of each join fed by different routes of one node.
pub(super) fn check(document: &GraphDocument, built: &[Option<Built>], report: &mut Report) {
    let mut into: HashMap<&NodeId, Vec<usize>> = HashMap::new();
    for (i, edge) in document.edges.iter().enumerate() {
        into.entry(&edge.to).or_default().push(i);
    }
    for (i, node) in document.nodes.iter().enumerate() {
        if !built
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|b| b.join)
        {
            continue;
        }
        // Each chooser's routes among the join's branches.
        let mut routes: BTreeMap<&NodeId, Vec<&str>> = BTreeMap::new();
        for &edge in into.get(&node.id).map_or(&[][..], Vec::as_slice) {
            let Some((chooser, route)) = branch_of(document, &into, edge) else {
                continue;
            };
            let taken = routes.entry(chooser).or_default();
            if !taken.contains(&route) {
                taken.push(route);
            }
        }
        let Some((chooser, routes)) = routes.into_iter().find(|(_, routes)| routes.len() > 1)
        else {
            continue;
        };
        report
            .push(
                Severity::Warning,
                format!("nodes[{i}]"),
                ProblemKind::JoinOfOneRoute {
                    join: node.id.clone(),
                    chooser: chooser.clone(),
                    routes: routes.into_iter().map(str::to_string).collect(),
                },
            )
            .at_node(&node.id);
    }
}

/// The node and route the branch arriving by edge `edge` starts from:
/// back along edges into nodes with one way in, to the first that
/// carries a route. `None` for a branch others lead into, or that starts
/// on no route.
fn branch_of<'a>(
    document: &'a GraphDocument,
    into: &HashMap<&NodeId, Vec<usize>>,
    mut edge: usize,
) -> Option<(&'a NodeId, &'a str)> {
    for _ in 0..=document.nodes.len() {
        let spec = &document.edges[edge];
        if let Some(route) = &spec.route {
            return Some((&spec.from, route));
        }
        if spec.condition.is_some() {
            return None;
        }
        match into.get(&spec.from).map(Vec::as_slice) {
            Some(&[only]) => edge = only,
            _ => return None,
        }
    }
    None
}
