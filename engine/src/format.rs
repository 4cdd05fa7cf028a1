//! The graph document: the versioned JSON a graph is saved, exported and
//! imported as (documented in docs/graph-format.md).
//!
//! Reading a document is three steps: [`migrate`] brings an older format
//! version up to date (and refuses a newer one), serde reads the envelope
//! into [`GraphDocument`], and validation ([`crate::validate`]) checks
//! everything else, reporting every problem at once. Node configs stay JSON
//! here; each kind reads its own during validation, so an unknown kind or a
//! bad config is a located problem, not a parse failure.

mod changes;
mod document;
mod migrate;

pub use changes::{Change, changes, summary};
pub use document::{
    Channel, ChannelScope, ChannelType, EdgeSpec, GraphDocument, Group, GroupColor, Limits,
    NodeSpec, Note, Position, Reducer, Retention, RetryOn, RetryPolicy, Size, StateSchema,
};
pub use migrate::{FORMAT_VERSION, migrate};

/// Why a document could not be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON is not a graph document; `path` says where it stops being one.
    #[error("not a graph document: at {path}: {message}")]
    Shape {
        /// JSON path of the offending value, e.g. `nodes[2].id`.
        path: String,
        /// What serde expected there.
        message: String,
    },
    /// The document has no (or a non-numeric) `format_version`.
    #[error("not a graph document: `format_version` is missing or not a whole number")]
    NoVersion,
    /// The document was written by a newer Heddle.
    #[error(
        "graph format version {found} is newer than this Heddle understands (up to {supported}); \
         upgrade Heddle to open it"
    )]
    NewerVersion {
        /// The version the document names.
        found: u64,
        /// The newest version this library reads.
        supported: u32,
    },
}

impl GraphDocument {
    /// Reads a document: migrates older versions, refuses newer ones.
    pub fn from_json(text: &str) -> Result<Self, FormatError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        Self::from_value(value)
    }

    /// Like [`GraphDocument::from_json`], from parsed JSON.
    pub fn from_value(mut value: serde_json::Value) -> Result<Self, FormatError> {
        migrate(&mut value)?;
        serde_path_to_error::deserialize(value).map_err(|error| FormatError::Shape {
            path: error.path().to_string(),
            message: error.into_inner().to_string(),
        })
    }

    /// Writes the document as pretty JSON with every object's keys sorted,
    /// so two exports of the same graph are byte-identical.
    pub fn to_json(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        let mut text = canonical(&value);
        text.push('\n');
        text
    }

    /// The JSON Schema of the document, generated from these types.
    pub fn json_schema() -> serde_json::Value {
        let schema = schemars::schema_for!(GraphDocument);
        serde_json::to_value(schema).unwrap_or(serde_json::Value::Null)
    }
}

/// Pretty JSON with sorted keys, whatever map type serde_json was built with.
fn canonical(value: &serde_json::Value) -> String {
    fn sorted(value: &serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                serde_json::Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(sorted).collect())
            }
            other => other.clone(),
        }
    }
    serde_json::to_string_pretty(&sorted(value)).unwrap_or_default()
}
