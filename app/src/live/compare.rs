//! Two runs side by side, from their event logs: the nodes each ran at each
//! step, the first step where they part (other nodes, or another state
//! after it), and their final states channel by channel. A fork and the
//! run it branched from are the usual pair; any two runs of a graph work.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::RunLog;

/// What a run did at a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It ran these nodes (none: a step that only took stock).
    Nodes(Vec<String>),
    /// It starts later: a fork branched from its run after this step.
    NotYet,
    /// It had ended.
    Ended,
}

/// One step of both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPair {
    pub step: u32,
    pub left: Ran,
    pub right: Ran,
    /// Both ran the step and left the same state after it.
    pub same_state: bool,
    /// Here the runs differ: other nodes or another state, or one went on
    /// after the other ended. A fork's missing first steps are shared
    /// history, not a difference.
    pub differs: bool,
}

/// A channel's value in both runs at one moment (`null` where it has
/// none); `None` for a run that had not begun (a fork before its branch).
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelPair {
    pub channel: String,
    pub left: Option<Value>,
    pub right: Option<Value>,
}

impl ChannelPair {
    /// Both runs hold the channel and disagree on it.
    pub fn differs(&self) -> bool {
        matches!((&self.left, &self.right), (Some(l), Some(r)) if l != r)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub steps: Vec<StepPair>,
    /// The first step both ran where they ran other nodes or left another
    /// state, or where one went on after the other ended.
    pub parted_at: Option<u32>,
    left: Steps,
    right: Steps,
}

impl Comparison {
    /// Both runs' states after `step` (at their ends for `None`), channel by
    /// channel, in name order.
    pub fn channels(&self, step: Option<u32>) -> Vec<ChannelPair> {
        let (left, right) = (self.left.state_at(step), self.right.state_at(step));
        let names: BTreeSet<&String> = left
            .iter()
            .chain(right.iter())
            .flat_map(|state| state.keys())
            .collect();
        let value = |state: Option<&Map<String, Value>>, channel: &str| {
            state.map(|state| state.get(channel).cloned().unwrap_or(Value::Null))
        };
        names
            .into_iter()
            .map(|channel| ChannelPair {
                channel: channel.clone(),
                left: value(left, channel),
                right: value(right, channel),
            })
            .collect()
    }
}

/// What one run did at each of its steps.
#[derive(Clone, Debug, PartialEq)]
struct Steps {
    nodes: BTreeMap<u32, Vec<String>>,
    /// The state it started from, and after each step.
    initial: Map<String, Value>,
    states: BTreeMap<u32, Map<String, Value>>,
    first: Option<u32>,
    last: Option<u32>,
}

impl Steps {
    fn of(log: &RunLog) -> Steps {
        let mut nodes: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        // The run's own nodes: a child graph's steps are its own.
        for execution in log.executions().into_iter().filter(|e| e.within.is_empty()) {
            let ran = nodes.entry(execution.step).or_default();
            // A retry is the same node again, not another.
            if !ran.contains(&execution.node) {
                ran.push(execution.node);
            }
        }
        let initial = log.state_after(None).0;
        let states = log
            .states()
            .into_iter()
            .map(|(step, state, _)| (step, state))
            .collect();
        Steps {
            nodes,
            initial,
            states,
            first: log.first_step(),
            last: log.last_step(),
        }
    }

    /// What the run did at `step`.
    fn at(&self, step: u32) -> Ran {
        match (self.first, self.last) {
            (Some(first), _) if step < first => Ran::NotYet,
            (Some(_), Some(last)) if step <= last => {
                Ran::Nodes(self.nodes.get(&step).cloned().unwrap_or_default())
            }
            _ => Ran::Ended,
        }
    }

