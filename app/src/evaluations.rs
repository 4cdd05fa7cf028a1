//! The graph page's Evaluations section: the graph's datasets (a table of
//! each one's examples, edited in place or imported from a file), its experiments with
//! their progress and scores (read again as their runs start and end), a
//! dialog to start one over a dataset, and a side-by-side comparison of
//! two or more, regressions first, each scorer's mean over the
//! experiments as a chart, and the gate that holds back a version scoring
//! worse than the live one (docs/evaluations.md).

mod compare;
mod datasets;
mod example_table;
mod gate;
mod import_examples;
mod new_experiment;
mod panel;
mod rows;
mod trend;

pub use panel::EvaluationsPanel;

use leptos::prelude::*;

use crate::datasets::Dataset;
use crate::experiments::ScorerSummary;

/// A score as people read it: two decimals, with its spread when it has
/// one (`0.67 ± 0.52`).
fn score_text(summary: &ScorerSummary) -> String {
    if summary.count > 1 && summary.stddev > 0.0 {
        format!("{:.2} ± {:.2}", summary.mean, summary.stddev)
    } else {
        format!("{:.2}", summary.mean)
    }
}

/// A dataset picker's options: each dataset with its latest version and
/// size (`chosen` selected), or why there are none.
fn dataset_options(
    listed: Option<Result<Vec<Dataset>, String>>,
    chosen: RwSignal<String>,
    none: &'static str,
) -> Option<AnyView> {
    listed.map(|listed| match listed {
        Ok(list) if list.is_empty() => view! {
            <option value="" disabled=true>{none}</option>
        }
        .into_any(),
        Ok(list) => list
            .into_iter()
            .map(|dataset| {
                let id = dataset.id.clone();
                let text = format!(
                    "{} · version {} · {} examples",
                    dataset.name, dataset.version, dataset.examples
                );
                view! { <option value=id.clone() selected=move || chosen.get() == id>{text}</option> }
            })
            .collect_view()
            .into_any(),
        Err(message) => view! {
            <option value="" disabled=true>{format!("cannot list the datasets: {message}")}</option>
        }
        .into_any(),
    })
}
