//! The embedded example files.

use heddle_engine::GraphDocument;

use heddle_wire::AppError;
use heddle_wire::examples::ExampleSummary;

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
        "extract-order",
        include_str!("../../engine/examples/graphs/extract_order.json"),
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

fn read(files: &[(&str, &str)], slug: &str, what: &'static str) -> Result<GraphDocument, AppError> {
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
