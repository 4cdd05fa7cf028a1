//! The graph page's Evaluations section: the graph's experiments with
//! their progress and scores (refreshed each second while one runs), a
//! dialog to start one over a dataset, and a side-by-side comparison of
//! two or more, regressions first, each scorer's mean over the
//! experiments as a chart, and the gate that holds back a version scoring
//! worse than the live one (docs/evaluations.md).

mod compare;
mod gate;
mod new_experiment;
mod panel;
mod rows;
mod trend;

pub use panel::EvaluationsPanel;

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
