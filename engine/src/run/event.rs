//! The events a run emits: one stream per run, strictly ordered by `seq`,
//! from which everything a user sees of a run is drawn (the live canvas,
//! the trace, replay).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::checkpoint::Interrupt;
use crate::ids::{CheckpointId, EdgeId, NodeId, RunId};
use crate::state::changes::{self, ChangeError, Changes};

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// The run.
    pub run_id: RunId,
    /// Strictly increasing within the run, from 0, without gaps.
    pub seq: u64,
    /// When, in microseconds since the Unix epoch.
    pub at_us: u64,
    /// Where it happened, when not in the run's own graph: the chain of
    /// nodes (subgraphs, agents' sub-agents) whose child graph it happened
    /// in, outermost first. Empty for the run's own nodes (and in logs
    /// stored before nesting was recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<Hop>,
    /// What happened.
    #[serde(flatten)]
    pub payload: EventPayload,
}

/// One level of nesting: a node of the enclosing graph that ran a child
/// graph, in one of its executions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hop {
    /// The node that ran the child graph (a `subgraph`, an `agent`).
    pub node: NodeId,
    /// The enclosing graph's step it ran in.
    pub step: u32,
    /// Which fanned-out instance of the node, when a fan-out started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
    /// For an agent's sub-agent: its name (the tool the model called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<String>,
}

impl Event {
    /// Whether it happened inside a child graph rather than in the run's
    /// own nodes.
    pub fn is_nested(&self) -> bool {
        !self.path.is_empty()
    }
}

impl EventPayload {
    /// For a step's end: applies what the step changed to `state` (from a
    /// log of any version), and gives the channels it changed; also for
    /// the end of a log compacted to its outcome, which holds what all the
    /// steps changed. `None` for other events.
    pub fn apply_step(
        &self,
        state: &mut serde_json::Map<String, Value>,
    ) -> Option<Result<Vec<String>, ChangeError>> {
        let (changes, delta) = match self {
            EventPayload::StepFinished { changes, delta, .. } => (changes, delta),
            EventPayload::RunFinished { changes, .. } if !changes.is_empty() => (changes, &None),
            _ => return None,
        };
        let mut changed: Vec<String> = changes.keys().cloned().collect();
        if let Err(error) = changes::apply(state, changes) {
            return Some(Err(error));
        }
        if let Some(Value::Object(values)) = delta {
            for (channel, value) in values {
                changed.push(channel.clone());
                state.insert(channel.clone(), value.clone());
            }
        }
        Some(Ok(changed))
    }

    /// For a run's first event: the stored checkpoint whose state, with the
    /// event's changes, is the state the run started from (`None` when the
    /// event holds the state whole, or is not a start).
    pub fn base_checkpoint(&self) -> Option<&CheckpointId> {
        match self {
            EventPayload::RunStarted {
                state: None,
                from: Some(from),
                ..
            } => Some(from),
            EventPayload::RunResumed {
                state: None,
                checkpoint,
                ..
            } => Some(checkpoint),
            _ => None,
        }
    }

    /// For a run's first event: the state the run started from, given the
    /// state of [`base_checkpoint`](Self::base_checkpoint) (ignored when the
    /// event holds the state whole). `None` for other events.
    pub fn start_state(
        &self,
        base: Option<&serde_json::Map<String, Value>>,
    ) -> Option<Result<serde_json::Map<String, Value>, ChangeError>> {
        let (whole, changes) = match self {
            EventPayload::RunStarted {
                state,
                input,
                changes,
                from,
                ..
            } => (
                // The oldest logs have only the input.
                state
                    .clone()
                    .or_else(|| from.is_none().then(|| input.clone())),
                changes,
            ),
            EventPayload::RunResumed { state, changes, .. } => (state.clone(), changes),
            _ => return None,
        };
        let mut state = match (whole, base) {
            (Some(Value::Object(state)), _) => state,
            (Some(_), _) | (None, None) => serde_json::Map::new(),
            (None, Some(base)) => base.clone(),
        };
        Some(changes::apply(&mut state, changes).map(|()| state))
    }

    /// Whether a child graph's event of this kind goes into the enclosing
    /// run's log. A child's own start, end and state changes stay out:
    /// they carry its whole state, and the enclosing node's own events say
    /// how it went; its steps, nodes, edges, tokens, tool calls and model
    /// usage go in.
    pub fn passes_up(&self) -> bool {
        matches!(
            self,
            EventPayload::StepStarted { .. }
                | EventPayload::NodeStarted { .. }
                | EventPayload::NodeSucceeded { .. }
                | EventPayload::NodeFailed { .. }
                | EventPayload::NodeRetrying { .. }
                | EventPayload::EdgeTaken { .. }
                | EventPayload::Custom { .. }
        )
    }
}

