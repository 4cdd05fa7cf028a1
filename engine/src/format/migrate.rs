//! Upgrading documents written in older format versions.
//!
//! Each step is an explicit function from version `n` to `n + 1`, working
//! on the raw JSON before it is read into types. A document from a newer
//! version than [`FORMAT_VERSION`] is refused, never half-read.
//!
//! History:
//! - 1: the first stored form: name, description, and untyped `nodes` and
//!   `edges` lists (graphs created before the engine's model existed).
//! - 2: adds `state` (channels with types and reducers), typed nodes and
//!   edges, `entry` and `limits`.
//! - 3: a channel may carry a `schema` (a JSON Schema of the subset
//!   [`crate::schema`] documents). Nothing to change in a version 2
//!   document; the number tells an older Heddle that it cannot read the
//!   schemas (it would refuse them as unknown fields, or drop them).

use serde_json::{Map, Value};

use super::FormatError;

/// The format version this library writes.
pub const FORMAT_VERSION: u32 = 3;

/// Brings `document` up to [`FORMAT_VERSION`] in place.
pub fn migrate(document: &mut Value) -> Result<(), FormatError> {
    let Some(object) = document.as_object_mut() else {
        return Err(FormatError::Shape {
            path: ".".into(),
            message: "a graph document is a JSON object".into(),
        });
    };
    let version = object
        .get("format_version")
        .and_then(Value::as_u64)
        .ok_or(FormatError::NoVersion)?;
    if version > u64::from(FORMAT_VERSION) {
        return Err(FormatError::NewerVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if version == 0 {
        return Err(FormatError::NoVersion);
    }
    let mut version = version;
    while version < u64::from(FORMAT_VERSION) {
        match version {
            1 => v1_to_v2(object),
            // Schemas are optional: a version 2 document is a version 3 one.
            2 => {}
            _ => unreachable_version(version)?,
        }
        version += 1;
        object.insert("format_version".into(), Value::from(version));
    }
    Ok(())
}

fn unreachable_version(version: u64) -> Result<(), FormatError> {
    Err(FormatError::Shape {
        path: "format_version".into(),
        message: format!("no migration from format version {version}"),
    })
}

/// Version 1 had no state schema, entry or limits; its node and edge lists
/// were always empty in practice, and are kept as they are for validation
/// to judge.
fn v1_to_v2(document: &mut Map<String, Value>) {
    document
        .entry("state")
        .or_insert_with(|| serde_json::json!({ "channels": {} }));
    document
        .entry("nodes")
        .or_insert_with(|| Value::Array(Vec::new()));
    document
        .entry("edges")
        .or_insert_with(|| Value::Array(Vec::new()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_1_documents_are_upgraded() {
        let mut document = json!({"format_version": 1, "name": "old", "description": "", "nodes": [], "edges": []});
        migrate(&mut document).unwrap();
        assert_eq!(document["format_version"], 3);
        assert_eq!(document["state"], json!({"channels": {}}));
    }

    #[test]
    fn version_2_documents_are_version_3_unchanged_but_for_the_number() {
        let channels = json!({"channels": {"n": {"type": "integer"}}});
        let mut document = json!({"format_version": 2, "name": "two", "state": channels.clone()});
        migrate(&mut document).unwrap();
        assert_eq!(
            document,
            json!({"format_version": 3, "name": "two", "state": channels})
        );
    }

    #[test]
    fn newer_versions_are_refused() {
        let mut document = json!({"format_version": 99, "name": "future"});
        let error = migrate(&mut document).unwrap_err();
        assert!(matches!(error, FormatError::NewerVersion { found: 99, .. }));
        assert!(error.to_string().contains("upgrade Heddle"));
    }

    #[test]
    fn a_missing_version_is_named() {
        for mut document in [
            json!({"name": "x"}),
            json!({"format_version": "2"}),
            json!({"format_version": 0}),
        ] {
            assert!(matches!(
                migrate(&mut document),
                Err(FormatError::NoVersion)
            ));
        }
        assert!(matches!(
            migrate(&mut json!([])),
            Err(FormatError::Shape { .. })
        ));
    }
}
