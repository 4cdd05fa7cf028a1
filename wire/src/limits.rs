//! How big a graph may be. Enforced on every save and import, so one
//! oversized document can never slow the editor or the engine for
//! everyone; each refusal names the limit.

use heddle_engine::GraphDocument;

use crate::error::AppError;

/// The most nodes a graph may have.
pub const MAX_NODES: usize = 2_000;

/// The most edges a graph may have.
pub const MAX_EDGES: usize = 10_000;

/// The largest a node's config may be, as JSON.
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// The largest a whole graph document may be, as JSON.
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024 * 1024;

/// The largest a run's input may be, as JSON.
pub const MAX_INPUT_BYTES: usize = 256 * 1024;

/// Refuses a document over any limit, saying which.
pub fn check_document(document: &GraphDocument) -> Result<(), AppError> {
    if document.nodes.len() > MAX_NODES {
        return Err(AppError::TooLarge(format!(
            "the graph has {} nodes; the limit is {MAX_NODES}",
            document.nodes.len()
        )));
    }
    if document.edges.len() > MAX_EDGES {
        return Err(AppError::TooLarge(format!(
            "the graph has {} edges; the limit is {MAX_EDGES}",
            document.edges.len()
        )));
    }
    for (i, node) in document.nodes.iter().enumerate() {
        let size = node.config.to_string().len();
        if size > MAX_CONFIG_BYTES {
            return Err(AppError::TooLarge(format!(
                "nodes[{i}].config (node `{}`) is {size} bytes; the limit is {MAX_CONFIG_BYTES}",
                node.id
            )));
        }
    }
    let size = document.to_json().len();
    if size > MAX_DOCUMENT_BYTES {
        return Err(AppError::TooLarge(format!(
            "the graph document is {size} bytes; the limit is {MAX_DOCUMENT_BYTES}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_name_what_is_too_large() {
        let mut document = GraphDocument::new("big");
        assert!(check_document(&document).is_ok());
        let node = serde_json::from_value(json!({"id": "n", "kind": "set", "config": {"values": {"x": {"value": "y".repeat(MAX_CONFIG_BYTES)}}}})).unwrap();
        document.nodes.push(node);
        let error = check_document(&document).unwrap_err();
        assert!(
            error.to_string().contains("nodes[0].config (node `n`)"),
            "{error}"
        );
        assert_eq!(error.status_code(), 413);
    }
}