/// A task of a step: a node, and which fanned-out instance of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskRef {
    pub node: NodeId,
    /// Set for instances started by a fan-out: the item's position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
    /// For an instance started by a fan-out, its item in a few words
    /// ([`TaskRef::item_label`]), so the people watching tell the
    /// instances apart by what each works on, not only by number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

impl TaskRef {
    /// At most this many characters of an item name its instance.
    pub const ITEM_LABEL_CHARS: usize = 60;

    /// A fanned-out item in a few words: a string is itself; an object is
    /// its first text field's value (its fields in key order), else its
    /// first number's or yes/no's, else how many fields it has; a list
    /// says how many items; cut to [`TaskRef::ITEM_LABEL_CHARS`] with an
    /// ellipsis, on one line. Never walks more than one level of the item,
    /// whatever its size.
    pub fn item_label(item: &serde_json::Value) -> String {
        use serde_json::Value;
        use std::borrow::Cow;
        fn scalar(value: &Value) -> Option<Cow<'_, str>> {
            match value {
                Value::String(text) => Some(Cow::Borrowed(text.as_str())),
                Value::Number(number) => Some(Cow::Owned(number.to_string())),
                Value::Bool(yes) => Some(Cow::Owned(yes.to_string())),
                _ => None,
            }
        }
        let count = |n: usize, one: &str, many: &str| {
            Cow::Owned(if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            })
        };
        let whole: Cow<str> = match item {
            Value::Null => Cow::Borrowed("null"),
            Value::Array(items) => count(items.len(), "item", "items"),
            Value::Object(fields) => fields
                .values()
                .find_map(|value| value.as_str().map(Cow::Borrowed))
                .or_else(|| fields.values().find_map(scalar))
                .unwrap_or_else(|| count(fields.len(), "field", "fields")),
            other => scalar(other).unwrap_or_default(),
        };
        // A few times the label's length is enough to fill it once runs
        // of spaces are folded; the rest of a long text is never read.
        let head: String = whole.chars().take(4 * Self::ITEM_LABEL_CHARS).collect();
        let one_line = head.split_whitespace().collect::<Vec<_>>().join(" ");
        let read_whole = whole.chars().nth(4 * Self::ITEM_LABEL_CHARS).is_none();
        if read_whole && one_line.chars().count() <= Self::ITEM_LABEL_CHARS {
            return one_line;
        }
        let mut cut: String = one_line.chars().take(Self::ITEM_LABEL_CHARS - 1).collect();
        cut.truncate(cut.trim_end().len());
        cut.push('…');
        cut
    }
}

