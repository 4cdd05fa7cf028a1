//! `heddle eval GRAPH --dataset FILE --scorers FILE`: runs a graph over a
//! dataset's examples, scores every run with the scorers
//! (`heddle_engine::scoring`), prints each run's scores and each scorer's
//! mean and spread, and exits 4 when a scorer's mean is under its
//! `--min-score`, so a CI job can refuse a change that made an agent worse.
//!
//! Runs are in memory (nothing is written to the database) and one at a
//! time, so two evaluations of one graph on one model give the same runs.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use heddle_engine::recording::{Counts, Recording};
use heddle_engine::run::{Run, RunError, RunOptions};
use heddle_engine::scoring::{Example, Observed, Score, Scorer, ScorerSpec};
use heddle_engine::{Registry, RunId};
use serde_json::{Value, json};

use super::validate::read_document;
use super::{CliError, Outcome};
use crate::config::EvalArgs;
use heddle_wire::datasets::ExampleInput;
use heddle_wire::datasets::import;

/// The most scorers an evaluation may use.
const MAX_SCORERS: usize = 50;
/// The most runs of each example.
pub const MAX_REPEAT: u32 = 100;

/// `heddle eval`.
pub async fn eval(
    args: &EvalArgs,
    registry: &Registry,
    mut out: Box<dyn Write + Send>,
) -> Result<Outcome, CliError> {
    let document = read_document(&args.graph)?;
    let recording = match (&args.replay, &args.record) {
        (Some(path), _) => {
            let recording = read_recording(path)?;
            Some(if args.replay_only {
                recording.replay_only()
            } else {
                recording
            })
        }
        (None, Some(_)) => Some(Recording::new()),
        (None, None) => None,
    };
    let registry = match &recording {
        Some(recording) => recording.wrap(registry.clone()),
        None => registry.clone(),
    };
    let graph = Arc::new(
        heddle_engine::compile(&document, &registry).map_err(|report| CliError::Invalid {
            path: args.graph.clone(),
            report,
        })?,
    );
    let examples = read_dataset(&args.dataset)?;
    let scorers = read_scorers(&args.scorers)?;
    let minimums = thresholds(&args.min_score, &scorers)?;
    if args.repeat == 0 || args.repeat > MAX_REPEAT {
        return Err(CliError::Flag {
            flag: "repeat",
            message: format!("must be from 1 to {MAX_REPEAT}"),
        });
    }

    let mut tally = Tally::new(&scorers);
    let mut rejected = false;
    for (index, example) in examples.iter().enumerate() {
        for repetition in 0..args.repeat {
            let run_id = RunId::from(format!("eval-{}", uuid::Uuid::new_v4()));
            let input = Value::Object(example.input.clone());
            let (status, observed) = run_once(&graph, run_id.clone(), input.clone()).await;
            rejected |= status.starts_with("rejected");
            let given = Example {
                input: &input,
                reference: example.reference.as_ref(),
            };
            // A judge asks the registry's model it names (recorded or
            // replayed with the runs' replies under --record/--replay).
            let mut scores: Vec<(&Scorer, Score)> = Vec::with_capacity(scorers.len());
            for scorer in &scorers {
                let score = match &observed {
                    Some(observed) => scorer.score_in(&given, observed, &registry).await.score,
                    None => Score {
                        value: 0.0,
                        reason: format!("the run did not finish: {status}"),
                    },
                };
                scores.push((scorer, score));
            }
            tally.add(&scores);
            let label = example
                .label
                .clone()
                .unwrap_or_else(|| format!("#{}", index + 1));
            if args.pretty {
                write_run_pretty(&mut out, &label, repetition, args.repeat, &status, &scores)?;
            } else {
                let line = json!({
                    "type": "run",
                    "example": label,
                    "repetition": repetition,
                    "run_id": run_id,
                    "status": status,
                    "tokens": observed.as_ref().map(|o| o.usage.tokens()),
                    "latency_ms": observed.as_ref().map(|o| o.latency_ms),
                    "scores": scores.iter().map(|(scorer, score)| {
                        (scorer.name().to_string(), json!({"value": score.value, "reason": score.reason}))
                    }).collect::<serde_json::Map<_, _>>(),
                });
                writeln!(out, "{line}")?;
            }
        }
    }

    let summary = tally.summary();
    let verdicts: Vec<(String, f64, f64, bool)> = minimums
        .iter()
        .map(|(name, min)| {
            let mean = summary
                .iter()
                .find(|stats| &stats.name == name)
                .map_or(0.0, |stats| stats.mean);
            (name.clone(), *min, mean, mean >= *min)
        })
        .collect();
    let passed = verdicts.iter().all(|(_, _, _, passed)| *passed);
    let replies = recording.as_ref().map(Recording::counts);
    if let (Some(recording), Some(path)) = (&recording, &args.record) {
        write_recording(recording, path)?;
    }
    if args.pretty {
        write_summary_pretty(
            &mut out,
            examples.len(),
            args.repeat,
            &summary,
            &verdicts,
            replies,
        )?;
    } else {
        let line = json!({
            "type": "summary",
            "examples": examples.len(),
            "runs": examples.len() * args.repeat as usize,
            "scorers": summary.iter().map(|stats| (stats.name.clone(), json!({
                "mean": stats.mean, "stddev": stats.stddev, "min": stats.min, "max": stats.max,
            }))).collect::<serde_json::Map<_, _>>(),
            "thresholds": verdicts.iter().map(|(name, min, mean, passed)| json!({
                "scorer": name, "min": min, "mean": mean, "passed": passed,
            })).collect::<Vec<_>>(),
            "passed": passed,
            "replies": replies,
        });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(if rejected {
        Outcome::Rejected
    } else if passed {
        Outcome::Done
    } else {
        Outcome::BelowThreshold
    })
}

/// Runs the graph once; what it did, unless it failed, paused or was
/// refused (then the status says why).
async fn run_once(
    graph: &Arc<heddle_engine::CompiledGraph>,
    run_id: RunId,
    input: Value,
) -> (String, Option<Observed>) {
    let run = Run::new(Arc::clone(graph), run_id, input, RunOptions::default());
    let log = run.log();
    let meter = run.meter();
    match run.execute().await {
        Ok(output) if output.is_interrupted() => ("paused (waiting for a person)".into(), None),
        Ok(output) => {
            let events = log.map(|log| log.since(0)).unwrap_or_default();
            let observed = Observed::new(output.state, meter.total())
                .with_events(events.iter().map(|event| &**event));
            ("finished".into(), Some(observed))
        }
        Err(error @ RunError::BadInput { .. }) => (format!("rejected: {error}"), None),
        Err(error) => (format!("failed: {error}"), None),
    }
}

/// Reads a recording `--record` wrote.
fn read_recording(path: &Path) -> Result<Recording, CliError> {
    let file = std::fs::File::open(path).map_err(|source| CliError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Recording::read(std::io::BufReader::new(file)).map_err(|error| CliError::Recording {
        path: path.to_path_buf(),
        message: error.to_string(),
    })
}

/// Writes the calls `recording` saw to `path`, whole or not at all (a
/// temporary file beside it, renamed).
fn write_recording(recording: &Recording, path: &Path) -> Result<(), CliError> {
    let failed = |error: &dyn std::fmt::Display| CliError::Recording {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    let file = std::fs::File::create(&partial).map_err(|error| failed(&error))?;
    recording
        .write(std::io::BufWriter::new(file))
        .map_err(|error| failed(&error))?;
    std::fs::rename(&partial, path).map_err(|error| failed(&error))
}

/// Reads a dataset: one JSON object per line (`{"input": {...},
/// "reference": ..., "label": "..."}`, `id` for the label too), blank lines
/// skipped; read and bounded as the server's import reads one.
fn read_dataset(path: &Path) -> Result<Vec<ExampleInput>, CliError> {
    let read = |source| CliError::Read {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read)?.len();
    let bad = |problems| CliError::Dataset {
        path: path.to_path_buf(),
        problems,
    };
    if size > import::MAX_FILE_BYTES as u64 {
        return Err(bad(vec![import::ImportProblem {
            line: 0,
            column: None,
            message: format!("larger than {} MiB", import::MAX_FILE_BYTES >> 20),
        }]));
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    import::read_json_lines(&text).map_err(bad)
}

/// Reads the scorers: a JSON list of scorer definitions, each checked, with
/// unique names.
fn read_scorers(path: &Path) -> Result<Vec<Scorer>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bad = |problems: Vec<String>| CliError::Scorers {
        path: path.to_path_buf(),
        problems,
    };
    let list: Vec<Value> = serde_json::from_str(&text)
        .map_err(|error| bad(vec![format!("not a JSON list of scorers: {error}")]))?;
    if list.is_empty() || list.len() > MAX_SCORERS {
        return Err(bad(vec![format!("give 1 to {MAX_SCORERS} scorers")]));
    }
    let mut problems = Vec::new();
    let mut scorers: Vec<Scorer> = Vec::new();
    for (index, value) in list.iter().enumerate() {
        let compiled = ScorerSpec::from_value(value)
            .map_err(|error| vec![error])
            .and_then(|spec| spec.compile());
        match compiled {
            Ok(scorer) if scorers.iter().any(|other| other.name() == scorer.name()) => {
                problems.push(format!(
                    "[{index}].name: another scorer is named `{}`; give this one a `name`",
                    scorer.name()
                ));
            }
            Ok(scorer) => scorers.push(scorer),
            Err(errors) => problems.extend(errors.iter().map(|error| {
                if error.path.is_empty() {
                    format!("[{index}]: {}", error.message)
                } else {
                    format!("[{index}].{error}")
                }
            })),
        }
    }
    if problems.is_empty() {
        Ok(scorers)
    } else {
        Err(bad(problems))
    }
}

/// `--min-score NAME=VALUE`, each naming a scorer.
fn thresholds(given: &[String], scorers: &[Scorer]) -> Result<Vec<(String, f64)>, CliError> {
    given
        .iter()
        .map(|text| {
            let bad = |message: String| CliError::Flag {
                flag: "min-score",
                message,
            };
            let (name, value) = text
                .rsplit_once('=')
                .ok_or_else(|| bad(format!("`{text}` is not SCORER=VALUE")))?;
            let value: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|value: &f64| (0.0..=1.0).contains(value))
                .ok_or_else(|| bad(format!("`{value}` is not a score from 0 to 1")))?;
            if !scorers.iter().any(|scorer| scorer.name() == name) {
                let names: Vec<&str> = scorers.iter().map(Scorer::name).collect();
                return Err(bad(format!(
                    "no scorer is named `{name}` (the scorers: {})",
                    names.join(", ")
                )));
            }
            Ok((name.to_string(), value))
        })
        .collect()
}

/// Each scorer's scores so far.
struct Tally {
    names: Vec<String>,
    values: Vec<Vec<f64>>,
}

/// A scorer's scores over every run.
struct Stats {
    name: String,
    mean: f64,
    stddev: f64,
    min: f64,
    max: f64,
}

impl Tally {
    fn new(scorers: &[Scorer]) -> Tally {
        Tally {
            names: scorers
                .iter()
                .map(|scorer| scorer.name().to_string())
                .collect(),
            values: vec![Vec::new(); scorers.len()],
        }
    }

    fn add(&mut self, scores: &[(&Scorer, Score)]) {
        for (values, (_, score)) in self.values.iter_mut().zip(scores) {
            values.push(score.value);
        }
    }

    /// Each scorer's figures; a dataset has an example and each is run at
    /// least once, so no list is empty.
    fn summary(&self) -> Vec<Stats> {
        self.names
            .iter()
            .zip(&self.values)
            .map(|(name, values)| {
                let n = values.len().max(1) as f64;
                let mean = values.iter().sum::<f64>() / n;
                let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
                Stats {
                    name: name.clone(),
                    mean,
                    stddev: variance.sqrt(),
                    min: values.iter().copied().fold(1.0, f64::min),
                    max: values.iter().copied().fold(0.0, f64::max),
                }
            })
            .collect()
    }
}

fn write_run_pretty(
    out: &mut dyn Write,
    label: &str,
    repetition: u32,
    repeat: u32,
    status: &str,
    scores: &[(&Scorer, Score)],
) -> std::io::Result<()> {
    let which = if repeat > 1 {
        format!("{label} (run {} of {repeat})", repetition + 1)
    } else {
        label.to_string()
    };
    writeln!(out, "{which}: {status}")?;
    for (scorer, score) in scores {
        writeln!(
            out,
            "  {:<24} {:.2}  {}",
            scorer.name(),
            score.value,
            score.reason
        )?;
    }
    Ok(())
}

fn write_summary_pretty(
    out: &mut dyn Write,
    examples: usize,
    repeat: u32,
    summary: &[Stats],
    verdicts: &[(String, f64, f64, bool)],
    replies: Option<Counts>,
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{examples} examples, {} runs",
        examples * repeat as usize
    )?;
    if let Some(Counts { replayed, live }) = replies {
        writeln!(
            out,
            "{replayed} replies from the recording, {live} calls to models and tools"
        )?;
    }
    writeln!(
        out,
        "  {:<24} {:>6} {:>7} {:>6} {:>6}",
        "scorer", "mean", "stddev", "min", "max"
    )?;
    for stats in summary {
        writeln!(
            out,
            "  {:<24} {:>6.3} {:>7.3} {:>6.2} {:>6.2}",
            stats.name, stats.mean, stats.stddev, stats.min, stats.max
        )?;
    }
    for (name, min, mean, passed) in verdicts {
        if *passed {
            writeln!(
                out,
                "ok    {name}: mean {mean:.3}, at least the {min} asked"
            )?;
        } else {
            writeln!(out, "BELOW {name}: mean {mean:.3}, under the {min} asked")?;
        }
    }
    Ok(())
}
