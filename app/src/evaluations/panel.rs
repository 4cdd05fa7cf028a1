//! The list of a graph's experiments: each with its status, progress,
//! scores, cost and latency, moved on as their runs start and end (heard
//! over the page's websocket); chosen two at a time (or more) to compare;
//! cancelled while it runs.

use leptos::prelude::*;

use super::compare::CompareDialog;
use super::datasets::DatasetsDialog;
use super::gate::GateControl;
use super::new_experiment::NewExperimentDialog;
use super::score_text;
use super::trend::ScoreTrend;
use crate::components::LocalTime;
use crate::editor::state::Editor;
use crate::experiments::{Experiment, ExperimentStatus, cancel_experiment, list_experiments};

/// How long the list waits after an experiment's run started or ended
/// before it is read again: a burst of runs costs one read.
const SETTLE_MS: u64 = 250;
/// How often the list is read again while an experiment runs and nothing
/// is heard (scoring and the experiment's own end are not run notices).
const BACKSTOP_MS: u64 = 3_000;

#[component]
pub fn EvaluationsPanel(
    graph_id: String,
    editor: Editor,
    /// The version on screen: what a new experiment runs by default.
    version: RwSignal<i64>,
    can_edit: bool,
    /// Counts the graph's experiment runs heard of over the websocket.
    experiment_runs: RwSignal<u64>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let experiments = RwSignal::new(None::<Result<Vec<Experiment>, String>>);
    let refresh = RwSignal::new(0u64);
    let chosen = RwSignal::new(Vec::<String>::new());
    let creating = RwSignal::new(false);
    let comparing = RwSignal::new(false);
    let datasets = RwSignal::new(false);
    {
        let graph_id = graph_id.clone();
        Effect::new(move |_| {
            refresh.track();
            if !open.get() {
                return;
            }
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                let listed = list_experiments(graph_id).await;
                let running = listed.as_ref().is_ok_and(|list| {
                    list.iter()
                        .any(|experiment| experiment.status == ExperimentStatus::Running)
                });
                experiments.set(Some(listed.map_err(|error| error.to_string())));
                if running {
                    // Read again later unless something was heard first.
                    let read = refresh.get_untracked();
                    set_timeout(
                        move || {
                            if refresh.try_get_untracked() == Some(read) {
                                refresh.update(|n| *n += 1);
                            }
                        },
                        std::time::Duration::from_millis(BACKSTOP_MS),
                    );
                }
            });
        });
    }
    // An experiment's run started or ended: read the list again, soon.
    let settling = StoredValue::new(false);
    Effect::new(move |seen: Option<()>| {
        experiment_runs.track();
        if seen.is_none() || !open.get_untracked() || settling.get_value() {
            return;
        }
        settling.set_value(true);
        set_timeout(
            move || {
                settling.set_value(false);
                refresh.update(|n| *n += 1);
            },
            std::time::Duration::from_millis(SETTLE_MS),
        );
    });
    // Spawned from the click, in the browser: nothing of it is made while
    // the page renders on the server.
    let cancel_id = StoredValue::new(graph_id.clone());
    let cancel = move |experiment: String| {
        let graph_id = cancel_id.get_value();
        leptos::task::spawn_local(async move {
            let _ = cancel_experiment(graph_id, experiment).await;
            refresh.update(|n| *n += 1);
        });
    };
    let toggle = move |id: String| {
        chosen.update(
            |chosen| match chosen.iter().position(|other| *other == id) {
                Some(at) => {
                    chosen.remove(at);
                }
                None => chosen.push(id),
            },
        );
    };
    let rows = move || {
        experiments.get().map(|listed| match listed {
            Err(message) => view! {
                <p class="inline-error" role="alert">{format!("Cannot list the experiments: {message}")}</p>
            }
            .into_any(),
            Ok(list) if list.is_empty() => view! {
                <p class="empty-note">
                    "No experiments yet. Keep answers worth keeping with “Add to dataset” on a finished run, then run a version over them."
                </p>
            }
            .into_any(),
            Ok(list) => view! {
                <ScoreTrend experiments=list.clone() />
                <ul class="experiment-list" data-testid="experiment-list">
                    {list.into_iter().map(|experiment| {
                        let id = experiment.id.clone();
                        let row_id = id.clone();
                        let checked_id = id.clone();
                        let cancel_target = id.clone();
                        let running = experiment.status == ExperimentStatus::Running;
                        let progress = &experiment.progress;
                        let done = progress.done();
                        let label = format!("Compare “{}”", experiment.name);
                        view! {
                            <li class="experiment-row" data-experiment=row_id
                                data-status=experiment.status.as_str()>
                                <label class="experiment-pick">
                                    <input type="checkbox" aria-label=label
                                        prop:checked=move || chosen.with(|chosen| chosen.contains(&checked_id))
                                        on:change=move |_| toggle(id.clone()) />
                                    <span class="experiment-name">{experiment.name.clone()}</span>
                                </label>
                                <span class=format!("run-pill experiment-{}", experiment.status)>
                                    {experiment.status.as_str()}
                                </span>
                                <span class="version-meta">
                                    {format!("v{} · {} v{} · {} of {} runs",
                                        experiment.graph_version,
                                        experiment.dataset_name.clone().unwrap_or_else(|| "deleted dataset".into()),
                                        experiment.dataset_version, done, progress.total)}
                                    {(progress.failed > 0).then(|| format!(" · {} failed", progress.failed))}
                                    " · " <LocalTime at=experiment.created_at.clone() />
                                </span>
                                {running.then(|| view! {
                                    <progress class="experiment-progress" max=progress.total.to_string()
                                        value=done.to_string()
                                        aria-label=format!("{done} of {} runs", progress.total)></progress>
                                })}
                                <span class="experiment-scores">
                                    {experiment.scores.iter().map(|summary| view! {
                                        <span class="score-chip" title=format!("{} over {} runs", summary.scorer, summary.count)>
                                            <span class="score-name">{summary.scorer.clone()}</span>
                                            " "
                                            <span class="score-value">{score_text(summary)}</span>
                                        </span>
                                    }).collect_view()}
                                </span>
                                {experiment.record_replies.then(|| {
                                    let replies = experiment.replies;
                                    let text = match replies.replayed + replies.live {
                                        0 => "replies recorded".to_string(),
                                        calls => format!("{} of {calls} replies replayed", replies.replayed),
                                    };
                                    view! { <span class="version-meta experiment-replies">{text}</span> }
                                })}
                                {experiment.stop_reason.clone().map(|reason| view! {
                                    <span class="experiment-stop">{format!("Stopped: {reason}")}</span>
                                })}
                                {(running && can_edit).then(|| view! {
                                    <button type="button" class="button button-small"
                                        on:click=move |_| cancel(cancel_target.clone())>
                                        "Cancel"
                                    </button>
                                })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            }
            .into_any(),
        })
    };
    let compare_label = move || match chosen.with(Vec::len) {
        0 | 1 => "Compare".to_string(),
        n => format!("Compare {n}"),
    };
    let gate_id = StoredValue::new(graph_id.clone());
    let new_id = graph_id.clone();
    let compare_id = graph_id.clone();
    let datasets_id = graph_id;
    view! {
        <details class="history evaluations" data-testid="evaluations" on:toggle=move |event| {
            open.set(event_target::<web_sys::HtmlDetailsElement>(&event).open());
        }>
            <summary>"Evaluations"</summary>
            <div class="evaluations-actions">
                {can_edit.then(|| view! {
                    <button type="button" class="button button-small button-primary"
                        aria-haspopup="dialog" on:click=move |_| creating.set(true)>
                        "New experiment"
                    </button>
                })}
                <button type="button" class="button button-small" aria-haspopup="dialog"
                    data-testid="open-datasets"
                    title="The examples experiments run over: read, edit, import"
                    on:click=move |_| datasets.set(true)>
                    "Datasets"
                </button>
                <button type="button" class="button button-small" aria-haspopup="dialog"
                    title="Choose two or more experiments to see their scores and answers side by side"
                    disabled=move || chosen.with(Vec::len) < 2
                    on:click=move |_| comparing.set(true)>
                    {compare_label}
                </button>
            </div>
            {move || match experiments.get() {
                None if open.get() => Some(view! { <p class="loading">"Loading experiments…"</p> }.into_any()),
                _ => None,
            }}
            {rows}
            {move || open.get().then(|| view! { <GateControl graph_id=gate_id.get_value() can_edit /> })}
        </details>
        {move || creating.get().then(|| {
            // Read as the list comes: the dialog may open before it has
            // (a press right after the page opened), and its replays
            // would be missing for good.
            let recorded = Memo::new(move |_| -> Vec<(String, String)> {
                experiments
                    .get()
                    .and_then(Result::ok)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|experiment| {
                        experiment.record_replies && experiment.status != ExperimentStatus::Running
                    })
                    .map(|experiment| (experiment.id, experiment.name))
                    .collect()
            });
            let recorded = Signal::from(recorded);
            view! {
                <NewExperimentDialog graph_id=new_id.clone() editor version open=creating
                    started=Callback::new(move |()| refresh.update(|n| *n += 1)) recorded />
            }
        })}
        {move || datasets.get().then(|| view! {
            <DatasetsDialog graph_id=datasets_id.clone() editor open=datasets can_edit />
        })}
        {move || comparing.get().then(|| {
            let listed = experiments.get_untracked().and_then(Result::ok).unwrap_or_default();
            let picked: Vec<Experiment> = chosen
                .get_untracked()
                .iter()
                .filter_map(|id| listed.iter().find(|experiment| &experiment.id == id).cloned())
                .collect();
            view! { <CompareDialog graph_id=compare_id.clone() experiments=picked open=comparing /> }
        })}
    }
}
