//! A run's progress for people who do not see the canvas: one polite live
//! region, always on the graph page, saying in a sentence what the watched
//! run is doing ("Running Writer", "Run paused: Approve waits for an
//! answer", "Run failed: …"). It speaks only when the sentence changes, and
//! stays quiet while a replay is scrubbed.

use heddle_engine::run::RunStatus;
use leptos::prelude::*;

use crate::editor::state::Editor;
use crate::live::Watch;
use crate::live::view::{NodeState, RunView};

/// The longest failure read out; the rest is in the run panel.
const MOST_SAID: usize = 160;

#[component]
pub fn RunAnnouncer(watch: Watch, editor: Editor) -> impl IntoView {
    let said = Memo::new(move |_| {
        if watch.cursor.get().is_some() {
            return String::new();
        }
        watch
            .view
            .with(|view| announcement(view, |node| editor.name_of(node)))
    });
    view! {
        <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true"
            data-testid="run-announcer">{move || said.get()}</div>
    }
}

/// What the run is doing, in a sentence; `label` names a node as the
/// canvas does.
pub fn announcement(view: &RunView, label: impl Fn(&str) -> String) -> String {
    let named = |state: NodeState| {
        let mut nodes: Vec<String> = view
            .nodes
            .iter()
            .filter(|(_, now)| **now == state)
            .map(|(node, _)| label(node))
            .collect();
        nodes.sort();
        listed(&nodes)
    };
    match view.status {
        None => String::new(),
        Some(RunStatus::Queued) => "Run queued".into(),
        Some(RunStatus::Running) => match named(NodeState::Running) {
            running if running.is_empty() => "Run running".into(),
            running => format!("Running {running}"),
        },
        Some(RunStatus::Interrupted) => match named(NodeState::Interrupted) {
            waiting if waiting.is_empty() => "Run paused".into(),
            waiting => format!("Run paused: {waiting} waits for an answer"),
        },
        Some(RunStatus::Finished) => "Run finished".into(),
        Some(RunStatus::Cancelled) => "Run cancelled".into(),
        Some(RunStatus::Failed) => match &view.error {
            Some(error) => {
                let error: String = error.chars().take(MOST_SAID).collect();
                format!("Run failed: {error}")
            }
            None => "Run failed".into(),
        },
    }
}

/// "A", "A and B", "A, B and C".
fn listed(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::announcement;
    use crate::live::view::{NodeState, RunView};
    use heddle_engine::run::RunStatus;

    fn view(status: RunStatus, nodes: &[(&str, NodeState)]) -> RunView {
        RunView {
            status: Some(status),
            nodes: nodes
                .iter()
                .map(|(node, state)| (node.to_string(), *state))
                .collect(),
            ..RunView::default()
        }
    }

    fn upper(node: &str) -> String {
        node.to_uppercase()
    }

    #[test]
    fn a_run_is_said_by_what_its_nodes_do_named_as_on_the_canvas() {
        let running = view(
            RunStatus::Running,
            &[
                ("writer", NodeState::Running),
                ("critic", NodeState::Running),
                ("start", NodeState::Succeeded),
            ],
        );
        assert_eq!(announcement(&running, upper), "Running CRITIC and WRITER");
        let paused = view(
            RunStatus::Interrupted,
            &[("approve", NodeState::Interrupted)],
        );
        assert_eq!(
            announcement(&paused, upper),
            "Run paused: APPROVE waits for an answer"
        );
        let mut failed = view(RunStatus::Failed, &[]);
        failed.error = Some("x".repeat(500));
        assert_eq!(
            announcement(&failed, upper),
            format!("Run failed: {}", "x".repeat(160))
        );
        assert_eq!(announcement(&RunView::default(), upper), "");
    }
}
