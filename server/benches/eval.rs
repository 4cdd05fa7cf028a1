//! Evaluating a graph over a dataset (docs/performance.md, "Evaluations"):
//! `cargo bench -p heddle-server --bench eval [-- EXAMPLES]`
//!
//! The ReAct example (the model, the calculator, the model again) over
//! EXAMPLES questions (default 1,000), on the offline model with no pace,
//! so the figures are Heddle's, not a model's:
//!
//! - the same runs one by one on the engine in this process, no scoring:
//!   the floor;
//! - `heddle eval` (the release binary) with three scorers: wall time, and
//!   its overhead per example over the floor (process start, reading the
//!   files, scoring, the output);
//! - the same with `--record`, then with `--replay --replay-only` (every
//!   model and tool reply from the recording).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heddle_engine::model::OfflineModel;
use heddle_engine::run::{Run, RunOptions};
use heddle_engine::{CompiledGraph, Registry, RunId};
use serde_json::{Value, json};

fn graph_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/examples/graphs/react_agent.json")
}

fn question(index: usize) -> Value {
    json!({"messages": [{"role": "user", "content": format!("What is {index} * 7?")}]})
}

/// The floor: the runs alone, one after another, in this process.
async fn engine_alone(examples: usize) -> Duration {
    let registry =
        Registry::new().with_default_model(OfflineModel::new().with_pace(Duration::ZERO));
    let document = std::fs::read_to_string(graph_path()).expect("the example graph");
    let graph = Arc::new(CompiledGraph::from_json(&document, &registry).expect("it compiles"));
    let started = Instant::now();
    for index in 0..examples {
        let run = Run::new(
            Arc::clone(&graph),
            RunId::from(format!("bench-{index}")),
            question(index),
            RunOptions::default(),
        );
        let output = run.execute().await.expect("the run finishes");
        assert!(!output.is_interrupted());
    }
    started.elapsed()
}

/// `heddle eval` with `extra` flags; its wall time and summary line.
fn heddle_eval(dir: &Path, extra: &[&str]) -> (Duration, Value) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_heddle"))
        .arg("eval")
        .arg(graph_path())
        .arg("--dataset")
        .arg(dir.join("dataset.jsonl"))
        .arg("--scorers")
        .arg(dir.join("scorers.json"))
        .args(extra)
        .env("HEDDLE_OFFLINE_PACE_MS", "0")
        .env_remove("HEDDLE_MODEL_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("HEDDLE_MODEL_BASE_URL")
        .current_dir(dir)
        .output()
        .expect("heddle runs");
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .expect("a summary line");
    (elapsed, summary)
}

#[tokio::main]
async fn main() {
    let examples: usize = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(1_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let lines: Vec<String> = (0..examples)
        .map(|index| {
            json!({"id": format!("q{index}"), "input": question(index),
                   "reference": {"answer": (index * 7).to_string()}})
            .to_string()
        })
        .collect();
    std::fs::write(dir.path().join("dataset.jsonl"), lines.join("\n")).expect("dataset");
    let scorers = json!([
        {"kind": "contains", "name": "answer", "of": "last(output.messages).content",
         "expected": "reference.answer"},
        {"kind": "trajectory", "name": "calculator", "tools": [{"name": "calculator"}]},
        {"kind": "threshold", "metric": "tokens", "max": 100000}
    ]);
    std::fs::write(dir.path().join("scorers.json"), scorers.to_string()).expect("scorers");

    let floor = engine_alone(examples).await;
    let per = |elapsed: Duration| elapsed.as_secs_f64() * 1e3 / examples as f64;
    println!("{examples} examples of the ReAct example (offline model, no pace)");
    println!(
        "  runs alone on the engine, in process:   {:>7.2} s  ({:.3} ms a run)",
        floor.as_secs_f64(),
        per(floor)
    );
    let (plain, summary) = heddle_eval(dir.path(), &[]);
    assert_eq!(summary["scorers"]["answer"]["mean"], 1.0, "{summary}");
    let overhead = |elapsed: Duration| per(elapsed) - per(floor);
    println!(
        "  heddle eval, 3 scorers:                 {:>7.2} s  ({:.3} ms an example, +{:.3} ms over the runs alone)",
        plain.as_secs_f64(),
        per(plain),
        overhead(plain)
    );
    let recording = dir.path().join("replies.jsonl");
    let recording = recording.to_string_lossy();
    let (recorded, summary) = heddle_eval(dir.path(), &["--record", &recording]);
    let size = std::fs::metadata(dir.path().join("replies.jsonl")).map_or(0, |meta| meta.len());
    println!(
        "  heddle eval --record:                   {:>7.2} s  ({:.3} ms an example; {} calls, {:.1} MB)",
        recorded.as_secs_f64(),
        per(recorded),
        summary["replies"]["live"],
        size as f64 / 1e6
    );
    let (replayed, summary) = heddle_eval(dir.path(), &["--replay", &recording, "--replay-only"]);
    assert_eq!(summary["replies"]["live"], 0, "{summary}");
    assert_eq!(summary["scorers"]["answer"]["mean"], 1.0, "{summary}");
    println!(
        "  heddle eval --replay --replay-only:     {:>7.2} s  ({:.3} ms an example; {} calls replayed)",
        replayed.as_secs_f64(),
        per(replayed),
        summary["replies"]["replayed"]
    );
}
