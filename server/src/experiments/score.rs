//! What an experiment's run came to, scored: a finished run by every
//! scorer over its output and its log; a run that did not finish, or was
//! refused, 0 by every scorer with the reason. A judging scorer asks the
//! server's model it names, its calls taking their turns at the model gate
//! on behalf of the experiment's maker, and what they use is added to the
//! item's usage (so an experiment's ceiling counts its judging too).

use std::sync::Arc;

use heddle_engine::Registry;
use heddle_engine::run::{Event, RunStatus};
use heddle_engine::scoring::{Example, Observed, Scorer};
use heddle_store::experiments::{Item, Outcome};
use heddle_wire::error::AppError;
use heddle_wire::experiments::{ItemScore, ItemStatus};
use heddle_wire::runs::RunInfo;
use serde_json::Value;

/// A run of `item` that ended as `run` says, with its stored `events`,
/// scored with `registry`'s models for `maker`.
pub(super) async fn ended(
    registry: &Registry,
    maker: Arc<str>,
    scorers: &[Scorer],
    item: &Item,
    run: &RunInfo,
    events: &[Event],
) -> Outcome {
    let output = run.output.clone();
    if run.status != RunStatus::Finished {
        let why = match run.status {
            RunStatus::Interrupted => {
                "the run paused for a person; an experiment does not answer pauses".to_string()
            }
            status => match &run.error {
                Some(error) => format!("the run {status}: {error}"),
                None => format!("the run {status}"),
            },
        };
        return Outcome {
            status: ItemStatus::Failed,
            output,
            scores: zeros(scorers, &why),
            usage: run.usage,
            latency_ms: latency(events),
            error: Some(why),
        };
    }
    let observed =
        Observed::new(output.clone().unwrap_or(Value::Null), run.usage).with_events(events.iter());
    let example = Example {
        input: &item.input,
        reference: item.reference.as_ref(),
    };
    let mut usage = run.usage;
    let mut scores = Vec::with_capacity(scorers.len());
    for scorer in scorers {
        let judged = heddle_engine::model::on_behalf_of(
            Arc::clone(&maker),
            scorer.score_in(&example, &observed, registry),
        )
        .await;
        usage.add(&judged.usage);
        scores.push(ItemScore {
            scorer: scorer.name().to_owned(),
            value: judged.score.value,
            reason: judged.score.reason,
        });
    }
    Outcome {
        status: ItemStatus::Scored,
        scores,
        output,
        usage,
        latency_ms: Some(observed.latency_ms),
        error: None,
    }
}

/// An item whose run was refused before it started (its input does not
/// fit the graph version, say).
pub(super) fn refused(scorers: &[Scorer], error: &AppError) -> Outcome {
    let why = format!("the run was refused: {error}");
    Outcome {
        status: ItemStatus::Failed,
        output: None,
        scores: zeros(scorers, &why),
        usage: Default::default(),
        latency_ms: None,
        error: Some(why),
    }
}

fn zeros(scorers: &[Scorer], why: &str) -> Vec<ItemScore> {
    scorers
        .iter()
        .map(|scorer| ItemScore {
            scorer: scorer.name().to_owned(),
            value: 0.0,
            reason: why.to_owned(),
        })
        .collect()
}

/// From a log's first event to its last, in milliseconds.
fn latency(events: &[Event]) -> Option<u64> {
    let first = events.iter().map(|event| event.at_us).min()?;
    let last = events.iter().map(|event| event.at_us).max()?;
    Some(last.saturating_sub(first) / 1_000)
}