/// Why an edge was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum EdgeReason {
    /// An edge with no condition and no route.
    Static,
    /// The edge's condition held.
    Condition,
    /// The source node chose the edge's route.
    Route { route: String },
    /// The source node named the target directly.
    Goto,
    /// The source node fanned an item out to the target.
    Send,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventPayload {
    /// The run began with this input. The state the first step sees
    /// (defaults, what the thread carried, the input) is `state`, whole,
    /// for a run on a new thread; for a run that goes on with a thread, it
    /// is the state of checkpoint `from` (the thread's newest) with
    /// `changes` applied, so the event does not hold the thread's whole
    /// conversation. (Logs stored before changes have `state` always.)
    RunStarted {
        graph: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<CheckpointId>,
        #[serde(default, skip_serializing_if = "Changes::is_empty")]
        changes: Changes,
    },
    /// The run finished after `steps` steps. Its final state is what its
    /// first event and its steps' changes make; logs stored before changes
    /// also hold it whole in `output`.
    RunFinished {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
        steps: u32,
        /// In a log compacted to its outcome (retention): what all its
        /// steps changed, from the state it started from to its final
        /// state, so the log still ends in the final state. Empty in a
        /// whole log.
        #[serde(default, skip_serializing_if = "Changes::is_empty")]
        changes: Changes,
    },
    /// The run failed.
    RunFailed {
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeId>,
    },
    /// The run was cancelled.
    RunCancelled { step: u32 },
    /// The run paused: a node asked for something, or hit a breakpoint.
    RunInterrupted {
        step: u32,
        interrupts: Vec<Interrupt>,
    },
    /// The run went on from a checkpoint: resumed with a value, recovered
    /// after a crash, or re-run from an earlier point. For a run that
    /// begins here (a re-run, a fork), the state is the stored
    /// `checkpoint`'s with `changes` (a fork's edits) applied; logs stored
    /// before changes hold it whole in `state`.
    RunResumed {
        step: u32,
        checkpoint: CheckpointId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<Value>,
        #[serde(default, skip_serializing_if = "Changes::is_empty")]
        changes: Changes,
    },
    /// A super-step began with these tasks, all running concurrently.
    StepStarted { step: u32, tasks: Vec<TaskRef> },
    /// A super-step's updates were merged: how each channel it changed
    /// changed (what was appended to a list, or the new value; see
    /// [`crate::state::changes`]), so the event grows with the step's
    /// writes, not with the state.
    StepFinished {
        step: u32,
        #[serde(default, skip_serializing_if = "Changes::is_empty")]
        changes: Changes,
        /// In logs stored before changes were recorded: the new value of
        /// every channel that changed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delta: Option<Value>,
    },
    /// A node began an attempt.
    NodeStarted {
        step: u32,
        node: NodeId,
        task: u32,
        attempt: u32,
    },
    /// A node finished.
    NodeSucceeded {
        step: u32,
        node: NodeId,
        task: u32,
        duration_us: u64,
        update: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        route: Option<String>,
    },
    /// A node failed for good.
    NodeFailed {
        step: u32,
        node: NodeId,
        task: u32,
        attempt: u32,
        error: String,
    },
    /// A node failed and will be tried again after `delay_ms`.
    NodeRetrying {
        step: u32,
        node: NodeId,
        task: u32,
        attempt: u32,
        delay_ms: u64,
        error: String,
    },
    /// An edge was taken: `to` runs in the next step (for a join, once
    /// every source has arrived).
    EdgeTaken {
        step: u32,
        from: NodeId,
        to: NodeId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edge: Option<EdgeId>,
        #[serde(flatten)]
        why: EdgeReason,
    },
    /// Something a node reported: token chunks, tool calls, logs.
    Custom {
        node: NodeId,
        /// Which fanned-out instance of the node reported it, when a
        /// fan-out started it (see [`TaskRef::instance`]): parallel
        /// instances stream side by side, and each keeps its own text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instance: Option<u32>,
        name: String,
        data: Value,
    },
}

#[cfg(test)]
mod tests {
    use super::TaskRef;
    use serde_json::json;

    #[test]
    fn an_item_is_named_by_its_text_or_first_text_field_in_a_line() {
        let label = TaskRef::item_label;
        assert_eq!(label(&json!("heat pumps")), "heat pumps");
        assert_eq!(
            label(&json!({"topic": "heat pumps", "depth": 2})),
            "heat pumps"
        );
        // Fields in key order; a text field wins over a number before it.
        assert_eq!(label(&json!({"a": 3, "b": "solar"})), "solar");
        assert_eq!(label(&json!({"a": [1], "b": 7})), "7");
        assert_eq!(label(&json!({"a": [1], "b": {}})), "2 fields");
        assert_eq!(label(&json!([1, 2, 3])), "3 items");
        assert_eq!(label(&json!([1])), "1 item");
        assert_eq!(label(&json!(true)), "true");
        assert_eq!(label(&json!(null)), "null");
        assert_eq!(
            label(&json!("two\n  lines\tand tabs")),
            "two lines and tabs"
        );
    }

    #[test]
    fn a_long_or_hostile_item_is_cut_to_a_line_of_sixty_characters() {
        let long = "word ".repeat(100_000);
        let cut = TaskRef::item_label(&json!(long));
        assert_eq!(cut.chars().count(), TaskRef::ITEM_LABEL_CHARS);
        assert!(
            cut.starts_with("word word") && cut.ends_with("word…"),
            "{cut}"
        );
        // Wide characters are cut on a character, never inside one.
        let wide = TaskRef::item_label(&json!("温".repeat(200)));
        assert_eq!(wide.chars().count(), TaskRef::ITEM_LABEL_CHARS);
        assert!(wide.ends_with('…'));
        // Text hidden past a long run of spaces is not read, and the
        // label says there was more.
        let hidden = format!("start{}end", " ".repeat(10_000));
        assert_eq!(TaskRef::item_label(&json!(hidden)), "start…");
        // A deep item is named by its size, one level down only.
        let mut deep = json!(1);
        for _ in 0..1_000 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        assert_eq!(TaskRef::item_label(&deep), "1 item");
    }
}
