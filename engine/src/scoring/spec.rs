//! Scorers as data: the JSON a dataset's owner writes, checked once into a
//! [`Scorer`] with every problem named at its field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Scorer;
use super::contains::Contains;
use super::exact::Exact;
use super::expression::Expression;
use super::fits::Fits;
use super::judge::Judge;
use super::pattern::Pattern;
use super::problem::{ScorerError, problem};
use super::script::Script;
use super::threshold::{Metric, Threshold};
use super::trajectory::{Order, ToolExpected, Trajectory};

/// A scorer, as written: `{"kind": "exact", "of": "output.answer"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScorerSpec {
    /// The value equals the expected one (JSON equality; for two texts,
    /// optionally ignoring case and the spaces around them).
    Exact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// What is scored (default `output`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<String>,
        /// What it should equal (default `reference`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        ignore_case: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        trim: bool,
    },
    /// The text holds `text` (or, without it, the expected text); a list
    /// holds the expected item.
    Contains {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<String>,
        /// A fixed piece of text to look for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// What to look for when `text` is not given (default `reference`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        ignore_case: bool,
    },
    /// The text matches a regular expression (Rust's `regex` syntax:
    /// no look-around or back-references, so matching is linear).
    Regex {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<String>,
        pattern: String,
    },
    /// The value fits a JSON Schema of the subset channels take.
    JsonSchema {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<String>,
        schema: Value,
    },
    /// An expression over `output`, `reference`, `input`, `tokens`,
    /// `cost_usd` and `latency_ms`: `true`/`false`, or a number from 0 to 1.
    Expression {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        expr: String,
    },
    /// Which nodes ran and which tools the models called.
    Trajectory {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// Nodes, named by their path: `research/search` for the node
        /// `search` in the child graph of `research`, `desk:billing/answer`
        /// inside the sub-agent `billing` of the agent `desk`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        nodes: Vec<String>,
        /// Tool calls: a name, and arguments the call must include.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<ToolExpected>,
        #[serde(default)]
        order: Order,
    },
    /// A run's tokens, cost or latency at most `max`.
    Threshold {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        metric: Metric,
        max: f64,
    },
    /// A sandboxed Rhai script over `output`, `reference`, `input`,
    /// `tokens`, `cost_usd` and `latency_ms` that gives a number from 0 to
    /// 1, `true`/`false`, or `#{score, reason}`.
    Script {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        source: String,
        /// The most operations one scoring may take (1 to 100,000,000;
        /// default 1,000,000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_operations: Option<u64>,
        /// The longest one scoring may take, in milliseconds (1 to 30,000;
        /// default 1,000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// A model grades the answer against a rubric, from 0 to 1 with a
    /// reason; on the offline model, a heuristic over the rubric's terms
    /// that says it is one.
    Judge {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// What is graded (default `output`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        of: Option<String>,
        /// What a good answer does, in plain words.
        rubric: String,
        /// The model that grades (default: the server's default model).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
}

fn is_false(value: &bool) -> bool {
    !value
}

/// The longest name a scorer may have.
const MAX_NAME: usize = 80;

/// A compiled scorer's kind.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    Exact(Exact),
    Contains(Contains),
    Regex(Pattern),
    JsonSchema(Fits),
    Expression(Expression),
    Trajectory(Trajectory),
    Threshold(Threshold),
    Script(Script),
    Judge(Judge),
}

impl ScorerSpec {
    /// Reads a scorer from JSON, naming the field that does not read.
    pub fn from_value(value: &Value) -> Result<ScorerSpec, ScorerError> {
        serde_path_to_error::deserialize(value).map_err(|error| {
            let path = error.path().to_string();
            let path = if path == "." { String::new() } else { path };
            problem(path, error.into_inner().to_string())
        })
    }

    /// The name it was given, if any.
    pub fn given_name(&self) -> Option<&str> {
        match self {
            ScorerSpec::Exact { name, .. }
            | ScorerSpec::Contains { name, .. }
            | ScorerSpec::Regex { name, .. }
            | ScorerSpec::JsonSchema { name, .. }
            | ScorerSpec::Expression { name, .. }
            | ScorerSpec::Trajectory { name, .. }
            | ScorerSpec::Threshold { name, .. }
            | ScorerSpec::Script { name, .. }
            | ScorerSpec::Judge { name, .. } => name.as_deref(),
        }
    }

    /// Its kind's name, as written in `kind`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            ScorerSpec::Exact { .. } => "exact",
            ScorerSpec::Contains { .. } => "contains",
            ScorerSpec::Regex { .. } => "regex",
            ScorerSpec::JsonSchema { .. } => "json_schema",
            ScorerSpec::Expression { .. } => "expression",
            ScorerSpec::Trajectory { .. } => "trajectory",
            ScorerSpec::Threshold { .. } => "threshold",
            ScorerSpec::Script { .. } => "script",
            ScorerSpec::Judge { .. } => "judge",
        }
    }

    /// Checks it, reporting every problem at once.
    pub fn compile(&self) -> Result<Scorer, Vec<ScorerError>> {
        let mut problems = Vec::new();
        let name = match self.given_name() {
            Some(name) if name.trim().is_empty() => {
                problems.push(problem("name", "is empty"));
                String::new()
            }
            Some(name) if name.chars().count() > MAX_NAME => {
                problems.push(problem(
                    "name",
                    format!("is longer than {MAX_NAME} characters"),
                ));
                String::new()
            }
            Some(name) => name.to_string(),
            None => self.kind_name().to_string(),
        };
        let kind = match self {
            ScorerSpec::Exact {
                of,
                expected,
                ignore_case,
                trim,
                ..
            } => {
                Exact::new(of.as_deref(), expected.as_deref(), *ignore_case, *trim).map(Kind::Exact)
            }
            ScorerSpec::Contains {
                of,
                text,
                expected,
                ignore_case,
                ..
            } => Contains::new(
                of.as_deref(),
                text.clone(),
                expected.as_deref(),
                *ignore_case,
            )
            .map(Kind::Contains),
            ScorerSpec::Regex { of, pattern, .. } => {
                Pattern::new(of.as_deref(), pattern).map(Kind::Regex)
            }
            ScorerSpec::JsonSchema { of, schema, .. } => {
                Fits::new(of.as_deref(), schema).map(Kind::JsonSchema)
            }
            ScorerSpec::Expression { expr, .. } => Expression::new(expr).map(Kind::Expression),
            ScorerSpec::Trajectory {
                nodes,
                tools,
                order,
                ..
            } => Trajectory::new(nodes, tools, *order).map(Kind::Trajectory),
            ScorerSpec::Threshold { metric, max, .. } => {
                Threshold::new(*metric, *max).map(Kind::Threshold)
            }
            ScorerSpec::Script {
                source,
                max_operations,
                timeout_ms,
                ..
            } => Script::new(source, *max_operations, *timeout_ms).map(Kind::Script),
            ScorerSpec::Judge {
                of, rubric, model, ..
            } => Judge::new(of.as_deref(), rubric, model.as_deref()).map(Kind::Judge),
        };
        match kind {
            Ok(kind) if problems.is_empty() => Ok(Scorer { name, kind }),
            Ok(_) => Err(problems),
            Err(mut more) => {
                problems.append(&mut more);
                Err(problems)
            }
        }
    }
}
