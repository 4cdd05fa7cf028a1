//! Experiments: a graph version run over a dataset version, every example
//! (times its repetitions) an ordinary run, scored when it ends; and what
//! one reports while it runs and after.

use crate::graphs::GraphId;
use heddle_engine::RunId;
use heddle_engine::named_enum;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most runs one experiment makes (examples times repetitions).
pub const MAX_EXPERIMENT_RUNS: usize = 10_000;
/// The most repetitions of each example.
pub const MAX_REPETITIONS: u32 = 10;
/// The most scorers one experiment names.
pub const MAX_SCORERS: usize = 20;
/// The most experiments one account may have running at once.
pub const MAX_RUNNING_PER_ACCOUNT: usize = 3;
/// The most experiments a graph keeps (delete old ones to make more).
pub const MAX_EXPERIMENTS_PER_GRAPH: usize = 500;
/// The longest name of an experiment.
pub const MAX_NAME_CHARS: usize = 100;

/// What an experiment runs and how it scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewExperiment {
    /// The dataset of this graph whose examples it runs.
    pub dataset_id: String,
    /// Which version of the dataset (its latest when not given).
    #[serde(default)]
    pub dataset_version: Option<i64>,
    /// Which saved version of the graph (its newest, the draft as the
    /// editor shows it, when not given).
    #[serde(default)]
    pub graph_version: Option<i64>,
    /// A name for it (the graph and dataset versions when not given).
    #[serde(default)]
    pub name: Option<String>,
    /// 1 to 20 scorers, as `heddle eval` takes them (see
    /// docs/evaluations.md): `{"kind": "exact", "of": "output.answer"}`.
    pub scorers: Vec<Value>,
    /// How many times each example runs (1 to 10; default 1): scores are
    /// then shown with their spread.
    #[serde(default)]
    pub repetitions: Option<u32>,
    /// Past this many tokens in all, no more examples start and those
    /// running are cancelled.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Past this cost in US dollars, the same.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// Keep every model and tool reply of its runs, so that a later
    /// experiment can be given them back (`replay_from`).
    #[serde(default)]
    pub record_replies: bool,
    /// An experiment of this graph that recorded its replies: each run of
    /// this one is given back the replies of the same example and
    /// repetition there, streams and tool-call ids exactly; a call whose
    /// request changed goes to the model or tool (and is recorded: a
    /// replay records too).
    #[serde(default)]
    pub replay_from: Option<String>,
}

/// How an experiment's model and tool calls were answered.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ReplyCounts {
    /// From the recording it replays.
    pub replayed: u64,
    /// By the model or tool itself.
    pub live: u64,
}

named_enum! {
    /// Where an experiment stands.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
    pub enum ExperimentStatus {
        /// Examples are running or waiting their turn.
        Running = "running",
        /// Every example ran and was scored.
        Finished = "finished",
        /// Someone cancelled it.
        Cancelled = "cancelled",
        /// It stopped by itself: a ceiling was reached, or its maker may no
        /// longer run the graph (`stop_reason` says which).
        Stopped = "stopped",
    }
}

named_enum! {
    /// Where one example's run stands.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
    pub enum ItemStatus {
        /// Not started yet.
        Pending = "pending",
        /// Its run is queued, running or paused.
        Started = "started",
        /// Its run finished and was scored.
        Scored = "scored",
        /// Its run did not finish (failed, cancelled or paused for a
        /// person): every scorer gives it 0.
        Failed = "failed",
        /// It never ran: the experiment ended first.
        Skipped = "skipped",
    }
}

/// How many of an experiment's runs stand where.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Progress {
    /// Examples times repetitions.
    pub total: u64,
    pub pending: u64,
    pub started: u64,
    pub scored: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Progress {
    /// Runs that ended (scored or failed).
    pub fn done(&self) -> u64 {
        self.scored + self.failed
    }
}

/// One scorer's results over an experiment: the mean and the spread of
/// its scores (failed runs count as 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScorerSummary {
    pub scorer: String,
    /// Runs scored (finished or failed).
    pub count: u64,
    pub mean: f64,
    /// The standard deviation of the scores (0 for fewer than two).
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
}

/// An experiment, with its progress and its scores so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Experiment {
    pub id: String,
    pub graph_id: GraphId,
    pub graph_version: i64,
    pub dataset_id: String,
    /// The dataset's name (`None` once it is deleted).
    pub dataset_name: Option<String>,
    pub dataset_version: i64,
    pub name: String,
    pub scorers: Vec<Value>,
    pub repetitions: u32,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub status: ExperimentStatus,
    /// Why it stopped by itself.
    pub stop_reason: Option<String>,
    /// Who started it (`None` once their account is gone).
    pub created_by: Option<String>,
    pub created_at: String,
    pub ended_at: Option<String>,
    pub progress: Progress,
    /// Tokens its ended runs used.
    pub tokens: u64,
    /// What its ended runs cost, in US dollars (priced models only).
    pub cost_usd: f64,
    /// Latency of its runs that ended, in milliseconds.
    pub latency_p50_ms: Option<u64>,
    pub latency_p95_ms: Option<u64>,
    /// Per scorer, in the order they were given.
    pub scores: Vec<ScorerSummary>,
    /// Whether its runs' replies are kept.
    pub record_replies: bool,
    /// The experiment whose replies its runs are given back.
    pub replay_from: Option<String>,
    /// How its ended runs' calls were answered (recorded runs only).
    pub replies: ReplyCounts,
}

/// One scorer's score of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemScore {
    pub scorer: String,
    /// From 0 to 1.
    pub value: f64,
    pub reason: String,
}

/// One example's run (one repetition) and its scores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExperimentItem {
    pub example_id: String,
    /// The example's label, when it has one.
    pub label: Option<String>,
    /// From 1.
    pub repetition: u32,
    pub status: ItemStatus,
    /// Its run: open, replay or fork it like any other.
    pub run_id: Option<RunId>,
    /// The run's final state.
    pub output: Option<Value>,
    pub scores: Vec<ItemScore>,
    pub tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub latency_ms: Option<u64>,
    /// Why the run did not finish.
    pub error: Option<String>,
}

/// A page of an experiment's runs, in the dataset's order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExperimentItems {
    pub total: u64,
    pub items: Vec<ExperimentItem>,
}

/// A graph's gate on publishing: a version goes live only when its
/// newest finished experiment on this dataset version scores, per
/// scorer, no worse than the live version's less that scorer's
/// tolerance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PublishGate {
    pub dataset_id: String,
    /// The dataset's name.
    pub dataset_name: Option<String>,
    pub dataset_version: i64,
    /// How far under the live version's mean a scorer's may fall, per
    /// scorer named here...
    pub tolerances: std::collections::BTreeMap<String, f64>,
    /// ...and for every other scorer.
    pub tolerance: f64,
    /// Who set it (`None` once their account is gone).
    pub set_by: Option<String>,
    pub set_at: String,
}

/// What a graph's publishing gate is to be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPublishGate {
    /// One of the graph's datasets.
    pub dataset_id: String,
    /// Which version of it (its latest when not given).
    #[serde(default)]
    pub dataset_version: Option<i64>,
    /// Per scorer, from 0 to 1 (at most 20 scorers).
    #[serde(default)]
    pub tolerances: std::collections::BTreeMap<String, f64>,
    /// For every scorer not in `tolerances`, from 0 to 1 (default 0).
    #[serde(default)]
    pub tolerance: f64,
}
