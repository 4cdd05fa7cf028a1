//! `trajectory`: which nodes ran and which tools the models called, with
//! which arguments, against the ones expected: in order (anything may come
//! between), in any order, or exactly.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::problem::{ScorerError, problem};
use super::{Observed, Score};

/// The most steps a trajectory may expect.
const MAX_EXPECTED: usize = 200;

/// The most observed steps a trajectory compares (a run's log is bounded;
/// this bounds the comparison's table).
const MAX_OBSERVED: usize = 20_000;

/// A tool call a trajectory expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolExpected {
    pub name: String,
    /// Fields the call's arguments must have, with these values (other
    /// fields may be there too); any arguments when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// How a trajectory's expected steps must appear.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// In this order, with anything else between them: the score is the
    /// share of them found in order.
    #[default]
    InOrder,
    /// In any order: the share of them found (each once per expectation).
    AnyOrder,
    /// Exactly these and nothing else, in this order: the share of the
    /// longer list that lines up.
    Exact,
}

#[derive(Debug, Clone)]
pub(super) struct Trajectory {
    nodes: Vec<String>,
    tools: Vec<ToolExpected>,
    order: Order,
}

impl Trajectory {
    pub(super) fn new(
        nodes: &[String],
        tools: &[ToolExpected],
        order: Order,
    ) -> Result<Trajectory, Vec<ScorerError>> {
        let mut problems = Vec::new();
        if nodes.is_empty() && tools.is_empty() {
            problems.push(problem("nodes", "give the nodes or the tools expected"));
        }
        if nodes.len() + tools.len() > MAX_EXPECTED {
            problems.push(problem(
                "nodes",
                format!("at most {MAX_EXPECTED} nodes and tools together"),
            ));
        }
        for (index, node) in nodes.iter().enumerate() {
            if node.trim().is_empty() {
                problems.push(problem(format!("nodes[{index}]"), "is empty"));
            }
        }
        for (index, tool) in tools.iter().enumerate() {
            if tool.name.trim().is_empty() {
                problems.push(problem(format!("tools[{index}].name"), "is empty"));
            }
            if let Some(arguments) = &tool.arguments
                && !arguments.is_object()
            {
                problems.push(problem(
                    format!("tools[{index}].arguments"),
                    "must be an object of the fields the call must have",
                ));
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Trajectory {
            nodes: nodes.to_vec(),
            tools: tools.to_vec(),
            order,
        })
    }

    pub(super) fn score(&self, observed: &Observed) -> Score {
        let ran: Vec<&String> = observed.nodes.iter().take(MAX_OBSERVED).collect();
        let called: Vec<_> = observed.tool_calls.iter().take(MAX_OBSERVED).collect();
        let nodes = compare(&self.nodes, &ran, self.order, |want, got| want == *got);
        let tools = compare(&self.tools, &called, self.order, |want, got| {
            want.name == got.name
                && want
                    .arguments
                    .as_ref()
                    .is_none_or(|wanted| includes(&got.arguments, wanted))
        });
        let matched = nodes.matched + tools.matched;
        let total = nodes.total + tools.total;
        let how = match self.order {
            Order::InOrder => "in order",
            Order::AnyOrder => "in any order",
            Order::Exact => "exactly",
        };
        let mut reason = format!("{matched} of {total} {how}");
        if let Some(index) = nodes.first_missing {
            reason.push_str(&format!("; the node `{}` is missing", self.nodes[index]));
        }
        if let Some(index) = tools.first_missing {
            reason.push_str(&format!(
                "; the tool call `{}` is missing",
                self.tools[index].name
            ));
        }
        if self.order == Order::Exact && nodes.extra + tools.extra > 0 {
            reason.push_str(&format!(
                "; {} more than expected",
                nodes.extra + tools.extra
            ));
        }
        Score::share(matched, total, reason)
    }
}

/// How one list of expectations matched.
struct Compared {
    matched: usize,
    /// What the share is of: the expected (the observed too, when exact).
    total: usize,
    first_missing: Option<usize>,
    extra: usize,
}

fn compare<W, G>(wanted: &[W], got: &[G], order: Order, same: impl Fn(&W, &G) -> bool) -> Compared {
    let found = match order {
        Order::AnyOrder => any_order(wanted, got, &same),
        Order::InOrder | Order::Exact => in_order(wanted, got, &same),
    };
    let matched = found.iter().filter(|found| **found).count();
    let (total, extra) = match order {
        Order::Exact if !wanted.is_empty() => (
            wanted.len().max(got.len()),
            got.len().saturating_sub(matched),
        ),
        _ => (wanted.len(), 0),
    };
    Compared {
        matched,
        total,
        first_missing: found.iter().position(|found| !found),
        extra,
    }
}

/// Which expectations match a distinct observed step, each taking the
/// first unused one it matches.
fn any_order<W, G>(wanted: &[W], got: &[G], same: &impl Fn(&W, &G) -> bool) -> Vec<bool> {
    let mut used = vec![false; got.len()];
    wanted
        .iter()
        .map(|want| {
            let hit = (0..got.len()).find(|&index| !used[index] && same(want, &got[index]));
            if let Some(index) = hit {
                used[index] = true;
            }
            hit.is_some()
        })
        .collect()
}

/// Which expectations are in the longest run of them found in order (the
/// longest common subsequence).
fn in_order<W, G>(wanted: &[W], got: &[G], same: &impl Fn(&W, &G) -> bool) -> Vec<bool> {
    let (rows, columns) = (wanted.len(), got.len());
    // lengths[i][j]: the longest common subsequence of wanted[i..], got[j..].
    let mut lengths = vec![0u16; (rows + 1) * (columns + 1)];
    let at = |i: usize, j: usize| i * (columns + 1) + j;
    for i in (0..rows).rev() {
        for j in (0..columns).rev() {
            lengths[at(i, j)] = if same(&wanted[i], &got[j]) {
                lengths[at(i + 1, j + 1)] + 1
            } else {
                lengths[at(i + 1, j)].max(lengths[at(i, j + 1)])
            };
        }
    }
    let mut found = vec![false; rows];
    let (mut i, mut j) = (0, 0);
    while i < rows && j < columns {
        if same(&wanted[i], &got[j]) && lengths[at(i, j)] == lengths[at(i + 1, j + 1)] + 1 {
            found[i] = true;
            i += 1;
            j += 1;
        } else if lengths[at(i + 1, j)] >= lengths[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    found
}

/// Whether `value` has every field of `wanted` with the same value
/// (objects compared field by field, numbers by value).
fn includes(value: &Value, wanted: &Value) -> bool {
    match (value, wanted) {
        (Value::Object(value), Value::Object(wanted)) => wanted
            .iter()
            .all(|(key, want)| value.get(key).is_some_and(|got| includes(got, want))),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| includes(a, b))
        }
        (a, b) => a == b,
    }
}
