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

/// How far back the log is read for the step an event's task belongs to:
/// a step's own events come soon after it starts, and a row never costs
/// more than this however long the run.
const LOOK_BACK: usize = 4096;

/// Which fanned-out instance of its node the event at `at` concerns (the
/// row then reads "research #2"): the event says it (a token), or its path
/// does (work inside an instance's child graph), or its step's start lists
/// its task. `None` for a node that was not fanned out.
pub fn instance_of(events: &[Event], at: usize) -> Option<u32> {
    let event = events.get(at)?;
    if let Some(outer) = event.path.first() {
        return outer.instance;
    }
    let (step, task) = match &event.payload {
        EventPayload::Custom { instance, .. } => return *instance,
        EventPayload::NodeStarted { step, task, .. }
        | EventPayload::NodeSucceeded { step, task, .. }
        | EventPayload::NodeFailed { step, task, .. }
        | EventPayload::NodeRetrying { step, task, .. } => (*step, *task),
        _ => return None,
    };
    events[..at]
        .iter()
        .rev()
        .take(LOOK_BACK)
        .find_map(|earlier| match &earlier.payload {
            EventPayload::StepStarted { step: s, tasks }
                if *s == step && earlier.path.is_empty() =>
            {
                Some(tasks.get(usize::try_from(task).ok()?)?.instance)
            }
            _ => None,
        })
        .flatten()
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
/// `name` names a node of the graph as a person reads it (its label);
/// nodes inside a subgraph or a sub-agent keep their ids.
pub fn summary(event: &Event, name: &dyn Fn(&str) -> String) -> String {
    if event.is_nested() {
        let node = payload_node(event).unwrap_or_default();
        return format!(
            "inside {}: {}",
            crate::live::view::inside_label(&event.path, node),
            own_summary(event, &|node| node.to_string())
        );
    }
    own_summary(event, name)
}

fn own_summary(event: &Event, name: &dyn Fn(&str) -> String) -> String {
    match &event.payload {
        EventPayload::RunStarted { input, .. } => format!("input {}", show_json(input, 120)),
        EventPayload::RunFinished { steps, .. } => format!("finished after {steps} steps"),
        EventPayload::RunFailed { error, .. } => error.clone(),
        EventPayload::RunCancelled { step } => format!("cancelled at step {step}"),
        EventPayload::RunInterrupted { interrupts, .. } => interrupts
            .iter()
            .map(|interrupt| format!("paused at {}", name(interrupt.node.as_str())))
            .collect::<Vec<_>>()
            .join(", "),
        EventPayload::RunResumed { step, value, .. } => match value {
            Some(value) => format!("resumed at step {step} with {}", show_json(value, 80)),
            None => format!("went on at step {step}"),
        },
        EventPayload::StepStarted { tasks, .. } => tasks
            .iter()
            .map(|task| name(task.node.as_str()))
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
        EventPayload::EdgeTaken { from, to, .. } => {
            format!("{} → {}", name(from.as_str()), name(to.as_str()))
        }
        EventPayload::Custom { name, data, .. } => format!("{name} {}", show_json(data, 120)),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use heddle_engine::run::{Event, EventPayload, TaskRef};
    use heddle_engine::{NodeId, RunId};
    use serde_json::json;

    use super::instance_of;

    fn event(seq: u64, payload: EventPayload) -> Event {
        Event {
            run_id: RunId::from("r"),
            seq,
            at_us: seq,
            path: Vec::new(),
            payload,
        }
    }

    fn succeeded(seq: u64, node: &str, task: u32) -> Event {
        event(
            seq,
            EventPayload::NodeSucceeded {
                step: 2,
                node: NodeId::from(node),
                task,
                duration_us: 5,
                update: json!({}),
                route: None,
            },
        )
    }

    #[test]
    fn events_name_the_graphs_nodes_by_their_labels() {
        let label = |node: &str| match node {
            "triage" => "Triage".to_string(),
            "llm_2" => "Billing".to_string(),
            other => other.to_string(),
        };
        let taken = event(
            1,
            EventPayload::EdgeTaken {
                step: 1,
                from: NodeId::from("triage"),
                to: NodeId::from("llm_2"),
                edge: None,
                why: heddle_engine::run::EdgeReason::Static,
            },
        );
        assert_eq!(super::summary(&taken, &label), "Triage → Billing");
        let step = event(
            2,
            EventPayload::StepStarted {
                step: 2,
                tasks: vec![TaskRef {
                    node: NodeId::from("llm_2"),
                    instance: None,
                    item: None,
                }],
            },
        );
        assert_eq!(super::summary(&step, &label), "Billing");
    }

    #[test]
    fn a_fanned_out_nodes_events_say_which_instance_from_their_steps_tasks() {
        let task = |node: &str, instance: Option<u32>| TaskRef {
            node: NodeId::from(node),
            instance,
            item: None,
        };
        let events = vec![
            event(
                0,
                EventPayload::StepStarted {
                    step: 2,
                    tasks: vec![
                        task("research", Some(0)),
                        task("research", Some(1)),
                        task("log", None),
                    ],
                },
            ),
            succeeded(1, "research", 1),
            succeeded(2, "log", 2),
            event(
                3,
                EventPayload::Custom {
                    node: NodeId::from("research"),
                    instance: Some(0),
                    name: "token".into(),
                    data: json!({"text": "a"}),
                },
            ),
            // A task the step never listed (a log cut short): no instance.
            succeeded(4, "research", 9),
        ];
        let found: Vec<Option<u32>> = (0..events.len())
            .map(|at| instance_of(&events, at))
            .collect();
        assert_eq!(found, [None, Some(1), None, Some(0), None]);
        assert_eq!(instance_of(&events, 99), None);
    }
}
