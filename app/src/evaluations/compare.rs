//! Two or more experiments side by side: each scorer's mean and spread
//! (with the change from the first, the oldest, as the baseline), cost,
//! tokens and latency; then every example's answers and scores, the
//! examples whose scores fell first, answers that differ marked.

use leptos::prelude::*;

use super::rows::{ExampleRow, example_rows};
use super::score_text;
use crate::components::Dialog;
use crate::experiments::{Experiment, ExperimentItem, read_experiment_items};

#[component]
pub fn CompareDialog(
    graph_id: String,
    experiments: Vec<Experiment>,
    open: RwSignal<bool>,
) -> impl IntoView {
    let mut experiments = experiments;
    // The oldest is the baseline the others are compared with.
    experiments.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    let items = RwSignal::new(None::<Result<Vec<Vec<ExperimentItem>>, String>>);
    {
        let ids: Vec<String> = experiments.iter().map(|e| e.id.clone()).collect();
        leptos::task::spawn_local(async move {
            let mut all = Vec::with_capacity(ids.len());
            for id in ids {
                match read_experiment_items(graph_id.clone(), id).await {
                    Ok(page) => all.push(page.items),
                    Err(error) => {
                        items.set(Some(Err(error.to_string())));
                        return;
                    }
                }
            }
            items.set(Some(Ok(all)));
        });
    }
    let scorers = scorer_names(&experiments);
    let close = Callback::new(move |()| open.set(false));
    let summary = summary_table(&experiments, &scorers);
    let headers: Vec<String> = experiments.iter().map(|e| e.name.clone()).collect();
    let example_rows = move || {
        items.get().map(|loaded| match loaded {
            Err(message) => view! {
                <p class="inline-error" role="alert">{format!("Cannot read the runs: {message}")}</p>
            }
            .into_any(),
            Ok(all) => examples_table(&headers, &scorers, &all),
        })
    };
    view! {
        <Dialog on_close=close labelled_by="compare-experiments-title" class="compare-experiments">
            <h2 id="compare-experiments-title">"Compare experiments"</h2>
            <p class="page-sub">
                "The first column is the baseline (the oldest); changes are from it. Examples whose scores fell come first."
            </p>
            {summary}
            <h3>"Examples"</h3>
            {move || items.get().is_none().then(|| view! { <p class="loading">"Loading answers…"</p> })}
            {example_rows}
            <div class="dialog-actions">
                <button type="button" class="button" on:click=move |_| open.set(false)>"Close"</button>
            </div>
        </Dialog>
    }
}

/// Every scorer any of the experiments has, in first-seen order.
fn scorer_names(experiments: &[Experiment]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for experiment in experiments {
        for summary in &experiment.scores {
            if !names.contains(&summary.scorer) {
                names.push(summary.scorer.clone());
            }
        }
    }
    names
}

/// Per scorer and figure, one column per experiment.
fn summary_table(experiments: &[Experiment], scorers: &[String]) -> AnyView {
    let baseline = experiments.first().cloned();
    let mean_of = |experiment: &Experiment, scorer: &str| {
        experiment
            .scores
            .iter()
            .find(|summary| summary.scorer == scorer)
            .cloned()
    };
    view! {
        <table class="compare-table" data-testid="compare-scores">
            <thead>
                <tr>
                    <th scope="col">""</th>
                    {experiments.iter().map(|experiment| view! {
                        <th scope="col">
                            {experiment.name.clone()}
                            <span class="compare-sub">{format!("v{} · {}", experiment.graph_version, experiment.status)}</span>
                        </th>
                    }).collect_view()}
                </tr>
            </thead>
            <tbody>
                {scorers.iter().map(|scorer| {
                    let base = baseline.as_ref().and_then(|b| mean_of(b, scorer)).map(|s| s.mean);
                    view! {
                        <tr>
                            <th scope="row">{scorer.clone()}</th>
                            {experiments.iter().map(|experiment| {
                                let cell = mean_of(experiment, scorer);
                                let delta = match (&cell, base) {
                                    (Some(summary), Some(base)) => summary.mean - base,
                                    _ => 0.0,
                                };
                                let class = if delta < -1e-9 {
                                    "worse"
                                } else if delta > 1e-9 {
                                    "better"
                                } else {
                                    ""
                                };
                                view! {
                                    <td class=class data-delta=format!("{delta:.3}")>
                                        {cell.as_ref().map_or_else(|| "–".to_string(), score_text)}
                                        {(delta.abs() > 1e-9).then(|| view! {
                                            <span class="compare-delta">{format!(" ({delta:+.2})")}</span>
                                        })}
                                    </td>
                                }
                            }).collect_view()}
                        </tr>
                    }
                }).collect_view()}
                <tr>
                    <th scope="row">"Tokens"</th>
                    {experiments.iter().map(|e| view! { <td>{e.tokens}</td> }).collect_view()}
                </tr>
                <tr>
                    <th scope="row">"Cost"</th>
                    {experiments.iter().map(|e| view! { <td>{format!("${:.4}", e.cost_usd)}</td> }).collect_view()}
                </tr>
                <tr>
                    <th scope="row">"Latency p50 / p95"</th>
                    {experiments.iter().map(|e| view! {
                        <td>{match (e.latency_p50_ms, e.latency_p95_ms) {
                            (Some(p50), Some(p95)) => format!("{p50} / {p95} ms"),
                            _ => "–".into(),
                        }}</td>
                    }).collect_view()}
                </tr>
            </tbody>
        </table>
    }
    .into_any()
}

/// One row per example, regressions first (see [`example_rows`]).
fn examples_table(headers: &[String], scorers: &[String], all: &[Vec<ExperimentItem>]) -> AnyView {
    let rows = example_rows(all);
    view! {
        <table class="compare-table compare-examples" data-testid="compare-examples">
            <thead>
                <tr>
                    <th scope="col">"Example"</th>
                    {headers.iter().map(|name| view! { <th scope="col">{name.clone()}</th> }).collect_view()}
                </tr>
            </thead>
            <tbody>
                {rows.into_iter().map(|ExampleRow { example, label, cells, change: delta }| {
                    let baseline_answer = cells.first().and_then(|cell| cell.answer.clone());
                    let class = if delta < -1e-9 {
                        "regressed"
                    } else if delta > 1e-9 {
                        "improved"
                    } else {
                        ""
                    };
                    view! {
                        <tr class=class data-example=example.clone()>
                            <th scope="row">
                                {label.unwrap_or_else(|| crate::run_panel::short_id(&example).to_string())}
                                {(delta < -1e-9).then(|| view! { <span class="compare-flag">"worse"</span> })}
                                {(delta > 1e-9).then(|| view! { <span class="compare-flag better">"better"</span> })}
                            </th>
                            {cells.into_iter().enumerate().map(|(column, cell)| {
                                let changed = column > 0 && cell.answer != baseline_answer;
                                view! {
                                    <td class:changed=changed>
                                        <div class="compare-answer">
                                            {cell.failed.clone().unwrap_or_else(|| cell.answer.clone().unwrap_or_else(|| "–".into()))}
                                        </div>
                                        <div class="compare-cell-scores">
                                            {scorers.iter().filter_map(|name| cell.scores.get(name).map(|value| view! {
                                                <span class="score-chip">
                                                    <span class="score-name">{name.clone()}</span>
                                                    " "
                                                    <span class="score-value">{format!("{value:.2}")}</span>
                                                </span>
                                            })).collect_view()}
                                        </div>
                                    </td>
                                }
                            }).collect_view()}
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}
