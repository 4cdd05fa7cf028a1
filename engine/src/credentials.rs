//! Credentials: graphs name the secrets their nodes need (`"credential":
//! "openai"` on an `llm`, `router`, `agent` or `memory` node) and never hold
//! their values. Whoever runs a graph binds the names to values
//! ([`Credentials`], given to the [`Registry`](crate::Registry)); a
//! [`KeyedModels`] factory turns a model name and a key into a model.
//!
//! A registry with no credentials at all (the validator in the browser,
//! `heddle validate`) checks a graph's shape only: credential names are
//! bound later, by whoever runs it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::format::GraphDocument;
use crate::model::SharedModel;

/// A secret value. It prints as `Secret(…)`, never its value, so it cannot
/// leak into a log or an error by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(Arc::from(value.into()))
    }

    /// The value, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Secrets by name: what a run may use.
#[derive(Clone, Debug, Default)]
pub struct Credentials(BTreeMap<String, Secret>);

impl Credentials {
    pub fn new() -> Self {
        Credentials::default()
    }

    pub fn with(mut self, name: impl Into<String>, value: Secret) -> Self {
        self.0.insert(name.into(), value);
        self
    }

    pub fn get(&self, name: &str) -> Option<&Secret> {
        self.0.get(name)
    }

    /// The names bound, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

impl FromIterator<(String, String)> for Credentials {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Credentials(
            pairs
                .into_iter()
                .map(|(name, value)| (name, Secret::new(value)))
                .collect(),
        )
    }
}

/// Makes a model that authenticates with a key: the server's
/// OpenAI-compatible endpoint with the user's key, for instance.
pub trait KeyedModels: Send + Sync + 'static {
    /// The model `name` (`None`: the default) using `key`, or why not.
    fn model(&self, name: Option<&str>, key: &Secret) -> Result<SharedModel, String>;
}

/// Every credential name a document's nodes refer to (embedded subgraphs
/// included), sorted.
pub fn referenced(document: &GraphDocument) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for node in &document.nodes {
        collect(&node.config, &mut names);
    }
    names
}

fn collect(config: &Value, names: &mut BTreeSet<String>) {
    if let Some(name) = config.get("credential").and_then(Value::as_str) {
        names.insert(name.to_string());
    }
    // An embedded subgraph's nodes.
    if let Some(nodes) = config
        .get("graph")
        .and_then(|graph| graph.get("nodes"))
        .and_then(Value::as_array)
    {
        for node in nodes {
            if let Some(config) = node.get("config") {
                collect(config, names);
            }
        }
    }
}

/// Renames credential references: each `from` name in `bindings` becomes
/// its `to` name (an import binding the graph's names to the importer's
/// secrets). Returns how many references changed.
pub fn rebind(document: &mut GraphDocument, bindings: &BTreeMap<String, String>) -> usize {
    document
        .nodes
        .iter_mut()
        .map(|node| rebind_config(&mut node.config, bindings))
        .sum()
}

fn rebind_config(config: &mut Value, bindings: &BTreeMap<String, String>) -> usize {
    let mut changed = 0;
    if let Some(slot) = config.get_mut("credential")
        && let Some(to) = slot.as_str().and_then(|from| bindings.get(from))
    {
        *slot = Value::String(to.clone());
        changed += 1;
    }
    if let Some(nodes) = config
        .get_mut("graph")
        .and_then(|graph| graph.get_mut("nodes"))
        .and_then(Value::as_array_mut)
    {
        for node in nodes {
            if let Some(config) = node.get_mut("config") {
                changed += rebind_config(config, bindings);
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::{Secret, rebind, referenced};
    use crate::format::GraphDocument;

    fn document() -> GraphDocument {
        GraphDocument::from_value(json!({
            "format_version": 2, "name": "g",
            "state": {"channels": {"messages": {"type": "messages", "reducer": "add_messages"}}},
            "nodes": [
                {"id": "a", "kind": "llm", "config": {"credential": "openai", "system": "s"}},
                {"id": "b", "kind": "subgraph", "config": {"graph": {"nodes": [
                    {"id": "c", "kind": "llm", "config": {"credential": "vllm"}}
                ]}}}
            ],
            "edges": []
        }))
        .expect("document")
    }

    #[test]
    fn references_are_found_in_nodes_and_subgraphs() {
        let names: Vec<String> = referenced(&document()).into_iter().collect();
        assert_eq!(names, ["openai", "vllm"]);
    }

    #[test]
    fn rebinding_renames_every_reference() {
        let mut document = document();
        let bindings = BTreeMap::from([
            ("openai".to_string(), "my-openai".to_string()),
            ("vllm".to_string(), "lab".to_string()),
        ]);
        assert_eq!(rebind(&mut document, &bindings), 2);
        let names: Vec<String> = referenced(&document).into_iter().collect();
        assert_eq!(names, ["lab", "my-openai"]);
    }

    #[test]
    fn a_secret_never_prints_its_value() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert_eq!(secret.expose(), "sk-very-secret");
    }
}
