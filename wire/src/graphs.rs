//! Graphs as the browser and the API see them: ids, summaries, versions,
//! saves and import previews.
//!
//! A graph row holds the graph's JSON document (the engine's format), a
//! version number that every save increments, and ISO-8601 UTC timestamps
//! (so they sort as text).

use crate::access::Role;
use heddle_engine::validate::Problem;
use serde::{Deserialize, Serialize};

/// A graph's id: a UUID in its hyphenated text form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct GraphId(String);

impl GraphId {
    /// The id, if `text` is a well-formed one (so it can name a graph).
    pub fn parse(text: &str) -> Option<GraphId> {
        let valid = text.len() == 36
            && text.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            });
        valid.then(|| GraphId(text.to_ascii_lowercase()))
    }

    /// An id as the database holds it (the store made it with [`GraphId::parse`]
    /// or a UUID of its own); unchecked.
    pub fn from_stored(text: String) -> GraphId {
        GraphId(text)
    }

    /// The id as it appears in URLs and in the database.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path of the graph's page.
    pub fn href(&self) -> String {
        format!("/graphs/{}", self.0)
    }

    /// The path of the graph's page as it opens just made: the page takes
    /// the focus to where building starts ([`JUST_MADE`]), then drops the
    /// mark from the address.
    pub fn just_made_href(&self) -> String {
        format!("/graphs/{}?{JUST_MADE}", self.0)
    }
}

/// The query that marks a graph's page as opened right after the graph
/// was made (New graph, a copy).
pub const JUST_MADE: &str = "new";

impl std::fmt::Display for GraphId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One line of the graphs list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphSummary {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub node_count: i64,
    /// ISO-8601 UTC, e.g. `2026-11-21T06:40:12.345Z`.
    pub updated_at: String,
    /// The owner's username.
    pub owner: String,
    /// The caller's role on it.
    pub role: Role,
}

/// One saved version of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VersionSummary {
    pub version: i64,
    pub name: String,
    pub node_count: i64,
    pub created_at: String,
    /// Who saved it (`None` before accounts).
    pub author: Option<String>,
    /// What the save changed, in words ("added node `tools`, edited the
    /// system prompt of `agent`"); empty for versions saved before Heddle
    /// kept it.
    #[serde(default)]
    pub summary: String,
    /// The name someone gave the version, if any.
    #[serde(default)]
    pub label: Option<String>,
}

/// Everything the graph page shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphDetail {
    pub id: GraphId,
    pub name: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    /// The graph document (the engine's JSON format): as stored, or
    /// compact when it is sent to the graph page.
    pub document: String,
}

/// A graph opened by someone: the graph, and what they may do with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenedGraph {
    pub graph: GraphDetail,
    pub role: Role,
}

/// Where a save left the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Saved {
    pub id: GraphId,
    pub version: i64,
    pub updated_at: String,
}

/// What an import would create, and what stands in its way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportPreview {
    pub name: String,
    pub nodes: usize,
    pub edges: usize,
    pub channels: usize,
    /// Validation problems: an import with them is allowed (fix them in
    /// the editor).
    pub problems: Vec<Problem>,
    /// Credentials it names that the importer has not saved: these stop it.
    pub missing_credentials: Vec<String>,
}

/// Shows an ISO-8601 UTC timestamp as `2026-11-21 06:40 UTC`: the same text
/// on the server and in the browser, so hydration never disagrees.
pub fn display_timestamp(iso: &str) -> String {
    match (iso.get(0..10), iso.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => iso.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::display_timestamp;

    #[test]
    fn timestamps_show_date_and_minutes() {
        assert_eq!(
            display_timestamp("2026-11-21T06:40:12.345Z"),
            "2026-11-21 06:40 UTC"
        );
    }

    #[test]
    fn graph_ids_must_be_uuids() {
        use super::GraphId;
        assert!(GraphId::parse("3F2A0000-0000-4000-8000-000000000000").is_some());
        assert_eq!(
            GraphId::parse("3F2A0000-0000-4000-8000-000000000000")
                .unwrap()
                .as_str(),
            "3f2a0000-0000-4000-8000-000000000000"
        );
        for bad in [
            "",
            "x",
            "3f2a0000-0000-4000-8000-00000000000z",
            "3f2a0000000004000800000000000000000",
        ] {
            assert!(GraphId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn odd_timestamps_are_shown_as_they_are() {
        assert_eq!(display_timestamp("yesterday"), "yesterday");
    }
}
