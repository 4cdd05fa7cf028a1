//! Datasets for evaluations: a graph's examples (an input, optionally the
//! output it should give), versioned so that an experiment names the
//! examples it ran over. Every change makes a new version; an example is
//! never changed in place, so any version reads back as it was.

pub mod import;

use crate::graphs::GraphId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most datasets one graph may hold.
pub const MAX_DATASETS_PER_GRAPH: usize = 100;
/// The most examples a version of a dataset may hold.
pub const MAX_EXAMPLES: usize = 10_000;
/// The most example rows a dataset keeps over all its versions (each
/// edit keeps the old example for the versions that had it).
pub const MAX_KEPT_EXAMPLES: usize = 100_000;
/// The most examples one request may add.
pub const MAX_EXAMPLES_PER_REQUEST: usize = 1_000;
/// The most examples one page of a listing holds.
pub const MAX_PAGE: usize = 500;
/// The largest input, and the largest reference, of an example (bytes of
/// JSON).
pub const MAX_EXAMPLE_VALUE_BYTES: usize = 256 * 1024;
/// The most bytes of JSON a dataset keeps over all its versions.
pub const MAX_DATASET_BYTES: i64 = 64 * 1024 * 1024;
/// The longest label of an example.
pub const MAX_LABEL_CHARS: usize = 200;

/// What breaks the bounds a dataset keeps on one example, and where: the
/// part (`label`, `input` or `reference`) and why. The server refuses such
/// an example and the import dialog names it before sending: one rule.
pub fn example_problem(
    label: Option<&str>,
    input: &Value,
    reference: Option<&Value>,
) -> Option<(&'static str, String)> {
    if label.is_some_and(|label| label.trim().chars().count() > MAX_LABEL_CHARS) {
        return Some(("label", format!("at most {MAX_LABEL_CHARS} characters")));
    }
    let limits = heddle_engine::state::ValueLimits::new(
        heddle_engine::state::DEFAULT_MAX_DEPTH,
        MAX_EXAMPLE_VALUE_BYTES,
    );
    if let Err(error) = limits.check(input) {
        return Some(("input", error.to_string()));
    }
    match reference.map(|reference| limits.check(reference)) {
        Some(Err(error)) => Some(("reference", error.to_string())),
        _ => None,
    }
}

/// A dataset as listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dataset {
    pub id: String,
    pub graph_id: GraphId,
    pub name: String,
    /// The latest version (0 before the first example).
    pub version: i64,
    /// How many examples the latest version holds.
    pub examples: i64,
    /// Who made it (`None` once their account is gone).
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// What a new dataset is called.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDataset {
    /// 1 to 64 characters, unique among the graph's datasets.
    pub name: String,
}

/// An example as it is given: what the run is asked and what it should
/// answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleInput {
    /// The run's input: an object of channel values.
    pub input: serde_json::Map<String, Value>,
    /// What the run should give (scorers read it as `reference`).
    #[serde(default)]
    pub reference: Option<Value>,
    /// A name for it in results (up to 200 characters).
    #[serde(default)]
    pub label: Option<String>,
}

/// Examples to add to a dataset: one new version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewExamples {
    /// 1 to 1,000 examples, added at the end in this order.
    pub examples: Vec<ExampleInput>,
}

/// A run to make an example of: its input, and its output as the
/// reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromRun {
    /// A finished run of this graph.
    pub run_id: heddle_engine::RunId,
    /// A name for the example.
    #[serde(default)]
    pub label: Option<String>,
    /// Which output channels become the reference (all of them when not
    /// given).
    #[serde(default)]
    pub reference_channels: Option<Vec<String>>,
    /// For a turn of a conversation: the example's input holds the whole
    /// conversation up to the turn's question (each chat channel as the
    /// run left it, less the answer), not only the question, so a later
    /// version is asked it in the same context.
    #[serde(default)]
    pub with_conversation: bool,
}

/// An example of a version of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Example {
    pub id: String,
    pub label: Option<String>,
    pub input: serde_json::Map<String, Value>,
    pub reference: Option<Value>,
    /// The run it was made from, if any.
    pub source_run: Option<heddle_engine::RunId>,
    /// The version that added it.
    pub added_in: i64,
}

/// A version of a dataset with a page of its examples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DatasetVersion {
    pub dataset: Dataset,
    /// The version these examples are of.
    pub version: i64,
    /// How many examples the version holds in all.
    pub total: i64,
    /// From `offset`, at most `limit` of them, in their order.
    pub examples: Vec<Example>,
}
