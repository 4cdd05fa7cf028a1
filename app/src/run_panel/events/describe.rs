//! How the event log names and sums up an event: its group for the
//! filters, the node it concerns, its type as the API spells it, and one
//! line about what happened.

use heddle_engine::run::{Event, EventPayload};
use serde_json::Value;

use crate::run_panel::{duration, show_json};

/// The kinds of event a filter picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Run,
    Step,
    Node,
    Edge,
    Custom,
}

pub const GROUPS: [(Group, &str); 5] = [
    (Group::Run, "Run"),
    (Group::Step, "Steps"),
    (Group::Node, "Nodes"),
    (Group::Edge, "Edges"),
    (Group::Custom, "Reports"),
];

pub fn group(event: &Event) -> Group {
    match event.payload {
        EventPayload::StepStarted { .. } | EventPayload::StepFinished { .. } => Group::Step,
        EventPayload::NodeStarted { .. }
        | EventPayload::NodeSucceeded { .. }
        | EventPayload::NodeFailed { .. }
        | EventPayload::NodeRetrying { .. } => Group::Node,
        EventPayload::EdgeTaken { .. } => Group::Edge,
        EventPayload::Custom { .. } => Group::Custom,
        _ => Group::Run,
    }
}

/// The node of the run's graph an event concerns: for one inside a child
/// graph, the node that ran that graph.
pub fn node_of(event: &Event) -> Option<&str> {
    match event.path.first() {
        Some(outer) => Some(outer.node.as_str()),
        None => payload_node(event),
    }
}

/// The node an event's payload names (inside a child graph, the child's).
fn payload_node(event: &Event) -> Option<&str> {
    match &event.payload {
        EventPayload::NodeStarted { node, .. }
        | EventPayload::NodeSucceeded { node, .. }
        | EventPayload::NodeFailed { node, .. }
        | EventPayload::NodeRetrying { node, .. }
        | EventPayload::Custom { node, .. } => Some(node.as_str()),
        EventPayload::EdgeTaken { from, .. } => Some(from.as_str()),
        EventPayload::RunFailed { node, .. } => node.as_ref().map(|node| node.as_str()),
        _ => None,
    }
}

/// The event's type name, as the API spells it.
pub fn type_of(event: &Event) -> &'static str {
    match event.payload {
        EventPayload::RunStarted { .. } => "run_started",
        EventPayload::RunFinished { .. } => "run_finished",
        EventPayload::RunFailed { .. } => "run_failed",
        EventPayload::RunCancelled { .. } => "run_cancelled",
        EventPayload::RunInterrupted { .. } => "run_interrupted",
        EventPayload::RunResumed { .. } => "run_resumed",
        EventPayload::StepStarted { .. } => "step_started",
        EventPayload::StepFinished { .. } => "step_finished",
        EventPayload::NodeStarted { .. } => "node_started",
        EventPayload::NodeSucceeded { .. } => "node_succeeded",
        EventPayload::NodeFailed { .. } => "node_failed",
        EventPayload::NodeRetrying { .. } => "node_retrying",
        EventPayload::EdgeTaken { .. } => "edge_taken",
        EventPayload::Custom { .. } => "custom",
        _ => "event",
    }
}

/// One line about what happened; inside a child graph, saying where.
pub fn summary(event: &Event) -> String {
    if event.is_nested() {
        let node = payload_node(event).unwrap_or_default();
        return format!(
            "inside {}: {}",
            crate::live::view::inside_label(&event.path, node),
            own_summary(event)
        );
    }
    own_summary(event)
}

fn own_summary(event: &Event) -> String {
    match &event.payload {
        EventPayload::RunStarted { input, .. } => format!("input {}", show_json(input, 120)),
        EventPayload::RunFinished { steps, .. } => format!("finished after {steps} steps"),
        EventPayload::RunFailed { error, .. } => error.clone(),
        EventPayload::RunCancelled { step } => format!("cancelled at step {step}"),
        EventPayload::RunInterrupted { interrupts, .. } => interrupts
            .iter()
            .map(|interrupt| format!("paused at {}", interrupt.node))
            .collect::<Vec<_>>()
            .join(", "),
        EventPayload::RunResumed { step, value, .. } => match value {
            Some(value) => format!("resumed at step {step} with {}", show_json(value, 80)),
            None => format!("went on at step {step}"),
        },
        EventPayload::StepStarted { tasks, .. } => tasks
            .iter()
            .map(|task| task.node.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        EventPayload::StepFinished { changes, delta, .. } => {
            let older = delta.as_ref().and_then(Value::as_object);
            let changed: Vec<&String> = changes
                .keys()
                .chain(older.into_iter().flat_map(|values| values.keys()))
                .collect();
            if changed.is_empty() {
                "no change".into()
            } else {
                format!(
                    "changed {}",
                    changed
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        }
        EventPayload::NodeStarted { attempt, .. } if *attempt > 1 => format!("attempt {attempt}"),
        EventPayload::NodeSucceeded {
            duration_us, route, ..
        } => match route {
            Some(route) => format!("{} → {route}", duration(*duration_us)),
            None => duration(*duration_us),
        },
        EventPayload::NodeFailed { error, .. } => error.clone(),
        EventPayload::NodeRetrying {
            error, delay_ms, ..
        } => format!("{error} (again in {delay_ms} ms)"),
        EventPayload::EdgeTaken { from, to, .. } => format!("{from} → {to}"),
        EventPayload::Custom { name, data, .. } => format!("{name} {}", show_json(data, 120)),
        _ => String::new(),
    }
}
