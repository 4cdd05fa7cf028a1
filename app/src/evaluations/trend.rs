//! Scores over time: each scorer's mean per experiment, oldest first, on
//! the dataset the newest experiment used (versions of one dataset only,
//! so a line compares like with like). Drawn as a small SVG chart with a
//! point per experiment, labelled by the graph version it ran, and a
//! legend; a person reading it with a screen reader gets each line's first
//! and last mean.

use leptos::prelude::*;

use crate::experiments::{Experiment, ExperimentStatus};

/// The chart's drawing size: about the inspector's width, so it draws at
/// its own scale there and its labels stay readable (it scales to its box).
const WIDTH: f64 = 280.0;
const HEIGHT: f64 = 120.0;
/// Room for the axis labels.
const LEFT: f64 = 30.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 24.0;
/// At most this many experiments (the newest) and scorers are drawn.
const MAX_POINTS: usize = 20;
const MAX_LINES: usize = 6;

/// What the chart shows: the experiments' labels in time order and, per
/// scorer, its mean in each (`None` where that experiment lacked it).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Trend {
    pub dataset: String,
    pub labels: Vec<String>,
    pub lines: Vec<(String, Vec<Option<f64>>)>,
}

/// The trend of `experiments` (in any order): the ended ones that scored
/// something, on the newest one's dataset; `None` with fewer than two.
pub(super) fn trend(experiments: &[Experiment]) -> Option<Trend> {
    let mut ended: Vec<&Experiment> = experiments
        .iter()
        .filter(|experiment| {
            experiment.status != ExperimentStatus::Running && experiment.progress.scored > 0
        })
        .collect();
    ended.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    let newest = ended.last()?;
    let dataset = newest.dataset_id.clone();
    let dataset_name = newest
        .dataset_name
        .clone()
        .unwrap_or_else(|| "a deleted dataset".into());
    let mut on_it: Vec<&Experiment> = ended
        .into_iter()
        .filter(|experiment| experiment.dataset_id == dataset)
        .collect();
    if on_it.len() < 2 {
        return None;
    }
    let skip = on_it.len().saturating_sub(MAX_POINTS);
    on_it.drain(..skip);
    let mut scorers: Vec<String> = Vec::new();
    for experiment in &on_it {
        for summary in &experiment.scores {
            if !scorers.contains(&summary.scorer) && scorers.len() < MAX_LINES {
                scorers.push(summary.scorer.clone());
            }
        }
    }
    let lines = scorers
        .into_iter()
        .map(|scorer| {
            let means = on_it
                .iter()
                .map(|experiment| {
                    experiment
                        .scores
                        .iter()
                        .find(|summary| summary.scorer == scorer && summary.count > 0)
                        .map(|summary| summary.mean)
                })
                .collect();
            (scorer, means)
        })
        .collect();
    Some(Trend {
        dataset: dataset_name,
        labels: on_it
            .iter()
            .map(|experiment| format!("v{}", experiment.graph_version))
            .collect(),
        lines,
    })
}

/// Where the `index`-th of `count` points and a mean `value` are drawn.
fn at(index: usize, count: usize, value: f64) -> (f64, f64) {
    let span = WIDTH - LEFT - RIGHT;
    let x = if count <= 1 {
        LEFT + span / 2.0
    } else {
        LEFT + span * index as f64 / (count - 1) as f64
    };
    let y = TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - value.clamp(0.0, 1.0));
    (x, y)
}

/// Each line's first and last mean, for those who cannot see the chart.
fn spoken(trend: &Trend) -> String {
    let lines: Vec<String> = trend
        .lines
        .iter()
        .map(|(scorer, means)| {
            let known: Vec<f64> = means.iter().flatten().copied().collect();
            match (known.first(), known.last()) {
                (Some(first), Some(last)) => format!("{scorer} from {first:.2} to {last:.2}"),
                _ => format!("{scorer} not scored"),
            }
        })
        .collect();
    format!(
        "Mean scores over {} experiments on {}: {}",
        trend.labels.len(),
        trend.dataset,
        lines.join("; ")
    )
}

#[component]
pub fn ScoreTrend(experiments: Vec<Experiment>) -> impl IntoView {
    trend(&experiments).map(draw)
}

