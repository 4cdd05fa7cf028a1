//! The versioned JSON document a graph is stored and exported as.
//!
//! Every document names the format version it was written in. A document
//! from a newer version than this library knows is refused with a message
//! that says so, rather than being half-understood.

use serde::{Deserialize, Serialize};

/// The format version this library writes.
pub const FORMAT_VERSION: u32 = 1;

/// A graph as saved in the database and exported to a file.
///
/// Nodes and edges are kept as JSON values until their typed model lands;
/// the envelope (format version, name, description) is typed already.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphDocument {
    /// The format version the document was written in.
    pub format_version: u32,
    /// The graph's display name.
    pub name: String,
    /// What the graph does, for people.
    #[serde(default)]
    pub description: String,
    /// The graph's nodes.
    #[serde(default)]
    pub nodes: Vec<serde_json::Value>,
    /// The graph's edges.
    #[serde(default)]
    pub edges: Vec<serde_json::Value>,
}

/// Why a document could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The text is not JSON, or not a graph document.
    #[error("not a graph document: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The document was written by a newer Heddle.
    #[error(
        "graph format version {found} is newer than this Heddle understands \
         (up to {supported}); upgrade Heddle to open it"
    )]
    NewerVersion {
        /// The version the document names.
        found: u32,
        /// The newest version this library reads.
        supported: u32,
    },
}

impl GraphDocument {
    /// An empty graph with the given name.
    pub fn new(name: &str) -> Self {
        GraphDocument {
            format_version: FORMAT_VERSION,
            name: name.to_string(),
            description: String::new(),
            nodes: Vec::new(),
            edges: Vec::new(),
        }
    }

    /// Reads a document, refusing versions newer than [`FORMAT_VERSION`].
    pub fn from_json(text: &str) -> Result<Self, DocumentError> {
        #[derive(Deserialize)]
        struct VersionOnly {
            format_version: u32,
        }
        let VersionOnly { format_version } = serde_json::from_str(text)?;
        if format_version > FORMAT_VERSION {
            return Err(DocumentError::NewerVersion {
                found: format_version,
                supported: FORMAT_VERSION,
            });
        }
        Ok(serde_json::from_str(text)?)
    }

    /// Writes the document as pretty JSON with a stable key order.
    pub fn to_json(&self) -> Result<String, DocumentError> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_document_round_trips() {
        let document = GraphDocument::new("Support agent");
        let text = document.to_json().unwrap();
        assert_eq!(GraphDocument::from_json(&text).unwrap(), document);
    }

    #[test]
    fn newer_versions_are_refused_with_a_clear_message() {
        let text = r#"{"format_version": 99, "name": "from the future"}"#;
        let error = GraphDocument::from_json(text).unwrap_err();
        assert!(matches!(
            error,
            DocumentError::NewerVersion {
                found: 99,
                supported: FORMAT_VERSION
            }
        ));
        assert!(error.to_string().contains("upgrade Heddle"));
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        for text in ["", "[]", "{", r#"{"format_version": "one"}"#, "null"] {
            assert!(matches!(
                GraphDocument::from_json(text),
                Err(DocumentError::Malformed(_))
            ));
        }
    }
}
