//! The trace timeline: a lane per node, a bar per execution placed by
//! when it started and ended, retries and failures marked. Clicking a bar
//! selects its node and moves the replay to its step.

use leptos::prelude::*;

use super::{duration, select_node};
use crate::editor::state::Editor;
use crate::live::{Execution, Outcome, Watch};

#[component]
pub fn Timeline(editor: Editor, watch: Watch) -> impl IntoView {
    let executions = Memo::new(move |_| watch.log.with(|log| log.executions()));
    let span = Memo::new(move |_| {
        watch.log.with(|log| {
            let start = log.started_us().unwrap_or(0);
            let end = log.last_us().unwrap_or(start);
            (start, end.saturating_sub(start).max(1))
        })
    });
    let lanes = Memo::new(move |_| {
        executions.with(|executions| {
            let mut lanes: Vec<String> = Vec::new();
            for execution in executions {
                if !lanes.contains(&execution.node) {
                    lanes.push(execution.node.clone());
                }
            }
            lanes
        })
    });
    view! {
        <div class="timeline" data-testid="timeline">
            {move || lanes.with(Vec::is_empty).then(|| view! {
                <p class="empty-note">"No node has run yet. Start a run, or open one from the run history."</p>
            })}
            <For each=move || lanes.get() key=|lane| lane.clone() let:lane>
                <Lane editor watch node=lane executions span />
            </For>
            {move || (!lanes.with(Vec::is_empty)).then(|| view! {
                <div class="timeline-axis">
                    <span>"0"</span>
                    <span>{move || duration(span.get().1)}</span>
                </div>
            })}
        </div>
    }
}

#[component]
fn Lane(
    editor: Editor,
    watch: Watch,
    node: String,
    executions: Memo<Vec<Execution>>,
    span: Memo<(u64, u64)>,
) -> impl IntoView {
    let mine = {
        let node = node.clone();
        move || {
            executions.with(|executions| {
                executions
                    .iter()
                    .filter(|execution| execution.node == node)
                    .cloned()
                    .collect::<Vec<_>>()
            })
        }
    };
    // The lane is named as the canvas names the node: its label, with its
    // id beside it when the two differ.
    let label = editor.label_of(&node);
    let title = label
        .as_ref()
        .map_or_else(|| node.clone(), |label| format!("{label} ({node})"));
    view! {
        <div class="timeline-lane" data-lane=node.clone()>
            <span class="timeline-label" title=title>
                {label.unwrap_or_else(|| node.clone())}
            </span>
            <div class="timeline-track">
                {move || {
                    let (start, length) = span.get();
                    let cursor = watch.cursor.get();
                    mine()
                        .into_iter()
                        .map(|execution| bar(editor, watch, execution, start, length, cursor))
                        .collect_view()
                }}
            </div>
        </div>
    }
}

fn bar(
    editor: Editor,
    watch: Watch,
    execution: Execution,
    start: u64,
    length: u64,
    cursor: Option<u32>,
) -> impl IntoView {
    let end = execution.end_us.unwrap_or(start + length);
    let left = (execution.start_us.saturating_sub(start)) as f64 / length as f64 * 100.0;
    let width = (end.saturating_sub(execution.start_us) as f64 / length as f64 * 100.0).max(0.6);
    let took = execution
        .end_us
        .map(|end| duration(end.saturating_sub(execution.start_us)))
        .unwrap_or_else(|| "running".into());
    let mut title = format!(
        "{} · step {} · attempt {} · {took}",
        execution.node, execution.step, execution.attempt
    );
    if let Some(error) = &execution.error {
        title.push_str(&format!("\n{error}"));
    }
    let later = cursor.is_some_and(|at| execution.step > at);
    let (node, step) = (execution.node.clone(), execution.step);
    view! {
        <button
            type="button"
            class=format!("timeline-bar outcome-{}", execution.outcome.as_str())
            class:later=later
            class:marked=matches!(execution.outcome, Outcome::Retried | Outcome::Failed)
            style:left=format!("{left:.3}%")
            style:width=format!("{width:.3}%")
            title=title.clone()
            aria-label=title
            data-step=step.to_string()
            on:click=move |_| {
                select_node(editor, &node);
                watch.seek(Some(step));
            }
        >
            // How long it took, where the bar has room to say so.
            {(width >= 8.0).then(|| view! { <span class="timeline-bar-text">{took}</span> })}
        </button>
    }
}
