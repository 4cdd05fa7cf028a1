//! What a registry offers graphs, as data: its tools' specs and its model
//! names. A server sends its catalog to the editor, which validates
//! against a registry made from it ([`Registry::for_validation`]), so the
//! browser knows the same tools (MCP tools, `http_request`) and models the
//! server runs with, and shows no problem the server would not.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Registry;
use crate::model::{ChatModel, ChatRequest, Delta, ModelError, ModelFuture, ToolSpec};
use crate::tools::{Tool, ToolError, ToolFuture};

/// The tools and models a registry offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Every tool nodes may bind, as models see it.
    pub tools: Vec<ToolSpec>,
    /// Every model name nodes may ask for.
    pub models: Vec<String>,
}

impl Catalog {
    /// The tools' names.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|tool| tool.name.clone()).collect()
    }
}

impl Registry {
    /// What this registry offers graphs.
    pub fn catalog(&self) -> Catalog {
        Catalog {
            tools: self.tools().specs(),
            models: self.model_names(),
        }
    }

    /// A registry that validates graphs exactly as the one `catalog` came
    /// from does (same tools, same models), but runs nothing: its tools
    /// and models are declarations that refuse every call.
    pub fn for_validation(catalog: &Catalog) -> Registry {
        // The app's server embeds saved subgraphs when a run starts.
        let mut registry =
            Registry::new().with_saved_graphs(crate::node::SavedGraphs::EmbeddedAtRun);
        for tool in &catalog.tools {
            registry = registry.with_tool(Declared(tool.clone()));
        }
        for name in &catalog.models {
            if registry.model(Some(name)).is_none() {
                registry = registry.with_model(name.clone(), DeclaredModel(name.clone()));
            }
        }
        registry
    }
}

/// A tool known by its spec alone.
struct Declared(ToolSpec);

impl Tool for Declared {
    fn spec(&self) -> ToolSpec {
        self.0.clone()
    }

    fn call(&self, _arguments: Value) -> ToolFuture<'_> {
        let message = format!("`{}` runs on the server only", self.0.name);
        Box::pin(std::future::ready(Err(ToolError::new(message))))
    }
}

/// A model known by its name alone.
struct DeclaredModel(String);

impl ChatModel for DeclaredModel {
    fn name(&self) -> &str {
        &self.0
    }

    fn chat<'a>(
        &'a self,
        _request: ChatRequest,
        _deltas: &'a (dyn Fn(Delta) + Send + Sync),
    ) -> ModelFuture<'a> {
        let message = format!("the model `{}` runs on the server only", self.0);
        Box::pin(std::future::ready(Err(ModelError::Refused(message))))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Catalog;
    use crate::model::ToolSpec;
    use crate::{GraphDocument, Registry};

    fn agent_with(tool: &str, model: &str) -> GraphDocument {
        GraphDocument::from_value(json!({
            "format_version": 2, "name": "g",
            "state": {"channels": {"messages": {"type": "messages"}}},
            "nodes": [
                {"id": "start", "kind": "start", "config": {"inputs": ["messages"]}},
                {"id": "agent", "kind": "agent", "config": {"tools": [tool], "model": model}}
            ],
            "edges": [{"id": "e", "from": "start", "to": "agent"}]
        }))
        .expect("a document")
    }

    fn errors(document: &GraphDocument, registry: &Registry) -> Vec<String> {
        crate::validate(document, registry)
            .errors()
            .map(|problem| problem.message.clone())
            .collect()
    }

    #[test]
    fn a_catalog_validates_like_the_registry_it_came_from() {
        let catalog = Catalog {
            tools: vec![ToolSpec {
                name: "search__web".into(),
                description: "Searches the web".into(),
                parameters: json!({"type": "object"}),
            }],
            models: vec!["default".into(), "offline".into(), "gpt-4o".into()],
        };
        let graph = agent_with("search__web", "gpt-4o");
        assert!(
            !errors(&graph, &Registry::new()).is_empty(),
            "unknown without the catalog"
        );
        let registry = Registry::for_validation(&catalog);
        assert_eq!(errors(&graph, &registry), Vec::<String>::new());
        assert_eq!(registry.catalog().tool_names(), {
            let mut names = Registry::new().tools().names();
            names.push("search__web".into());
            names.sort();
            names
        });
        // A tool or model the catalog lacks is still a problem.
        assert!(!errors(&agent_with("nope", "gpt-4o"), &registry).is_empty());
    }
}
