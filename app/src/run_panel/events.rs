//! The event log: every event of the run (tokens aside), filtered by what
//! kind it is, which node it concerns, or text. Clicking one moves the
//! replay to its step and selects its node.

use heddle_engine::run::{Event, EventPayload};
use leptos::prelude::*;

use super::{duration, select_node, show_json};
use crate::editor::state::Editor;
use crate::live::{Watch, step_of};

/// How many rows the log shows at most (the newest that match).
const SHOWN: usize = 400;

/// The kinds of event a filter picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Run,
    Step,
    Node,
    Edge,
    Custom,
}

const GROUPS: [(Group, &str); 5] = [
    (Group::Run, "Run"),
    (Group::Step, "Steps"),
    (Group::Node, "Nodes"),
    (Group::Edge, "Edges"),
    (Group::Custom, "Reports"),
];

fn group(event: &Event) -> Group {
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

/// The node an event concerns.
fn node_of(event: &Event) -> Option<&str> {
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
fn type_of(event: &Event) -> &'static str {
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

/// One line about what happened.
fn summary(event: &Event) -> String {
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
        EventPayload::StepFinished { delta, .. } => {
            let changed: Vec<&String> = delta
                .as_object()
                .map(|d| d.keys().collect())
                .unwrap_or_default();
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

#[component]
pub fn EventLog(editor: Editor, watch: Watch) -> impl IntoView {
    let shown_groups = RwSignal::new(vec![
        Group::Run,
        Group::Step,
        Group::Node,
        Group::Edge,
        Group::Custom,
    ]);
    let node = RwSignal::new(String::new());
    let text = RwSignal::new(String::new());
    let nodes = Memo::new(move |_| {
        watch.log.with(|log| {
            let mut nodes: Vec<String> = Vec::new();
            for event in &log.events {
                if let Some(node) = node_of(event)
                    && !nodes.iter().any(|known| known == node)
                {
                    nodes.push(node.to_string());
                }
            }
            nodes
        })
    });
    let rows = Memo::new(move |_| {
        let groups = shown_groups.get();
        let node = node.get();
        let text = text.get().to_lowercase();
        watch.log.with(|log| {
            let start = log.started_us().unwrap_or(0);
            let matches = |event: &&Event| {
                groups.contains(&group(event))
                    && (node.is_empty() || node_of(event) == Some(node.as_str()))
                    && (text.is_empty()
                        || type_of(event).contains(&text)
                        || summary(event).to_lowercase().contains(&text))
            };
            // Count every match, but describe only the rows shown: a busy
            // run's log is long, and this runs once per frame.
            let total = log.events.iter().filter(matches).count();
            let mut rows: Vec<Row> = log
                .events
                .iter()
                .rev()
                .filter(matches)
                .take(SHOWN)
                .map(|event| Row {
                    seq: event.seq,
                    offset_us: event.at_us.saturating_sub(start),
                    kind: type_of(event),
                    node: node_of(event).map(str::to_string),
                    step: step_of(event),
                    summary: summary(event),
                })
                .collect();
            rows.reverse();
            (total, rows)
        })
    });
    view! {
        <div class="event-log" data-testid="event-log">
            <div class="event-filters" role="group" aria-label="Filters">
                {GROUPS.map(|(kind, label)| view! {
                    <label class="check">
                        <input type="checkbox"
                            prop:checked=move || shown_groups.with(|groups| groups.contains(&kind))
                            on:change=move |event| {
                                let on = event_target_checked(&event);
                                shown_groups.update(|groups| {
                                    groups.retain(|g| *g != kind);
                                    if on { groups.push(kind); }
                                });
                            } />
                        {label}
                    </label>
                })}
                <select aria-label="Node" data-testid="event-node" on:change=move |event| node.set(event_target_value(&event))>
                    <option value="">"All nodes"</option>
                    <For each=move || nodes.get() key=|node| node.clone() let:item>
                        <option value=item.clone()>{item.clone()}</option>
                    </For>
                </select>
                <input type="search" placeholder="Search events" aria-label="Search events"
                    on:input=move |event| text.set(event_target_value(&event)) />
                <span class="event-count" data-testid="event-count">
                    {move || rows.with(|(total, rows)| {
                        if *total > rows.len() {
                            format!("{total} events, the newest {} shown", rows.len())
                        } else {
                            format!("{total} events")
                        }
                    })}
                </span>
            </div>
            <ol class="event-rows">
                <For each=move || rows.get().1 key=|row| row.seq let:row>
                    <EventRow editor watch row />
                </For>
            </ol>
        </div>
    }
}

/// An event as the log lists it.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    seq: u64,
    offset_us: u64,
    kind: &'static str,
    node: Option<String>,
    step: Option<u32>,
    summary: String,
}

#[component]
fn EventRow(editor: Editor, watch: Watch, row: Row) -> impl IntoView {
    let Row {
        seq,
        offset_us,
        kind,
        node,
        step,
        summary,
    } = row;
    let current = move || step.is_some() && watch.cursor.get() == step;
    let clicked = node.clone();
    view! {
        <li class="event-row" class:current=current data-type=kind
            on:click=move |_| {
                if let Some(node) = &clicked { select_node(editor, node); }
                if step.is_some() { watch.seek(step); }
            }>
            <span class="event-seq">{seq}</span>
            <span class="event-time">{format!("+{}", duration(offset_us))}</span>
            <span class="event-type">{kind}</span>
            <span class="event-node">{node.unwrap_or_default()}</span>
            <span class="event-summary">{summary}</span>
        </li>
    }
}
