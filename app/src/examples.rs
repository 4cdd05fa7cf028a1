//! The examples gallery: graphs that ship with Heddle (the files in
//! engine/examples/graphs, embedded in the server binary) and run on the
//! offline model out of the box. Using one copies it into a new graph.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::AppError;
use crate::graphs::GraphId;
#[cfg(feature = "ssr")]
use crate::http_status::with_error_status;

/// One example, as the gallery lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExampleSummary {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub node_count: usize,
    /// The graph itself, for the gallery's preview.
    pub document: String,
}

/// Every example, in gallery order.
#[server(endpoint = "list_examples")]
pub async fn list_examples() -> Result<Vec<ExampleSummary>, AppError> {
    Ok(ssr::summaries())
}

/// Creates a graph from an example and opens it.
#[server(endpoint = "use_example")]
pub async fn use_example(slug: String) -> Result<GraphId, AppError> {
    let user = with_error_status(crate::accounts::ssr::require_user())?;
    let document = with_error_status(ssr::document(&slug))?;
    let id = with_error_status(
        crate::graphs::ssr::create(&crate::db::from_context()?, &user, Some(document)).await,
    )?
    .id;
    leptos_axum::redirect(&id.href());
    Ok(id)
}

#[cfg(feature = "ssr")]
pub mod ssr {
    //! The embedded example files.

    use heddle_engine::GraphDocument;

    use super::ExampleSummary;
    use crate::error::AppError;

    /// `(slug, file contents)`, in gallery order.
    const EXAMPLES: &[(&str, &str)] = &[
        (
            "react-agent",
            include_str!("../../engine/examples/graphs/react_agent.json"),
        ),
        (
            "supervisor",
            include_str!("../../engine/examples/graphs/supervisor.json"),
        ),
        (
            "triage",
            include_str!("../../engine/examples/graphs/triage.json"),
        ),
        (
            "router",
            include_str!("../../engine/examples/graphs/router.json"),
        ),
        (
            "chat-memory",
            include_str!("../../engine/examples/graphs/chat_memory.json"),
        ),
        (
            "tool-approval",
            include_str!("../../engine/examples/graphs/tool_approval.json"),
        ),
        (
            "research",
            include_str!("../../engine/examples/graphs/research.json"),
        ),
        (
            "generate-validate-fix",
            include_str!("../../engine/examples/graphs/generate_validate_fix.json"),
        ),
        (
            "approval",
            include_str!("../../engine/examples/graphs/approval.json"),
        ),
        (
            "agent",
            include_str!("../../engine/examples/graphs/agent.json"),
        ),
    ];

    /// Starting points "New graph" offers, `(slug, file contents)`.
    const TEMPLATES: &[(&str, &str)] = &[(
        "chat-agent",
        include_str!("../../engine/examples/graphs/chat_agent.json"),
    )];

    /// The template `slug`, as a new graph's document.
    pub fn template(slug: &str) -> Result<GraphDocument, AppError> {
        read(TEMPLATES, slug, "template")
    }

    pub fn summaries() -> Vec<ExampleSummary> {
        EXAMPLES
            .iter()
            .filter_map(|(slug, text)| {
                let document = GraphDocument::from_json(text).ok()?;
                Some(ExampleSummary {
                    slug: slug.to_string(),
                    name: document.name,
                    description: document.description,
                    node_count: document.nodes.len(),
                    document: text.to_string(),
                })
            })
            .collect()
    }

    pub fn document(slug: &str) -> Result<GraphDocument, AppError> {
        read(EXAMPLES, slug, "example")
    }

    fn read(
        files: &[(&str, &str)],
        slug: &str,
        what: &'static str,
    ) -> Result<GraphDocument, AppError> {
        let (_, text) = files
            .iter()
            .find(|(name, _)| *name == slug)
            .ok_or_else(|| AppError::not_found(format!("{what} {slug}")))?;
        GraphDocument::from_json(text).map_err(|error| {
            tracing::error!(%error, slug, "an embedded {what} does not read");
            AppError::Internal
        })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn every_example_reads() {
            assert_eq!(super::summaries().len(), super::EXAMPLES.len());
            for (slug, _) in super::TEMPLATES {
                assert!(super::template(slug).is_ok(), "{slug}");
            }
        }
    }
}
