//! The comparison's example rows, worked out apart from their drawing:
//! per example, per experiment, its answer and each scorer's mean over
//! its repetitions; sorted so the examples whose total score fell most
//! (last experiment against the first) come first.

use std::collections::BTreeMap;

use crate::experiments::ExperimentItem;

/// One example's runs in one experiment.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cell {
    /// What a person reads of the first repetition's output.
    pub answer: Option<String>,
    /// Each scorer's mean over the repetitions.
    pub scores: BTreeMap<String, f64>,
    /// Why a repetition's run did not finish, if one did not.
    pub failed: Option<String>,
}

impl Cell {
    fn total(&self) -> f64 {
        self.scores.values().sum()
    }
}

/// One example across the experiments compared.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ExampleRow {
    pub example: String,
    pub label: Option<String>,
    /// One per experiment, in the columns' order.
    pub cells: Vec<Cell>,
    /// The last experiment's total score less the first's.
    pub change: f64,
}

/// A scorer's running sum and count.
#[derive(Default)]
struct Tally {
    sum: f64,
    runs: u32,
}

/// The rows for `all` (each experiment's items), regressions first, the
/// rest in the order the examples were first seen.
pub(super) fn example_rows(all: &[Vec<ExperimentItem>]) -> Vec<ExampleRow> {
    let mut rows: Vec<ExampleRow> = Vec::new();
    for (column, items) in all.iter().enumerate() {
        let mut tallies: BTreeMap<&str, BTreeMap<String, Tally>> = BTreeMap::new();
        for item in items {
            let at = match rows.iter().position(|row| row.example == item.example_id) {
                Some(at) => at,
                None => {
                    rows.push(ExampleRow {
                        example: item.example_id.clone(),
                        label: item.label.clone(),
                        cells: vec![Cell::default(); all.len()],
                        change: 0.0,
                    });
                    rows.len() - 1
                }
            };
            let cell = &mut rows[at].cells[column];
            if cell.answer.is_none() {
                cell.answer = item.output.as_ref().map(answer_of);
            }
            if cell.failed.is_none() {
                cell.failed = item.error.clone();
            }
            let tally = tallies.entry(item.example_id.as_str()).or_default();
            for score in &item.scores {
                let entry = tally.entry(score.scorer.clone()).or_default();
                entry.sum += score.value;
                entry.runs += 1;
            }
        }
        for (example, tally) in tallies {
            if let Some(row) = rows.iter_mut().find(|row| row.example == example) {
                row.cells[column].scores = tally
                    .into_iter()
                    .map(|(name, tally)| (name, tally.sum / f64::from(tally.runs.max(1))))
                    .collect();
            }
        }
    }
    for row in &mut rows {
        row.change = match (row.cells.first(), row.cells.last()) {
            (Some(first), Some(last)) => last.total() - first.total(),
            _ => 0.0,
        };
    }
    // A stable sort: equal changes keep the dataset's order.
    rows.sort_by(|a, b| {
        a.change
            .partial_cmp(&b.change)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows
}

/// What a person reads of a run's output: a chat graph's last answer, or
/// the output as compact JSON; cut to 300 characters.
fn answer_of(output: &serde_json::Value) -> String {
    let text = output
        .as_object()
        .and_then(|state| {
            state.values().find_map(|value| {
                value.as_array().and_then(|messages| {
                    messages
                        .last()
                        .and_then(|message| message.get("content"))
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                })
            })
        })
        .unwrap_or_else(|| output.to_string());
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{ItemScore, ItemStatus};
    use serde_json::json;

    fn item(example: &str, repetition: u32, value: f64, answer: &str) -> ExperimentItem {
        ExperimentItem {
            example_id: example.into(),
            label: Some(format!("label {example}")),
            repetition,
            status: ItemStatus::Scored,
            run_id: None,
            output: Some(json!({"messages": [{"role": "assistant", "content": answer}]})),
            scores: vec![ItemScore {
                scorer: "answer".into(),
                value,
                reason: String::new(),
            }],
            tokens: None,
            cost_usd: None,
            latency_ms: None,
            error: None,
        }
    }

    #[test]
    fn regressions_come_first_then_the_datasets_order() {
        let baseline = vec![
            item("a", 1, 1.0, "yes"),
            item("b", 1, 1.0, "yes"),
            item("c", 1, 0.0, "no"),
        ];
        // b falls by one; c rises; a keeps its score over two repetitions
        // whose mean is 1.
        let candidate = vec![
            item("a", 1, 1.0, "yes"),
            item("a", 2, 1.0, "yes!"),
            item("b", 1, 0.0, "no"),
            item("c", 1, 0.5, "maybe"),
            item("c", 2, 1.0, "yes"),
        ];
        let rows = example_rows(&[baseline, candidate]);
        let order: Vec<(&str, f64)> = rows
            .iter()
            .map(|r| (r.example.as_str(), r.change))
            .collect();
        assert_eq!(order, [("b", -1.0), ("a", 0.0), ("c", 0.75)]);
        assert_eq!(rows[0].cells[0].answer.as_deref(), Some("yes"));
        assert_eq!(rows[0].cells[1].answer.as_deref(), Some("no"));
        assert_eq!(rows[2].cells[1].scores["answer"], 0.75);
        assert_eq!(rows[1].label.as_deref(), Some("label a"));
    }

    #[test]
    fn an_example_missing_from_one_experiment_has_an_empty_cell_there() {
        let rows = example_rows(&[vec![item("a", 1, 1.0, "yes")], vec![]]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].cells[1], Cell::default());
        assert_eq!(rows[0].change, -1.0);
    }

    #[test]
    fn answers_are_a_chats_last_message_or_compact_json_cut_to_300_characters() {
        assert_eq!(answer_of(&json!({"count": 3})), "{\"count\":3}");
        let long = "x".repeat(400);
        let cut = answer_of(&json!({"messages": [{"content": long}]}));
        assert_eq!(cut.chars().count(), 301);
        assert!(cut.ends_with('…'));
    }
}
