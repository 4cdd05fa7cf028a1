//! What the telemetry keeps of a run's events until its thread reads them.
//!
//! The frequent events of a run (steps and plain node executions) are kept
//! as small records that allocate nothing: an event held past its moment,
//! or freed on another thread, costs the run far more than reading it does
//! (the allocator's locks, measured by `benches/telemetry.rs`). The rare
//! ones (a run starting or ending, a failure, a model or tool call) are
//! kept whole.

use std::sync::Arc;

use heddle_engine::NodeId;
use heddle_engine::run::{Event, EventPayload};
use serde_json::Value;

/// One event as the telemetry keeps it.
pub enum Seen {
    StepStarted {
        at_us: u64,
        step: u32,
        tasks: u32,
    },
    StepFinished {
        at_us: u64,
    },
    NodeStarted {
        at_us: u64,
        step: u32,
        node: NodeId,
        attempt: u32,
    },
    /// A node that succeeded without choosing a route.
    NodeSucceeded {
        at_us: u64,
        node: NodeId,
        duration_us: u64,
    },
    Whole(Arc<Event>),
}

/// One event as the metrics and spans read it.
pub enum View<'a> {
    StepStarted {
        step: u32,
        tasks: u32,
    },
    StepFinished,
    NodeStarted {
        step: u32,
        node: &'a NodeId,
        attempt: u32,
    },
    NodeSucceeded {
        node: &'a NodeId,
        duration_us: u64,
        route: Option<&'a str>,
        /// Only when kept whole (content is exported).
        update: Option<&'a Value>,
    },
    Other(&'a EventPayload),
}

impl Seen {
    /// What to keep of `event`; `None` for what the telemetry ignores
    /// (streamed tokens, edges). `whole_updates`: node updates are exported.
    pub fn of(event: &Arc<Event>, whole_updates: bool) -> Option<Seen> {
        if event.is_nested() {
            // A child graph's work: its model and tool calls count in the
            // metrics and are spans under the node that ran the child; its
            // own nodes are not spans of their own.
            return match &event.payload {
                EventPayload::Custom { name, .. } if name == "usage" || name == "tool_result" => {
                    Some(Seen::Whole(Arc::clone(event)))
                }
                _ => None,
            };
        }
        let at_us = event.at_us;
        Some(match &event.payload {
            EventPayload::Custom { name, .. } if name == "token" => return None,
            EventPayload::EdgeTaken { .. } => return None,
            EventPayload::StepStarted { step, tasks } => Seen::StepStarted {
                at_us,
                step: *step,
                tasks: u32::try_from(tasks.len()).unwrap_or(u32::MAX),
            },
            EventPayload::StepFinished { .. } => Seen::StepFinished { at_us },
            EventPayload::NodeStarted {
                step,
                node,
                attempt,
                ..
            } => Seen::NodeStarted {
                at_us,
                step: *step,
                node: node.clone(),
                attempt: *attempt,
            },
            EventPayload::NodeSucceeded {
                node,
                duration_us,
                route: None,
                ..
            } if !whole_updates => Seen::NodeSucceeded {
                at_us,
                node: node.clone(),
                duration_us: *duration_us,
            },
            _ => Seen::Whole(Arc::clone(event)),
        })
    }

    /// When it happened, in microseconds since the Unix epoch.
    pub fn at_us(&self) -> u64 {
        match self {
            Seen::StepStarted { at_us, .. }
            | Seen::StepFinished { at_us }
            | Seen::NodeStarted { at_us, .. }
            | Seen::NodeSucceeded { at_us, .. } => *at_us,
            Seen::Whole(event) => event.at_us,
        }
    }

    /// Whether the run's execution starts or stops here.
    pub fn starts_or_ends(&self) -> bool {
        matches!(self, Seen::Whole(event) if matches!(
            event.payload,
            EventPayload::RunStarted { .. } | EventPayload::RunResumed { .. }
        )) || self.ends()
    }

    /// Whether the run's execution stops here.
    pub fn ends(&self) -> bool {
        matches!(self, Seen::Whole(event) if matches!(
            event.payload,
            EventPayload::RunFinished { .. }
                | EventPayload::RunFailed { .. }
                | EventPayload::RunCancelled { .. }
                | EventPayload::RunInterrupted { .. }
        ))
    }

    pub fn view(&self) -> View<'_> {
        match self {
            Seen::StepStarted { step, tasks, .. } => View::StepStarted {
                step: *step,
                tasks: *tasks,
            },
            Seen::StepFinished { .. } => View::StepFinished,
            Seen::NodeStarted {
                step,
                node,
                attempt,
                ..
            } => View::NodeStarted {
                step: *step,
                node,
                attempt: *attempt,
            },
            Seen::NodeSucceeded {
                node, duration_us, ..
            } => View::NodeSucceeded {
                node,
                duration_us: *duration_us,
                route: None,
                update: None,
            },
            // Steps and node starts are always records (`Seen::of`).
            Seen::Whole(event) => match &event.payload {
                EventPayload::NodeSucceeded {
                    node,
                    duration_us,
                    route,
                    update,
                    ..
                } => View::NodeSucceeded {
                    node,
                    duration_us: *duration_us,
                    route: route.as_deref(),
                    update: Some(update),
                },
                other => View::Other(other),
            },
        }
    }
}
