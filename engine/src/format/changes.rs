//! What changed between two versions of a graph, in words: "added node
//! `tools`", "edited the system prompt of `agent`", "connected `a` → `b`".
//! Saved with each version, so a version history says what each save did
//! instead of only when it happened.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::{EdgeSpec, GraphDocument, NodeSpec};

/// One change from one version to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Renamed,
    Described,
    AddedNode(String),
    RemovedNode(String),
    /// Settings of a node changed: which keys of its config (or `label`,
    /// `retry`, ...).
    EditedNode {
        node: String,
        fields: Vec<String>,
    },
    /// Nodes moved on the canvas (and nothing else about them changed).
    Moved(usize),
    Connected {
        from: String,
        to: String,
    },
    Disconnected {
        from: String,
        to: String,
    },
    /// An edge's condition or route changed.
    EditedEdge {
        from: String,
        to: String,
    },
    AddedChannel(String),
    RemovedChannel(String),
    EditedChannel(String),
    EditedNotes,
    /// A group was made, renamed, collapsed, expanded or removed.
    EditedGroups,
    EditedSettings,
    /// What is kept of the graph's runs changed.
    EditedRetention,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Renamed => f.write_str("renamed the graph"),
            Change::Described => f.write_str("edited the description"),
            Change::AddedNode(id) => write!(f, "added node `{id}`"),
            Change::RemovedNode(id) => write!(f, "removed node `{id}`"),
            Change::EditedNode { node, fields } => {
                let fields: Vec<String> = fields.iter().map(|field| field_name(field)).collect();
                write!(f, "edited {} of `{node}`", list(&fields))
            }
            Change::Moved(1) => f.write_str("moved a node"),
            Change::Moved(count) => write!(f, "moved {count} nodes"),
            Change::Connected { from, to } => write!(f, "connected `{from}` → `{to}`"),
            Change::Disconnected { from, to } => write!(f, "removed the edge `{from}` → `{to}`"),
            Change::EditedEdge { from, to } => write!(f, "edited the edge `{from}` → `{to}`"),
            Change::AddedChannel(name) => write!(f, "added channel `{name}`"),
            Change::RemovedChannel(name) => write!(f, "removed channel `{name}`"),
            Change::EditedChannel(name) => write!(f, "changed channel `{name}`"),
            Change::EditedNotes => f.write_str("edited the notes"),
            Change::EditedGroups => f.write_str("edited the groups"),
            Change::EditedSettings => f.write_str("changed the run limits"),
            Change::EditedRetention => f.write_str("changed what is kept of its runs"),
        }
    }
}

/// A config key, as the sentence says it.
fn field_name(key: &str) -> String {
    match key {
        "system" => "the system prompt".to_string(),
        "prompt" => "the prompt".to_string(),
        "tools" => "the tools".to_string(),
        "model" => "the model".to_string(),
        "label" => "the label".to_string(),
        "routes" => "the routes".to_string(),
        "source" => "the script".to_string(),
        other => format!("`{other}`"),
    }
}

fn list(items: &[String]) -> String {
    match items {
        [] => "the settings".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The changes from `before` to `after`, in a stable order.
pub fn changes(before: &GraphDocument, after: &GraphDocument) -> Vec<Change> {
    let mut found = Vec::new();
    if before.name != after.name {
        found.push(Change::Renamed);
    }
    if before.description != after.description {
        found.push(Change::Described);
    }
    let old: BTreeMap<&str, &NodeSpec> = before.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let new: BTreeMap<&str, &NodeSpec> = after.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let mut moved = 0;
    for (id, node) in &new {
        match old.get(id) {
            None => found.push(Change::AddedNode(id.to_string())),
            Some(was) => {
                let fields = edited_fields(was, node);
                if !fields.is_empty() {
                    found.push(Change::EditedNode {
                        node: id.to_string(),
                        fields,
                    });
                } else if was.position != node.position || was.size != node.size {
                    moved += 1;
                }
            }
        }
    }
    for id in old.keys().filter(|id| !new.contains_key(*id)) {
        found.push(Change::RemovedNode(id.to_string()));
    }
    if moved > 0 {
        found.push(Change::Moved(moved));
    }
    let ends = |edge: &EdgeSpec| (edge.from.to_string(), edge.to.to_string());
    let old_edges: BTreeMap<&str, &EdgeSpec> =
        before.edges.iter().map(|e| (e.id.as_str(), e)).collect();
    let new_edges: BTreeMap<&str, &EdgeSpec> =
        after.edges.iter().map(|e| (e.id.as_str(), e)).collect();
    for (id, edge) in &new_edges {
        let (from, to) = ends(edge);
        match old_edges.get(id) {
            None => found.push(Change::Connected { from, to }),
            Some(was) if was != edge => found.push(Change::EditedEdge { from, to }),
            Some(_) => {}
        }
    }
    for (id, edge) in &old_edges {
        if !new_edges.contains_key(id) {
            let (from, to) = ends(edge);
            found.push(Change::Disconnected { from, to });
        }
    }
    let names: BTreeSet<&String> = before
        .state
        .channels
        .keys()
        .chain(after.state.channels.keys())
        .collect();
    for name in names {
        match (
            before.state.channels.get(name),
            after.state.channels.get(name),
        ) {
            (None, Some(_)) => found.push(Change::AddedChannel(name.clone())),
            (Some(_), None) => found.push(Change::RemovedChannel(name.clone())),
            (Some(a), Some(b)) if a != b => found.push(Change::EditedChannel(name.clone())),
            _ => {}
        }
    }
    if before.notes != after.notes {
        found.push(Change::EditedNotes);
    }
    if before.groups != after.groups {
        found.push(Change::EditedGroups);
    }
    if before.limits != after.limits || before.entry != after.entry {
        found.push(Change::EditedSettings);
    }
    if before.retention != after.retention {
        found.push(Change::EditedRetention);
    }
    found
}

/// What differs between two versions of a node, besides where it is drawn.
fn edited_fields(before: &NodeSpec, after: &NodeSpec) -> Vec<String> {
    let mut fields = Vec::new();
    if before.label != after.label {
        fields.push("label".to_string());
    }
    if before.kind != after.kind {
        fields.push("kind".to_string());
    }
    let empty = serde_json::Map::new();
    let a = before.config.as_object().unwrap_or(&empty);
    let b = after.config.as_object().unwrap_or(&empty);
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if a.get(key) != b.get(key) {
            fields.push(key.clone());
        }
    }
    if !matches!(
        (&before.config, &after.config),
        (Value::Object(_), Value::Object(_))
    ) && before.config != after.config
    {
        fields.push("config".to_string());
    }
    if before.retry != after.retry {
        fields.push("retry".to_string());
    }
    if before.timeout_ms != after.timeout_ms {
        fields.push("timeout_ms".to_string());
    }
    if before.interrupt_before != after.interrupt_before
        || before.interrupt_after != after.interrupt_after
    {
        fields.push("breakpoints".to_string());
    }
    fields
}

/// The changes as one line, the first few named: "added node `tools`,
/// edited the system prompt of `agent` and 3 more".
pub fn summary(changes: &[Change]) -> String {
    const SHOWN: usize = 3;
    let mut words: Vec<String> = changes
        .iter()
        .take(SHOWN)
        .map(ToString::to_string)
        .collect();
    if changes.len() > SHOWN {
        words.push(format!("{} more", changes.len() - SHOWN));
    }
    list(&words)
}