    /// The state after `step` (at the end for `None`); `None` before the
    /// run began. A fork begins from the state after the step before its
    /// first, with its edits: that state is its initial one.
    fn state_at(&self, step: Option<u32>) -> Option<&Map<String, Value>> {
        let after = match step {
            Some(step) if self.first.is_some_and(|first| step + 1 < first) => return None,
            Some(step) => self.states.range(..=step).next_back(),
            None => self.states.iter().next_back(),
        };
        Some(after.map_or(&self.initial, |(_, state)| state))
    }
}

/// Sets `left` and `right` side by side.
pub fn compare(left: &RunLog, right: &RunLog) -> Comparison {
    let (a, b) = (Steps::of(left), Steps::of(right));
    let first = a.first.into_iter().chain(b.first).min();
    let last = a.last.into_iter().chain(b.last).max();
    let mut steps = Vec::new();
    let mut parted_at = None;
    if let (Some(first), Some(last)) = (first, last) {
        for step in first..=last {
            let (left, right) = (a.at(step), b.at(step));
            let both_ran = matches!((&left, &right), (Ran::Nodes(_), Ran::Nodes(_)));
            let same_state = both_ran && a.states.get(&step) == b.states.get(&step);
            let differs = match (&left, &right) {
                (Ran::Nodes(l), Ran::Nodes(r)) => l != r || !same_state,
                (Ran::Nodes(_), Ran::Ended) | (Ran::Ended, Ran::Nodes(_)) => true,
                _ => false,
            };
            if differs && parted_at.is_none() {
                parted_at = Some(step);
            }
            steps.push(StepPair {
                step,
                left,
                right,
                same_state,
                differs,
            });
        }
    }
    Comparison {
        steps,
        parted_at,
        left: a,
        right: b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Ran, compare};
    use crate::live::log::tests::log;

    /// A counter run: `start` at step 0, then `tick` once a step from
    /// `from` (its first step) to `to`, counting up from `count`.
    fn counter(first: u32, last: u32, count: i64, target: i64) -> crate::live::RunLog {
        let mut bodies = vec![json!({"type": "run_started", "graph": "g", "input": {},
            "state": {"count": count, "target": target}})];
        let mut count = count;
        for step in first..=last {
            let node = if step == 0 { "start" } else { "tick" };
            if step > 0 {
                count += 1;
            }
            bodies.extend([
                json!({"type": "step_started", "step": step, "tasks": [{"node": node}]}),
                json!({"type": "node_started", "step": step, "node": node, "task": 0, "attempt": 1}),
                json!({"type": "node_succeeded", "step": step, "node": node, "task": 0, "duration_us": 5, "update": {}}),
                json!({"type": "step_finished", "step": step, "delta": {"count": count}}),
            ]);
        }
        bodies.push(json!({"type": "run_finished", "output": {}, "steps": last + 1}));
        log(&bodies)
    }

    #[test]
    fn a_fork_parts_where_its_state_was_edited_and_goes_on_after_the_original_ends() {
        // The original counts to 3; the fork branched after step 1 with a
        // target of 5 and counts on to 5.
        let original = counter(0, 3, 0, 3);
        let fork = counter(2, 5, 1, 5);
        let comparison = compare(&original, &fork);
        assert_eq!(comparison.steps.len(), 6);
        // Before the branch the fork has no steps of its own.
        assert_eq!(comparison.steps[0].left, Ran::Nodes(vec!["start".into()]));
        assert_eq!(comparison.steps[0].right, Ran::NotYet);
        assert!(!comparison.steps[0].differs);
        // Same node at step 2, but another target in the state.
        assert_eq!(comparison.steps[2].left, comparison.steps[2].right);
        assert!(!comparison.steps[2].same_state);
        assert!(comparison.steps[2].differs);
        assert_eq!(comparison.parted_at, Some(2));
        assert_eq!(comparison.steps[5].left, Ran::Ended);
        assert!(comparison.steps[5].differs);
        let differs = |step| -> Vec<(String, Option<Value>, Option<Value>)> {
            comparison
                .channels(step)
                .into_iter()
                .filter(|pair| pair.differs())
                .map(|pair| (pair.channel, pair.left, pair.right))
                .collect()
        };
        let both = |channel: &str, left: Value, right: Value| {
            (channel.to_string(), Some(left), Some(right))
        };
        assert_eq!(
            differs(None),
            [
                both("count", json!(3), json!(5)),
                both("target", json!(3), json!(5))
            ]
        );
        // After step 2 both counted to 2; only the target differs.
        assert_eq!(differs(Some(2)), [both("target", json!(3), json!(5))]);
        // At its branch, the fork's state is the one it began from: the
        // count so far and its own target.
        assert_eq!(differs(Some(1)), [both("target", json!(3), json!(5))]);
        // Before that the fork holds no state of its own.
        let at_zero = comparison.channels(Some(0));
        assert!(
            at_zero
                .iter()
                .all(|pair| pair.right.is_none() && !pair.differs())
        );
        assert_eq!(at_zero[0].left, Some(json!(0)));
        // After the original ended, its state stays as it ended.
        assert_eq!(differs(Some(5))[0], both("count", json!(3), json!(5)));
    }

    #[test]
    fn the_same_run_twice_never_parts_and_one_that_stops_sooner_parts_where_it_ended() {
        let run = counter(0, 3, 0, 3);
        let same = compare(&run, &run.clone());
        assert_eq!(same.parted_at, None);
        assert!(same.steps.iter().all(|pair| pair.same_state));
        assert!(same.channels(None).iter().all(|pair| !pair.differs()));

        let shorter = counter(0, 2, 0, 3);
        assert_eq!(compare(&run, &shorter).parted_at, Some(3));
        assert_eq!(compare(&shorter, &run).parted_at, Some(3));
    }
}