fn draw(trend: Trend) -> impl IntoView {
    let count = trend.labels.len();
    let grid = [0.0, 0.5, 1.0].map(|value| {
        let (_, y) = at(0, count, value);
        view! {
            <line class="trend-grid" x1=LEFT x2=WIDTH - RIGHT y1=y y2=y />
            <text class="trend-axis" x=LEFT - 6.0 y=y + 4.0 text-anchor="end">{format!("{value:.1}")}</text>
        }
    });
    let labels = trend
        .labels
        .iter()
        .enumerate()
        .map(|(index, label)| {
            let (x, _) = at(index, count, 0.0);
            view! {
                <text class="trend-axis" x=x y=HEIGHT - 6.0 text-anchor="middle">{label.clone()}</text>
            }
        })
        .collect_view();
    let series = trend
        .lines
        .iter()
        .enumerate()
        .map(|(series, (scorer, means))| {
            let points: Vec<(usize, f64)> = means
                .iter()
                .enumerate()
                .filter_map(|(index, mean)| mean.map(|mean| (index, mean)))
                .collect();
            let path = points
                .iter()
                .map(|(index, mean)| {
                    let (x, y) = at(*index, count, *mean);
                    format!("{x:.1},{y:.1}")
                })
                .collect::<Vec<_>>()
                .join(" ");
            let dots = points
                .iter()
                .map(|(index, mean)| {
                    let (x, y) = at(*index, count, *mean);
                    let title = format!("{} · {scorer}: {mean:.2}", trend.labels[*index]);
                    view! {
                        <circle class="trend-dot" cx=x cy=y r="3.5"><title>{title}</title></circle>
                    }
                })
                .collect_view();
            view! {
                <g class=format!("trend-series trend-series-{series}") data-scorer=scorer.clone()>
                    <polyline class="trend-line" points=path />
                    {dots}
                </g>
            }
        })
        .collect_view();
    let legend = trend
        .lines
        .iter()
        .enumerate()
        .map(|(series, (scorer, _))| {
            view! {
                <li class=format!("trend-key trend-series-{series}")>
                    <span class="trend-swatch" aria-hidden="true"></span>
                    {scorer.clone()}
                </li>
            }
        })
        .collect_view();
    view! {
        <figure class="score-trend" data-testid="score-trend">
            <figcaption>{format!("Mean scores by experiment, on {}", trend.dataset)}</figcaption>
            <svg viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=spoken(&trend)
                preserveAspectRatio="xMidYMid meet">
                {grid}
                {labels}
                {series}
            </svg>
            <ul class="trend-legend">{legend}</ul>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{Progress, ScorerSummary};

    fn experiment(at: &str, version: i64, dataset: &str, means: &[(&str, f64)]) -> Experiment {
        Experiment {
            id: format!("exp-{at}"),
            graph_id: heddle_wire::graphs::GraphId::from_stored("g".into()),
            graph_version: version,
            dataset_id: dataset.into(),
            dataset_name: Some(format!("{dataset} set")),
            dataset_version: 1,
            name: format!("v{version}"),
            scorers: Vec::new(),
            repetitions: 1,
            max_tokens: None,
            max_cost_usd: None,
            status: ExperimentStatus::Finished,
            stop_reason: None,
            created_by: None,
            created_at: at.into(),
            ended_at: None,
            progress: Progress {
                total: 3,
                scored: 3,
                ..Progress::default()
            },
            tokens: 0,
            cost_usd: 0.0,
            latency_p50_ms: None,
            latency_p95_ms: None,
            record_replies: false,
            replay_from: None,
            replies: Default::default(),
            scores: means
                .iter()
                .map(|(scorer, mean)| ScorerSummary {
                    scorer: (*scorer).into(),
                    count: 3,
                    mean: *mean,
                    stddev: 0.0,
                    min: 0.0,
                    max: 1.0,
                })
                .collect(),
        }
    }

    #[test]
    fn a_trend_follows_the_newest_dataset_oldest_first() {
        let list = vec![
            experiment("2026-11-27T10:00:03Z", 3, "a", &[("answer", 0.5)]),
            experiment(
                "2026-11-27T10:00:01Z",
                1,
                "a",
                &[("answer", 1.0), ("tools", 1.0)],
            ),
            experiment("2026-11-27T10:00:02Z", 2, "b", &[("answer", 0.0)]),
        ];
        let trend = trend(&list).unwrap();
        assert_eq!(trend.dataset, "a set");
        assert_eq!(trend.labels, ["v1", "v3"]);
        assert_eq!(
            trend.lines,
            [
                ("answer".to_string(), vec![Some(1.0), Some(0.5)]),
                ("tools".to_string(), vec![Some(1.0), None]),
            ]
        );
        assert_eq!(
            spoken(&trend),
            "Mean scores over 2 experiments on a set: answer from 1.00 to 0.50; tools from 1.00 to 1.00"
        );
    }

    #[test]
    fn one_experiment_or_a_running_one_draws_no_trend() {
        let mut running = experiment("2026-11-27T10:00:02Z", 2, "a", &[("answer", 0.0)]);
        running.status = ExperimentStatus::Running;
        let list = vec![
            experiment("2026-11-27T10:00:01Z", 1, "a", &[("answer", 1.0)]),
            running,
        ];
        assert_eq!(trend(&list), None);
    }

    #[test]
    fn points_stay_inside_the_chart() {
        let (x0, top) = at(0, 3, 1.0);
        let (x2, bottom) = at(2, 3, 0.0);
        assert_eq!((x0, top), (LEFT, TOP));
        assert_eq!((x2, bottom), (WIDTH - RIGHT, HEIGHT - BOTTOM));
        assert_eq!(at(0, 3, 7.0).1, TOP, "clamped");
    }
}
